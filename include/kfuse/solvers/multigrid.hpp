// kfuse::pc::multigrid: geometric multigrid, one V-cycle per apply (PETSc's
// PCMG with PCMGSetInterpolation, PCMGSetRestriction and Galerkin coarse
// operators; the GMG of legate.sparse's examples/gmg.py, which Diffuse fuses).
// For a matrix whose rows are the points of a structured grid in row-major
// order (the generators' poisson2d, poisson3d, convection_diffusion2d, or
// any CSR matrix whose grid the user names):
//
//   coarsening   coarse point c of a dimension of n points is fine point
//                2c + 1 (vertex-centred): (n - 1) / 2 coarse points
//   P            bilinear (trilinear) interpolation: weight 1 at the
//                coarse point's own fine point, 1/2 per dimension one away;
//                with injection, weight 1 at the coarse point's own only
//   R            full weighting, P^T / 2^d (1/4 1/2 1/4 per dimension), or
//                injection, P^T
//   A_{l+1}      R A_l P (Galerkin), Kokkos Kernels' SpGEMM on each rank's
//                block: A's block times P's rows for its columns (generated
//                from the grid, so no rows of P travel), then the rank's
//                share of R times that; the partial sums go to the rows'
//                owners and are added there
//   smoother     weighted Jacobi x += w D^-1 (b - A x), w = weight /
//                lambda_max(D^-1 A) (lambda_max as pc::chebyshev estimates
//                it); `sweeps` before and after the coarse correction,
//                `coarse_sweeps` on the coarsest grid
//
// One V-cycle from x = 0, level by level (each line one fused kernel):
//   x = w D^-1 b                                       (finest only: coarser
//   x' = x + w D^-1 (b - A x)    (sweeps - 1 times)     levels get it fused
//   t = b - A x                                          into the restriction)
//   b_c = R t,  x_c = w_c D_c^-1 b_c                   (the next level's first step)
//   ... the next level ...
//   x += P x_c
//   x' = x + w D^-1 (b - A x)    (sweeps times)
// Two levels with one sweep: 5 kernels, no allreduce.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/exec/program.hpp"
#include "kfuse/solvers/chebyshev.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::pc {

/// How the residual goes to the coarser grid.
enum class Restriction {
  full_weighting,  ///< R = P^T / 2^d, P bilinear interpolation
  injection,       ///< R takes the coarse point's own fine value, P = R^T
};

/// The V-cycle (PETSc's -pc_mg_* and -mg_levels_* options in kfuse's terms).
struct MultigridOptions {
  int levels = 2;  ///< grids, the given one included (-pc_mg_levels); >= 2
  Restriction restriction = Restriction::full_weighting;
  int sweeps = 1;         ///< Jacobi sweeps before and after the correction; >= 1
  int coarse_sweeps = 1;  ///< Jacobi sweeps from 0 on the coarsest grid; >= 1
  /// Jacobi's damping relative to the largest eigenvalue of D^-1 A: w =
  /// weight / lambda_max (PyAMG's and legate.sparse's 4/3); 0 < weight < 2.
  double weight = 4.0 / 3.0;
};

}  // namespace kfuse::pc

namespace kfuse::detail {

/// A structured grid's points, row-major (the last dimension fastest).
struct GridShape {
  std::vector<index_t> extents;

