// kfuse::cg, cg_matfree and bicgstab against PETSc (KSPCG / KSPBCGS, PCNONE or
// PCJACOBI, the unpreconditioned norm) on the same matrix, right-hand side and
// tolerance: iteration counts within PETSc's own rank-to-rank variation, true
// residuals below the tolerance, the solutions equal. Plus the fused plan
// (kernels per iteration, counted), the monitor, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"
#include "petsc_support.hpp"

namespace {

using kfuse_test::petsc_solve;
using kfuse_test::PetscSettings;
using kfuse_test::rhs_of_ones;
using kfuse_test::true_residual;
#ifdef KFUSE_MATRICES_DIR
using kfuse_test::shared_matrix;
#endif

struct Case {
  std::string name;
  kfuse::CsrMatrix<double> A;
  int slack;  // allowed |iterations - PETSc's|
};

/// CG's forms: kfuse::cg, with SolverOptions::cg_single_reduction, and
/// kfuse::cg_matfree with the operator `A * v` (it reads a matrix: A p stored).
enum class CgForm { standard, single_reduction, matrix_free };

void compare_with_petsc(const Case& c, bool bicg,
                        kfuse::Preconditioner pc = kfuse::Preconditioner::none,
                        CgForm form = CgForm::standard) {
  const bool single_reduction = form == CgForm::single_reduction;
  INFO(c.name << (single_reduction              ? ", single reduction"
                  : form == CgForm::matrix_free ? ", matrix-free"
                                                : ""));
  const auto& A = c.A;
  const auto b = rhs_of_ones(A);
  kfuse::Vector<double> x(A.domain(), "x");
  kfuse::SolverOptions options{1e-8, 20000};
  options.preconditioner = pc;
  options.cg_single_reduction = single_reduction;
  kfuse_test::MonitorCheck monitor;
  options.monitor = monitor.monitor();
  const kfuse::SolveResult result =
      bicg ? kfuse::bicgstab(A, x, b, options)
      : form == CgForm::matrix_free
          ? kfuse::cg_matfree([A](const auto& v) { return A * v; }, x, b, options)
          : kfuse::cg(A, x, b, options);
  PetscSettings settings;
  settings.type = bicg ? KSPBCGS : KSPCG;
  settings.pc = pc == kfuse::Preconditioner::jacobi ? PCJACOBI : PCNONE;
  if (pc == kfuse::Preconditioner::jacobi && !bicg) settings.side = PC_LEFT;
  if (single_reduction)
    settings.configure = [](KSP ksp, Mat) {
      REQUIRE(KSPCGUseSingleReduction(ksp, PETSC_TRUE) == 0);
    };
  const auto petsc = petsc_solve(A, b, settings);
  CHECK(result.converged);
  CHECK(monitor.calls == result.iterations + 1);
  CHECK(monitor.last == result.residual_norm);
  INFO("kfuse " << result.iterations << " iterations, PETSc " << petsc.iterations);
  CHECK(std::abs(result.iterations - int(petsc.iterations)) <= c.slack);
  const double b_norm = kfuse::eval(kfuse::norm2(b));
  CHECK(result.residual_norm <= 1e-8 * b_norm);
  CHECK(true_residual(A, x, b) <= 1e-7 * b_norm);  // the true residual drifts a little
  kfuse_test::check_close(x.gather(), petsc.x, 1e-5);
}

/// A CG solve of exactly 10 iterations, counted: its residual norms, the
/// compute kernels of iterations 2 to 10 and the work vectors it kept.
struct CountedSolve {
  std::vector<double> norms;
  std::int64_t kernels = 0;
  std::size_t work_vectors = 0;
};

/// Runs solve(options) with `options` set to exactly 10 iterations, counted.
template <class Solve>
CountedSolve counted_solve(kfuse::SolverOptions options, const Solve& solve) {
  CountedSolve counted;
  kfuse::KernelCounter counter;
  kfuse::SolverWorkspace workspace;
  options.rtol = 1e-30;
  options.max_it = 10;
  options.workspace = &workspace;
  std::int64_t at_first = 0, at_last = 0;
  options.monitor = [&](int it, double rnorm) {
    counted.norms.push_back(rnorm);
    if (it == 1) at_first = counter.compute_kernels();
    if (it == 10) at_last = counter.compute_kernels();
  };
  CHECK(solve(options).iterations == 10);
  counted.kernels = at_last - at_first;
  counted.work_vectors = workspace.size();
  return counted;
}

}  // namespace

