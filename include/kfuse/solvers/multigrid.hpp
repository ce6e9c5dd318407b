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
//                lambda_max(D^-1 A), or Chebyshev in D^-1 A on [lower,
//                upper] lambda_max (pc::chebyshev's recurrence and estimate);
//                `sweeps` iterations before and after the coarse correction
//   coarsest     `coarse_sweeps` smoother iterations, or an exact LU of the
//                gathered matrix on every rank (PETSc's PCREDUNDANT + LU)
//
// One V-cycle from x = 0, level by level (each line one fused kernel):
//   x = w D^-1 b                                       (finest only: coarser
//   x' = x + w D^-1 (b - A x)    (sweeps - 1 times)     levels get it fused
//   t = b - A x                                          into the restriction)
//   b_c = R t,  x_c = w_c D_c^-1 b_c                   (the next level's first step;
//                                                        b_c unstored on a coarsest
//                                                        level of one sweep: unread)
//   ... the next level ...
//   x += P x_c
//   x' = x + w D^-1 (b - A x)    (sweeps times)
// A Chebyshev iteration is one kernel too (x_next = c1 x_prev + c2 x + c3
// D^-1 (b - A x)). Two levels with one sweep: 5 kernels, no allreduce.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/program/fuse.hpp"
#include "kfuse/solvers/chebyshev.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/sparse_lu.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::pc {

/// How the residual goes to the coarser grid.
enum class Restriction {
  full_weighting,  ///< R = P^T / 2^d, P bilinear interpolation
  injection,       ///< R takes the coarse point's own fine value, P = R^T
};

/// The smoother of every level (with PCJACOBI, as PETSc's -mg_levels_pc_type jacobi).
enum class Smoother {
  jacobi,     ///< weighted Jacobi (-mg_levels_ksp_type richardson, scale w)
  chebyshev,  ///< Chebyshev in D^-1 A (-mg_levels_ksp_type chebyshev), pc::chebyshev's bounds
};

/// The solve on the coarsest grid.
enum class CoarseSolve {
  smoother,  ///< `coarse_sweeps` smoother iterations from 0
  direct,    ///< exact LU, gathered on every rank (-mg_coarse_pc_type redundant, LU)
};

/// The V-cycle (PETSc's -pc_mg_* and -mg_levels_* options in kfuse's terms).
struct MultigridOptions {
  int levels = 2;  ///< grids, the given one included (-pc_mg_levels); >= 2
  Restriction restriction = Restriction::full_weighting;
  Smoother smoother = Smoother::jacobi;
  /// Smoother iterations before and after the correction (Jacobi sweeps, or
  /// the Chebyshev polynomial's degree; -mg_levels_ksp_max_it); >= 1.
  int sweeps = 1;
  CoarseSolve coarse = CoarseSolve::smoother;
  int coarse_sweeps = 1;  ///< smoother iterations from 0 on the coarsest grid; >= 1
  /// Jacobi's damping relative to the largest eigenvalue of D^-1 A: w =
  /// weight / lambda_max (PyAMG's and legate.sparse's 4/3); 0 < weight < 2.
  double weight = 4.0 / 3.0;
  /// Chebyshev's bounds per level, [lower, upper] times the estimate of
  /// lambda_max(D^-1 A) (-mg_levels_ksp_chebyshev_esteig 0,lower,0,upper;
  /// emin and emax must stay 0), and the estimate's CG iterations (both smoothers).
  ChebyshevOptions chebyshev;
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

/// The Galerkin product's local blocks, on the host: the product is set-up
/// work, once per level, and Kokkos Kernels 3.4's SpGEMM on CUDA fails at it
/// (its default there, cuSPARSE's, throws in a build without cuSPARSE; its own
/// kernels hit an illegal memory access on an H200). On host backends these
/// are the matrices' own types and nothing is copied.
template <class T>
using HostLocalCsr = KokkosSparse::CrsMatrix<
    T, int, Kokkos::Device<Kokkos::DefaultHostExecutionSpace, Kokkos::HostSpace>, void, int>;

/// A local CSR block on the host from host arrays.
template <class T>
HostLocalCsr<T> local_csr(const std::string& label, index_t rows, index_t cols,
                          const std::vector<int>& row_ptr, const std::vector<int>& columns,
                          const std::vector<T>& values) {
  using Matrix = HostLocalCsr<T>;
  const auto r = to_device<typename Matrix::row_map_type::non_const_type>(label + ".rows", row_ptr);
  const auto c = to_device<typename Matrix::index_type::non_const_type>(label + ".cols", columns);
  const auto v = to_device<typename Matrix::values_type::non_const_type>(label + ".values", values);
  return Matrix(label, static_cast<int>(rows), static_cast<int>(cols),
                static_cast<int>(values.size()), v, r, c);
}

/// A host copy of a rank's block of A.
template <class T>
HostLocalCsr<T> host_copy(const typename CsrMatrix<T>::local_matrix_type& M) {
  return HostLocalCsr<T>("kfuse:mg.A_host", M.numRows(), M.numCols(), M.nnz(),
                         Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.values),
                         Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.row_map),
                         Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), M.graph.entries));
}