  /// The number of points, or nullopt when it does not fit index_t.
  std::optional<index_t> size() const { return checked_product(extents); }
  /// The grid of the coarse points (2c + 1 of each dimension).
  GridShape coarse() const {
    GridShape c{extents};
    for (index_t& e : c.extents) e = (e - 1) / 2;
    return c;
  }
  std::array<index_t, 3> point(index_t g) const {
    std::array<index_t, 3> p{0, 0, 0};
    for (std::size_t d = extents.size(); d-- > 0;) {
      p[d] = g % extents[d];
      g /= extents[d];
    }
    return p;
  }
  index_t index(const std::array<index_t, 3>& p) const {
    index_t g = 0;
    for (std::size_t d = 0; d < extents.size(); ++d) g = g * extents[d] + p[d];
    return g;
  }
  std::string describe() const {
    std::ostringstream s;
    for (std::size_t d = 0; d < extents.size(); ++d) s << (d ? "x" : "") << extents[d];
    return s.str();
  }
};

/// The fine point of coarse point c: 2c + 1 in every dimension.
inline index_t fine_point_of(const GridShape& fine, const GridShape& coarse, index_t c) {
  auto p = coarse.point(c);
  for (std::size_t d = 0; d < fine.extents.size(); ++d) p[d] = 2 * p[d] + 1;
  return fine.index(p);
}

/// Row g of the interpolation P (fine point g from coarse points): the
/// tensor product of each dimension's one or two (coarse index, weight).
template <class T>
void interpolation_row(const GridShape& fine, const GridShape& coarse, bool injection, index_t g,
                       std::vector<std::pair<index_t, T>>& row) {
  row.clear();
  const auto p = fine.point(g);
  const std::size_t dims = fine.extents.size();
  std::array<std::array<std::pair<index_t, T>, 2>, 3> choice{};
  std::array<int, 3> count{1, 1, 1};
  for (std::size_t d = 0; d < dims; ++d) {
    count[d] = 0;
    for (index_t c = p[d] / 2 - 1; c <= p[d] / 2; ++c) {
      const index_t distance = std::abs(2 * c + 1 - p[d]);
      if (c < 0 || c >= coarse.extents[d] || distance > 1 || (injection && distance == 1)) continue;
      choice[d][static_cast<std::size_t>(count[d]++)] = {c, distance == 0 ? T(1) : T(0.5)};
    }
  }
  for (int a = 0; a < count[0]; ++a)
    for (int b = 0; b < count[1]; ++b)
      for (int k = 0; k < count[2]; ++k) {
        std::array<index_t, 3> q{0, 0, 0};
        T w = 1;
        const int pick[3] = {a, b, k};
        for (std::size_t d = 0; d < dims; ++d) {
          q[d] = choice[d][static_cast<std::size_t>(pick[d])].first;
          w *= choice[d][static_cast<std::size_t>(pick[d])].second;
        }
        row.emplace_back(coarse.index(q), w);
      }
}

/// The coarse rows of a rank: the coarse points whose own fine point it
/// owns (fine_point_of is increasing, so they are consecutive).
inline RowMap coarse_rows(const RowMap& fine_rows, const GridShape& fine, const GridShape& coarse) {
  auto first_at_or_after = [&](index_t g) {
    index_t lo = 0, hi = *coarse.size();
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (fine_point_of(fine, coarse, mid) < g)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  const index_t begin = fine_rows.local_begin();
  return RowMap::from_local_size(
      fine_rows.comm(),
      first_at_or_after(begin + fine_rows.local_size()) - first_at_or_after(begin));
}

template <class T>
using LocalCsr = typename CsrMatrix<T>::local_matrix_type;

/// A local CSR block on the device from host arrays.
template <class T>
LocalCsr<T> local_csr(const std::string& label, index_t rows, index_t cols,
                      const std::vector<int>& row_ptr, const std::vector<int>& columns,
                      const std::vector<T>& values) {
  using Matrix = LocalCsr<T>;
  const auto r = to_device<typename Matrix::row_map_type::non_const_type>(label + ".rows", row_ptr);
  const auto c = to_device<typename Matrix::index_type::non_const_type>(label + ".cols", columns);
  const auto v = to_device<typename Matrix::values_type::non_const_type>(label + ".values", values);
  return Matrix(label, static_cast<int>(rows), static_cast<int>(cols),
                static_cast<int>(values.size()), v, r, c);
}

/// C = A B on local blocks: Kokkos Kernels' SpGEMM.
template <class T>
LocalCsr<T> local_product(const LocalCsr<T>& A, const LocalCsr<T>& B) {
  using Handle =
      KokkosKernels::Experimental::KokkosKernelsHandle<int, int, T, ExecSpace, MemSpace, MemSpace>;
  Handle handle;
  handle.create_spgemm_handle();
  LocalCsr<T> C;
  KokkosSparse::spgemm_symbolic(handle, A, false, B, false, C);
  KokkosSparse::spgemm_numeric(handle, A, false, B, false, C);
  return C;
}

/// The entries of a local block with its rows and columns named by `row_of`
/// and `col_of` (global indices), appended to `out`.
template <class T, class Rows, class Cols>
void append_entries(const LocalCsr<T>& M, const Rows& row_of, const Cols& col_of,
                    std::vector<Triplet<T>>& out) {
  const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map);
  const auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.entries);
  const auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.values);
  for (index_t i = 0; i < index_t(M.numRows()); ++i)
    for (auto k = rows(i); k < rows(i + 1); ++k)
      out.push_back({row_of(i), col_of(cols(k)), vals(k)});
}

