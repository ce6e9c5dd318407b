// Vector<T>: a 1-D distributed vector on a RowMap, the operand of sparse
// products (CsrMatrix * Vector). It has the members of Array<T, 1> (fill,
// fill_with, gather, view, operator=, and every expression) but iterates a
// row map, not a grid, so fusion rule 1 keeps vector and grid statements in
// separate kernels. A handle: copies share storage.
//
// Instead of a halo, a vector keeps the ghost values matrix products need
// (entries owned by other ranks): one buffer per matrix, filled by its import
// plan and valid until the vector is written again (or the matrix dies).
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/row_map.hpp"

namespace kfuse {

template <class T>
class Vector;

namespace detail {
/// Runs `target = expr` now (defined in kfuse/program/eager.hpp).
template <class T, class Expr>
void eager_assign(Vector<T>& target, const Expr& expr);

/// Vector::fill_with's kernel: v(i) = f(begin + i). A functor, not a lambda, like every
/// kernel in kfuse's headers (docs/backends.md, "Lambdas in headers").
template <class View, class F>
struct FillVector {
  View v;
  F f;
  index_t begin;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const { v(i) = f(begin + i); }
};
}  // namespace detail

template <class T>
class Vector {
  static_assert(std::is_arithmetic_v<T>,
                "kfuse::Vector<T>: T must be an arithmetic type (float, double, int, ...)");

 public:
  using value_type = T;
  using view_type = detail::view_t<T, 1>;
  static constexpr int rank = 1;  ///< of view()

  /// Collective. Zero-initialised. Memory that cannot be had (on any rank)
  /// is a kfuse::Error on every rank.
  Vector(const RowMap& map, std::string label = "vector") {
    map.base_comm().agree_on([&] { state_ = std::make_shared<State>(map, std::move(label)); });
  }
  /// Not collective: a failed allocation throws on this rank only, for
  /// callers that agree on their own outcome (a program's binding).
  Vector(const RowMap& map, std::string label, detail::LocalErrors)
      : state_(std::make_shared<State>(map, std::move(label))) {}

  Vector(const Vector&) = default;  // shares storage (handle semantics)
  Vector(Vector&&) noexcept = default;
  /// Copies the values of `other` (an expression assignment).
  Vector& operator=(const Vector& other) {
    if (!same_storage(other)) detail::eager_assign(*this, other);
    return *this;
  }
  Vector& operator=(Vector&& other) { return *this = static_cast<const Vector&>(other); }
  /// Evaluates an expression (or a constant) into the vector, now.
  template <class Expr, class = std::enable_if_t<!std::is_same_v<std::decay_t<Expr>, Vector>>>
  Vector& operator=(const Expr& expr) {
    detail::eager_assign(*this, expr);
    return *this;
  }

  const RowMap& row_map() const { return state_->map; }
  const std::string& label() const { return state_->label; }
  /// This rank's entries, index 0 = global row row_map().local_begin().
  const view_type& view() const { return state_->view; }
  const view_type& interior() const { return state_->view; }

  void fill(T value) {
    detail::fill_values("fill [" + label() + "]", state_->view, value);
    mark_halo_stale();
  }
  /// Sets entry i to f(global index of i).
  template <class F>
  void fill_with(const F& f) {
    const view_type v = state_->view;
    detail::for_box<1>("kfuse:fill_with[" + label() + "]",
                       detail::Box<1>{{0}, {index_t(v.extent(0))}},
                       detail::FillVector<view_type, F>{v, f, row_map().local_begin()});
    mark_halo_stale();
  }

  /// The global vector on every rank (collective).
  std::vector<T> gather() const { return gather_impl(-1); }
  /// The global vector on `root`; an empty vector on other ranks.
  std::vector<T> gather(int root) const { return gather_impl(root); }