TEST_CASE("PETSc comes up on kfuse's MPI") {
  // Environment initialised MPI; PETSc leaves it to us at PetscFinalize.
  REQUIRE(PetscInitializeNoArguments() == 0);
}

TEST_CASE("cg matches PETSc KSPCG on generated and real SPD matrices") {
  kfuse::Comm comm;
  compare_with_petsc({"poisson2d 24x20", kfuse::poisson2d<double>(comm, 24, 20), 1}, false);
  compare_with_petsc({"poisson3d 9x8x7", kfuse::poisson3d<double>(comm, 9, 8, 7), 1}, false);
#ifdef KFUSE_MATRICES_DIR
  compare_with_petsc({"Laplace3D10", shared_matrix("spd/Laplace3D10.mtx"), 1}, false);
  compare_with_petsc({"wathen_30_30", shared_matrix("spd/wathen_30_30.mtx"), 2}, false);
  // cond ~ 8.6e6: PETSc itself needs 2127-2204 iterations over 1-4 ranks.
  compare_with_petsc({"1138_bus", shared_matrix("spd/1138_bus.mtx"), 120}, false);
#endif
}

TEST_CASE("cg_single_reduction (-ksp_cg_single_reduction) and cg_matfree (A * v) match PETSc") {
  kfuse::Comm comm;
  const auto none = kfuse::Preconditioner::none;
  for (const CgForm form : {CgForm::single_reduction, CgForm::matrix_free}) {
    compare_with_petsc({"poisson2d 24x20", kfuse::poisson2d<double>(comm, 24, 20), 1}, false, none,
                       form);
    compare_with_petsc({"poisson3d 9x8x7", kfuse::poisson3d<double>(comm, 9, 8, 7), 1}, false, none,
                       form);
#ifdef KFUSE_MATRICES_DIR
    compare_with_petsc({"Laplace3D10", shared_matrix("spd/Laplace3D10.mtx"), 1}, false, none, form);
    compare_with_petsc({"wathen_30_30", shared_matrix("spd/wathen_30_30.mtx"), 2}, false, none,
                       form);
#endif
  }
#ifdef KFUSE_MATRICES_DIR
  compare_with_petsc({"1138_bus", shared_matrix("spd/1138_bus.mtx"), 120}, false, none,
                     CgForm::matrix_free);
#endif
}

TEST_CASE("single-reduction (2 kernels) and matrix-free (3) CG: cg's iterates") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 20, 20);
  const auto b = rhs_of_ones(A);
  kfuse::Vector<double> y(A.domain(), "y");
  // The standard form's residual norms (A p stored).
  const auto standard =
      counted_solve({}, [&](const kfuse::SolverOptions& o) { return kfuse::cg(A, y, b, o); }).norms;
  for (const CgForm form : {CgForm::single_reduction, CgForm::matrix_free}) {
    const bool single = form == CgForm::single_reduction;
    INFO("form: " << (single ? "single reduction" : "matrix-free"));
    kfuse::Vector<double> x(A.domain(), "x");
    kfuse::SolverOptions options;
    options.cg_single_reduction = single;
    const auto counted = counted_solve(options, [&](const kfuse::SolverOptions& o) {
      return single ? kfuse::cg(A, x, b, o)
                    : kfuse::cg_matfree([A](const auto& v) { return A * v; }, x, b, o);
    });
    CHECK(counted.kernels == (single ? 2 : 3) * 9);
    CHECK(counted.work_vectors == (single ? 4u : 3u));  // r, p, s, w; r, p, A p (A read once)
    const auto& norms = counted.norms;
    REQUIRE(norms.size() == standard.size());
    for (std::size_t k = 0; k < norms.size(); ++k)
      CHECK(norms[k] == doctest::Approx(standard[k]).epsilon(1e-8));
    kfuse_test::check_close(x.gather(), y.gather(), 1e-10);
  }
}

TEST_CASE("cg with Jacobi matches PETSc PCJACOBI") {
  kfuse::Comm comm;
#ifdef KFUSE_MATRICES_DIR
  compare_with_petsc({"wathen_30_30 + Jacobi", shared_matrix("spd/wathen_30_30.mtx"), 2}, false,
                     kfuse::Preconditioner::jacobi);
#endif
  compare_with_petsc({"poisson2d + Jacobi", kfuse::poisson2d<double>(comm, 16, 16), 1}, false,
                     kfuse::Preconditioner::jacobi);
}

