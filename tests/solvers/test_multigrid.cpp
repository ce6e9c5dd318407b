// pc::multigrid without PETSc: the hierarchy against the definitions (full
// weighting, injection, bilinear interpolation, R A P computed densely on the
// host), one V-cycle against a host loop with the same weights, the kernels
// per V-cycle (counted), CG with it on 2-D and 3-D Poisson, and the errors
// (one rank wrong at 2 and 3 ranks). The comparison with PETSc's PCMG is in
// test_preconditioned.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/mpi_calls.hpp"
#include "../support/reference.hpp"
#include "solver_support.hpp"

namespace {

using Vector = kfuse::Vector<double>;
using Dense = std::vector<std::vector<double>>;

Dense dense(const kfuse::CsrMatrix<double>& A) {
  Dense M(static_cast<std::size_t>(A.global_rows()),
          std::vector<double>(static_cast<std::size_t>(A.global_cols()), 0.0));
  for (const auto& e : kfuse::detail::gather_triplets(A))
    M[static_cast<std::size_t>(e.row)][static_cast<std::size_t>(e.col)] += e.value;
  return M;
}

Dense multiply(const Dense& A, const Dense& B) {
  Dense C(A.size(), std::vector<double>(B[0].size(), 0.0));
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t k = 0; k < B.size(); ++k)
      if (A[i][k] != 0)
        for (std::size_t j = 0; j < B[0].size(); ++j) C[i][j] += A[i][k] * B[k][j];
  return C;
}

std::vector<double> times(const Dense& A, const std::vector<double>& x) {
  std::vector<double> y(A.size(), 0.0);
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t j = 0; j < x.size(); ++j) y[i] += A[i][j] * x[j];
  return y;
}

void check_dense(const Dense& got, const Dense& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    for (std::size_t j = 0; j < got[i].size(); ++j) {
      INFO("entry (" << i << ", " << j << ")");
      CHECK(std::abs(got[i][j] - want[i][j]) <= tolerance);
    }
}

/// The 1-D weight of coarse point c (fine point 2c + 1) at fine point i.
double weight_1d(std::int64_t i, std::int64_t c, bool injection) {
  const std::int64_t distance = std::abs(2 * c + 1 - i);
  return distance == 0 ? 1.0 : distance == 1 && !injection ? 0.5 : 0.0;
}

/// x = A^-1 b by Gaussian elimination with partial pivoting.
std::vector<double> dense_solve(Dense A, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t pivot = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(A[i][k]) > std::abs(A[pivot][k])) pivot = i;
    std::swap(A[k], A[pivot]);
    std::swap(b[k], b[pivot]);
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = A[i][k] / A[k][k];
      for (std::size_t j = k; j < n; ++j) A[i][j] -= f * A[k][j];
      b[i] -= f * b[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double sum = b[i];
    for (std::size_t j = i + 1; j < n; ++j) sum -= A[i][j] * x[j];
    x[i] = sum / A[i][i];
  }
  return x;
}

/// The hierarchy's matrices and each level's eigenvalue estimate.
struct Hierarchy {
  std::vector<Dense> A, R, P;
  std::vector<double> lambda;
  explicit Hierarchy(const kfuse::pc::Multigrid<double>& M) {
    for (int l = 0; l < M.levels(); ++l) {
      A.push_back(dense(M.matrix(l)));
      lambda.push_back(M.eigenvalue_estimate(l));
      if (l + 1 < M.levels())
        R.push_back(dense(M.restriction(l))), P.push_back(dense(M.interpolation(l)));
    }
  }
};

