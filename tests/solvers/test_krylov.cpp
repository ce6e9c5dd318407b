// The solvers' checks that need no PETSc (built by every stage, nvcc
// included: user lambdas as preconditioners of every solver): a user's
// callable against the built-in it imitates, kernels per iteration
// (counted), breakdowns that leave x finite and name their rule, PETSc's
// zero right-hand-side rule, and the errors, at 1, 2 and 4 ranks (the
// one-rank-wrong cases at 2 and 3).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"
#include "solver_support.hpp"

namespace {
using kfuse_test::expected_allreduces;
using kfuse_test::IterationCounts;
using kfuse_test::Method;
using kfuse_test::rhs_of_ones;
using kfuse_test::solve;
using Vector = kfuse::Vector<double>;
}  // namespace

TEST_CASE("a user's callable preconditioner works in every solver") {
  kfuse::Comm comm;
  const auto A = kfuse::convection_diffusion2d<double>(comm, 20, 20, 1.0, 0.5);
  const auto b = rhs_of_ones(A);
  const Vector dinv = kfuse::pc::jacobi(A).inverse_diagonal();
  int calls = 0;
  auto user = [&](const Vector& r, Vector& z) {
    z = dinv * r;
    ++calls;
  };
  for (Method method : {Method::bicgstab, Method::gmres, Method::fgmres}) {
    Vector x(A.domain(), "x"), y(A.domain(), "y");
    calls = 0;
    const auto mine = solve(method, A, x, b, kfuse::SolverOptions{}, user);
    const auto builtin = solve(method, A, y, b, kfuse::SolverOptions{}, kfuse::pc::jacobi(A));
    CHECK(mine.converged);
    CHECK(calls > 0);
    CHECK(mine.iterations == builtin.iterations);  // the same arithmetic, another order at most
    kfuse_test::check_close(x.gather(), y.gather(), 1e-9);
  }
  const auto P = kfuse::poisson2d<double>(comm, 16, 16);
  const auto bp = rhs_of_ones(P);
  const Vector pinv = kfuse::pc::jacobi(P).inverse_diagonal();
  Vector x(P.domain(), "x"), y(P.domain(), "y");
  const auto mine = kfuse::cg(P, x, bp, {}, [&](const Vector& r, Vector& z) { z = pinv * r; });
  const auto builtin = kfuse::cg(P, y, bp, {}, kfuse::pc::jacobi(P));
  CHECK(mine.converged);
  CHECK(std::abs(mine.iterations - builtin.iterations) <= 1);
  kfuse_test::check_close(x.gather(), y.gather(), 1e-9);
}

namespace {
/// A varying diagonal scaling on an nx x ny grid, by point (i, j) or by
/// poisson2d's row i ny + j.
struct VaryingScale {
  std::int64_t nx, ny;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t j) const {
    return 1.0 / (4.0 + double((i + 2 * j + 2 * nx + 2 * ny) % 3));
  }
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t k) const { return (*this)(k / ny, k % ny); }
};
}  // namespace

