// gmg_solve (gmg.hpp): time to solution. fused is the shipped kfuse::cg with
// pc::multigrid (gmg's hierarchy and cycle) from x = 0 to gmg_rtol, one whole
// solve per repetition (the runner's "per iteration" figures are per solve),
// its work vectors kept between solves in a SolverWorkspace as the
// hand-written code keeps its own;
// fused_chebyshev the same with kfuse's stronger cycle (gmg_chebyshev_options).
#include <memory>
#include <string>
#include <utility>

#include "gmg.hpp"
#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

class SolveCgMultigrid final : public Variant {
 public:
  SolveCgMultigrid(const Setup& s, const pc::MultigridOptions& options, std::string name)
      : problem_(cg_matrix(s)),
        M_(pc::multigrid(problem_.A, gmg_shape(s), options)),
        x_(problem_.vector("x")),
        b_norm_(eval(norm2(problem_.b))),
        name_(std::move(name)) {}
  void reset() override { x_.fill(0.0); }
  void step() override {
    SolverOptions options = gmg_solve_options();
    options.workspace = &workspace_;
    const SolveResult result = kfuse::cg(problem_.A, x_, problem_.b, options, M_);
    if (!result.converged)
      throw Error("kfuse-bench: gmg_solve/" + name_ + ": kfuse::cg stopped after " +
                  std::to_string(result.iterations) + " iterations (" + result.reason + ")");
    iterations_ = result.iterations;
  }
  Fields result() const override {
    report_iterations(problem_.A.range().comm(), name_, iterations_);
    return solved_fields(problem_.fields(x_), b_norm_);
  }
  Figures figures() const override { return {}; }  // counted per solve by the runner

 private:
  CsrProblem problem_;
  pc::Multigrid<double> M_;
  Vec x_;
  double b_norm_;
  std::string name_;
  SolverWorkspace workspace_;
  int iterations_ = 0;
};

KFUSE_BENCH_REGISTER(register_workload(Workload{
    "gmg_solve",
    "gmg's system and V-cycle solved from x = 0 to ||r|| <= 1e-8 ||b||: time to solution, one "
    "solve a repetition",
    // 512²: gmg's 2-level cycle takes about 425 iterations there (848 at 1024²).
    512, 1,
    // Each variant stops at its own residual below 1e-8 ||b||: x agrees to the
    // error that leaves, which the matrix's condition number (about 1e5 at 512²)
    // bounds; the residual field checks the stop itself (gmg.hpp, solved_fields).
    // A time to solution: its iterations grow with the grid, so it keeps 512²
    // (not memory_bound) and its rows say `cache`.
    1e-4, grid_label, nullptr, "benchmarks/workloads/gmg/gmg_solve.cpp",
    "benchmarks/workloads/gmg/gmg_kokkos.cpp", gmg_working_set}));
KFUSE_BENCH_REGISTER(register_variant("gmg_solve", "fused", [](const Setup& s) {
  return std::make_unique<SolveCgMultigrid>(s, gmg_options(), "fused");
}));
KFUSE_BENCH_REGISTER(register_variant("gmg_solve", "fused_chebyshev", [](const Setup& s) {
  return std::make_unique<SolveCgMultigrid>(s, gmg_chebyshev_options(s), "fused_chebyshev");
}));

}  // namespace
}  // namespace kfuse::bench::solvers