/// The transfer operators between one grid and the next coarser, and the
/// coarse Galerkin operator R A P.
template <class T>
struct GridTransfer {
  CsrMatrix<T> R, P, coarse;
};

template <class T>
GridTransfer<T> make_transfer(const CsrMatrix<T>& A, const GridShape& fine, bool injection,
                              int level) {
  const GridShape coarse = fine.coarse();
  const RowMap& fine_rows = A.range();
  const RowMap coarse_map = coarse_rows(fine_rows, fine, coarse);
  const std::string name = A.label() + ".mg" + std::to_string(level + 1);
  const T scale = injection ? T(1) : T(std::pow(0.5, double(fine.extents.size())));

  // Everything up to the assembly is this rank's own work (host vectors,
  // Kokkos Kernels' allocations): a failure on one rank is agreed on before
  // the collective assembly, so every rank throws.
  std::vector<Triplet<T>> r_entries, p_entries, galerkin;
  A.range().comm().agree_on([&] {
    // R's own rows (each coarse point's stencil) and P's own rows.
    for (index_t i = 0; i < coarse_map.local_size(); ++i) {
      const index_t c = coarse_map.local_begin() + i;
      const auto centre = fine.point(fine_point_of(fine, coarse, c));
      const int reach = injection ? 0 : 1;
      std::array<index_t, 3> lo{0, 0, 0}, hi{0, 0, 0};
      for (std::size_t d = 0; d < fine.extents.size(); ++d)
        lo[d] = centre[d] - reach, hi[d] = centre[d] + reach;
      for (index_t a = lo[0]; a <= hi[0]; ++a)
        for (index_t b = lo[1]; b <= hi[1]; ++b)
          for (index_t k = lo[2]; k <= hi[2]; ++k) {
            const std::array<index_t, 3> q{a, b, k};
            T w = scale;
            for (std::size_t d = 0; d < fine.extents.size(); ++d)
              w *= q[d] == centre[d] ? T(1) : T(0.5);
            r_entries.push_back({c, fine.index(q), w});
          }
    }

    // P's rows for every local column of A (owned, then ghosts), the coarse
    // columns numbered locally in ascending order.
    const index_t owned = A.domain().local_size();
    const auto& ghosts = A.ghost_global_columns();
    auto global_column = [&](index_t k) {
      return k < owned ? A.domain().local_begin() + k : ghosts[static_cast<std::size_t>(k - owned)];
    };
    const index_t local_columns = owned + index_t(ghosts.size());
    std::vector<std::vector<std::pair<index_t, T>>> p_rows(static_cast<std::size_t>(local_columns));
    std::vector<index_t> coarse_columns;
    for (index_t k = 0; k < local_columns; ++k) {
      interpolation_row(fine, coarse, injection, global_column(k),
                        p_rows[static_cast<std::size_t>(k)]);
      for (const auto& [c, w] : p_rows[static_cast<std::size_t>(k)]) {
        coarse_columns.push_back(c);
        if (k < owned) p_entries.push_back({global_column(k), c, w});
      }
    }
    std::sort(coarse_columns.begin(), coarse_columns.end());
    coarse_columns.erase(std::unique(coarse_columns.begin(), coarse_columns.end()),
                         coarse_columns.end());
    auto local_coarse = [&](index_t c) {
      return int(std::lower_bound(coarse_columns.begin(), coarse_columns.end(), c) -
                 coarse_columns.begin());
    };
    const index_t n_coarse = index_t(coarse_columns.size());

    // P's rows for A's columns, and this rank's share of R: the coarse rows
    // times its own fine rows, R[:, own] = P[own, :]^T scale.
    std::vector<int> ext_rows{0}, ext_cols, share_rows(static_cast<std::size_t>(n_coarse) + 1, 0),
        share_cols;
    std::vector<T> ext_values, share_values;
    for (const auto& r : p_rows) {
      for (const auto& [c, w] : r) ext_cols.push_back(local_coarse(c)), ext_values.push_back(w);
      ext_rows.push_back(int(ext_cols.size()));
    }
    for (index_t k = 0; k < owned; ++k)
      for (const auto& [c, w] : p_rows[static_cast<std::size_t>(k)])
        ++share_rows[static_cast<std::size_t>(local_coarse(c)) + 1];
    for (std::size_t i = 1; i < share_rows.size(); ++i) share_rows[i] += share_rows[i - 1];
    share_cols.resize(static_cast<std::size_t>(share_rows.back()));
    share_values.resize(share_cols.size());
    std::vector<int> fill(share_rows.begin(), share_rows.end() - 1);
    for (index_t k = 0; k < owned; ++k)
      for (const auto& [c, w] : p_rows[static_cast<std::size_t>(k)]) {
        const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(local_coarse(c))]++);
        share_cols[at] = int(k);
        share_values[at] = w * scale;
      }

    const auto P_ext =
        local_csr<T>(name + ".P_ext", local_columns, n_coarse, ext_rows, ext_cols, ext_values);
    const auto R_share =
        local_csr<T>(name + ".R_share", n_coarse, owned, share_rows, share_cols, share_values);
    const auto AP = local_product<T>(A.local_matrix(), P_ext);
    const auto RAP = local_product<T>(R_share, AP);
    auto coarse_index = [&](index_t i) { return coarse_columns[static_cast<std::size_t>(i)]; };
    append_entries(RAP, coarse_index, coarse_index, galerkin);
  });

  return {assemble_csr(coarse_map, fine_rows, std::move(r_entries), name + ".R"),
          assemble_csr(fine_rows, coarse_map, std::move(p_entries), name + ".P"),
          assemble_routed(coarse_map, coarse_map, galerkin, name)};
}