TEST_CASE("cg_matfree with Jacobi: the fused scaling is cg's with the same diagonal as M") {
  // A diagonal that varies (not poisson2d's constant 1/4, which only rescales
  // CG): the residual histories agree step by step only if it is applied.
  kfuse::Comm comm;
  constexpr std::int64_t nx = 20, ny = 16;
  kfuse::Grid<2> grid(comm, {nx, ny});  // fixed boundaries, halos zero: Dirichlet 0
  kfuse::Array<double, 2> f(grid, "f"), u(grid, "u"), dinv(grid, "dinv");
  f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return (i < 0 || j < 0 || i >= nx || j >= ny) ? 0.0 : 1.0 + 0.1 * double((i * 7 + j) % 5);
  });
  const VaryingScale scale{nx, ny};
  dinv.fill_with(scale);
  auto laplacian = [](const auto& v) {
    return 4.0 * v - kfuse::shift<-1, 0>(v) - kfuse::shift<1, 0>(v) - kfuse::shift<0, -1>(v) -
           kfuse::shift<0, 1>(v);
  };
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);  // row i * ny + j
  Vector x(A.domain(), "x"), b(A.range(), "b"), dv(A.range(), "dv");
  b.fill_with(
      KOKKOS_LAMBDA(std::int64_t k) { return 1.0 + 0.1 * double(((k / ny) * 7 + k % ny) % 5); });
  dv.fill_with(scale);

  std::vector<double> grid_history, matrix_history;
  kfuse::SolverOptions options{1e-10, 1000};
  options.preconditioner = kfuse::Preconditioner::jacobi;
  options.monitor = [&](int, double r) { grid_history.push_back(r); };
  kfuse::SolverWorkspace workspace;
  options.workspace = &workspace;
  const auto stencil = kfuse::cg_matfree(laplacian, u, f, options, &dinv);
  CHECK(workspace.size() == 2u);  // r, p: the stencil's A p is applied twice, not stored
  options.workspace = nullptr;
  options.preconditioner = kfuse::Preconditioner::none;
  options.monitor = [&](int, double r) { matrix_history.push_back(r); };
  const auto matrix = kfuse::cg(A, x, b, options, [&](const Vector& r, Vector& z) { z = dv * r; });

  CHECK(stencil.converged);
  CHECK(stencil.iterations == matrix.iterations);
  REQUIRE(grid_history.size() == matrix_history.size());
  for (std::size_t k = 0; k < grid_history.size(); ++k)
    CHECK(grid_history[k] == doctest::Approx(matrix_history[k]).epsilon(1e-8));
  kfuse_test::check_close(u.gather(), x.gather(), 1e-8);

  // Jacobi without the diagonal, or the diagonal on another grid, on one rank
  // only: a kfuse::Error on every rank, u untouched.
  kfuse::Grid<2> other(comm, {nx, ny + 1});
  kfuse::Array<double, 2> elsewhere(other, "elsewhere");
  u.fill(2.0);
  const auto untouched = u.gather();
  const bool odd_one = comm.rank() == comm.size() - 1;
  options.preconditioner = kfuse::Preconditioner::jacobi;
  CHECK_THROWS_WITH_AS(kfuse::cg_matfree(laplacian, u, f, options),
                       doctest::Contains("needs the operator's inverse diagonal"), kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::cg_matfree(laplacian, u, f, options, odd_one ? nullptr : &dinv),
                       doctest::Contains("needs the operator's inverse diagonal"), kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::cg_matfree(laplacian, u, f, options, odd_one ? &elsewhere : &dinv),
                       doctest::Contains("live on different index spaces"), kfuse::Error);
  CHECK(u.gather() == untouched);
}

namespace {
/// Kokkos allocations of at least `bytes`, counted through Kokkos Tools'
/// allocation callback (process-wide, as KernelCounter's: one at a time).
class LargeAllocations {
 public:
  explicit LargeAllocations(std::uint64_t bytes) {
    threshold() = bytes;
    count() = 0;
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
  }
  ~LargeAllocations() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  LargeAllocations(const LargeAllocations&) = delete;
  LargeAllocations& operator=(const LargeAllocations&) = delete;
  int count_so_far() const { return count(); }

 private:
  static std::uint64_t& threshold() {
    static std::uint64_t bytes = 0;
    return bytes;
  }
  static int& count() {
    static int n = 0;
    return n;
  }
  static void on_allocate(const Kokkos_Profiling_SpaceHandle, const char*, const void*,
                          const std::uint64_t size) {
    if (size >= threshold()) ++count();
  }
};

/// A solve with options.workspace set, twice: the second allocates no vector
/// of A's rows, and both give the iterates of a solve without a workspace
/// (bitwise: the same arithmetic on the same values).
template <class M>
void check_workspace_reuse(Method method, const kfuse::CsrMatrix<double>& A,
                           kfuse::SolverOptions options, const M& m) {
  const Vector b = rhs_of_ones(A);
  Vector expected_x(A.domain(), "expected_x"), x(A.domain(), "x");
  const auto expected = solve(method, A, expected_x, b, options, m);
  kfuse::SolverWorkspace workspace;
  options.workspace = &workspace;
  const auto first = solve(method, A, x, b, options, m);
  CHECK(workspace.size() > 0);
  CHECK(first.iterations == expected.iterations);
  CHECK(x.gather() == expected_x.gather());
  x.fill(0.0);
  kfuse::SolveResult again;
  {
    LargeAllocations allocations(sizeof(double) * std::uint64_t(A.range().local_size()));
    again = solve(method, A, x, b, options, m);
    CHECK(allocations.count_so_far() == 0);
  }
  CHECK(again.converged == expected.converged);
  CHECK(again.iterations == expected.iterations);
  CHECK(again.residual_norm == expected.residual_norm);
  CHECK(x.gather() == expected_x.gather());
}
}  // namespace