/// C = A B on local blocks: Kokkos Kernels' own SpGEMM (named: its default
/// differs between backends and versions).
template <class T>
HostLocalCsr<T> local_product(const HostLocalCsr<T>& A, const HostLocalCsr<T>& B) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Handle =
      KokkosKernels::Experimental::KokkosKernelsHandle<int, int, T, Space, Kokkos::HostSpace,
                                                       Kokkos::HostSpace>;
  Handle handle;
  handle.create_spgemm_handle(KokkosSparse::SPGEMM_KK);
  HostLocalCsr<T> C;
  KokkosSparse::spgemm_symbolic(handle, A, false, B, false, C);
  KokkosSparse::spgemm_numeric(handle, A, false, B, false, C);
  return C;
}

/// The entries of a local block with its rows and columns named by `row_of`
/// and `col_of` (global indices), appended to `out`.
template <class T, class Rows, class Cols>
void append_entries(const HostLocalCsr<T>& M, const Rows& row_of, const Cols& col_of,
                    std::vector<Triplet<T>>& out) {
  for (index_t i = 0; i < index_t(M.numRows()); ++i)
    for (auto k = M.graph.row_map(i); k < M.graph.row_map(i + 1); ++k)
      out.push_back({row_of(i), col_of(M.graph.entries(k)), M.values(k)});
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
    // P's rows for every local column, one flat array: row k is entries
    // [ext_rows[k], ext_rows[k + 1]) of p_coarse (global coarse columns) and p_weight.
    std::vector<int> ext_rows{0};
    std::vector<index_t> p_coarse;
    std::vector<T> p_weight;
    ext_rows.reserve(static_cast<std::size_t>(local_columns) + 1);
    std::vector<std::pair<index_t, T>> row;
    for (index_t k = 0; k < local_columns; ++k) {
      interpolation_row(fine, coarse, injection, global_column(k), row);
      for (const auto& [c, w] : row) {
        p_coarse.push_back(c);
        p_weight.push_back(w);
        if (k < owned) p_entries.push_back({global_column(k), c, w});
      }
      ext_rows.push_back(int(p_coarse.size()));
    }
    std::vector<index_t> coarse_columns = p_coarse;
    std::sort(coarse_columns.begin(), coarse_columns.end());
    coarse_columns.erase(std::unique(coarse_columns.begin(), coarse_columns.end()),
                         coarse_columns.end());
    const index_t n_coarse = index_t(coarse_columns.size());

    // P's rows for A's columns, the coarse columns numbered locally, and this rank's share
    // of R: the coarse rows times its own fine rows, R[:, own] = P[own, :]^T scale.
    std::vector<int> ext_cols(p_coarse.size());
    for (std::size_t e = 0; e < p_coarse.size(); ++e)
      ext_cols[e] = int(std::lower_bound(coarse_columns.begin(), coarse_columns.end(),
                                         p_coarse[e]) -
                        coarse_columns.begin());
    const auto owned_entries = static_cast<std::size_t>(ext_rows[static_cast<std::size_t>(owned)]);
    std::vector<int> share_rows(static_cast<std::size_t>(n_coarse) + 1, 0);
    for (std::size_t e = 0; e < owned_entries; ++e)
      ++share_rows[static_cast<std::size_t>(ext_cols[e]) + 1];
    for (std::size_t i = 1; i < share_rows.size(); ++i) share_rows[i] += share_rows[i - 1];
    std::vector<int> share_cols(owned_entries);
    std::vector<T> share_values(owned_entries);
    std::vector<int> fill(share_rows.begin(), share_rows.end() - 1);
    for (index_t k = 0; k < owned; ++k)
      for (auto e = static_cast<std::size_t>(ext_rows[static_cast<std::size_t>(k)]);
           e < static_cast<std::size_t>(ext_rows[static_cast<std::size_t>(k) + 1]); ++e) {
        const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(ext_cols[e])]++);
        share_cols[at] = int(k);
        share_values[at] = p_weight[e] * scale;
      }

    const auto P_ext =
        local_csr<T>(name + ".P_ext", local_columns, n_coarse, ext_rows, ext_cols, p_weight);
    const auto R_share =
        local_csr<T>(name + ".R_share", n_coarse, owned, share_rows, share_cols, share_values);
    const auto AP = local_product<T>(host_copy<T>(A.local_matrix()), P_ext);
    const auto RAP = local_product<T>(R_share, AP);
    auto coarse_index = [&](index_t i) { return coarse_columns[static_cast<std::size_t>(i)]; };
    append_entries(RAP, coarse_index, coarse_index, galerkin);
  });

  return {assemble_csr(coarse_map, fine_rows, std::move(r_entries), name + ".R"),
          assemble_csr(fine_rows, coarse_map, std::move(p_entries), name + ".P"),
          assemble_routed(coarse_map, coarse_map, galerkin, name)};
}

// The V-cycle's programs (see the file comment); Chebyshev's iterations
// are chebyshev.hpp's.

