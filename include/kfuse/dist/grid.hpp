// Grid<N>: a structured N-D index space (N = 1, 2, 3, row-major) split over the
// ranks of a Comm by a Cartesian decomposition. Every Array lives on a Grid;
// groups check at bind time that their arrays share one (compared by value).
// Grid is a handle: copies share the decomposition.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/dist/comm.hpp"

namespace kfuse {

/// What a non-periodic boundary does to the halo cells beyond it.
enum class Boundary {
  fixed,          ///< halo values are held (Dirichlet), as fill()/fill_with() set them
  zero_gradient,  ///< halo mirrors the owned cells (halo[-1-k] = owned[k]) at each halo update
};

template <int N>
struct GridOptions {
  int halo = 1;                          ///< halo width in cells, every dimension
  std::array<bool, N> periodic{};        ///< per dimension
  std::array<Boundary, N> boundary{};    ///< per non-periodic dimension
  std::array<int, N> ranks{};            ///< ranks per dimension; 0 = chosen by MPI_Dims_create
  bool overlap = true;                   ///< run interior points while halo messages fly
};

/// Offsets -1, 0, +1 per dimension: the 3^N - 1 neighbour directions plus self.
template <int N>
using Direction = std::array<int, N>;

template <int N>
class Grid {
  static_assert(N >= 1 && N <= 3, "kfuse::Grid<N>: N must be 1, 2 or 3");

 public:
  using Extents = std::array<index_t, N>;

  /// Collective over `comm`: every rank must pass the same extents and options.
  Grid(const Comm& comm, const Extents& extents, const GridOptions<N>& options = {})
      : impl_(std::make_shared<Impl>(comm, extents, options)) {}

  static constexpr int rank = N;

