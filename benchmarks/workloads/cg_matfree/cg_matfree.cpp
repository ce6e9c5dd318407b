// cg_matfree: the cg workload's Poisson problem with the operator as a
// 5-point stencil on an Array<double, 2> (no matrix), a fixed iteration count
// from x = 0 (solvers.hpp). The kfuse variants: the shipped kfuse::cg_matfree
// (fused), and its iteration written here with kfuse::fuse over the
// PerStatement and Unfused policies; fused_single_reduction with
// SolverOptions::cg_single_reduction. Without a preconditioner kfuse applies
// the stencil twice an iteration rather than storing A p, and so does the
// hand-written code.
#include <string>

#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

#if KFUSE_BENCH_COMPILES(FUSED)
struct SolveMatfree {
  SolveResult operator()(const GridProblem& p, Array2& x, const SolverOptions& options) const {
    return kfuse::cg_matfree(Laplacian5{}, x, p.b, options);
  }
};
#endif
#if KFUSE_BENCH_COMPILES(REST)
struct SolveMatfreeSingleReduction {
  SolveResult operator()(const GridProblem& p, Array2& x, const SolverOptions& options) const {
    return kfuse::cg_matfree(Laplacian5{}, x, p.b, single_reduction(options));
  }
};
#endif

/// The iteration written here with kfuse::fuse, under a policy (register_steps).
constexpr auto steps = [](auto policy, const Setup& s) -> std::unique_ptr<Variant> {
  return std::make_unique<CgSteps<decltype(policy), GridProblem>>(GridProblem(s));
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "cg_matfree",
    "CG on the 2-D Poisson problem with the operator as a 5-point stencil on a grid (no "
    "matrix), fixed iteration count",
    1000, 20, 1e-6, grid_label,
    [](const Setup& s) { return cg_matfree_min_bytes(double(s.size) * double(s.size)); },
    "benchmarks/workloads/cg_matfree/cg_matfree.cpp",
    "benchmarks/workloads/cg_matfree/cg_matfree_kokkos.cpp",
    [](const Setup& s) { return 24.0 * double(s.size) * double(s.size); },  // x, r, p
    true}));
KFUSE_BENCH_REGISTER(register_variant("cg_matfree", "fused_single_reduction", [](const Setup& s) {
  return make_shipped(GridProblem(s), s, SolveMatfreeSingleReduction{}, CgSingleReductionFigures{});
}));
#endif
#if KFUSE_BENCH_COMPILES(FUSED)
KFUSE_BENCH_REGISTER(register_variant("cg_matfree", "fused", [](const Setup& s) {
  return make_shipped(GridProblem(s), s, SolveMatfree{}, CgFigures{});
}));
#endif

KFUSE_BENCH_REGISTER(register_steps("cg_matfree", steps));

}  // namespace
}  // namespace kfuse::bench::solvers