namespace {
/// kfuse::cg_matfree with SolverOptions::cg_single_reduction on `op` over `grid` (one
/// sweep an iteration where cg_sweeps_v holds, as on a Serial build) against the
/// two-kernel form run step by step (cg.hpp's programs): the same iterates after 12
/// iterations, the counted kernels, and a converged solve against the standard CG.
template <int N, class Op>
void check_single_reduction_sweep(const kfuse::Grid<N>& grid, const Op& op) {
  using Array = kfuse::Array<double, N>;
  namespace detail = kfuse::detail;
  auto points = [] {
    if constexpr (N == 2)
      return kfuse::index<0>() * 7 + kfuse::index<1>() * 3;
    else
      return kfuse::index<0>() * 7 + kfuse::index<1>() * 3 + kfuse::index<2>() * 5;
  };
  Array b(grid, "b"), x(grid, "x"), x_model(grid, "x_model");
  b = 1.0 + 0.125 * kfuse::sin(kfuse::cast<double>(points()));
  Array x0(grid, "x0");
  x0 = 0.01 * kfuse::cos(kfuse::cast<double>(points()));  // a nonzero initial guess
  constexpr int iterations = 12;
  kfuse::SolverOptions fixed{0, iterations};
  fixed.atol = 0;
  fixed.cg_single_reduction = true;
  kfuse::KernelCounter counter;
  IterationCounts kernels{counter, 2, iterations};
  fixed.monitor = kernels.monitor();
  x = x0;
  const auto swept = kfuse::cg_matfree(op, x, b, fixed);
  CHECK(swept.iterations == iterations);
  CHECK(kernels.kernels_per_iteration() == (detail::cg_sweeps_v<Op, Array> ? 1 : 2));
  CHECK(kernels.allreduces_per_iteration() == expected_allreduces(1));

  Array r(grid, "r"), p(grid, "p"), s(grid, "s"), w(grid, "w");
  detail::CgScalars<double> c;
  kfuse::Scalar<double> rw("r.w");
  x_model = x0;
  detail::cg_start(op, x_model, b, r, p, c);
  detail::cg_single_reduction_start(op, r, p, rw, c, s, w);
  auto iteration = detail::cg_single_reduction_iteration(op, x_model, r, p, s, w, rw, c);
  for (int it = 0; it < iterations; ++it) iteration();
  kfuse_test::check_close(x.gather(), x_model.gather(), 1e-10);
  CHECK(std::abs(swept.residual_norm - std::sqrt(c.rr.value())) <=
        1e-8 * std::sqrt(c.rr.value()));

  kfuse::SolverOptions converge{1e-10, 2000};
  Array x_standard(grid, "x_standard");
  x_standard = x0;
  const auto standard = kfuse::cg_matfree(op, x_standard, b, converge);
  converge.cg_single_reduction = true;
  x = x0;
  const auto single = kfuse::cg_matfree(op, x, b, converge);
  CHECK(standard.converged);
  CHECK(single.converged);
  CHECK(std::abs(single.iterations - standard.iterations) <= 1);
  kfuse_test::check_close(x.gather(), x_standard.gather(), 1e-7);
}
}  // namespace

TEST_CASE("cg_matfree's single-reduction sweep: the two-kernel form's iterates, 1 kernel") {
  kfuse::Comm comm;
  using kfuse::shift;
  SUBCASE("2-D, 5 points, fixed walls") {
    kfuse::Grid<2> grid(comm, {37, 23});
    check_single_reduction_sweep(grid, [](const auto& v) {
      return 4.0 * v - shift<-1, 0>(v) - shift<1, 0>(v) - shift<0, -1>(v) - shift<0, 1>(v);
    });
  }
  SUBCASE("2-D, 9 points (the corners), periodic and zero-gradient sides") {
    kfuse::GridOptions<2> options;
    options.periodic = {true, false};
    options.boundary = {kfuse::Boundary::fixed, kfuse::Boundary::zero_gradient};
    kfuse::Grid<2> grid(comm, {26, 31}, options);
    check_single_reduction_sweep(grid, [](const auto& v) {
      return 8.5 * v - shift<-1, -1>(v) - shift<-1, 0>(v) - shift<-1, 1>(v) - shift<0, -1>(v) -
             shift<0, 1>(v) - shift<1, -1>(v) - shift<1, 0>(v) - shift<1, 1>(v);
    });
  }
  SUBCASE("3-D, 7 points, a periodic side") {
    kfuse::GridOptions<3> options;
    options.periodic = {false, false, true};
    kfuse::Grid<3> grid(comm, {13, 11, 9}, options);
    check_single_reduction_sweep(grid, [](const auto& v) {
      return 6.5 * v - shift<-1, 0, 0>(v) - shift<1, 0, 0>(v) - shift<0, -1, 0>(v) -
             shift<0, 1, 0>(v) - shift<0, 0, -1>(v) - shift<0, 0, 1>(v);
    });
  }
  SUBCASE("2-D, reach 2 on a halo of 2") {
    kfuse::GridOptions<2> options;
    options.halo = 2;
    kfuse::Grid<2> grid(comm, {29, 31}, options);
    check_single_reduction_sweep(grid, [](const auto& v) {
      return 9.0 * v - shift<-1, 0>(v) - shift<1, 0>(v) - shift<0, -1>(v) - shift<0, 1>(v) -
             0.5 * (shift<-2, 0>(v) + shift<2, 0>(v) + shift<0, -2>(v) + shift<0, 2>(v));
    });
  }
  SUBCASE("blocks of one or two slabs") {
    kfuse::GridOptions<2> options;
    options.ranks = {comm.size(), 1};
    kfuse::Grid<2> grid(comm, {std::int64_t(comm.size()) + 2, 40}, options);
    check_single_reduction_sweep(grid, [](const auto& v) {
      return 4.0 * v - shift<-1, 0>(v) - shift<1, 0>(v) - shift<0, -1>(v) - shift<0, 1>(v);
    });
  }
}