// The V-cycle's programs (see the file comment).

/// x = w D^-1 b: the first sweep from x = 0.
template <class T>
auto mg_first_sweep(const Vector<T>& x, const Vector<T>& dinv, const Vector<T>& b,
                    const Scalar<T>& w) {
  return fuse(x, dinv, b, w,
              [](auto x, auto dinv, auto b, auto w) { return seq(assign(x, w * (dinv * b))); });
}

/// out = in + w D^-1 (b - A in).
template <class T>
auto mg_sweep(const CsrMatrix<T>& A, const Vector<T>& out, const Vector<T>& in,
              const Vector<T>& dinv, const Vector<T>& b, const Scalar<T>& w) {
  return fuse(out, in, dinv, b, w, [A](auto out, auto in, auto dinv, auto b, auto w) {
    return seq(assign(out, in + w * (dinv * (b - A * in))));
  });
}

/// t = b - A x; b_c = R t; x_c = w_c D_c^-1 b_c (the coarse level's first sweep).
template <class T>
auto mg_restrict(const CsrMatrix<T>& A, const CsrMatrix<T>& R, const Vector<T>& x,
                 const Vector<T>& b, const Vector<T>& bc, const Vector<T>& xc,
                 const Vector<T>& dinvc, const Scalar<T>& wc) {
  return fuse(x, b, bc, xc, dinvc, wc, temporary<T>,
              [A, R](auto x, auto b, auto bc, auto xc, auto dinvc, auto wc, auto t) {
                return seq(assign(t, b - A * x),  // kernel 1 (fine rows)
                           assign(bc, R * t),     // kernel 2 (coarse rows)
                           assign(xc, wc * (dinvc * bc)));
              });
}

/// x += P x_c.
template <class T>
auto mg_correct(const CsrMatrix<T>& P, const Vector<T>& x, const Vector<T>& xc) {
  return fuse(x, xc, [P](auto x, auto xc) { return seq(assign(x, x + P * xc)); });
}