TEST_CASE("bicgstab matches PETSc KSPBCGS on nonsymmetric matrices") {
  kfuse::Comm comm;
  compare_with_petsc({"convection-diffusion 30x30",
                      kfuse::convection_diffusion2d<double>(comm, 30, 30, 2.0, -1.0), 1},
                     true);
#ifdef KFUSE_MATRICES_DIR
  // Rounding moves the count by a few: PETSc needs 306-310 iterations over 1-4 ranks.
  compare_with_petsc({"BentPipe2D100", shared_matrix("nonsym/BentPipe2D100.mtx"), 5}, true);
#endif
}

TEST_CASE("a CG iteration is 3 kernels and 2 allreduces; BiCGSTAB 5 and 3 (counted)") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 20, 20);
  const auto b = rhs_of_ones(A);
  kfuse::Vector<double> x(A.domain(), "x");
  kfuse::KernelCounter counter;
  kfuse::SolverOptions options{1e-30, 10};  // exactly 10 iterations
  kfuse_test::IterationCounts counts{counter, 1, 10};
  options.monitor = counts.monitor();
  auto r = kfuse::cg(A, x, b, options);
  CHECK(r.iterations == 10);
  CHECK(counts.kernels_per_iteration() == 3);
  CHECK(counts.allreduces_per_iteration() == kfuse_test::expected_allreduces(2));
  x.fill(0.0);
  r = kfuse::bicgstab(A, x, b, options);
  CHECK(r.iterations == 10);
  CHECK(counts.kernels_per_iteration() == 5);
  CHECK(counts.allreduces_per_iteration() == kfuse_test::expected_allreduces(3));
}

/// The 5-point Laplacian on a 2-D Array (poisson2d's matrix as a stencil).
const auto laplacian5 = [](const auto& v) {
  return 4.0 * v - kfuse::shift<-1, 0>(v) - kfuse::shift<1, 0>(v) - kfuse::shift<0, -1>(v) -
         kfuse::shift<0, 1>(v);
};

TEST_CASE("cg_matfree on a 5-point stencil equals cg on poisson2d") {
  kfuse::Comm comm;
  constexpr std::int64_t nx = 18, ny = 14;
  kfuse::Grid<2> grid(comm, {nx, ny});  // fixed boundaries, halos zero: Dirichlet 0
  kfuse::Array<double, 2> u(grid, "u"), f(grid, "f");
  f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return (i < 0 || j < 0 || i >= nx || j >= ny) ? 0.0 : 1.0 + 0.1 * double((i * 7 + j) % 5);
  });
  const auto stencil = kfuse::cg_matfree(laplacian5, u, f, kfuse::SolverOptions{1e-10, 1000});
  kfuse::Array<double, 2> v(grid, "v");
  kfuse::SolverOptions single{1e-10, 1000};
  single.cg_single_reduction = true;
  const auto stencil_single = kfuse::cg_matfree(laplacian5, v, f, single);

  const auto A = kfuse::poisson2d<double>(comm, nx, ny);  // row i * ny + j
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b");
  b.fill_with(
      KOKKOS_LAMBDA(std::int64_t k) { return 1.0 + 0.1 * double(((k / ny) * 7 + k % ny) % 5); });
  const auto matrix = kfuse::cg(A, x, b, kfuse::SolverOptions{1e-10, 1000});
  CHECK(stencil.converged);
  CHECK(std::abs(stencil.iterations - matrix.iterations) <= 1);
  kfuse_test::check_close(u.gather(), x.gather(), 1e-8);
  CHECK(stencil_single.converged);
  CHECK(std::abs(stencil_single.iterations - stencil.iterations) <= 1);
  kfuse_test::check_close(v.gather(), u.gather(), 1e-8);
}

