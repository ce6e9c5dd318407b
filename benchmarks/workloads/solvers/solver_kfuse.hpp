// The kfuse variants of the solver workloads (solvers.hpp):
//   fused          the shipped solver (kfuse::cg, kfuse::bicgstab, kfuse::cg_matfree),
//                  one whole solve per repetition;
//   per_statement  the same iteration as the shipped solver's, written in the
//   unfused        workload with kfuse::fuse<PerStatement> / <Unfused>, one
//                  iteration per step.
// A Problem is the operator, its vectors and the right-hand side: CsrProblem
// (a CsrMatrix and Vectors) or GridProblem (the 5-point stencil on Array<double, 2>).
#pragma once

#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "solvers.hpp"

namespace kfuse::bench::solvers {

struct CsrProblem {
  using V = Vec;
  Matrix A;
  Vec b;
  CsrProblem(Matrix matrix) : A(std::move(matrix)), b(make_rhs(A)) {}
  Vec vector(const char* label) const { return Vec(A.domain(), label); }
  MatrixOperator op() const { return {A}; }
  Fields fields(const Vec& x) const { return solution_fields(A, b, x); }
  double rows() const { return double(A.global_rows()); }
  double matrix() const { return matrix_bytes(A); }
};

struct GridProblem {
  using V = Array2;
  Grid<2> grid;
  Array2 b;
  explicit GridProblem(const Setup& s) : grid(make_grid(s)), b(make_rhs(grid)) {}
  Array2 vector(const char* label) const { return Array2(grid, label); }
  Laplacian5 op() const { return {}; }
  Fields fields(const Array2& x) const { return solution_fields(b, x); }
  double rows() const { return double(grid.global_size()); }
  double matrix() const { return 0; }  // no matrix: the stencil's coefficients are constants
};

/// The shipped solver: step 0 of a repetition runs kfuse's whole solve of
/// Setup::iterations iterations (its start-up included), its work vectors
/// kept between repetitions in a SolverWorkspace, as an application that
/// solves again and again keeps them (and as the hand-written code does).
/// `Solve` calls the solver: (problem, x, options) -> SolveResult. The figures
/// are those of the same iteration built with kfuse::fuse (the solver's own
/// program is local to it).
template <class Problem, class Solve, class Figure>
class Shipped final : public Variant {
 public:
  Shipped(Problem problem, const Setup& setup, Solve solve, Figure figure)
      : problem_(std::move(problem)),
        iterations_(setup.iterations),
        x_(problem_.vector("x")),
        solve_(solve),
        figures_(figure(problem_)) {}
  void reset() override {
    x_.fill(0.0);
    steps_ = 0;
  }
  void step() override {
    if (steps_++ % iterations_ != 0) return;
    SolverOptions options = fixed_iterations(iterations_);
    options.workspace = &workspace_;
    check_solve("kfuse solver", solve_(problem_, x_, options), iterations_);
  }
  Fields result() const override { return problem_.fields(x_); }
  Figures figures() const override { return figures_; }

 private:
  Problem problem_;
  int iterations_;
  typename Problem::V x_;
  Solve solve_;
  Figures figures_;
  SolverWorkspace workspace_;
  int steps_ = 0;
};

template <class Problem, class Solve, class Figure>
std::unique_ptr<Variant> make_shipped(Problem problem, const Setup& setup, Solve solve,
                                      Figure figure) {
  return std::make_unique<Shipped<Problem, Solve, Figure>>(std::move(problem), setup, solve,
                                                           figure);
}

/// The vector that stores CG's A p: one for a matrix, none for the stencil
/// (applied twice), as kfuse::cg and cg_matfree choose.
template <class Problem>
using StoredAp =
    std::array<typename Problem::V,
               kfuse::detail::reads_only_its_argument_v<decltype(std::declval<Problem&>().op()),
                                                        typename Problem::V>
                   ? 0
                   : 1>;

/// The CG iteration kfuse::cg or cg_matfree runs for `problem`'s operator.
template <class Policy, class Problem, class V>
auto standard_cg_iteration(const Problem& problem, const V& x, const V& r, const V& p,
                           const CgScalars& s, const StoredAp<Problem>& Ap) {
  return std::apply(
      [&](const auto&... stored) {
        return cg_iteration<Policy>(problem.op(), x, r, p, s, stored...);
      },
      Ap);
}

/// CG stepped one iteration at a time: the program of standard_cg_iteration<Policy>.
template <class Policy, class Problem>
class CgSteps final : public Variant {
  using V = typename Problem::V;

 public:
  CgSteps(Problem problem)
      : problem_(std::move(problem)),
        x_(problem_.vector("x")),
        r_(problem_.vector("r")),
        p_(problem_.vector("p")),
        Ap_(stored_Ap(problem_)),
        iteration_(standard_cg_iteration<Policy>(problem_, x_, r_, p_, s_, Ap_)) {
    if constexpr (std::is_same_v<Policy, Fused>)
      static_assert(Program::kernel_count <= 3 && Program::allreduce_count <= 2,
                    "CG iteration: at most 3 kernels and 2 allreduces");
  }
  void reset() override {
    x_.fill(0.0);
    steps_ = 0;
  }
  void step() override {
    if (steps_++ == 0) {  // the solve's start, as kfuse::cg does it
      kfuse::detail::cg_start(problem_.op(), x_, problem_.b, r_, p_, s_);
    }
    iteration_();
  }
  Fields result() const override { return problem_.fields(x_); }
  Figures figures() const override {
    return solver_figures(iteration_, problem_.rows(), problem_.matrix(), 1);
  }