TEST_CASE("a SolverWorkspace keeps every solver's work vectors: a repeated solve allocates none") {
  kfuse::Comm comm;
  const auto P = kfuse::poisson2d<double>(comm, 40, 40);
  const auto C = kfuse::convection_diffusion2d<double>(comm, 40, 40, 1.0, 0.5);
  const auto jacobi_p = kfuse::pc::jacobi(P), jacobi_c = kfuse::pc::jacobi(C);
  const Vector dinv_p = jacobi_p.inverse_diagonal(), dinv_c = jacobi_c.inverse_diagonal();
  auto user_p = [&](const Vector& r, Vector& z) { z = dinv_p * r; };
  auto user_c = [&](const Vector& r, Vector& z) { z = dinv_c * r; };
  const kfuse::SolverOptions options{1e-10, 500};
  kfuse::SolverOptions single = options;
  single.cg_single_reduction = true;

  SUBCASE("cg") {
    check_workspace_reuse(Method::cg, P, options, kfuse::pc::none);
    check_workspace_reuse(Method::cg, P, single, kfuse::pc::none);
    check_workspace_reuse(Method::cg, P, options, jacobi_p);
    check_workspace_reuse(Method::cg, P, options, user_p);
  }
  SUBCASE("bicgstab, gmres, fgmres") {
    for (Method method : {Method::bicgstab, Method::gmres, Method::fgmres}) {
      CAPTURE(static_cast<int>(method));
      check_workspace_reuse(method, C, options, kfuse::pc::none);
      check_workspace_reuse(method, C, options, jacobi_c);
      check_workspace_reuse(method, C, options, user_c);
    }
  }
  SUBCASE("built-in operators, whose programs stay bound to the reused vectors") {
    kfuse::pc::MultigridOptions three_levels;
    three_levels.levels = 3;
    const auto multigrid_p = kfuse::pc::multigrid(P, {40, 40}, three_levels);
    check_workspace_reuse(Method::cg, P, options, multigrid_p);
    check_workspace_reuse(Method::cg, P, options, kfuse::pc::chebyshev(P, 3));
    const auto ilu_c = kfuse::pc::bjacobi_ilu0(C);
    const auto multigrid_c = kfuse::pc::multigrid(C, {40, 40}, three_levels);
    for (Method method : {Method::bicgstab, Method::gmres, Method::fgmres}) {
      CAPTURE(static_cast<int>(method));
      check_workspace_reuse(method, C, options, ilu_c);
      check_workspace_reuse(method, C, options, multigrid_c);
    }
  }

  SUBCASE("cg_matfree on Arrays") {
    constexpr std::int64_t nx = 30, ny = 24;
    kfuse::Grid<2> grid(comm, {nx, ny});  // fixed boundaries, halos zero: Dirichlet 0
    kfuse::Array<double, 2> f(grid, "f"), expected_u(grid, "expected_u"), u(grid, "u");
    f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
      return (i < 0 || j < 0 || i >= nx || j >= ny) ? 0.0 : 1.0 + 0.1 * double((i * 7 + j) % 5);
    });
    auto laplacian = [](const auto& v) {
      return 4.0 * v - kfuse::shift<-1, 0>(v) - kfuse::shift<1, 0>(v) - kfuse::shift<0, -1>(v) -
             kfuse::shift<0, 1>(v);
    };
    const auto expected = kfuse::cg_matfree(laplacian, expected_u, f, options);
    kfuse::SolverWorkspace workspace;
    kfuse::SolverOptions reusing = options;
    reusing.workspace = &workspace;
    kfuse::cg_matfree(laplacian, u, f, reusing);
    u.fill(0.0);
    LargeAllocations allocations(sizeof(double) * std::uint64_t(grid.local_extent(0)) *
                                 std::uint64_t(grid.local_extent(1)));
    const auto again = kfuse::cg_matfree(laplacian, u, f, reusing);
    CHECK(allocations.count_so_far() == 0);
    CHECK(again.iterations == expected.iterations);
    CHECK(u.gather() == expected_u.gather());
  }
}

