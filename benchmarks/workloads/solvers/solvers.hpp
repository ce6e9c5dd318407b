// The Krylov solver workloads (cg, bicgstab, cg_matfree): their problems, the
// fixed-length solve every variant runs, the iterations written once over the
// fusion policy, and the result check.
//
// A timed repetition is one solve of exactly Setup::iterations iterations from
// x = 0: no convergence test can stop it early (rtol = atol = 0). reset()
// restores x = 0 (not timed). Step k of a repetition runs iteration k + 1, and
// step 0 first starts the solve (r = b - A x, ||b||, r.r, p = r) as a library
// solve does. Variants that can only run a whole solve -- the shipped
// kfuse::cg / bicgstab / cg_matfree and PETSc's KSPSolve -- run it in step 0
// and nothing in the later steps. Either way the time per iteration is the
// solve's time over its iteration count, start-up included, for every variant.
//
// Every variant's result is its solution x after the solve and the true
// residual norm ||b - A x|| (computed afterwards with kfuse, not timed),
// compared with the hand-written `kokkos` variant's.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../../framework/bench.hpp"
#include "../common/inputs.hpp"

namespace kfuse::bench::solvers {

using Matrix = CsrMatrix<double>;
using Vec = Vector<double>;
using Array2 = Array<double, 2>;
/// A rank's owned entries (and, for the hand-written kernels, ghost tails).
using View = Kokkos::View<double*, Kokkos::LayoutRight, detail::MemSpace>;
using ConstView = Kokkos::View<const double*, Kokkos::LayoutRight, detail::MemSpace>;

/// Right-hand side at global row k = i * n + j (grid point (i, j)): in
/// [0.5, 1.5), the same on every rank count, for the matrix and the stencil.
KOKKOS_INLINE_FUNCTION double rhs_value(std::int64_t k) { return 0.5 + uniform(k, 29); }

inline std::string grid_label(const Setup& s) {
  return std::to_string(s.size) + "x" + std::to_string(s.size);
}

// ---- the problems -------------------------------------------------------------

/// cg: the 5-point Poisson matrix on an n x n grid (SPD), one for all variants.
inline Matrix cg_matrix(const Setup& s) {
  return s.shared<Matrix>("cg_matrix",
                          [&] { return poisson2d<double>(s.comm, s.size, s.size, "A"); });
}

/// bicgstab: 5-point diffusion plus mild upwind convection (bx = 2 along i,
/// by = -1 along j): nonsymmetric, an M-matrix, BiCGSTAB converges steadily. One for all
/// variants.
inline Matrix bicgstab_matrix(const Setup& s) {
  return s.shared<Matrix>("bicgstab_matrix", [&] {
    return convection_diffusion2d<double>(s.comm, s.size, s.size, 2.0, -1.0, "A");
  });
}

// Functors, not lambdas, in headers: docs/backends.md, "Lambdas in headers".
struct RhsEntry {
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t k) const { return rhs_value(k); }
};

inline Vec make_rhs(const Matrix& A) {
  Vec b(A.range(), "b");
  b.fill_with(RhsEntry{});
  return b;
}

/// cg_matfree: the same Poisson problem on a Grid<2> (Dirichlet 0 in the halo).
inline Grid<2> make_grid(const Setup& s) { return Grid<2>(s.comm, {s.size, s.size}); }

/// rhs_value on the owned cells of an n0 x n1 grid, 0 in the halo.
struct GridRhs {
  std::int64_t n0, n1;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t j) const {
    return i < 0 || j < 0 || i >= n0 || j >= n1 ? 0.0 : rhs_value(i * n1 + j);
  }
};

inline Array2 make_rhs(const Grid<2>& grid) {
  Array2 b(grid, "b");
  b.fill_with(GridRhs{grid.global_extent(0), grid.global_extent(1)});
  return b;
}

/// A * x for a matrix captured by value: the operator of cg and bicgstab, as
/// kfuse::cg writes it ([A](const auto& v) { return A * v; }).
struct MatrixOperator {
  Matrix A;
  template <class X>
  auto operator()(const X& x) const {
    return A * x;
  }
};