/// x = w D^-1 b: the first sweep from x = 0.
template <class Policy = Fused, class T>
auto mg_first_sweep(const Vector<T>& x, const Vector<T>& dinv, const Vector<T>& b,
                    const Scalar<T>& w) {
  return fuse<Policy>(x, dinv, b, w, [](auto x, auto dinv, auto b, auto w) {
    return seq(assign_first_sweep(b, x, dinv, w));
  });
}

/// out = in + w D^-1 (b - A in); given rz, also rz = b.out (the cycle's
/// last kernel reducing a solver's r.z, Multigrid::apply_from_first_sweep).
template <class Policy = Fused, class T, class... Dot>
auto mg_sweep(const CsrMatrix<T>& A, const Vector<T>& out, const Vector<T>& in,
              const Vector<T>& dinv, const Vector<T>& b, const Scalar<T>& w, const Dot&... rz) {
  return fuse<Policy>(
      out, in, dinv, b, w, rz..., [A](auto out, auto in, auto dinv, auto b, auto w, auto... rz) {
        return seq(assign(out, in + w * (dinv * (b - A * in))), reduce(rz, dot(b, out))...);
      });
}

/// t = b - A x; x_c = w_c D_c^-1 (R t): the coarse level's first sweep. Given b_c, it
/// also stores b_c = R t and the sweep reads it back, for a coarse level that reads b_c
/// again (more sweeps, a coarser level below). Without b_c (a coarsest level of one
/// smoother iteration) R t is not stored, as an expert does not store it.
template <class Policy = Fused, class T, class... StoredBc>
auto mg_restrict(const CsrMatrix<T>& A, const CsrMatrix<T>& R, const Vector<T>& x,
                 const Vector<T>& b, const Vector<T>& xc, const Vector<T>& dinvc,
                 const Scalar<T>& wc, const StoredBc&... bc) {
  static_assert(sizeof...(StoredBc) <= 1, "mg_restrict: at most one vector b_c stores R t");
  return fuse<Policy>(x, b, xc, dinvc, wc, temporary<T>, bc...,
                      [A, R](auto x, auto b, auto xc, auto dinvc, auto wc, auto t, auto... bc) {
                        return seq(assign(t, b - A * x),  // kernel 1 (fine rows)
                                   assign(bc, R * t)...,  // kernel 2 (coarse rows)
                                   assign(xc, wc * (dinvc * stored_or(R * t, bc...))));
                      });
}

/// t = b - A x; b_c = R t (into a direct coarse solve).
template <class Policy = Fused, class T>
auto mg_restrict_residual(const CsrMatrix<T>& A, const CsrMatrix<T>& R, const Vector<T>& x,
                          const Vector<T>& b, const Vector<T>& bc) {
  return fuse<Policy>(x, b, bc, temporary<T>, [A, R](auto x, auto b, auto bc, auto t) {
    return seq(assign(t, b - A * x), assign(bc, R * t));
  });
}

/// x += P x_c.
template <class Policy = Fused, class T>
auto mg_correct(const CsrMatrix<T>& P, const Vector<T>& x, const Vector<T>& xc) {
  return fuse<Policy>(x, xc, [P](auto x, auto xc) { return seq(assign(x, x + P * xc)); });
}

/// The V-cycle's programs under a fusion policy (kfuse::pc::multigrid runs
/// Fused; the benchmarks build the others).
template <class T, class Policy = Fused>
struct MultigridPrograms {
  template <class V>
  static const V& any();
  using First = decltype(mg_first_sweep<Policy>(any<Vector<T>>(), any<Vector<T>>(),
                                                any<Vector<T>>(), any<Scalar<T>>()));
  using Sweep = decltype(mg_sweep<Policy>(any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                          any<Vector<T>>(), any<Vector<T>>(), any<Scalar<T>>()));
  using Restrict = decltype(mg_restrict<Policy>(  // stores b_c
      any<CsrMatrix<T>>(), any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(),
      any<Vector<T>>(), any<Vector<T>>(), any<Scalar<T>>(), any<Vector<T>>()));
  using RestrictOneSweep = decltype(mg_restrict<Policy>(
      any<CsrMatrix<T>>(), any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(),
      any<Vector<T>>(), any<Vector<T>>(), any<Scalar<T>>()));
  using RestrictResidual =
      decltype(mg_restrict_residual<Policy>(any<CsrMatrix<T>>(), any<CsrMatrix<T>>(),
                                            any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>()));
  using Correct =
      decltype(mg_correct<Policy>(any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>()));
  // Chebyshev's x_2 from x_0 = 0, and its later iterations.
  using Second = decltype(chebyshev_second_step<Policy>(
      any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
      any<ChebyshevScalars<T>>()));
  using Step = decltype(chebyshev_step<Policy>(any<CsrMatrix<T>>(), any<Vector<T>>(),
                                               any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                               any<Vector<T>>(), any<ChebyshevScalars<T>>()));
  // The last post-smoothing iteration of level 0 reducing r.z as well.
  using SweepDot = decltype(mg_sweep<Policy>(any<CsrMatrix<T>>(), any<Vector<T>>(),
                                             any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
                                             any<Scalar<T>>(), any<Scalar<T>>()));
  using StepDot = decltype(chebyshev_step<Policy>(
      any<CsrMatrix<T>>(), any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(), any<Vector<T>>(),
      any<Vector<T>>(), any<ChebyshevScalars<T>>(), any<Scalar<T>>()));
  static_assert(!std::is_same_v<Policy, Fused> ||
                    (First::kernel_count == 1 && Sweep::kernel_count == 1 &&
                     Restrict::kernel_count == 2 && RestrictOneSweep::kernel_count == 2 &&
                     RestrictResidual::kernel_count == 2 && Correct::kernel_count == 1 &&
                     Second::kernel_count == 1 && Step::kernel_count == 1 &&
                     SweepDot::kernel_count == 1 && StepDot::kernel_count == 1),
                "kfuse::pc::multigrid: a smoother iteration (with or without r.z), the correction "
                "and the first sweep must fuse into one kernel each, the residual and restriction "
                "into two");

