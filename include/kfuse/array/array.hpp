// Array<T, N>: a distributed N-D array on a Grid<N>, with a halo of the
// grid's width around each rank's owned block. A handle (like Blitz++):
// copies share storage and halo state; `a = b` copies owned values.
//
// Assigning an expression runs it at once as a one-statement program. That
// machinery lives in higher layers (expr, exec); this header only declares
// the hook, defined by kfuse/program/eager.hpp (included by kfuse/kfuse.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/grid.hpp"

namespace kfuse {

template <class T, int N>
class Array;

namespace detail {
/// Runs `target = expr` now (defined in kfuse/program/eager.hpp).
template <class T, int N, class Expr>
void eager_assign(Array<T, N>& target, const Expr& expr);

template <class F, class T, int N>
struct FillWith;

/// The owned cells of this rank's block, in view coordinates.
template <int N>
Box<N> owned_box(const Grid<N>& grid) {
  Box<N> box;
  for (int d = 0; d < N; ++d) {
    box.lo[d] = grid.halo();
    box.hi[d] = grid.halo() + grid.local_extent(d);
  }
  return box;
}
}  // namespace detail

template <class T, int N>
class Array {
  static_assert(std::is_arithmetic_v<T>,
                "kfuse::Array<T, N>: T must be an arithmetic type (float, double, int, ...)");
  static_assert(N >= 1 && N <= 3, "kfuse::Array<T, N>: N must be 1, 2 or 3");

 public:
  using value_type = T;
  using view_type = detail::view_t<T, N>;
  static constexpr int rank = N;

  /// Collective. Zero-initialised, owned cells and halo. Memory that cannot
  /// be had (on any rank) is a kfuse::Error on every rank.
  Array(const Grid<N>& grid, std::string label = "array") {
    grid.base_comm().agree_on([&] { state_ = std::make_shared<State>(grid, std::move(label)); });
  }
  /// Not collective: a failed allocation throws on this rank only, for
  /// callers that agree on their own outcome (a program's binding).
  Array(const Grid<N>& grid, std::string label, detail::LocalErrors)
      : state_(std::make_shared<State>(grid, std::move(label))) {}

  Array(const Array&) = default;  // shares storage (handle semantics)
  Array(Array&&) noexcept = default;
  /// Copies the owned values of `other` (an expression assignment).
  Array& operator=(const Array& other) {
    if (!same_storage(other)) detail::eager_assign(*this, other);
    return *this;
  }
  Array& operator=(Array&& other) { return *this = static_cast<const Array&>(other); }
  /// Evaluates an expression (or a constant) into the owned cells, now.
  template <class Expr, class = std::enable_if_t<!std::is_same_v<std::decay_t<Expr>, Array>>>
  Array& operator=(const Expr& expr) {
    detail::eager_assign(*this, expr);
    return *this;
  }

  const Grid<N>& grid() const { return state_->grid; }
  const std::string& label() const { return state_->label; }
  /// Every cell, index 0 = first halo cell. Unmanaged: the Array (any copy
  /// of the handle) keeps the memory; use the view while one lives.
  const view_type& view() const { return state_->view; }
  /// The owned cells.
  auto interior() const { return subview_of(owned_box()); }

  /// Sets every cell, halos included.
  void fill(T value) {
    detail::fill_values("fill [" + label() + "]", state_->view, value);
    state_->halo_stale = has_zero_gradient();
  }

  /// Sets owned and halo cells to f(global indices...). A halo cell across a
  /// periodic boundary gets the value of the cell it images; one beyond a
  /// fixed boundary gets f at its (outside) global index.
  template <class F>
  void fill_with(const F& f) {
    const Grid<N>& g = grid();
    detail::FillWith<F, T, N> functor{state_->view, f, {}, {}, {}, g.halo()};
    detail::Box<N> box;
    for (int d = 0; d < N; ++d) {
      functor.begin[d] = g.local_begin(d);
      functor.global[d] = g.global_extent(d);
      functor.periodic[d] = g.periodic(d);
      box.lo[d] = 0;
      box.hi[d] = state_->view.extent(d);
    }
    detail::for_box<N>("kfuse:fill_with[" + label() + "]", box, functor);
    state_->halo_stale = has_zero_gradient();
  }

  /// The global owned array, row-major, on every rank (collective).
  std::vector<T> gather() const { return gather_impl(-1); }
  /// The global owned array on `root`; an empty vector on other ranks.
  std::vector<T> gather(int root) const { return gather_impl(root); }

  /// The owned cells in view coordinates.
  detail::Box<N> owned_box() const { return detail::owned_box(grid()); }

  // Halo state, maintained by the runtime: a write makes the halo stale; an
  // exchange refreshes it.
  bool halo_stale() const { return state_->halo_stale; }
  void mark_halo_stale() const { state_->halo_stale = true; }
  void mark_halo_fresh() const { state_->halo_stale = false; }
  bool same_storage(const Array& other) const { return state_ == other.state_; }
  const void* storage_id() const { return state_.get(); }