/// `iterations` smoother iterations on level l (Jacobi with weight / lambda,
/// or PETSc's Chebyshev recurrence on [lower, upper] lambda), from x.
void host_smooth(const Hierarchy& h, const kfuse::pc::MultigridOptions& o, std::size_t l,
                 const std::vector<double>& b, int iterations, std::vector<double>& x) {
  const std::size_t n = b.size();
  auto step = [&](const std::vector<double>& at) {  // D^-1 (b - A at)
    auto d = times(h.A[l], at);
    for (std::size_t i = 0; i < n; ++i) d[i] = (b[i] - d[i]) / h.A[l][i][i];
    return d;
  };
  if (o.smoother == kfuse::pc::Smoother::jacobi) {
    for (int k = 0; k < iterations; ++k) {
      const auto d = step(x);
      for (std::size_t i = 0; i < n; ++i) x[i] += o.weight / h.lambda[l] * d[i];
    }
    return;
  }
  const double emin = o.chebyshev.lower * h.lambda[l], emax = o.chebyshev.upper * h.lambda[l];
  const double scale = 2 / (emax + emin), alpha = 1 - scale * emin, mu = 1 / alpha;
  std::vector<double> previous = x;
  auto d = step(x);
  for (std::size_t i = 0; i < n; ++i) x[i] += scale * d[i];
  double c_before = 1, c = mu;
  for (int j = 1; j < iterations; ++j) {
    const double c_next = 2 * mu * c - c_before, omega = 2 / alpha * c / c_next;
    d = step(x);
    std::vector<double> next(n);
    for (std::size_t i = 0; i < n; ++i)
      next[i] = (1 - omega) * previous[i] + omega * x[i] + omega * scale * d[i];
    previous = x;
    x = next;
    c_before = c;
    c = c_next;
  }
}

/// One V-cycle from 0 on the host, with the hierarchy's own matrices.
std::vector<double> host_cycle(const Hierarchy& h, const kfuse::pc::MultigridOptions& o,
                               std::size_t l, const std::vector<double>& b) {
  const std::size_t n = b.size();
  const bool coarsest = l + 1 == h.A.size();
  if (coarsest && o.coarse == kfuse::pc::CoarseSolve::direct) return dense_solve(h.A[l], b);
  std::vector<double> x(n, 0.0);
  host_smooth(h, o, l, b, coarsest ? o.coarse_sweeps : o.sweeps, x);
  if (coarsest) return x;
  auto t = times(h.A[l], x);
  for (std::size_t i = 0; i < n; ++i) t[i] = b[i] - t[i];
  const auto xc = host_cycle(h, o, l + 1, times(h.R[l], t));
  const auto correction = times(h.P[l], xc);
  for (std::size_t i = 0; i < n; ++i) x[i] += correction[i];
  host_smooth(h, o, l, b, o.sweeps, x);
  return x;
}

}  // namespace