  // Ghost state, maintained by the runtime: a write makes the ghosts stale;
  // a matrix's import refreshes them for that matrix. The names match
  // Array's halo state, so programs treat both alike.
  bool halo_stale() const {
    for (const GhostBuffer& g : state_->ghosts)
      if (!g.fresh) return true;
    return state_->ghosts.empty();
  }
  void mark_halo_stale() const {
    for (GhostBuffer& g : state_->ghosts) g.fresh = false;
  }
  /// Whether the ghost buffer for `matrix` (a CsrMatrix's storage()) holds current values.
  bool ghosts_fresh_for(const void* matrix) const {
    const GhostBuffer* g = find(matrix);
    return g != nullptr && g->fresh;
  }
  /// The ghost buffer for `matrix` (`count` entries), made on first use;
  /// call mark_ghosts_fresh(matrix) once its import has filled it.
  view_type ghost_buffer(const std::shared_ptr<const void>& matrix, index_t count) const {
    GhostBuffer* g = find(matrix.get());
    if (g == nullptr || index_t(g->values.extent(0)) != count) {
      view_type values(Kokkos::view_alloc(Kokkos::WithoutInitializing, label() + ".ghosts"),
                       static_cast<std::size_t>(count));
      auto& all = state_->ghosts;
      all.erase(std::remove_if(all.begin(), all.end(),
                               [](const GhostBuffer& b) { return b.matrix.expired(); }),
                all.end());
      if (g != nullptr)
        *g = GhostBuffer{matrix, values, false};
      else
        all.push_back(GhostBuffer{matrix, values, false});
      return values;
    }
    return g->values;
  }
  void mark_ghosts_fresh(const void* matrix) const {
    if (GhostBuffer* g = find(matrix)) g->fresh = true;
  }

  bool same_storage(const Vector& other) const { return state_ == other.state_; }
  const void* storage_id() const { return state_.get(); }

 private:
  /// Entries of other ranks that one matrix's products read.
  struct GhostBuffer {
    std::weak_ptr<const void> matrix;  // whose import plan fills it; a dead one never matches
    view_type values;
    bool fresh;
  };
  /// The storage (detail::allocate_storage) and the view of its data, which keeps
  /// the allocation alive (a view taken from a temporary Vector stays valid).
  struct State {
    RowMap map;
    std::string label;
    detail::Storage<T> storage;
    view_type view;
    std::vector<GhostBuffer> ghosts;  // one per matrix this vector was multiplied by
    State(const RowMap& m, std::string l)
        : map(m),
          label(std::move(l)),
          storage(detail::allocate_storage<T>("kfuse::Vector", label,
                                              std::array<index_t, 1>{m.local_size()}, alignof(T))),
          view(storage.view()) {}
  };
  GhostBuffer* find(const void* matrix) const {
    for (GhostBuffer& g : state_->ghosts)
      if (!g.matrix.expired() && g.matrix.lock().get() == matrix) return &g;
    return nullptr;
  }

  std::vector<T> gather_impl(int root) const {
    const Comm& comm = row_map().comm();
    std::vector<T> mine(static_cast<std::size_t>(row_map().local_size()));
    detail::copy_values("copy [" + label() + "]",
                        Kokkos::View<T*, Kokkos::HostSpace>(mine.data(), mine.size()), view());
    if (comm.size() == 1) return mine;
#if KFUSE_ENABLE_MPI
    const int p = comm.size();
    std::vector<int> counts(p), displs(p);
    for (int r = 0; r < p; ++r) {
      counts[r] = static_cast<int>(row_map().size_of(r));
      displs[r] = static_cast<int>(row_map().begin_of(r));
    }
    const bool receive = root < 0 || comm.rank() == root;
    std::vector<T> out(receive ? static_cast<std::size_t>(row_map().global_size()) : 0);
    const auto type = Comm::mpi_type<T>();
    if (root < 0)
      comm.allgatherv(mine.data(), out.data(), counts, displs);
    else
      MPI_Gatherv(mine.data(), counts[comm.rank()], type, out.data(), counts.data(), displs.data(),
                  type, root, comm.native());
    return out;
#else
    (void)root;
    return mine;
#endif
  }

  std::shared_ptr<State> state_;
};

}  // namespace kfuse