  /// A level's programs, by the slot each writes (the iterate moves from
  /// slot i to slot i + 1 mod the slot count at every smoother iteration).
  struct Level {
    std::array<std::optional<Sweep>, 3> sweep;           // Jacobi; Chebyshev's first from x_0 != 0
    std::array<std::optional<Second>, 3> second;         // Chebyshev only
    std::array<std::optional<Step>, 3> step;             // Chebyshev only
    std::optional<Restrict> restrict_;                   // into a coarse level that reads b_c
    std::optional<RestrictOneSweep> restrict_one_sweep;  // into a coarsest level of one sweep
    std::optional<RestrictResidual> restrict_residual;   // into a direct coarse solve
    std::optional<Correct> correct;
  };
  std::optional<First> first;
  std::vector<Level> levels;
  std::optional<SweepDot> last_sweep;  // level 0's last iteration with r.z, by smoother
  std::optional<StepDot> last_step;
};

/// The direct coarse solve: the coarsest matrix gathered on every rank and
/// factorised there once (exact LU on the host, PETSc's PCREDUNDANT + PCLU);
/// each solve gathers b_c (one MPI_Allgatherv) and keeps its own rows of x_c.
template <class T>
class RedundantLu {
 public:
  /// Collective: a kfuse::Error on every rank when a pivot is zero or not
  /// finite, or the factors would be too big.
  RedundantLu(const char* api, const CsrMatrix<T>& A) : rows_(A.range()) {
    const Comm& comm = rows_.comm();
    HostCsr<T> whole;
    for (const auto& e : gather_triplets(A)) {  // by row, then column
      while (index_t(whole.rows.size()) < e.row + 2) whole.rows.push_back(whole.rows.back());
      whole.cols.push_back(static_cast<typename HostCsr<T>::ordinal_type>(e.col));
      whole.values.push_back(e.value);
      ++whole.rows.back();
    }
    while (index_t(whole.rows.size()) < A.global_rows() + 1)
      whole.rows.push_back(whole.rows.back());
    const index_t n = whole.size();
    // The band holds the factors; 2^25 entries a factor is ~400 MB on each rank.
    const double entries = double(n) * double(whole.bandwidth() + 1);
    std::string error;
    if (const index_t missing = whole.rows_without_diagonal(); missing > 0)
      error =
          error_message(api, ": the coarsest matrix '", A.label(), "' has ", missing,
                        " row(s) without a nonzero diagonal entry; the direct solve needs them");
    else if (entries > double(1 << 25))
      error = error_message(api, ": the direct coarse solve of ", n, " rows would hold ~", entries,
                            " entries per LU factor on every rank (limit 2^25); use more "
                            "levels or CoarseSolve::smoother");
    comm.agree_or_throw(error);
    comm.agree_on([&] {
      lu_ = std::make_shared<SparseLu<T, Host>>(A.label() + ".lu", whole, SparseLu<T, Host>::exact,
                                                TriangularSolve::sequential);
      rhs_ = HostView(A.label() + ".lu.rhs", static_cast<std::size_t>(n));
      own_ = HostView(A.label() + ".lu.own", static_cast<std::size_t>(rows_.local_size()));
    });
    if (lu_->bad_pivots() > 0)  // the same factors on every rank
      throw Error(error_message(api, ": the LU of the coarsest matrix '", A.label(), "' has ",
                                lu_->bad_pivots(), " pivot(s) that are not finite"));
    for (int r = 0; r < comm.size(); ++r) {
      counts_.push_back(static_cast<int>(rows_.size_of(r)));
      displacements_.push_back(static_cast<int>(rows_.begin_of(r)));
    }
  }

  index_t factor_entries() const { return lu_->factor_entries(); }

  /// x = A^-1 b (collective; x and b on the coarsest matrix's rows).
  void solve(const Vector<T>& b, const Vector<T>& x) const {
    copy_values("copy [coarse solve]", own_, b.view());
    rows_.comm().allgatherv(own_.data(), rhs_.data(), counts_, displacements_);
    lu_->solve(rhs_, rhs_);
    copy_values(
        "copy [coarse solve]", own_,
        Kokkos::subview(rhs_, std::pair<index_t, index_t>(
                                  rows_.local_begin(), rows_.local_begin() + rows_.local_size())));
    copy_values("copy [coarse solve]", x.view(), own_);
    x.mark_halo_stale();  // written outside kfuse's statements
  }