  /// The Cartesian communicator of the decomposition (neighbour messages).
  const Comm& comm() const { return impl_->comm; }
  /// The communicator the grid was made on, from which comm() derives. Checks
  /// that span several grids (a program's binding, a checkpoint) agree on it:
  /// every grid made on it has a Cartesian communicator of its own.
  const Comm& base_comm() const { return impl_->base; }
  index_t global_extent(int d) const { return impl_->global[d]; }
  index_t local_extent(int d) const { return impl_->local[d]; }
  index_t local_begin(int d) const { return impl_->begin[d]; }
  index_t local_size() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d) n *= impl_->local[d];
    return n;
  }
  index_t global_size() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d) n *= impl_->global[d];
    return n;
  }
  int halo() const { return impl_->options.halo; }
  bool periodic(int d) const { return impl_->options.periodic[d]; }
  Boundary boundary(int d) const { return impl_->options.boundary[d]; }
  bool overlap() const { return impl_->options.overlap; }
  const GridOptions<N>& options() const { return impl_->options; }
  /// Ranks along dimension d, and this rank's coordinate among them.
  int ranks(int d) const { return impl_->dims[d]; }
  int coord(int d) const { return impl_->coords[d]; }
  /// Rank of the neighbour in direction `dir` (each entry -1, 0 or +1), or -1
  /// beyond a non-periodic boundary. May be this rank (periodic, one rank).
  int neighbor(const Direction<N>& dir) const { return impl_->neighbors[direction_index(dir)]; }
  /// Rank owning the block at Cartesian coordinates `coords`, and back.
  int rank_of(const std::array<int, N>& coords) const { return impl_->rank_of(coords); }
  std::array<int, N> coords_of(int rank) const { return impl_->coords_of(rank); }
  /// First global index and extent of the block at coordinate c along d.
  index_t block_begin(int d, int c) const { return split_begin(impl_->global[d], impl_->dims[d], c); }
  index_t block_extent(int d, int c) const {
    return split_begin(impl_->global[d], impl_->dims[d], c + 1) - block_begin(d, c);
  }

  static int direction_index(const Direction<N>& dir) {
    int index = 0;
    for (int d = 0; d < N; ++d) index = index * 3 + (dir[d] + 1);
    return index;
  }

  friend bool operator==(const Grid& a, const Grid& b) {
    if (a.impl_ == b.impl_) return true;
    const auto &x = *a.impl_, &y = *b.impl_;
    return x.global == y.global && x.dims == y.dims && x.options.halo == y.options.halo &&
           x.options.periodic == y.options.periodic && x.options.boundary == y.options.boundary &&
           x.comm == y.comm;
  }
  friend bool operator!=(const Grid& a, const Grid& b) { return !(a == b); }

  /// "100x80 (halo 1, periodic x-)" — for error messages and explain().
  std::string describe() const {
    std::string s = describe_extents(impl_->global);
    s += " (halo " + std::to_string(halo()) + ", periodic ";
    for (int d = 0; d < N; ++d) s += periodic(d) ? 'y' : 'n';
    return s + ")";
  }

 private:
  /// "100x80"
  template <class E>
  static std::string describe_extents(const std::array<E, N>& extents) {
    std::string s;
    for (int d = 0; d < N; ++d) s += (d ? "x" : "") + std::to_string(extents[d]);
    return s;
  }
  static index_t split_begin(index_t n, int parts, int c) {
    const index_t base = n / parts, rem = n % parts;
    return c * base + (c < rem ? c : rem);
  }

  struct Impl {
    Comm base, comm;
    Extents global{}, local{}, begin{};
    GridOptions<N> options;
    std::array<int, N> dims{}, coords{};
    std::array<int, 27> neighbors{};
#if KFUSE_ENABLE_MPI
    MPI_Comm cart = MPI_COMM_NULL;
#endif

    Impl(const Comm& parent, const Extents& extents, const GridOptions<N>& opts)
        : base(parent), comm(parent), global(extents), options(opts) {
      const char* api = "kfuse::Grid";
      for (int d = 0; d < N; ++d) {
        parent.check_same(extents[d], api, "extents in dimension " + std::to_string(d));
        parent.check_same(opts.periodic[d], api, "periodic flags");
        parent.check_same(static_cast<int>(opts.boundary[d]), api, "boundary kinds");
        parent.check_same(opts.ranks[d], api, "ranks per dimension");
      }
      parent.check_same(opts.halo, api, "halo widths");
      // Every rank passed the same values: the checks below fail on all alike.
      std::string error = check_arguments(parent.size(), extents, opts);
      parent.agree_or_throw(error);
      decompose(parent);
      std::array<index_t, N> padded{};
      for (int d = 0; d < N; ++d) {
        begin[d] = split_begin(global[d], dims[d], coords[d]);
        local[d] = split_begin(global[d], dims[d], coords[d] + 1) - begin[d];
        padded[d] = local[d] + 2 * index_t{opts.halo};
        if (error.empty() && local[d] < opts.halo)
          error = detail::error_message(api, ": the local extent ", local[d], " in dimension ", d,
                                        " is smaller than the halo width ", opts.halo,
                                        "; use fewer ranks or a smaller halo");
      }
      if (error.empty() && !detail::checked_product(padded))
        error = detail::error_message(api, ": this rank's block with its halo has more than ",
                                      std::numeric_limits<index_t>::max(),
                                      " cells; use more ranks");
      comm.agree_or_throw(error);
      for (int i = 0; i < 27; ++i) neighbors[i] = -1;
      Direction<N> dir;
      fill_neighbors(dir, 0);
    }

    ~Impl() {
#if KFUSE_ENABLE_MPI
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (cart != MPI_COMM_NULL && !finalized) MPI_Comm_free(&cart);
#endif
    }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    /// What is wrong with the (agreed) arguments on a communicator of `size`
    /// ranks, or "": checked before MPI_Dims_create, which aborts the job on
    /// ranks it cannot satisfy, and before any size is computed from extents.
    static std::string check_arguments(int size, const Extents& extents,
                                       const GridOptions<N>& opts) {
      const char* api = "kfuse::Grid";
      for (int d = 0; d < N; ++d)
        if (extents[d] < 1)
          return detail::error_message(api, ": extent ", extents[d], " in dimension ", d,
                                       " must be at least 1");
      if (!detail::checked_product(extents))
        return detail::error_message(api, ": the extents ", describe_extents(extents),
                                     " have more than ", std::numeric_limits<index_t>::max(),
                                     " points in all; use smaller extents");
      if (opts.halo < 0) return detail::error_message(api, ": halo width ", opts.halo, " must be >= 0");
      index_t fixed = 1;
      bool all_fixed = true;
      for (int d = 0; d < N; ++d) {
        if (opts.ranks[d] < 0)
          return detail::error_message(api, ": GridOptions::ranks[", d, "] is ", opts.ranks[d],
                                       "; give a positive number of ranks, or 0 to let MPI choose");
        all_fixed = all_fixed && opts.ranks[d] > 0;
        fixed = std::min<index_t>(fixed * std::max(opts.ranks[d], 1), index_t{1} << 40);
      }
      if (all_fixed ? fixed != size : size % fixed != 0)
        return detail::error_message(api, ": GridOptions::ranks ", describe_extents(opts.ranks),
                                     all_fixed ? " asks for " : " asks for a multiple of ", fixed,
                                     fixed == 1 ? " rank" : " ranks", ", but the communicator has ",
                                     size, "; set a dimension's ranks to 0 to let MPI choose it");
      return {};
    }

    void decompose(const Comm& parent) {
#if KFUSE_ENABLE_MPI
      dims = options.ranks;
      MPI_Dims_create(parent.size(), N, dims.data());
      std::array<int, N> periods{};
      for (int d = 0; d < N; ++d) periods[d] = options.periodic[d] ? 1 : 0;
      MPI_Cart_create(parent.native(), N, dims.data(), periods.data(), 0, &cart);
      comm = Comm(cart);
      MPI_Cart_coords(cart, comm.rank(), N, coords.data());
#else
      (void)parent;
      dims.fill(1);
      coords.fill(0);
#endif
    }

    int rank_of(const std::array<int, N>& c) const {
#if KFUSE_ENABLE_MPI
      int r = 0;
      MPI_Cart_rank(cart, c.data(), &r);
      return r;
#else
      (void)c;
      return 0;
#endif
    }

    std::array<int, N> coords_of(int r) const {
      std::array<int, N> c{};
#if KFUSE_ENABLE_MPI
      MPI_Cart_coords(cart, r, N, c.data());
#else
      (void)r;
#endif
      return c;
    }

    void fill_neighbors(Direction<N>& dir, int d) {
      if (d == N) {
        std::array<int, N> c{};
        for (int k = 0; k < N; ++k) {
          c[k] = coords[k] + dir[k];
          if (c[k] < 0 || c[k] >= dims[k]) {
            if (!options.periodic[k]) return;  // beyond a non-periodic boundary
            c[k] = (c[k] + dims[k]) % dims[k];
          }
        }
        neighbors[direction_index(dir)] = rank_of(c);
        return;
      }
      for (int o = -1; o <= 1; ++o) {
        dir[d] = o;
        fill_neighbors(dir, d + 1);
      }
    }
  };

  std::shared_ptr<const Impl> impl_;
};

}  // namespace kfuse