template <class T>
struct MultigridPrograms {
  template <class V>
  static const V& any();
  using First = decltype(mg_first_sweep(any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                        any<Scalar<T>>()));
  using Sweep = decltype(mg_sweep(any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                  any<Vector<T>>(), any<Vector<T>>(), any<Scalar<T>>()));
  using Restrict = decltype(mg_restrict(any<CsrMatrix<T>>(), any<CsrMatrix<T>>(), any<Vector<T>>(),
                                        any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                        any<Vector<T>>(), any<Scalar<T>>()));
  using Correct = decltype(mg_correct(any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>()));
  static_assert(First::kernel_count == 1 && Sweep::kernel_count == 1 &&
                    Restrict::kernel_count == 2 && Correct::kernel_count == 1,
                "kfuse::pc::multigrid: a sweep, the correction and the first sweep must fuse into "
                "one kernel each, the residual and restriction into two");

  struct Level {
    std::array<std::optional<Sweep>, 2> sweep;  // [0]: u -> v, [1]: v -> u
    std::optional<Restrict> restrict_;          // not on the coarsest
    std::optional<Correct> correct;
  };
  const void* r = nullptr;  // the bound r and z (Vector::storage_id)
  const void* z = nullptr;
  std::optional<First> first;
  std::vector<Level> levels;
};

}  // namespace kfuse::detail

namespace kfuse::pc {

/// Geometric multigrid (see the file comment). A handle: copies share the
/// hierarchy, work vectors and programs.
template <class T>
class Multigrid {
 public:
  /// Collective: `shape` is the grid of A's rows (1 to 3 extents, row-major,
  /// the last fastest). A kfuse::Error on every rank when the shape does not
  /// match A, a grid is too small to coarsen, an option is out of range or
  /// differs between ranks, or a diagonal entry is zero.
  Multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
            const MultigridOptions& options = {});

  int levels() const { return int(state_->levels.size()); }
  /// Level 0 is A; level l + 1 is R_l A_l P_l.
  const CsrMatrix<T>& matrix(int level) const { return state_->levels.at(level).A; }
  /// From level l to l + 1 (l < levels() - 1).
  const CsrMatrix<T>& restriction(int level) const { return *state_->levels.at(level).R; }
  const CsrMatrix<T>& interpolation(int level) const { return *state_->levels.at(level).P; }
  /// Level l's grid and Jacobi weight w_l.
  const std::vector<index_t>& shape(int level) const {
    return state_->levels.at(level).shape.extents;
  }
  double jacobi_weight(int level) const { return double(state_->levels.at(level).w.value()); }
  /// The V-cycle's kernels, level by level (local: no communication).
  std::string explain() const;

  /// z = M r, one V-cycle from z = 0. Collective: r and z must lie on A's
  /// rows and be different vectors (one allreduce besides the cycle's work).
  void operator()(const Vector<T>& r, Vector<T>& z) const;
  /// The same without the checks (what the solvers call).
  void apply(const Vector<T>& r, Vector<T>& z) const;

 private:
  struct Level {
    Level(const CsrMatrix<T>& a, detail::GridShape s, Vector<T> d)
        : A(a), shape(std::move(s)), dinv(std::move(d)) {}
    CsrMatrix<T> A;
    detail::GridShape shape;
    Vector<T> dinv;
    Scalar<T> w{"mg.w"};
    std::optional<CsrMatrix<T>> R, P;  // to the next level
    std::optional<Vector<T>> b, u, v;  // level 0: only u (b = r, v = z)
  };
  struct State {
    MultigridOptions options;
    std::vector<Level> levels;
    detail::MultigridPrograms<T> programs;
  };
  void bind(const Vector<T>& r, const Vector<T>& z) const;
  void cycle(int level) const;
  std::shared_ptr<State> state_;
};

template <class T>
Multigrid<T> multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
                       const MultigridOptions& options = {}) {
  return Multigrid<T>(A, std::move(shape), options);
}