TEST_CASE("a SolverWorkspace: replaced for another space, not shared by a nested solve") {
  kfuse::Comm comm;
  const auto C = kfuse::convection_diffusion2d<double>(comm, 30, 30, 1.0, 0.5);
  const Vector b = rhs_of_ones(C);
  const kfuse::SolverOptions plain{1e-9, 300};

  // FGMRES preconditioned by 3 GMRES iterations on the same options: the inner
  // solve finds the workspace in use and works in vectors of its own.
  auto nested = [&](const kfuse::SolverOptions& options) {
    return [&C, options](const Vector& r, Vector& z) {
      kfuse::SolverOptions inner = options;
      inner.max_it = 3;
      z.fill(0.0);
      kfuse::gmres(C, z, r, inner);
    };
  };
  Vector expected_x(C.domain(), "expected_x"), x(C.domain(), "x");
  const auto expected = kfuse::fgmres(C, expected_x, b, plain, nested(plain));
  kfuse::SolverWorkspace workspace;
  kfuse::SolverOptions shared = plain;
  shared.workspace = &workspace;
  for (int round = 0; round < 2; ++round) {
    x.fill(0.0);
    const auto result = kfuse::fgmres(C, x, b, shared, nested(shared));
    CHECK(result.converged);
    CHECK(result.iterations == expected.iterations);
    CHECK(x.gather() == expected_x.gather());
  }
  CHECK(workspace.size() > 0);

  // Another row map: what the workspace holds is replaced, and still right.
  const auto small = kfuse::convection_diffusion2d<double>(comm, 12, 12, 1.0, 0.5);
  const Vector small_b = rhs_of_ones(small);
  Vector small_x(small.domain(), "small_x"), small_expected(small.domain(), "small_expected");
  const auto small_plain = kfuse::gmres(small, small_expected, small_b, plain);
  const auto small_reused = kfuse::gmres(small, small_x, small_b, shared);
  CHECK(small_reused.iterations == small_plain.iterations);
  CHECK(small_x.gather() == small_expected.gather());
  workspace.clear();
  CHECK(workspace.size() == 0);
}

TEST_CASE("a repeated solve: one agreement on its arguments and options, M bound once a pair") {
  if (!kfuse_test::counts_allreduces()) return;
  kfuse::Comm comm;
  const auto P = kfuse::poisson2d<double>(comm, 32, 32);
  const Vector b = rhs_of_ones(P);
  kfuse::pc::MultigridOptions three_levels;
  three_levels.levels = 3;
  const auto multigrid = kfuse::pc::multigrid(P, {32, 32}, three_levels);
  // The allreduces of a solve of exactly `its` iterations, its workspace used once before.
  auto allreduces = [&](Method method, const auto& m, int its) {
    kfuse::SolverWorkspace workspace;
    kfuse::SolverOptions options;
    options.rtol = 0;
    options.max_it = its;
    options.workspace = &workspace;
    Vector x(P.domain(), "x");
    solve(method, P, x, b, options, m);
    x.fill(0.0);
    const std::int64_t before = kfuse_test::allreduce_calls();
    CHECK(solve(method, P, x, b, options, m).iterations == its);
    return kfuse_test::allreduce_calls() - before;
  };
  // CG: 2 an iteration, and 5 a solve: its arguments and options, its work vectors, the
  // start's program and the iteration's bound, the start's norms.
  const std::int64_t cg4 = allreduces(Method::cg, kfuse::pc::none, 4);
  CHECK(allreduces(Method::cg, kfuse::pc::none, 8) - cg4 == 2 * 4);
  CHECK(cg4 - 2 * 4 == 5);
  // BiCGSTAB applies M to p and to s: the V-cycle's programs, bound to both pairs in the
  // first solve, add nothing to an iteration but the cycle's own allreduces (a second
  // call by hand, bound already: its check's one, then the cycle's).
  Vector r(P.range(), "r"), z(P.range(), "z");
  r = b;
  multigrid(r, z);
  const std::int64_t at = kfuse_test::allreduce_calls();
  multigrid(r, z);
  const std::int64_t cycle = kfuse_test::allreduce_calls() - at - 1;
  for (Method method : {Method::bicgstab, Method::gmres}) {
    CAPTURE(static_cast<int>(method));
    const std::int64_t plain =
        allreduces(method, kfuse::pc::none, 8) - allreduces(method, kfuse::pc::none, 4);
    const std::int64_t preconditioned =
        allreduces(method, multigrid, 8) - allreduces(method, multigrid, 4);
    const int applies = method == Method::bicgstab ? 2 : 1;  // an iteration
    CHECK(preconditioned == plain + 4 * applies * cycle);
  }
}