 private:
  using Host = Kokkos::DefaultHostExecutionSpace;
  using HostView = Kokkos::View<T*, Host::memory_space>;
  RowMap rows_;
  std::shared_ptr<SparseLu<T, Host>> lu_;
  HostView rhs_, own_;
  std::vector<int> counts_, displacements_;
};

}  // namespace kfuse::detail

namespace kfuse::pc {

/// Geometric multigrid (see the file comment). A handle: copies share the
/// hierarchy, work vectors and programs. `Policy`: how the V-cycle's
/// programs fuse (kfuse::Fused; the benchmarks also build Unfused).
template <class T, class Policy = Fused>
class Multigrid {
 public:
  /// Collective: `shape` is the grid of A's rows (1 to 3 extents, row-major,
  /// the last fastest). A kfuse::Error on every rank when the shape does not
  /// match A, a grid is too small to coarsen, an option is out of range or
  /// differs between ranks, a diagonal entry is zero, or the direct coarse
  /// solve meets a zero pivot or would be too big.
  Multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
            const MultigridOptions& options = {});

  int levels() const { return int(state_->levels.size()); }
  const MultigridOptions& options() const { return state_->options; }
  /// Level 0 is A; level l + 1 is R_l A_l P_l.
  const CsrMatrix<T>& matrix(int level) const { return state_->levels.at(level).A; }
  /// From level l to l + 1 (l < levels() - 1).
  const CsrMatrix<T>& restriction(int level) const { return *state_->levels.at(level).R; }
  const CsrMatrix<T>& interpolation(int level) const { return *state_->levels.at(level).P; }
  /// Level l's grid.
  const std::vector<index_t>& shape(int level) const {
    return state_->levels.at(level).shape.extents;
  }
  /// Level l's estimate of lambda_max(D^-1 A) (0 on a coarsest level solved directly).
  double eigenvalue_estimate(int level) const { return state_->levels.at(level).lambda; }
  /// Level l's Jacobi weight w_l = weight / lambda_max (Smoother::jacobi).
  double jacobi_weight(int level) const { return double(state_->levels.at(level).w.value()); }
  /// The V-cycle's kernels, level by level (local: no communication).
  std::string explain() const;
  /// kfuse kernels one V-cycle launches (explain()'s total; a direct coarse
  /// solve's are Kokkos Kernels').
  int kernels_per_cycle() const;

  /// z = M r, one V-cycle from z = 0. Collective: r and z must lie on A's
  /// rows and be different vectors (one allreduce besides the cycle's work).
  void operator()(const Vector<T>& r, Vector<T>& z) const;
  /// The same without the checks (what the solvers call).
  void apply(const Vector<T>& r, Vector<T>& z) const;

  /// The cycle's ends as a solver fuses them into its own kernels (kfuse::cg,
  /// as an expert writes CG around a known V-cycle): its first kernel, u = w
  /// D^-1 r, pointwise in r, which the solver computes in the kernel that
  /// updates r; and the Scalar into which the cycle's last kernel reduces r.z.
  struct Ends {
    Vector<T> u, inverse_diagonal;
    Scalar<T> w, rz;
  };
  /// Binds the cycle to r and z where it is not yet (no checks; a binding is
  /// collective: the solvers call it alike on every rank).
  Ends ends(const Vector<T>& r, const Vector<T>& z) const;
  /// z = M r once u = w D^-1 r is computed (ends()): the rest of the V-cycle,
  /// its last kernel also reducing ends().rz = r.z (no allreduce: the solver's).
  void apply_from_first_sweep(const Vector<T>& r, Vector<T>& z) const;

