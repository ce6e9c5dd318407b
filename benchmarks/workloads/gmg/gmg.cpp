// gmg (gmg.hpp): the kfuse variants. fused is the shipped kfuse::cg with
// pc::multigrid, one whole solve per repetition; unfused runs the same
// preconditioned iteration (the library's pcg_step and pcg_direction
// programs) and the same V-cycle (pc::Multigrid<double, Unfused>) with
// every operation its own kernel, one iteration per step.
#include <string>

#include "gmg.hpp"
#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

using Multigrid = pc::Multigrid<double>;

#if KFUSE_BENCH_COMPILES(FUSED)
struct SolveCgMultigrid {
  Multigrid M;
  SolveResult operator()(const CsrProblem& p, Vec& x, const SolverOptions& options) const {
    return kfuse::cg(p.A, x, p.b, options, M);
  }
};

#endif

/// kernels per iteration: the preconditioned CG's and the V-cycle's (less the
/// cycle's first, when CG computes it: `fused_first`); allreduces: p.Ap with
/// p.p, r.r, r.z.
template <class Cycle>
Figures pcg_figures(const Cycle& M, int cg_kernels, bool fused_first = false) {
  Figures f;
  f.kernels = cg_kernels + M.kernels_per_cycle() - (fused_first ? 1 : 0);
  f.allreduces = 3;
  f.exchanges = 1 + gmg_cycle_products(M.options());
  return f;
}

#if KFUSE_BENCH_COMPILES(FUSED)
struct GmgFigures {
  Multigrid M;
  // kfuse::cg fuses the cycle's ends: u = w D^-1 r into its kernel 2, r.z
  // into the cycle's last kernel (3 kernels of its own).
  Figures operator()(const CsrProblem&) const { return pcg_figures(M, 3, true); }
};
#endif

/// Preconditioned CG stepped one iteration at a time under `Policy`, as
/// kfuse::cg runs it with an operator M (solvers/cg.hpp).
template <class Policy>
class PcgSteps final : public Variant {
 public:
  explicit PcgSteps(const Setup& s)
      : problem_(cg_matrix(s)),
        M_(pc::multigrid<Policy>(problem_.A, gmg_shape(s), gmg_options())),
        iterations_(s.iterations),
        x_(problem_.vector("x")),
        r_(problem_.vector("r")),
        p_(problem_.vector("p")),
        z_(problem_.vector("z")),
        Ap_(problem_.vector("Ap")),
        step_(kfuse::detail::pcg_step<Policy>(problem_.op(), x_, r_, p_, Ap_, rz_, c_)),
        direction_(kfuse::detail::pcg_direction<Policy>(z_, p_, rz_, rz_new_, beta_, r_)) {}
  void reset() override {
    x_.fill(0.0);
    steps_ = 0;
  }
  void step() override {
    if (steps_++ % iterations_ == 0) {  // the solve's start, as kfuse::cg does it
      kfuse::detail::cg_start(problem_.op(), x_, problem_.b, r_, p_, c_);
      M_.apply(r_, z_);
      rz_ = eval(dot(r_, z_));
      p_ = z_;
    }
    step_();
    if (steps_ % iterations_ == 0) return;  // kfuse::cg stops before M r after its last iteration
    M_.apply(r_, z_);
    direction_();
  }
  Fields result() const override { return problem_.fields(x_); }
  Figures figures() const override {
    return pcg_figures(M_, int(Step::kernel_count + Direction::kernel_count));
  }

 private:
  using Step = decltype(kfuse::detail::pcg_step<Policy>(
      std::declval<MatrixOperator>(), std::declval<Vec&>(), std::declval<Vec&>(),
      std::declval<Vec&>(), std::declval<Vec&>(), std::declval<Scalar<double>&>(),
      std::declval<CgScalars&>()));
  using Direction = decltype(kfuse::detail::pcg_direction<Policy>(
      std::declval<Vec&>(), std::declval<Vec&>(), std::declval<Scalar<double>&>(),
      std::declval<Scalar<double>&>(), std::declval<Scalar<double>&>(), std::declval<Vec&>()));
  CsrProblem problem_;
  pc::Multigrid<double, Policy> M_;
  int iterations_;  // of the solve
  Vec x_, r_, p_, z_, Ap_;
  CgScalars c_;
  Scalar<double> rz_{"rz"}, rz_new_{"rz'"}, beta_{"beta"};
  Step step_;
  Direction direction_;
  int steps_ = 0;
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "gmg",
    "CG preconditioned by a geometric multigrid V-cycle (2 levels, weighted Jacobi) on the 2-D "
    "5-point Poisson matrix, fixed iteration count",
    1024, 10,
    // The iterates agree to rounding: the same operators and weights everywhere.
    1e-6, grid_label, gmg_min_bytes, "benchmarks/workloads/gmg/gmg.cpp",
    "benchmarks/workloads/gmg/gmg_kokkos.cpp", gmg_working_set, true}));
#endif
#if KFUSE_BENCH_COMPILES(FUSED)
KFUSE_BENCH_REGISTER(register_variant("gmg", "fused", [](const Setup& s) {
  CsrProblem problem(cg_matrix(s));
  const Multigrid M = gmg_hierarchy(s);
  return make_shipped(std::move(problem), s, SolveCgMultigrid{M}, GmgFigures{M});
}));
#endif
#if KFUSE_BENCH_COMPILES(UNFUSED)
KFUSE_BENCH_REGISTER(register_variant_class<PcgSteps<kfuse::Unfused>>("gmg", "unfused"));
#endif

}  // namespace
}  // namespace kfuse::bench::solvers