TEST_CASE("kernels and allreduces per iteration: Jacobi stays fused, an operator M adds its own") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 20, 20);
  const auto b = rhs_of_ones(A);
  kfuse::KernelCounter counter;
  kfuse::SolverOptions options{1e-30, 10};  // exactly 10 iterations
  IterationCounts kernels{counter, 1, 10};
  options.monitor = kernels.monitor();
  auto per_iteration = [&] { return kernels.kernels_per_iteration(); };
  auto allreduces = [&] { return kernels.allreduces_per_iteration(); };
  Vector x(A.domain(), "x");
  CHECK(kfuse::cg(A, x, b, options, kfuse::pc::jacobi(A)).iterations == 10);
  CHECK(per_iteration() == 3);
  CHECK(allreduces() == expected_allreduces(2));
  // The start's kernel computed p = D^-1 r and r.p: from it to the first iteration's
  // end, that iteration's kernels and no others.
  IterationCounts first{counter, 0, 1};
  options.monitor = first.monitor();
  x.fill(0.0);
  kfuse::cg(A, x, b, options, kfuse::pc::jacobi(A));
  CHECK(first.kernels_per_iteration() == 3);
  options.monitor = kernels.monitor();
  x.fill(0.0);
  CHECK(kfuse::bicgstab(A, x, b, options, kfuse::pc::jacobi(A)).iterations == 10);
  CHECK(per_iteration() == 5);
  CHECK(allreduces() == expected_allreduces(3));
  x.fill(0.0);
  const auto ilu = kfuse::pc::bjacobi_ilu0(A);
  CHECK(kfuse::cg(A, x, b, options, ilu).iterations == 10);
  CHECK(per_iteration() == 4);  // + the triangular solves (Kokkos Kernels' labels)
  CHECK(allreduces() == expected_allreduces(3));
  x.fill(0.0);
  CHECK(kfuse::gmres(A, x, b, options, kfuse::pc::jacobi(A)).iterations == 10);
  CHECK(per_iteration() == 2);  // orthogonalize, normalize (+ SpMV and gemv of Kokkos Kernels)
  CHECK(allreduces() == expected_allreduces(2));
}

TEST_CASE("breakdowns leave x finite and name their rule") {
  kfuse::Comm comm;
  const std::int64_t n = 12;
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  if (comm.rank() == 0)
    for (std::int64_t i = 0; i < n; ++i) rows.push_back(i), cols.push_back(i), vals.push_back(0.0);
  const auto Z = kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "Z");
  Vector b(Z.range(), "b"), x(Z.domain(), "x");
  b.fill(1.0);
  for (Method method : {Method::gmres, Method::fgmres}) {
    x.fill(0.5);
    const auto r = solve(method, Z, x, b, kfuse::SolverOptions{}, kfuse::pc::none);
    CHECK_FALSE(r.converged);
    CHECK(r.reason == "breakdown");
    for (double v : x.gather()) CHECK(v == 0.5);
  }

  // CG's r.z (PETSc's rules): a negative definite M is fine (the iterates of
  // -M), one that changes the sign of r.z stops it.
  const auto P = kfuse::poisson2d<double>(comm, 8, 8);
  const auto bp = rhs_of_ones(P);
  Vector xp(P.domain(), "x"), yp(P.domain(), "y");
  const auto negative = kfuse::cg(P, xp, bp, {}, [](const Vector& r, Vector& z) { z = -1.0 * r; });
  const auto positive = kfuse::cg(P, yp, bp, {}, [](const Vector& r, Vector& z) { z = r; });
  CHECK(negative.converged);
  CHECK(negative.iterations == positive.iterations);
  int applies = 0;
  auto flipping = [&](const Vector& r, Vector& z) { z = (++applies < 3 ? 1.0 : -1.0) * r; };
  xp.fill(0.0);
  const auto flipped = kfuse::cg(P, xp, bp, {}, flipping);
  CHECK(flipped.reason == "indefinite preconditioner");
  CHECK(flipped.iterations == 2);
  for (double v : xp.gather()) CHECK(std::isfinite(v));

  // GMRES whose Krylov space is invariant (a happy breakdown) while its
  // Hessenberg matrix is singular: not converged, x unchanged (PETSc:
  // KSP_DIVERGED_BREAKDOWN). Pairs of rows [[0, 0], [1e-31, 0]], ||b|| = 0.5.
  {
    const std::int64_t n = 2 * comm.size();
    std::vector<std::int64_t> rows, cols;
    std::vector<double> vals;
    if (comm.rank() == 0)
      for (std::int64_t i = 0; i < n; i += 2)
        rows.push_back(i + 1), cols.push_back(i), vals.push_back(1e-31);
    const auto N = kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "N");
    Vector bn(N.range(), "b"), xn(N.domain(), "x");
    const double value = 0.5 / std::sqrt(double(n / 2));
    bn.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return i % 2 == 0 ? value : 0.0; });
    const auto r = kfuse::gmres(N, xn, bn);
    CHECK_FALSE(r.converged);
    CHECK(r.reason == "breakdown");
    for (double v : xn.gather()) CHECK(v == 0.0);
  }
}