 private:
  struct Level {
    Level(const CsrMatrix<T>& a, detail::GridShape s) : A(a), shape(std::move(s)) {}
    CsrMatrix<T> A;
    detail::GridShape shape;
    std::optional<Vector<T>> dinv;  // not on a coarsest level solved directly
    double lambda = 0;
    Scalar<T> w{"mg.w"};  // Jacobi's weight, or Chebyshev's first coefficient
    detail::ChebyshevCoefficients<T> coefficients;
    detail::ChebyshevScalars<T> scalars;
    std::optional<CsrMatrix<T>> R, P;                // to the next level
    std::optional<Vector<T>> b;                      // not on level 0 (b = r), nor where unread
    std::vector<Vector<T>> slots;                    // the iterates; level 0's z is bound in
    std::shared_ptr<detail::RedundantLu<T>> direct;  // the coarsest, CoarseSolve::direct
  };
  struct State {
    MultigridOptions options;
    int slot_count = 2;  // iterates a smoother keeps: 2 (Jacobi) or 3 (Chebyshev)
    std::vector<Level> levels;
    detail::PairBindings<detail::MultigridPrograms<T, Policy>> programs;
    Scalar<T> rz{"mg.r.z"};  // Ends::rz, reduced by the programs bound to any pair
  };
  bool chebyshev() const { return state_->options.smoother == Smoother::chebyshev; }
  bool direct(int l) const { return state_->levels[l].direct != nullptr; }
  /// Where level 0's result lies: the slot after 2 sweeps - 1 moves.
  int final_slot() const { return (2 * state_->options.sweeps - 1) % state_->slot_count; }
  const Vector<T>& slot(int level, int i, const Vector<T>& z) const;
  void bind(const Vector<T>& r, const Vector<T>& z) const;
  /// bind(r, z) unless programs are bound to them already (then those run).
  void bind_if_new(const Vector<T>& r, const Vector<T>& z) const {
    if (!state_->programs.activate(r.storage_id(), z.storage_id())) bind(r, z);
  }
  /// Smoother iteration j on level l, the iterate in slot `at` (moved on);
  /// `from_zero`: the smoothing started from x = 0 (a pre-smoothing);
  /// `reduce_rz`: level 0's last iteration, reducing r.z as well.
  void smooth(int level, int j, bool from_zero, int& at, bool reduce_rz = false) const;
  void cycle(int level, bool reduce_rz = false) const;
  /// Writes explain()'s text to `out`; returns the kernels per V-cycle.
  int report(std::ostream& out) const;
  std::shared_ptr<State> state_;
};

template <class Policy = Fused, class T>
Multigrid<T, Policy> multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
                               const MultigridOptions& options = {}) {
  return Multigrid<T, Policy>(A, std::move(shape), options);
}

template <class T, class Policy>
Multigrid<T, Policy>::Multigrid(const CsrMatrix<T>& A, std::vector<index_t> shape,
                                const MultigridOptions& o) {
  constexpr const char* api = "kfuse::pc::multigrid";
  const Comm& comm = A.range().comm();
  const detail::GridShape grid{shape};
  const ChebyshevOptions& ch = o.chebyshev;
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
  else if (ch.emin != 0 || ch.emax != 0)
    error = detail::error_message(api, ": MultigridOptions::chebyshev.emin and emax must be 0 ",
                                  "(each level estimates its own; set lower and upper)");
  else if (!(ch.lower > 0 && ch.lower < ch.upper && std::isfinite(ch.upper)))
    error = detail::error_message(api, ": MultigridOptions::chebyshev.lower ", ch.lower,
                                  " and upper ", ch.upper, " must satisfy 0 < lower < upper");
  else if (ch.estimate_steps < 1)
    error = detail::error_message(api, ": MultigridOptions::chebyshev.estimate_steps ",
                                  ch.estimate_steps, "; it must be >= 1");
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
  std::vector<std::int64_t> same{o.levels,
                                 int(o.restriction),
                                 int(o.smoother),
                                 o.sweeps,
                                 int(o.coarse),
                                 o.coarse_sweeps,
                                 detail::bits_of(o.weight),
                                 detail::bits_of(ch.lower),
                                 detail::bits_of(ch.upper),
                                 ch.estimate_steps};
  same.insert(same.end(), shape.begin(), shape.end());
  detail::check_same_values(api, comm, same, "grids or MultigridOptions");
  detail::check_square_blocks(api, A);

  auto s = std::make_shared<State>();
  s->options = o;
  s->slot_count = o.smoother == Smoother::chebyshev ? 3 : 2;
  const bool injection = o.restriction == Restriction::injection;
  s->levels.emplace_back(A, grid);
  for (int l = 0;; ++l) {
    Level& level = s->levels.back();
    const bool coarsest = l + 1 == o.levels;
    const std::string name = level.A.label();
    if (coarsest && o.coarse == CoarseSolve::direct) {
      level.direct = std::make_shared<detail::RedundantLu<T>>(api, level.A);
    } else {
      level.dinv = detail::inverse_diagonal(api, level.A);
      level.lambda = detail::chebyshev_estimate(api, level.A, *level.dinv, ch.estimate_steps,
                                                "multigrid's smoothers need a definite matrix");
      const int iterations = coarsest ? o.coarse_sweeps : o.sweeps;
      if (o.smoother == Smoother::chebyshev) {
        level.coefficients = detail::chebyshev_coefficients<T>(ch.lower * level.lambda,
                                                               ch.upper * level.lambda, iterations);
        level.w = level.coefficients.residual[0];
      } else {
        level.w = T(o.weight / level.lambda);
      }
    }
    // A coarsest level of one smoother iteration reads b only in that iteration,
    // which the restriction above computes: b would be stored and never read.
    const bool reads_b = !coarsest || level.direct || o.coarse_sweeps > 1;
    if (l > 0 && reads_b) level.b.emplace(level.A.range(), name + ".b");
    // Level 0's z is one of its slots; a direct solve needs one.
    const int slots = level.direct ? 1 : s->slot_count - (l == 0 ? 1 : 0);
    for (int i = 0; i < slots; ++i)
      level.slots.emplace_back(level.A.range(), name + ".x" + std::to_string(i));
    if (coarsest) break;
    auto transfer = detail::make_transfer(level.A, level.shape, injection, l);
    level.R = transfer.R;
    level.P = transfer.P;
    detail::GridShape coarse = level.shape.coarse();
    s->levels.emplace_back(transfer.coarse, coarse);
  }
  state_ = std::move(s);
}

