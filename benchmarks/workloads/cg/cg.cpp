// cg: conjugate gradients on the 2-D 5-point Poisson matrix (CSR), a fixed
// iteration count from x = 0 (solvers.hpp). The kfuse variants: the shipped
// kfuse::cg (fused), and its iteration written here with kfuse::fuse over the
// PerStatement and Unfused policies; fused_single_reduction is kfuse::cg with
// SolverOptions::cg_single_reduction (2 kernels and 1 allreduce an iteration).
#include <string>

#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

#if KFUSE_BENCH_COMPILES(FUSED)
struct SolveCg {
  SolveResult operator()(const CsrProblem& p, Vec& x, const SolverOptions& options) const {
    return kfuse::cg(p.A, x, p.b, options);
  }
};
#endif
#if KFUSE_BENCH_COMPILES(REST)
struct SolveCgSingleReduction {
  SolveResult operator()(const CsrProblem& p, Vec& x, const SolverOptions& options) const {
    return kfuse::cg(p.A, x, p.b, single_reduction(options));
  }
};
#endif

/// The iteration written here with kfuse::fuse, under a policy (register_steps).
constexpr auto steps = [](auto policy, const Setup& s) -> std::unique_ptr<Variant> {
  return std::make_unique<CgSteps<decltype(policy), CsrProblem>>(CsrProblem(cg_matrix(s)));
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "cg", "CG on the 2-D 5-point Poisson matrix (CSR), no preconditioner, fixed iteration count",
    1000, 20, 1e-6, grid_label,
    [](const Setup& s) {
      const double n = double(s.size) * double(s.size);
      const double nnz = 5.0 * n - 4.0 * double(s.size);  // 5-point, Dirichlet rows
      return cg_min_bytes(n, 12.0 * nnz + 4.0 * n);       // 32-bit offsets
    },
    "benchmarks/workloads/cg/cg.cpp", "benchmarks/workloads/cg/cg_kokkos.cpp",
    [](const Setup& s) {  // A, and x, r, p, Ap
      const double n = double(s.size) * double(s.size);
      return 12.0 * (5.0 * n - 4.0 * double(s.size)) + 4.0 * n + 32.0 * n;
    },
    true}));
KFUSE_BENCH_REGISTER(register_variant("cg", "fused_single_reduction", [](const Setup& s) {
  return make_shipped(CsrProblem(cg_matrix(s)), s, SolveCgSingleReduction{},
                      CgSingleReductionFigures{});
}));
#endif
#if KFUSE_BENCH_COMPILES(FUSED)
KFUSE_BENCH_REGISTER(register_variant("cg", "fused", [](const Setup& s) {
  return make_shipped(CsrProblem(cg_matrix(s)), s, SolveCg{}, CgFigures{});
}));
#endif

KFUSE_BENCH_REGISTER(register_steps("cg", steps));

}  // namespace
}  // namespace kfuse::bench::solvers