TEST_CASE("b = 0 with a nonzero initial guess converges relative to ||r_0|| (PETSc's rule)") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 10, 10);
  Vector b(A.range(), "b");
  const double r0 = kfuse::eval(kfuse::norm2(rhs_of_ones(A)));  // ||b - A 1||
  for (Method method : {Method::cg, Method::bicgstab, Method::gmres, Method::fgmres}) {
    Vector x(A.domain(), "x");
    x.fill(1.0);
    const auto result = solve(method, A, x, b, kfuse::SolverOptions{1e-8, 500}, kfuse::pc::none);
    INFO(int(method) << ": " << result.reason << " after " << result.iterations);
    CHECK(result.converged);
    CHECK(result.iterations > 0);
    CHECK(kfuse_test::true_residual(A, x, b) <= 1e-7 * r0);
  }
}

TEST_CASE("preconditioner errors: kfuse::Error on every rank, x untouched") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 6, 6);
  const auto b = rhs_of_ones(A);
  Vector x(A.domain(), "x");
  x.fill(2.0);
  kfuse::SolverOptions options;
  options.restart = 0;
  CHECK_THROWS_WITH_AS(kfuse::gmres(A, x, b, options), doctest::Contains("restart is 0"),
                       kfuse::Error);
  options.restart = 30;
  options.preconditioner = kfuse::Preconditioner::jacobi;
  CHECK_THROWS_WITH_AS(kfuse::cg(A, x, b, options, kfuse::pc::jacobi(A)),
                       doctest::Contains("use one of them"), kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::gmres(A, x, b, options), doctest::Contains("pc::jacobi(A)"),
                       kfuse::Error);

  // A row without a diagonal entry on the last rank only: every rank throws.
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  const std::int64_t n = 4 * comm.size();
  if (comm.rank() == 0)
    for (std::int64_t i = 0; i < n; ++i)
      if (i != n - 1) rows.push_back(i), cols.push_back(i), vals.push_back(2.0);
  rows.push_back(n - 1), cols.push_back(0), vals.push_back(1.0);
  const auto D = kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "D");
  CHECK_THROWS_WITH_AS(kfuse::pc::bjacobi_ilu0(D), doctest::Contains("nonzero diagonal"),
                       kfuse::Error);

  // A callable that throws on one rank only (before any collective call of
  // its own): every rank gets a kfuse::Error.
  const int last = comm.size() - 1;
  auto flaky = [&](const Vector& r, Vector& z) {
    if (comm.rank() == last) throw std::runtime_error("out of luck");
    Kokkos::deep_copy(z.view(), r.view());
  };
  x.fill(2.0);
  CHECK_THROWS_WITH_AS(kfuse::gmres(A, x, b, {}, flaky), doctest::Contains("out of luck"),
                       kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::cg(A, x, b, {}, flaky), doctest::Contains("preconditioner threw"),
                       kfuse::Error);
  for (double v : x.gather()) CHECK(v == 2.0);
}

namespace {
/// The scaled Chebyshev polynomial T_k(s) (|s| <= 1: cos, else cosh).
double chebyshev_t(int k, double s) {
  if (std::abs(s) <= 1) return std::cos(k * std::acos(s));
  const double v = std::cosh(k * std::acosh(std::abs(s)));
  return s < 0 && k % 2 == 1 ? -v : v;
}

/// Eigenvector (a, b) of poisson2d on an nx x ny grid, at row g = i ny + j.
struct PoissonMode {
  double pi;
  std::int64_t a, b, nx, ny;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t g) const {
    return kfuse::detail::math::sin(pi * a * double(g / ny + 1) / double(nx + 1)) *
           kfuse::detail::math::sin(pi * b * double(g % ny + 1) / double(ny + 1));
  }
};
}  // namespace