TEST_CASE("pc::multigrid builds full weighting, injection, interpolation and R A P") {
  kfuse::Comm comm;
  const std::int64_t nx = 9, ny = 8;  // coarse 4 x 3, then 1 x 1
  const auto A = kfuse::convection_diffusion2d<double>(comm, nx, ny, 1.0, -0.5);
  for (auto restriction :
       {kfuse::pc::Restriction::full_weighting, kfuse::pc::Restriction::injection}) {
    const bool injection = restriction == kfuse::pc::Restriction::injection;
    INFO("injection " << injection);
    kfuse::pc::MultigridOptions o;
    o.levels = 3;
    o.restriction = restriction;
    const auto M = kfuse::pc::multigrid(A, {nx, ny}, o);
    REQUIRE(M.levels() == 3);
    CHECK(M.shape(1) == std::vector<std::int64_t>{4, 3});
    CHECK(M.shape(2) == std::vector<std::int64_t>{1, 1});
    Dense fine = dense(A);
    for (int l = 0; l < 2; ++l) {
      const auto fs = M.shape(l), cs = M.shape(l + 1);
      Dense P(static_cast<std::size_t>(fs[0] * fs[1]),
              std::vector<double>(static_cast<std::size_t>(cs[0] * cs[1]), 0.0));
      Dense R(P[0].size(), std::vector<double>(P.size(), 0.0));
      for (std::int64_t i = 0; i < fs[0]; ++i)
        for (std::int64_t j = 0; j < fs[1]; ++j)
          for (std::int64_t I = 0; I < cs[0]; ++I)
            for (std::int64_t J = 0; J < cs[1]; ++J) {
              const double w = weight_1d(i, I, injection) * weight_1d(j, J, injection);
              const auto f = static_cast<std::size_t>(i * fs[1] + j);
              const auto c = static_cast<std::size_t>(I * cs[1] + J);
              P[f][c] = w;
              R[c][f] = injection ? w : w / 4;  // full weighting: 1/4 1/2 1/4 per dimension
            }
      check_dense(dense(M.interpolation(l)), P, 0);
      check_dense(dense(M.restriction(l)), R, 0);
      fine = multiply(multiply(R, fine), P);
      check_dense(dense(M.matrix(l + 1)), fine, 1e-13);
      // The coarse rows follow the fine rows: a rank owns the coarse points
      // whose own fine point it owns.
      const auto& rows = M.matrix(l + 1).range();
      for (std::int64_t c = rows.local_begin(); c < rows.local_begin() + rows.local_size(); ++c) {
        const std::int64_t f = (2 * (c / cs[1]) + 1) * fs[1] + 2 * (c % cs[1]) + 1;
        CHECK(M.matrix(l).range().owner(f) == comm.rank());
      }
    }
  }
}

TEST_CASE("pc::multigrid applies one V-cycle (host loop), its kernels counted") {
  kfuse::Comm comm;
  const std::int64_t nx = 15, ny = 13;
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);
  using kfuse::pc::CoarseSolve;
  using kfuse::pc::Smoother;
  struct Case {
    Smoother smoother;
    CoarseSolve coarse;
    int levels, sweeps, coarse_sweeps, kernels;
  };
  // Level 0: first sweep, sweeps - 1 more, restriction (2), correction, sweeps;
  // inner levels the same less the first; the coarsest coarse_sweeps - 1, or
  // none of kfuse's with a direct solve (one sweep: in the restriction, b_c not
  // stored). Chebyshev counts as Jacobi does.
  for (const Case c : {Case{Smoother::jacobi, CoarseSolve::smoother, 2, 1, 1, 5},
                       Case{Smoother::jacobi, CoarseSolve::smoother, 3, 2, 2, 7 + 6 + 1},
                       Case{Smoother::jacobi, CoarseSolve::smoother, 3, 1, 3, 5 + 4 + 2},
                       Case{Smoother::chebyshev, CoarseSolve::smoother, 3, 3, 4, 9 + 8 + 3},
                       Case{Smoother::chebyshev, CoarseSolve::smoother, 3, 2, 1, 7 + 6},
                       Case{Smoother::chebyshev, CoarseSolve::direct, 2, 2, 1, 7},
                       Case{Smoother::chebyshev, CoarseSolve::direct, 3, 4, 1, 11 + 10},
                       Case{Smoother::jacobi, CoarseSolve::direct, 3, 1, 1, 5 + 4}}) {
    kfuse::pc::MultigridOptions o;
    o.levels = c.levels;
    o.smoother = c.smoother;
    o.sweeps = c.sweeps;
    o.coarse = c.coarse;
    o.coarse_sweeps = c.coarse_sweeps;
    INFO("levels " << c.levels << ", chebyshev " << (c.smoother == Smoother::chebyshev)
                   << ", direct " << (c.coarse == CoarseSolve::direct) << ", sweeps " << c.sweeps
                   << ", coarse " << c.coarse_sweeps);
    const auto M = kfuse::pc::multigrid(A, {nx, ny}, o);
    const Hierarchy h(M);
    Vector r(A.range(), "r"), z(A.range(), "z");
    r.fill_with(
        KOKKOS_LAMBDA(std::int64_t g) { return kfuse::detail::math::sin(0.37 * double(g)) + 1.0; });
    M(r, z);  // binds
    kfuse::KernelCounter counter;
    M(r, z);
    if (c.coarse == CoarseSolve::smoother) CHECK(counter.compute_kernels() == c.kernels);
    // (Kokkos Kernels' solve may launch its own.)
    else
      CHECK(counter.compute_kernels() >= c.kernels);
    CHECK(M.explain().find(std::to_string(c.kernels) + " kernels per V-cycle") !=
          std::string::npos);
    CHECK(M.kernels_per_cycle() == c.kernels);
    kfuse_test::check_close(z.gather(), host_cycle(h, o, 0, r.gather()), 1e-12);
  }
}

