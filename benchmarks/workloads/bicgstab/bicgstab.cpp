// bicgstab: BiCGSTAB on a nonsymmetric 2-D convection-diffusion matrix (CSR,
// 5-point, upwind convection bx = 2, by = -1), a fixed iteration count from
// x = 0 (solvers.hpp). The kfuse variants: the shipped kfuse::bicgstab
// (fused), and its iteration written here with kfuse::fuse over the
// PerStatement and Unfused policies.
#include <string>

#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

#if KFUSE_BENCH_COMPILES(FUSED)
struct SolveBicgstab {
  SolveResult operator()(const CsrProblem& p, Vec& x, const SolverOptions& options) const {
    return kfuse::bicgstab(p.A, x, p.b, options);
  }
};
#endif

/// The iteration written here with kfuse::fuse, under a policy (register_steps).
constexpr auto steps = [](auto policy, const Setup& s) -> std::unique_ptr<Variant> {
  return std::make_unique<BicgstabSteps<decltype(policy), CsrProblem>>(
      CsrProblem(bicgstab_matrix(s)));
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "bicgstab",
    "BiCGSTAB on a 2-D convection-diffusion matrix (CSR, nonsymmetric), no preconditioner, "
    "fixed iteration count",
    1000, 20,
    // Iterates drift with summation order (interior/boundary split, separate
    // dot kernels, PETSc's own): x by ~3e-4 relative after 50 iterations at 1000x1000.
    1e-2, grid_label,
    [](const Setup& s) {
      const double n = double(s.size) * double(s.size);
      const double nnz = 5.0 * n - 4.0 * double(s.size);  // 5-point, Dirichlet rows
      return bicgstab_min_bytes(n, 12.0 * nnz + 8.0 * n);
    },
    "benchmarks/workloads/bicgstab/bicgstab.cpp", "benchmarks/workloads/bicgstab/bicgstab_kokkos.cpp",
    [](const Setup& s) {  // A, and x, r, r_hat, p, v, s, t
      const double n = double(s.size) * double(s.size);
      return 12.0 * (5.0 * n - 4.0 * double(s.size)) + 8.0 * n + 56.0 * n;
    },
    true}));
#endif
#if KFUSE_BENCH_COMPILES(FUSED)
KFUSE_BENCH_REGISTER(register_variant("bicgstab", "fused", [](const Setup& s) {
  return make_shipped(CsrProblem(bicgstab_matrix(s)), s, SolveBicgstab{}, BicgstabFigures{});
}));
#endif

KFUSE_BENCH_REGISTER(register_steps("bicgstab", steps));

}  // namespace
}  // namespace kfuse::bench::solvers
