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

#include <petscksp.h>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

/// PETSc's answer to A x = b from x = 0: iterations and the solution.
struct PetscSolve {
  PetscInt iterations = 0;
  std::vector<double> x;
};

PetscSolve petsc_solve(const kfuse::CsrMatrix<double>& A, const kfuse::Vector<double>& b,
                       KSPType type, PCType pc, double rtol, int max_it) {
  const MPI_Comm comm = A.range().comm().native();
  Mat M;
  MatCreateAIJ(comm, A.local_rows(), A.domain().local_size(), A.global_rows(), A.global_cols(),
               PETSC_DEFAULT, nullptr, PETSC_DEFAULT, nullptr, &M);
  MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  for (const auto& e : kfuse::detail::local_triplets(A)) {
    const PetscInt i = e.row, j = e.col;
    MatSetValue(M, i, j, e.value, INSERT_VALUES);
  }
  MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY);

  Vec pb, px;
  MatCreateVecs(M, &px, &pb);
  const std::vector<double> all_b = b.gather();
  const PetscInt begin = A.range().local_begin();
  for (PetscInt i = 0; i < A.local_rows(); ++i)
    VecSetValue(pb, begin + i, all_b[begin + i], INSERT_VALUES);
  VecAssemblyBegin(pb);
  VecAssemblyEnd(pb);
  VecSet(px, 0.0);

  KSP ksp;
  KSPCreate(comm, &ksp);
  KSPSetOperators(ksp, M, M);
  KSPSetType(ksp, type);
  PC prec;
  KSPGetPC(ksp, &prec);
  PCSetType(prec, pc);
  KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED);
  if (std::string(pc) == PCJACOBI && std::string(type) == KSPCG) KSPSetPCSide(ksp, PC_LEFT);
  KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, 1e300, max_it);  // no dtol: as kfuse's default
  KSPSetFromOptions(ksp);  // PETSC_OPTIONS="-ksp_monitor" shows PETSc's history
  KSPSolve(ksp, pb, px);

  PetscSolve out;
  KSPGetIterationNumber(ksp, &out.iterations);
  Vec all;
  VecScatter to_all;
  VecScatterCreateToAll(px, &to_all, &all);
  VecScatterBegin(to_all, px, all, INSERT_VALUES, SCATTER_FORWARD);
  VecScatterEnd(to_all, px, all, INSERT_VALUES, SCATTER_FORWARD);
  const PetscScalar* values;
  PetscInt n;
  VecGetSize(all, &n);
  VecGetArrayRead(all, &values);
  out.x.assign(values, values + n);
  VecRestoreArrayRead(all, &values);
  VecScatterDestroy(&to_all);
  VecDestroy(&all);
  KSPDestroy(&ksp);
  VecDestroy(&px);
  VecDestroy(&pb);
  MatDestroy(&M);
  return out;
}

/// ||b - A x|| computed independently of the solver's recursion.
double true_residual(const kfuse::CsrMatrix<double>& A, const kfuse::Vector<double>& x,
                     const kfuse::Vector<double>& b) {
  kfuse::Vector<double> r(A.range(), "true_r");
  r = b - A * x;
  return kfuse::eval(kfuse::norm2(r));
}

/// b = A * 1 (PETSc's convention in shared/matrices/README.md).
kfuse::Vector<double> rhs_of_ones(const kfuse::CsrMatrix<double>& A) {
  kfuse::Vector<double> ones(A.domain(), "ones"), b(A.range(), "b");
  ones.fill(1.0);
  b = A * ones;
  return b;
}

struct Case {
  std::string name;
  kfuse::CsrMatrix<double> A;
  int slack;  // allowed |iterations - PETSc's|
};