/// The 5-point Laplacian as a stencil on a grid leaf: the operator of cg_matfree.
struct Laplacian5 {
  template <class X>
  auto operator()(const X& v) const {
    return 4.0 * v - kfuse::shift<-1, 0>(v) - kfuse::shift<1, 0>(v) - kfuse::shift<0, -1>(v) -
           kfuse::shift<0, 1>(v);
  }
};

// ---- results --------------------------------------------------------------------

/// x and ||b - A x|| as result fields (collective; x's ghosts are imported anew).
inline Fields solution_fields(const Matrix& A, const Vec& b, const Vec& x) {
  x.mark_halo_stale();  // hand-written variants write its view directly
  Vec residual(A.range(), "b - A x");
  residual = b - A * x;
  std::vector<double> all = x.gather();
  return {Field{"x", std::move(all)}, field_of("residual", eval(norm2(residual)))};
}

/// The same for a rank's owned entries of x held in a plain view.
inline Fields solution_fields(const Matrix& A, const Vec& b, const ConstView& x_owned) {
  Vec x(A.domain(), "x");
  Kokkos::deep_copy(x.view(), x_owned);
  return solution_fields(A, b, x);
}

/// The same for the stencil operator on a grid.
inline Fields solution_fields(const Array2& b, const Array2& x) {
  x.mark_halo_stale();
  Array2 residual(b.grid(), "b - A x");
  residual = b - Laplacian5{}(x);
  return {field_of("x", x), field_of("residual", eval(norm2(residual)))};
}

// ---- traffic model ----------------------------------------------------------------
// Bytes per iteration, all ranks, as STREAM counts them (kfuse's explain()
// model): a vector a kernel reads counts once, a vector it writes once more
// (8 bytes per entry each time), plus per sparse product the matrix: 8-byte
// values, 32-bit column indices and row offsets.

inline double matrix_bytes(const Matrix& A) {
  return double(sizeof(Matrix::value_type) + sizeof(Matrix::ordinal_type)) *
             double(A.global_nnz()) +
         double(sizeof(Matrix::offset_type)) * double(A.global_rows());
}

/// CG in 3 kernels (read / written): p / Ap + A, r Ap / r, x p r / x p.
inline double cg_min_bytes(double rows, double matrix) { return 80.0 * rows + matrix; }
/// Matrix-free CG, A p applied twice, not stored: p / -, p r / r, x p r / x p.
inline double cg_matfree_min_bytes(double rows) { return 72.0 * rows; }
/// BiCGSTAB in 5 kernels (read / written): p r v / p, p r_hat / v + A, r v / s,
/// s / t + A, x p s t r_hat / x r.
inline double bicgstab_min_bytes(double rows, double matrix) { return 152.0 * rows + 2.0 * matrix; }

/// Declared figures of a kfuse program (its bytes_per_point()) plus `products`
/// sparse products of A per run.
template <class Program>
Figures solver_figures(const Program& program, double rows, double matrix, int products) {
  Figures f = program_figures(program, rows);
  f.bytes += products * matrix;
  return f;
}

// ---- the iterations, once over the fusion policy ----------------------------------
// The library's own iteration programs (include/kfuse/solvers), built under
// each policy: Fused is what kfuse::cg / kfuse::bicgstab run.

using CgScalars = kfuse::detail::CgScalars<double>;
using BicgstabScalars = kfuse::detail::BicgstabScalars<double>;
using kfuse::detail::bicgstab_iteration;
using kfuse::detail::cg_iteration;

/// Options of a solve of exactly `iterations` iterations.
inline SolverOptions fixed_iterations(int iterations) {
  SolverOptions options;
  options.rtol = 0;
  options.atol = 0;
  options.max_it = iterations;
  return options;
}

/// A library solve must run all its iterations; anything else is a failure.
inline void check_solve(const char* what, const SolveResult& result, int iterations) {
  if (result.iterations != iterations)
    throw Error(std::string(what) + ": the solve stopped after " +
                std::to_string(result.iterations) + " of " + std::to_string(iterations) +
                " iterations (" + result.reason + ")");
}

}  // namespace kfuse::bench::solvers