template <class T, class Policy>
const Vector<T>& Multigrid<T, Policy>::slot(int l, int i, const Vector<T>& z) const {
  const Level& level = state_->levels[l];
  if (l > 0) return level.slots[static_cast<std::size_t>(i)];
  const int f = final_slot();
  return i == f ? z : level.slots[static_cast<std::size_t>(i < f ? i : i - 1)];
}

template <class T, class Policy>
void Multigrid<T, Policy>::bind(const Vector<T>& r, const Vector<T>& z) const {
  State& s = *state_;
  auto& programs = s.programs.replace();
  const int L = levels();
  const int S = s.slot_count;
  programs.levels.clear();
  programs.levels.resize(static_cast<std::size_t>(L));
  auto b_of = [&](int l) -> const Vector<T>& { return l == 0 ? r : *s.levels[l].b; };
  // Where a level's result lies: after the post-sweeps (from slot 0, sweeps
  // - 1 moves, then sweeps); on the coarsest after coarse_sweeps - 1 moves,
  // or in slot 0 from a direct solve.
  auto result_of = [&](int l) -> const Vector<T>& {
    const int moves = l + 1 < L   ? 2 * s.options.sweeps - 1
                      : direct(l) ? 0
                                  : s.options.coarse_sweeps - 1;
    return slot(l, moves % S, z);
  };
  programs.first.emplace(
      detail::mg_first_sweep<Policy>(slot(0, 0, z), *s.levels[0].dinv, r, s.levels[0].w));
  for (int l = 0; l < L; ++l) {
    Level& level = s.levels[l];
    auto& p = programs.levels[static_cast<std::size_t>(l)];
    if (direct(l)) break;
    // A level without b (a coarsest level of one sweep) runs that sweep in the restriction
    // above: no programs of its own.
    const bool smooths = l == 0 || level.b;
    for (int i = 0; smooths && i < S; ++i) {  // the programs that write slot i
      const Vector<T>& out = slot(l, i, z);
      const Vector<T>& in = slot(l, (i + S - 1) % S, z);
      p.sweep[i].emplace(detail::mg_sweep<Policy>(level.A, out, in, *level.dinv, b_of(l), level.w));
      if (S == 3) {
        p.second[i].emplace(detail::chebyshev_second_step<Policy>(level.A, out, in, *level.dinv,
                                                                  b_of(l), level.scalars));
        p.step[i].emplace(detail::chebyshev_step<Policy>(level.A, out, in, slot(l, (i + 1) % S, z),
                                                         *level.dinv, b_of(l), level.scalars));
      }
    }
    if (l + 1 == L) break;
    const Vector<T>& smoothed = slot(l, (s.options.sweeps - 1) % S, z);  // after the pre-sweeps
    const Level& next = s.levels[l + 1];
    if (direct(l + 1))
      p.restrict_residual.emplace(
          detail::mg_restrict_residual<Policy>(level.A, *level.R, smoothed, b_of(l), *next.b));
    else if (!next.b)
      p.restrict_one_sweep.emplace(detail::mg_restrict<Policy>(level.A, *level.R, smoothed, b_of(l),
                                                               next.slots[0], *next.dinv, next.w));
    else
      p.restrict_.emplace(detail::mg_restrict<Policy>(level.A, *level.R, smoothed, b_of(l),
                                                      next.slots[0], *next.dinv, next.w, *next.b));
    p.correct.emplace(detail::mg_correct<Policy>(*level.P, smoothed, result_of(l + 1)));
  }
  // Level 0's last post-smoothing iteration writes z (from the slot before).
  const Level& finest = s.levels[0];
  const int last = final_slot();
  const Vector<T>& before = slot(0, (last + S - 1) % S, z);
  if (chebyshev() && s.options.sweeps > 1)
    programs.last_step.emplace(detail::chebyshev_step<Policy>(
        finest.A, z, before, slot(0, (last + 1) % S, z), *finest.dinv, r, finest.scalars, s.rz));
  else
    programs.last_sweep.emplace(
        detail::mg_sweep<Policy>(finest.A, z, before, *finest.dinv, r, finest.w, s.rz));
  s.programs.bound(r.storage_id(), z.storage_id());
}

template <class T, class Policy>
void Multigrid<T, Policy>::smooth(int l, int j, bool from_zero, int& at, bool reduce_rz) const {
  State& s = *state_;
  Level& level = s.levels[l];
  auto& p = s.programs.active().levels[static_cast<std::size_t>(l)];
  at = (at + 1) % s.slot_count;
  if (!chebyshev() || j == 0) {  // Jacobi, or Chebyshev's x_1 = x_0 + s D^-1 (b - A x_0)
    if (reduce_rz)
      (*s.programs.active().last_sweep)();
    else
      (*p.sweep[at])();
    return;
  }
  level.coefficients.set(level.scalars, j);
  if (reduce_rz)
    (*s.programs.active().last_step)();
  else if (from_zero && j == 1)
    (*p.second[at])();
  else
    (*p.step[at])();
}