template <class T>
Multigrid<T>::Multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
                        const MultigridOptions& o) {
  constexpr const char* api = "kfuse::pc::multigrid";
  const Comm& comm = A.range().comm();
  const detail::GridShape grid{shape};
  std::string error;
  if (shape.empty() || shape.size() > 3)
    error = detail::error_message(api, ": the grid has ", shape.size(),
                                  " extents; give 1 to 3 (row-major, the last fastest)");
  else if (std::any_of(shape.begin(), shape.end(), [](index_t e) { return e < 1; }) ||
           grid.size() != std::optional<index_t>(A.global_rows()))
    error = detail::error_message(api, ": the grid ", grid.describe(), " does not have the ",
                                  A.global_rows(), " rows of '", A.label(), "'");
  else if (o.levels < 2)
    error =
        detail::error_message(api, ": MultigridOptions::levels is ", o.levels, "; it must be >= 2");
  else if (o.sweeps < 1 || o.coarse_sweeps < 1)
    error = detail::error_message(api, ": MultigridOptions::sweeps (", o.sweeps,
                                  ") and coarse_sweeps (", o.coarse_sweeps, ") must be >= 1");
  else if (!(o.weight > 0 && o.weight < 2))
    error = detail::error_message(api, ": MultigridOptions::weight is ", o.weight,
                                  "; it must be > 0 and < 2");
  else {
    detail::GridShape g = grid;
    for (int l = 0; l + 1 < o.levels; ++l, g = g.coarse())
      if (std::any_of(g.extents.begin(), g.extents.end(), [](index_t e) { return e < 3; })) {
        error = detail::error_message(api, ": level ", l, "'s grid ", g.describe(),
                                      " cannot be coarsened (every extent needs >= 3 points) for ",
                                      o.levels, " levels; use fewer");
        break;
      }
  }
  comm.agree_or_throw(error);
  std::vector<std::int64_t> same{o.levels, int(o.restriction), o.sweeps, o.coarse_sweeps,
                                 detail::bits_of(o.weight)};
  same.insert(same.end(), shape.begin(), shape.end());
  detail::check_same_values(api, comm, same, "grids or MultigridOptions");
  detail::check_square_blocks(api, A);

  auto s = std::make_shared<State>();
  s->options = o;
  const bool injection = o.restriction == Restriction::injection;
  s->levels.emplace_back(A, grid, detail::inverse_diagonal(api, A));
  for (int l = 0;; ++l) {
    Level& level = s->levels.back();
    const double lambda =
        detail::chebyshev_estimate(api, level.A, level.dinv, ChebyshevOptions{}.estimate_steps,
                                   "multigrid with Jacobi smoothing needs a definite matrix");
    level.w = T(o.weight / lambda);
    if (l > 0) {
      const std::string name = level.A.label();
      level.b.emplace(level.A.range(), name + ".b");
      level.v.emplace(level.A.range(), name + ".v");
    }
    level.u.emplace(level.A.range(), level.A.label() + ".u");
    if (l + 1 == o.levels) break;
    auto transfer = detail::make_transfer(level.A, level.shape, injection, l);
    level.R = transfer.R;
    level.P = transfer.P;
    detail::GridShape coarse = level.shape.coarse();
    s->levels.emplace_back(transfer.coarse, coarse, detail::inverse_diagonal(api, transfer.coarse));
  }
  state_ = std::move(s);
}