 private:
  static StoredAp<Problem> stored_Ap(const Problem& problem) {
    if constexpr (std::tuple_size_v<StoredAp<Problem>> == 1)
      return {problem.vector("Ap")};
    else
      return {};
  }
  using Program = decltype(standard_cg_iteration<Policy>(
      std::declval<const Problem&>(), std::declval<V&>(), std::declval<V&>(), std::declval<V&>(),
      std::declval<CgScalars&>(), std::declval<StoredAp<Problem>&>()));
  Problem problem_;
  V x_, r_, p_;
  StoredAp<Problem> Ap_;
  CgScalars s_;
  Program iteration_;
  int steps_ = 0;
};

/// Figures of the Fused CG iteration (what kfuse::cg runs).
struct CgFigures {
  template <class Problem>
  Figures operator()(const Problem& problem) const {
    CgSteps<Fused, Problem> iteration(problem);
    return iteration.figures();
  }
};

/// Figures of the single-reduction CG iteration (kfuse::cg with
/// SolverOptions::cg_single_reduction): where it runs as one sweep
/// (kfuse/solvers/cg_sweep.hpp), that sweep's; else those of the same program
/// built here.
struct CgSingleReductionFigures {
  template <class Problem>
  Figures operator()(const Problem& problem) const {
    using V = typename Problem::V;
    if constexpr (kfuse::detail::cg_sweeps_v<decltype(problem.op()), V>) {
      Figures f;  // the sweep reads and writes x, r and p once; its faces' sums ride along
      f.kernels = 1;
      f.allreduces = 1;
      f.exchanges = 1;
      f.bytes = 6 * sizeof(double) * problem.rows();
      return f;
    } else {
      V x = problem.vector("x"), r = problem.vector("r"), p = problem.vector("p"),
        s = problem.vector("s"), w = problem.vector("w");
      CgScalars c;
      Scalar<double> rw("r.w");
      const auto iteration =
          kfuse::detail::cg_single_reduction_iteration(problem.op(), x, r, p, s, w, rw, c);
      static_assert(decltype(iteration)::kernel_count == 2 &&
                    decltype(iteration)::allreduce_count == 1);
      return solver_figures(iteration, problem.rows(), problem.matrix(), 1);
    }
  }
};

/// The options of the shipped solve, with the single-reduction CG.
inline SolverOptions single_reduction(SolverOptions options) {
  options.cg_single_reduction = true;
  return options;
}

/// BiCGSTAB stepped one iteration at a time: the program of bicgstab_iteration<Policy>.
template <class Policy, class Problem>
class BicgstabSteps final : public Variant {
  using V = typename Problem::V;

 public:
  BicgstabSteps(Problem problem)
      : problem_(std::move(problem)),
        x_(problem_.vector("x")),
        r_(problem_.vector("r")),
        r_hat_(problem_.vector("r_hat")),
        p_(problem_.vector("p")),
        v_(problem_.vector("v")),
        s_(problem_.vector("s")),
        t_(problem_.vector("t")),
        iteration_(bicgstab_iteration<Policy>(problem_.op(), x_, r_, r_hat_, p_, v_, s_, t_, c_)) {
    if constexpr (std::is_same_v<Policy, Fused>)
      static_assert(Program::kernel_count <= 5 && Program::allreduce_count <= 3,
                    "BiCGSTAB iteration: at most 5 kernels and 3 allreduces");
  }
  void reset() override {
    x_.fill(0.0);
    p_.fill(0.0);
    v_.fill(0.0);
    steps_ = 0;
  }
  void step() override {
    if (steps_++ == 0) {  // the solve's start, as kfuse::bicgstab does it
      kfuse::detail::bicgstab_start(problem_.op(), x_, problem_.b, r_, r_hat_, p_, v_, c_);
    }
    iteration_();
  }
  Fields result() const override { return problem_.fields(x_); }
  Figures figures() const override {
    return solver_figures(iteration_, problem_.rows(), problem_.matrix(), 2);
  }

 private:
  using Program = decltype(bicgstab_iteration<Policy>(
      std::declval<Problem>().op(), std::declval<V&>(), std::declval<V&>(), std::declval<V&>(),
      std::declval<V&>(), std::declval<V&>(), std::declval<V&>(), std::declval<V&>(),
      std::declval<BicgstabScalars&>()));
  Problem problem_;
  V x_, r_, r_hat_, p_, v_, s_, t_;
  BicgstabScalars c_;
  Program iteration_;
  int steps_ = 0;
};

struct BicgstabFigures {
  template <class Problem>
  Figures operator()(const Problem& problem) const {
    BicgstabSteps<Fused, Problem> iteration(problem);
    return iteration.figures();
  }
};

}  // namespace kfuse::bench::solvers