 private:
  /// The storage (detail::allocate_storage) and the view of its data, which
  /// start at detail::next_array_offset() past a page (or huge page)
  /// boundary. The view does not own the memory: the State does.
  struct State {
    Grid<N> grid;
    std::string label;
    detail::Storage<T> storage;
    view_type view;
    bool halo_stale = false;  // zero everywhere is a consistent halo
    State(const Grid<N>& g, std::string l) : grid(g), label(std::move(l)) {
      std::array<index_t, N> e{};  // with the halo; the Grid checked their product
      for (int d = 0; d < N; ++d) e[d] = g.local_extent(d) + 2 * g.halo();
      storage = detail::allocate_storage<T>("kfuse::Array", label, e, detail::array_page,
                                            detail::next_array_offset());
      auto n = [&](int d) { return static_cast<std::size_t>(e[d]); };
      if constexpr (N == 1) view = view_type(storage.data(), n(0));
      if constexpr (N == 2) view = view_type(storage.data(), n(0), n(1));
      if constexpr (N == 3) view = view_type(storage.data(), n(0), n(1), n(2));
    }
  };

  bool has_zero_gradient() const {
    for (int d = 0; d < N; ++d)
      if (!grid().periodic(d) && grid().boundary(d) == Boundary::zero_gradient) return true;
    return false;
  }

  auto subview_of(const detail::Box<N>& b) const {
    using R = Kokkos::pair<std::int64_t, std::int64_t>;
    if constexpr (N == 1) return Kokkos::subview(view(), R(b.lo[0], b.hi[0]));
    if constexpr (N == 2) return Kokkos::subview(view(), R(b.lo[0], b.hi[0]), R(b.lo[1], b.hi[1]));
    if constexpr (N == 3)
      return Kokkos::subview(view(), R(b.lo[0], b.hi[0]), R(b.lo[1], b.hi[1]),
                             R(b.lo[2], b.hi[2]));
  }

  /// This rank's owned block, row-major, on the host.
  std::vector<T> owned_values() const {
    // The whole (contiguous) view: Kokkos copies a strided subview such as
    // interior() between device and host memory only through a temporary.
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view());
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(grid().local_size()));
    const auto& g = grid();
    const index_t h = g.halo();
    if constexpr (N == 1)
      for (index_t i = 0; i < g.local_extent(0); ++i) out.push_back(host(h + i));
    if constexpr (N == 2)
      for (index_t i = 0; i < g.local_extent(0); ++i)
        for (index_t j = 0; j < g.local_extent(1); ++j) out.push_back(host(h + i, h + j));
    if constexpr (N == 3)
      for (index_t i = 0; i < g.local_extent(0); ++i)
        for (index_t j = 0; j < g.local_extent(1); ++j)
          for (index_t k = 0; k < g.local_extent(2); ++k) out.push_back(host(h + i, h + j, h + k));
    return out;
  }

  std::vector<T> gather_impl(int root) const;

  std::shared_ptr<State> state_;
};

namespace detail {

template <class F, class T, int N>
struct FillWith {
  view_t<T, N> view;
  F f;
  std::int64_t begin[N];
  std::int64_t global[N];
  bool periodic[N];
  int halo;

  KOKKOS_INLINE_FUNCTION std::int64_t global_index(int d, std::int64_t i) const {
    std::int64_t g = begin[d] + i - halo;
    if (periodic[d]) g = ((g % global[d]) + global[d]) % global[d];
    return g;
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { view(i) = f(global_index(0, i)); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    view(i, j) = f(global_index(0, i), global_index(1, j));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    view(i, j, k) = f(global_index(0, i), global_index(1, j), global_index(2, k));
  }
};

}  // namespace detail

template <class T, int N>
std::vector<T> Array<T, N>::gather_impl(int root) const {
  const Grid<N>& g = grid();
  const Comm& comm = g.comm();
  std::vector<T> mine = owned_values();
  if (comm.size() == 1) return mine;
#if KFUSE_ENABLE_MPI
  const int p = comm.size();
  std::vector<int> counts(p), displs(p);
  int local = static_cast<int>(mine.size());
  MPI_Allgather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.native());
  for (int r = 1; r < p; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const bool receive = root < 0 || comm.rank() == root;
  std::vector<T> blocks(receive ? static_cast<std::size_t>(displs[p - 1] + counts[p - 1]) : 0);
  const auto type = Comm::mpi_type<T>();
  if (root < 0)
    MPI_Allgatherv(mine.data(), local, type, blocks.data(), counts.data(), displs.data(), type,
                   comm.native());
  else
    MPI_Gatherv(mine.data(), local, type, blocks.data(), counts.data(), displs.data(), type, root,
                comm.native());
  if (!receive) return {};
  // Scatter each rank's row-major block into the global row-major array.
  std::vector<T> out(static_cast<std::size_t>(g.global_size()));
  for (int r = 0; r < p; ++r) {
    const auto c = g.coords_of(r);
    index_t b[3] = {0, 0, 0}, e[3] = {1, 1, 1}, G[3] = {1, 1, 1};
    for (int d = 0; d < N; ++d) {
      b[d] = g.block_begin(d, c[d]);
      e[d] = g.block_extent(d, c[d]);
      G[d] = g.global_extent(d);
    }
    const T* src = blocks.data() + displs[r];
    for (index_t i = 0; i < e[0]; ++i)
      for (index_t j = 0; j < e[1]; ++j)
        for (index_t k = 0; k < e[2]; ++k)
          out[static_cast<std::size_t>(((b[0] + i) * G[1] + (b[1] + j)) * G[2] + (b[2] + k))] =
              *src++;
  }
  return out;
#else
  (void)root;
  return mine;
#endif
}

}  // namespace kfuse