template <class T>
void Multigrid<T>::bind(const Vector<T>& r, const Vector<T>& z) const {
  State& s = *state_;
  auto& programs = s.programs;
  const int L = levels();
  const int sweeps = s.options.sweeps;
  programs.levels.clear();
  programs.levels.resize(static_cast<std::size_t>(L));
  auto b_of = [&](int l) -> const Vector<T>& { return l == 0 ? r : *s.levels[l].b; };
  auto v_of = [&](int l) -> const Vector<T>& { return l == 0 ? z : *s.levels[l].v; };
  // Where a level's result lies: v after the post-sweeps; on the coarsest u
  // after an odd number of sweeps, v after an even one.
  auto result_of = [&](int l) -> const Vector<T>& {
    return l + 1 < L || s.options.coarse_sweeps % 2 == 0 ? v_of(l) : *s.levels[l].u;
  };
  programs.first.emplace(
      detail::mg_first_sweep(*s.levels[0].u, s.levels[0].dinv, r, s.levels[0].w));
  for (int l = 0; l < L; ++l) {
    Level& level = s.levels[l];
    auto& p = programs.levels[l];
    const Vector<T>& u = *level.u;
    const Vector<T>& v = v_of(l);
    p.sweep[0].emplace(detail::mg_sweep(level.A, v, u, level.dinv, b_of(l), level.w));
    p.sweep[1].emplace(detail::mg_sweep(level.A, u, v, level.dinv, b_of(l), level.w));
    if (l + 1 == L) break;
    const Vector<T>& smoothed = sweeps % 2 == 1 ? u : v;  // after the pre-sweeps
    const Level& next = s.levels[l + 1];
    p.restrict_.emplace(detail::mg_restrict(level.A, *level.R, smoothed, b_of(l), *next.b, *next.u,
                                            next.dinv, next.w));
    p.correct.emplace(detail::mg_correct(*level.P, smoothed, result_of(l + 1)));
  }
  programs.r = r.storage_id();
  programs.z = z.storage_id();
}

template <class T>
void Multigrid<T>::cycle(int l) const {
  State& s = *state_;
  auto& p = s.programs.levels[l];
  const bool coarsest = l + 1 == levels();
  int at = 0;  // the iterate is in u (0) or v (1); the first sweep wrote u
  for (int k = 1; k < (coarsest ? s.options.coarse_sweeps : s.options.sweeps); ++k, at ^= 1)
    (*p.sweep[at])();
  if (coarsest) return;
  (*p.restrict_)();
  cycle(l + 1);
  (*p.correct)();
  for (int k = 0; k < s.options.sweeps; ++k, at ^= 1) (*p.sweep[at])();
}

template <class T>
void Multigrid<T>::apply(const Vector<T>& r, Vector<T>& z) const {
  auto& programs = state_->programs;
  if (programs.r != r.storage_id() || programs.z != z.storage_id()) bind(r, z);
  (*programs.first)();
  cycle(0);
}

template <class T>
void Multigrid<T>::operator()(const Vector<T>& r, Vector<T>& z) const {
  if (detail::check_apply_vectors("kfuse::pc::multigrid", state_->levels[0].A.range(), r, z,
                                  state_->programs.r, state_->programs.z))
    bind(r, z);
  apply(r, z);
}

template <class T>
std::string Multigrid<T>::explain() const {
  using Programs = detail::MultigridPrograms<T>;
  const State& s = *state_;
  std::ostringstream out;
  int total = 0;
  auto kernels = [&](int per_run, int runs, const char* what) {
    if (per_run * runs > 0) out << "    " << what << ": " << per_run * runs << " kernel(s)\n";
    total += per_run * runs;
  };
  out << "kfuse::pc::multigrid: V-cycle over " << levels() << " levels\n";
  for (int l = 0; l < levels(); ++l) {
    const Level& level = s.levels[l];
    const bool coarsest = l + 1 == levels();
    out << "  level " << l << ": grid " << level.shape.describe() << ", " << level.A.global_rows()
        << " rows, " << level.A.global_nnz() << " entries, w = " << double(level.w.value()) << "\n";
    if (l == 0) kernels(Programs::First::kernel_count, 1, "x = w D^-1 b");
    const int pre = (coarsest ? s.options.coarse_sweeps : s.options.sweeps) - 1;
    kernels(Programs::Sweep::kernel_count, pre, "x += w D^-1 (b - A x)");
    if (coarsest) break;
    kernels(Programs::Restrict::kernel_count, 1, "t = b - A x | b_c = R t, x_c = w_c D_c^-1 b_c");
    kernels(Programs::Correct::kernel_count, 1, "x += P x_c");
    kernels(Programs::Sweep::kernel_count, s.options.sweeps, "x += w D^-1 (b - A x)");
  }
  out << "  " << total << " kernels per V-cycle, no allreduce\n";
  return out.str();
}

}  // namespace kfuse::pc

namespace kfuse::detail {
template <class T>
struct is_builtin_preconditioner<pc::Multigrid<T>> : std::true_type {};
}  // namespace kfuse::detail