template <class T, class Policy>
void Multigrid<T, Policy>::cycle(int l, bool reduce_rz) const {
  State& s = *state_;
  auto& p = s.programs.active().levels[static_cast<std::size_t>(l)];
  const bool coarsest = l + 1 == levels();
  if (coarsest && direct(l)) {
    s.levels[l].direct->solve(*s.levels[l].b, s.levels[l].slots[0]);
    return;
  }
  int at = 0;  // the first iteration from 0 wrote slot 0
  for (int j = 1; j < (coarsest ? s.options.coarse_sweeps : s.options.sweeps); ++j)
    smooth(l, j, true, at);
  if (coarsest) return;
  if (p.restrict_)
    (*p.restrict_)();
  else if (p.restrict_one_sweep)
    (*p.restrict_one_sweep)();
  else
    (*p.restrict_residual)();
  cycle(l + 1);
  (*p.correct)();
  for (int j = 0; j < s.options.sweeps; ++j)
    smooth(l, j, false, at, reduce_rz && j + 1 == s.options.sweeps);
}

template <class T, class Policy>
void Multigrid<T, Policy>::apply(const Vector<T>& r, Vector<T>& z) const {
  bind_if_new(r, z);
  (*state_->programs.active().first)();
  cycle(0);
}

template <class T, class Policy>
auto Multigrid<T, Policy>::ends(const Vector<T>& r, const Vector<T>& z) const -> Ends {
  bind_if_new(r, z);
  const Level& finest = state_->levels[0];
  return Ends{slot(0, 0, z), *finest.dinv, finest.w, state_->rz};
}

template <class T, class Policy>
void Multigrid<T, Policy>::apply_from_first_sweep(const Vector<T>& r, Vector<T>& z) const {
  bind_if_new(r, z);
  cycle(0, true);
}

template <class T, class Policy>
void Multigrid<T, Policy>::operator()(const Vector<T>& r, Vector<T>& z) const {
  if (detail::check_apply_vectors("kfuse::pc::multigrid", state_->levels[0].A.range(), r, z,
                                  state_->programs.holds(r.storage_id(), z.storage_id())))
    bind(r, z);
  apply(r, z);
}

template <class T, class Policy>
std::string Multigrid<T, Policy>::explain() const {
  std::ostringstream out;
  report(out);
  return out.str();
}

template <class T, class Policy>
int Multigrid<T, Policy>::kernels_per_cycle() const {
  std::ostringstream ignored;
  return report(ignored);
}

template <class T, class Policy>
int Multigrid<T, Policy>::report(std::ostream& out) const {
  using Programs = detail::MultigridPrograms<T, Policy>;
  const State& s = *state_;
  int total = 0;
  auto kernels = [&](int per_run, int runs, const char* what) {
    if (per_run * runs > 0) out << "    " << what << ": " << per_run * runs << " kernel(s)\n";
    total += per_run * runs;
  };
  const char* smoother = chebyshev() ? "Chebyshev" : "Jacobi";
  out << "kfuse::pc::multigrid: V-cycle over " << levels() << " levels, " << smoother
      << " smoothing\n";
  for (int l = 0; l < levels(); ++l) {
    const Level& level = s.levels[l];
    const bool coarsest = l + 1 == levels();
    out << "  level " << l << ": grid " << level.shape.describe() << ", " << level.A.global_rows()
        << " rows, " << level.A.global_nnz() << " entries";
    if (direct(l)) {
      out << "\n    x = A^-1 b: exact LU on every rank (" << level.direct->factor_entries()
          << " entries), one allgather, no kernel of kfuse's\n";
      break;
    }
    out << ", lambda_max(D^-1 A) ~ " << level.lambda << "\n";
    if (l == 0) kernels(Programs::First::kernel_count, 1, "x = w D^-1 b");
    const int pre = (coarsest ? s.options.coarse_sweeps : s.options.sweeps) - 1;
    kernels(Programs::Sweep::kernel_count, pre, "smoother iteration");
    if (coarsest) break;
    if (direct(l + 1))
      kernels(Programs::RestrictResidual::kernel_count, 1, "t = b - A x | b_c = R t");
    else if (!s.levels[l + 1].b)
      kernels(Programs::RestrictOneSweep::kernel_count, 1, "t = b - A x | x_c = w_c D_c^-1 R t");
    else
      kernels(Programs::Restrict::kernel_count, 1, "t = b - A x | b_c = R t, x_c = w_c D_c^-1 b_c");
    kernels(Programs::Correct::kernel_count, 1, "x += P x_c");
    kernels(Programs::Sweep::kernel_count, s.options.sweeps, "smoother iteration");
  }
  out << "  " << total << " kernels per V-cycle, no allreduce\n";
  return total;
}

}  // namespace kfuse::pc

namespace kfuse::detail {
template <class T, class Policy>
struct is_builtin_preconditioner<pc::Multigrid<T, Policy>> : std::true_type {};
}  // namespace kfuse::detail