TEST_CASE("cg with pc::multigrid solves 2-D and 3-D Poisson in few iterations") {
  kfuse::Comm comm;
  const auto A2 = kfuse::poisson2d<double>(comm, 63, 63);
  const auto A3 = kfuse::poisson3d<double>(comm, 15, 15, 15);
  kfuse::pc::MultigridOptions jacobi;
  jacobi.levels = 4;
  jacobi.sweeps = 2;
  jacobi.coarse_sweeps = 8;
  kfuse::pc::MultigridOptions chebyshev;  // PETSc's PCMG defaults but for SOR
  chebyshev.levels = 3;
  chebyshev.smoother = kfuse::pc::Smoother::chebyshev;
  chebyshev.sweeps = 2;
  chebyshev.coarse = kfuse::pc::CoarseSolve::direct;
  for (const auto& o : {jacobi, chebyshev})
    for (const auto& system : {std::pair{A2, std::vector<std::int64_t>{63, 63}},
                               std::pair{A3, std::vector<std::int64_t>{15, 15, 15}}}) {
      const auto& A = system.first;  // INFO captures it (no structured bindings)
      const auto& shape = system.second;
      const auto b = kfuse_test::rhs_of_ones(A);
      Vector x(A.domain(), "x"), y(A.domain(), "y");
      const auto mg = kfuse::cg(A, x, b, {}, kfuse::pc::multigrid(A, shape, o));
      const auto plain = kfuse::cg(A, y, b);
      INFO(A.label() << ": multigrid " << mg.iterations << ", plain " << plain.iterations
                     << ", chebyshev " << (o.smoother == kfuse::pc::Smoother::chebyshev));
      CHECK(mg.converged);
      CHECK(mg.iterations * 4 < plain.iterations);
      CHECK(kfuse_test::true_residual(A, x, b) <= 1e-7 * kfuse::eval(kfuse::norm2(b)));
    }
}