TEST_CASE("pc::chebyshev is PETSc's Chebyshev polynomial in D^-1 A, one kernel per degree") {
  // poisson2d's eigenvectors are known: sin(pi a (i + 1) / (nx + 1)) sin(pi b
  // (j + 1) / (ny + 1)), with eigenvalue 1 - (cos(pi a / (nx + 1)) + cos(pi b /
  // (ny + 1))) / 2 of D^-1 A. On one of them z = M r must be q(lambda) D^-1 r with
  // 1 - lambda q(lambda) = T_k(s(lambda)) / T_k(s(0)), s(t) = (emax + emin - 2t)
  // / (emax - emin): the residual polynomial Chebyshev iteration builds.
  kfuse::Comm comm;
  const std::int64_t nx = 14, ny = 11;
  const double pi = std::acos(-1.0);
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);
  const double largest = 1 + (std::cos(pi / (nx + 1)) + std::cos(pi / (ny + 1))) / 2;
  for (int degree = 1; degree <= 5; ++degree) {
    const auto M = kfuse::pc::chebyshev(A, degree);
    INFO("degree " << degree << ", estimate " << M.estimate() << ", largest " << largest);
    // Lanczos converges to the largest eigenvalue from below.
    CHECK(M.estimate() <= largest * (1 + 1e-12));
    CHECK(M.estimate() >= 0.95 * largest);
    CHECK(M.emin() == doctest::Approx(0.1 * M.estimate()).epsilon(1e-15));
    CHECK(M.emax() == doctest::Approx(1.1 * M.estimate()).epsilon(1e-15));
    for (const auto& ab : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 2}, {nx, ny}}) {
      const std::int64_t a = ab.first, b = ab.second;  // INFO captures them (no bindings)
      const double lambda =
          1 - (std::cos(pi * a / (nx + 1)) + std::cos(pi * b / (ny + 1))) / 2;
      const PoissonMode mode{pi, a, b, nx, ny};
      Vector r(A.range(), "r"), z(A.range(), "z");
      r.fill_with(mode);
      kfuse::KernelCounter counter;
      M(r, z);
      CHECK(counter.compute_kernels() == degree);
      auto s = [&](double t) { return (M.emax() + M.emin() - 2 * t) / (M.emax() - M.emin()); };
      const double q =
          (1 - chebyshev_t(degree, s(lambda)) / chebyshev_t(degree, s(0))) / lambda;
      std::vector<double> want;
      for (std::int64_t g = 0; g < nx * ny; ++g) want.push_back(q * mode(g) / 4);  // D = 4
      INFO("mode " << a << ", " << b << ": q = " << q);
      kfuse_test::check_close(z.gather(), want, 1e-12);
    }
  }

  // Bounds given: no estimate; applied by CG, 4 kernels + degree per iteration.
  kfuse::pc::ChebyshevOptions bounds;
  bounds.emin = 0.2;
  bounds.emax = 2.0;
  const auto M = kfuse::pc::chebyshev(A, 3, bounds);
  CHECK(M.estimate() == 0);
  CHECK(M.emin() == 0.2);
  const auto b = rhs_of_ones(A);
  Vector x(A.domain(), "x");
  kfuse::KernelCounter counter;
  kfuse::SolverOptions options{1e-30, 6};  // exactly 6 iterations
  IterationCounts kernels{counter, 1, 6};
  options.monitor = kernels.monitor();
  CHECK(kfuse::cg(A, x, b, options, M).iterations == 6);
  CHECK(kernels.kernels_per_iteration() == 4 + 3);
  CHECK(kernels.allreduces_per_iteration() == expected_allreduces(3));  // Chebyshev: none
  const auto solved = kfuse::cg(A, x, b, {}, M);  // from where it stopped
  CHECK(solved.converged);
  CHECK(kfuse_test::true_residual(A, x, b) <= 1e-7 * kfuse::eval(kfuse::norm2(b)));
}

TEST_CASE("pc::chebyshev errors: kfuse::Error on every rank") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 6, 6);
  CHECK_THROWS_WITH_AS(kfuse::pc::chebyshev(A, 0), doctest::Contains("degree 0"), kfuse::Error);
  kfuse::pc::ChebyshevOptions o;
  o.emin = 2;
  o.emax = 1;
  CHECK_THROWS_WITH_AS(kfuse::pc::chebyshev(A, 2, o), doctest::Contains("0 < emin < emax"),
                       kfuse::Error);
  o = {};
  o.estimate_steps = 0;
  CHECK_THROWS_WITH_AS(kfuse::pc::chebyshev(A, 2, o), doctest::Contains("estimate_steps"),
                       kfuse::Error);
  // Another degree on the last rank only.
  const int degree = comm.rank() == comm.size() - 1 && comm.size() > 1 ? 3 : 2;
  if (comm.size() > 1)
    CHECK_THROWS_WITH_AS(kfuse::pc::chebyshev(A, degree), doctest::Contains("different degrees"),
                         kfuse::Error);
  const auto M = kfuse::pc::chebyshev(A, 2);
  Vector r(A.range(), "r"), z(A.range(), "z");
  r.fill(1.0);
  CHECK_THROWS_WITH_AS(M(r, r), doctest::Contains("same vector"), kfuse::Error);
  const auto B = kfuse::poisson2d<double>(comm, 7, 6);
  Vector other(B.range(), "other");
  CHECK_THROWS_WITH_AS(M(other, z), doctest::Contains("must lie on the matrix's rows"),
                       kfuse::Error);
  // A new z rebinds on every rank, and the result does not depend on it.
  Vector y(A.range(), "y");
  M(r, z);
  M(r, y);
  kfuse_test::check_close(y.gather(), z.gather(), 0);
}