TEST_CASE(
    "cg_matfree applies a stencil twice (two work vectors) and stores A p of one with "
    "coefficients") {
  static_assert(
      kfuse::detail::reads_only_its_argument_v<decltype(laplacian5), kfuse::Array<double, 2>>);
  kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {18, 14});
  kfuse::Array<double, 2> f(grid, "f"), ones(grid, "ones");
  f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return 1.0 + 0.1 * double((i * 7 + j) % 5);
  });
  ones.fill(1.0);
  // The same operator with a coefficient array (all ones) and with a Scalar
  // coefficient (one value: still only its argument's array).
  auto with_array = [ones](const auto& v) { return ones * laplacian5(v); };
  const kfuse::Scalar<double> one("one", 1.0);
  auto with_scalar = [one](const auto& v) { return one * laplacian5(v); };
  static_assert(
      !kfuse::detail::reads_only_its_argument_v<decltype(with_array), kfuse::Array<double, 2>>);
  static_assert(
      kfuse::detail::reads_only_its_argument_v<decltype(with_scalar), kfuse::Array<double, 2>>);

  auto solve = [&](const auto& apply, kfuse::Array<double, 2>& x, std::size_t work_vectors) {
    const auto counted = counted_solve({}, [&](const kfuse::SolverOptions& options) {
      return kfuse::cg_matfree(apply, x, f, options);
    });
    CHECK(counted.kernels == 3 * 9);
    CHECK(counted.work_vectors == work_vectors);
    return counted.norms;
  };
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(grid, "w");
  const auto twice = solve(laplacian5, u, 2);   // r, p
  const auto stored = solve(with_array, v, 3);  // r, p, A p
  const auto scalar = solve(with_scalar, w, 2);
  REQUIRE(twice.size() == stored.size());
  REQUIRE(twice.size() == scalar.size());
  for (std::size_t k = 0; k < twice.size(); ++k) {
    CHECK(stored[k] == doctest::Approx(twice[k]).epsilon(1e-12));
    CHECK(scalar[k] == doctest::Approx(twice[k]).epsilon(1e-12));
  }
  kfuse_test::check_close(v.gather(), u.gather(), 1e-12);
  kfuse_test::check_close(w.gather(), u.gather(), 1e-12);
}

TEST_CASE("solver input errors: kfuse::Error on every rank, x untouched") {
  kfuse::Comm comm;
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  if (comm.rank() == 0)
    for (std::int64_t i = 0; i < 10; ++i) rows.push_back(i), cols.push_back(i), vals.push_back(1.0);
  const auto R = kfuse::CsrMatrix<double>::from_triplets(comm, 10, 12, rows, cols, vals, "R");
  kfuse::Vector<double> x(R.domain(), "x"), b(R.range(), "b");
  CHECK_THROWS_WITH_AS(kfuse::cg(R, x, b), doctest::Contains("10 x 12"), kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::bicgstab(R, x, b), doctest::Contains("square"), kfuse::Error);

  const auto A = kfuse::poisson2d<double>(comm, 5, 5);
  kfuse::Vector<double> wrong(kfuse::RowMap(comm, 24), "wrong"), rhs(A.range(), "rhs");
  wrong.fill(3.0);
  CHECK_THROWS_WITH_AS(kfuse::cg(A, wrong, rhs), doctest::Contains("columns of"), kfuse::Error);
  kfuse_test::check_close(wrong.gather(), std::vector<double>(24, 3.0), 0);

  // The single-reduction form takes no preconditioner.
  kfuse::Vector<double> y(A.domain(), "y");
  y.fill(2.0);
  kfuse::SolverOptions single;
  single.cg_single_reduction = true;
  single.preconditioner = kfuse::Preconditioner::jacobi;
  CHECK_THROWS_WITH_AS(kfuse::cg(A, y, rhs, single), doctest::Contains("cg_single_reduction"),
                       kfuse::Error);
  single.preconditioner = kfuse::Preconditioner::none;
  CHECK_THROWS_WITH_AS(kfuse::cg(A, y, rhs, single, kfuse::pc::jacobi(A)),
                       doctest::Contains("takes no preconditioner"), kfuse::Error);
  kfuse_test::check_close(y.gather(), std::vector<double>(25, 2.0), 0);
  // Options that differ between ranks: an Error on every rank.
  if (comm.size() > 1) {
    kfuse::SolverOptions mixed;
    mixed.cg_single_reduction = comm.rank() == 1;
    CHECK_THROWS_WITH_AS(kfuse::cg(A, y, rhs, mixed), doctest::Contains("cg_single_reduction"),
                         kfuse::Error);
    kfuse_test::check_close(y.gather(), std::vector<double>(25, 2.0), 0);
  }
}

TEST_CASE("PETSc goes down before MPI") { REQUIRE(PetscFinalize() == 0); }