TEST_CASE("cg fuses pc::multigrid's first sweep and r.z into its own kernels") {
  kfuse::Comm comm;
  const std::int64_t nx = 31, ny = 29;
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);
  const auto b = kfuse_test::rhs_of_ones(A);
  kfuse::pc::MultigridOptions jacobi;  // u = w D^-1 r, r.z in the last Jacobi sweep
  jacobi.levels = 3;
  kfuse::pc::MultigridOptions chebyshev;  // ... in the last Chebyshev step
  chebyshev.levels = 2;
  chebyshev.smoother = kfuse::pc::Smoother::chebyshev;
  chebyshev.sweeps = 2;
  chebyshev.coarse = kfuse::pc::CoarseSolve::direct;
  for (const auto& o : {jacobi, chebyshev}) {
    INFO("chebyshev " << (o.smoother == kfuse::pc::Smoother::chebyshev));
    const auto M = kfuse::pc::multigrid(A, {nx, ny}, o);
    // The same preconditioner as a user's callable: CG applies it between its kernels.
    auto as_callable = [&M](const Vector& r, Vector& z) { M(r, z); };
    Vector x(A.domain(), "x"), y(A.domain(), "y");
    const auto fused = kfuse::cg(A, x, b, {}, M);
    const auto apart = kfuse::cg(A, y, b, {}, as_callable);
    CHECK(fused.converged);
    CHECK(fused.iterations == apart.iterations);
    kfuse_test::check_close(x.gather(), y.gather(), 1e-9);
    CHECK(kfuse_test::true_residual(A, x, b) <= 1e-7 * kfuse::eval(kfuse::norm2(b)));

    // An iteration: CG's 3 kernels and the cycle's but its first (a direct coarse
    // solve launches Kokkos Kernels' own: counted from the Jacobi cycle only).
    kfuse::SolverOptions fixed;
    fixed.rtol = 0;
    fixed.max_it = 4;
    kfuse::KernelCounter counter;
    kfuse_test::IterationCounts counts{counter, 2, 4};
    fixed.monitor = counts.monitor();
    x.fill(0.0);
    kfuse::cg(A, x, b, fixed, M);
    const double per_iteration = counts.kernels_per_iteration();
    if (o.coarse == kfuse::pc::CoarseSolve::smoother)
      CHECK(per_iteration == 3 + M.kernels_per_cycle() - 1);
    else
      CHECK(per_iteration >= 3 + M.kernels_per_cycle() - 1);
    // CG with an operator M: 3 allreduces an iteration; the V-cycle makes none.
    CHECK(counts.allreduces_per_iteration() == kfuse_test::expected_allreduces(3));
    // The start's kernel computed the first sweep: then the first cycle's other
    // kernels (the last reducing r.z), p = z and the first iteration's 2.
    kfuse_test::IterationCounts first{counter, 0, 1};
    fixed.monitor = first.monitor();
    x.fill(0.0);
    kfuse::cg(A, x, b, fixed, M);
    if (o.coarse == kfuse::pc::CoarseSolve::smoother)
      CHECK(first.kernels_per_iteration() == M.kernels_per_cycle() - 1 + 1 + 2);
  }
}

TEST_CASE("pc::multigrid errors: kfuse::Error on every rank") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 9, 8);
  using kfuse::pc::multigrid;
  kfuse::pc::MultigridOptions o;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 9}), doctest::Contains("does not have the 72 rows"),
                       kfuse::Error);
  CHECK_THROWS_WITH_AS(multigrid(A, {}), doctest::Contains("give 1 to 3"), kfuse::Error);
  const std::int64_t huge = std::int64_t(1) << 40;  // the product overflows
  CHECK_THROWS_WITH_AS(multigrid(A, {huge, huge}), doctest::Contains("does not have the 72 rows"),
                       kfuse::Error);
  o.levels = 4;  // 9x8 -> 4x3 -> 1x1: no fourth grid
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("cannot be coarsened"),
                       kfuse::Error);
  o = {};
  o.sweeps = 0;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("sweeps"), kfuse::Error);
  o = {};
  o.weight = 2;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("weight"), kfuse::Error);
  o = {};
  o.chebyshev.emax = 2;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("emin and emax must be 0"),
                       kfuse::Error);
  o = {};
  o.chebyshev.lower = 1.2;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("0 < lower < upper"),
                       kfuse::Error);
  o = {};
  o.chebyshev.estimate_steps = 0;
  CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("estimate_steps"), kfuse::Error);
  // Another number of levels on the last rank only.
  if (comm.size() > 1) {
    o = {};
    o.levels = comm.rank() == comm.size() - 1 ? 3 : 2;
    CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("different grids or"),
                         kfuse::Error);
    o = {};
    o.coarse = comm.rank() == 0 ? kfuse::pc::CoarseSolve::direct : kfuse::pc::CoarseSolve::smoother;
    CHECK_THROWS_WITH_AS(multigrid(A, {9, 8}, o), doctest::Contains("different grids or"),
                         kfuse::Error);
  }
  const auto M = multigrid(A, {9, 8});
  Vector r(A.range(), "r");
  CHECK_THROWS_WITH_AS(M(r, r), doctest::Contains("same vector"), kfuse::Error);
}