void compare_with_petsc(const Case& c, bool bicg,
                        kfuse::Preconditioner pc = kfuse::Preconditioner::none) {
  INFO(c.name);
  const auto& A = c.A;
  const auto b = rhs_of_ones(A);
  kfuse::Vector<double> x(A.domain(), "x");
  kfuse::SolverOptions options{1e-8, 20000};
  options.preconditioner = pc;
  int monitored = 0;
  double last = -1;
  options.monitor = [&](int it, double rnorm) {
    CHECK(it == monitored);
    if (std::getenv("KFUSE_TEST_MONITOR")) std::printf("%3d KSP Residual norm %.12e\n", it, rnorm);
    ++monitored;
    last = rnorm;
  };
  const kfuse::SolveResult result =
      bicg ? kfuse::bicgstab(A, x, b, options) : kfuse::cg(A, x, b, options);
  const PetscSolve petsc =
      petsc_solve(A, b, bicg ? KSPBCGS : KSPCG,
                  pc == kfuse::Preconditioner::jacobi ? PCJACOBI : PCNONE, 1e-8, 20000);
  CHECK(result.converged);
  CHECK(monitored == result.iterations + 1);
  CHECK(last == result.residual_norm);
  INFO("kfuse " << result.iterations << " iterations, PETSc " << petsc.iterations);
  CHECK(std::abs(result.iterations - int(petsc.iterations)) <= c.slack);
  const double b_norm = kfuse::eval(kfuse::norm2(b));
  CHECK(result.residual_norm <= 1e-8 * b_norm);
  CHECK(true_residual(A, x, b) <= 1e-7 * b_norm);  // the true residual drifts a little
  kfuse_test::check_close(x.gather(), petsc.x, 1e-5);
}

#ifdef KFUSE_MATRICES_DIR
kfuse::CsrMatrix<double> shared_matrix(const std::string& name) {
  return kfuse::read_matrix_market<double>(kfuse::Comm(),
                                           std::string(KFUSE_MATRICES_DIR) + "/" + name);
}
#endif

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
  std::int64_t at_first = 0, at_last = 0;   // kernels counted when iterations 1 and 10 end
  options.monitor = [&](int it, double) {
    if (it == 1) at_first = counter.compute_kernels();
    if (it == 10) at_last = counter.compute_kernels();
  };
  auto r = kfuse::cg(A, x, b, options);
  CHECK(r.iterations == 10);
  CHECK(at_last - at_first == 3 * 9);
  x.fill(0.0);
  r = kfuse::bicgstab(A, x, b, options);
  CHECK(r.iterations == 10);
  CHECK(at_last - at_first == 5 * 9);
}

TEST_CASE("cg_matfree on a 5-point stencil equals cg on poisson2d") {
  kfuse::Comm comm;
  constexpr std::int64_t nx = 18, ny = 14;
  kfuse::Grid<2> grid(comm, {nx, ny});  // fixed boundaries, halos zero: Dirichlet 0
  kfuse::Array<double, 2> u(grid, "u"), f(grid, "f");
  f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return (i < 0 || j < 0 || i >= nx || j >= ny) ? 0.0 : 1.0 + 0.1 * double((i * 7 + j) % 5);
  });
  auto laplacian = [](const auto& v) {
    return 4.0 * v - kfuse::shift<-1, 0>(v) - kfuse::shift<1, 0>(v) - kfuse::shift<0, -1>(v) -
           kfuse::shift<0, 1>(v);
  };
  const auto stencil = kfuse::cg_matfree(laplacian, u, f, kfuse::SolverOptions{1e-10, 1000});

  const auto A = kfuse::poisson2d<double>(comm, nx, ny);  // row i * ny + j
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b");
  b.fill_with(
      KOKKOS_LAMBDA(std::int64_t k) { return 1.0 + 0.1 * double(((k / ny) * 7 + k % ny) % 5); });
  const auto matrix = kfuse::cg(A, x, b, kfuse::SolverOptions{1e-10, 1000});
  CHECK(stencil.converged);
  CHECK(std::abs(stencil.iterations - matrix.iterations) <= 1);
  kfuse_test::check_close(u.gather(), x.gather(), 1e-8);
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
}

TEST_CASE("PETSc goes down before MPI") { REQUIRE(PetscFinalize() == 0); }
