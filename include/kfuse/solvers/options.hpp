// Options and results shared by kfuse's Krylov solvers (kfuse::cg,
// kfuse::cg_matfree, kfuse::bicgstab). Convergence follows PETSc's KSP with
// the unpreconditioned norm: the recursive residual r_k converges when
// ||r_k|| <= max(rtol * ||b||, atol); iterations are counted as PETSc counts
// them (0 when the initial guess already converges).
#pragma once

#include <functional>
#include <string>

namespace kfuse {

enum class Preconditioner {
  none,    ///< PETSc's PCNONE
  jacobi,  ///< PCJACOBI: the inverse of A's diagonal (convergence still on ||r||)
};

struct SolverOptions {
  double rtol = 1e-8;  ///< relative to ||b||
  int max_it = 1000;
  double atol = 0;
  /// Called after every iteration k (and with k = 0 for the initial residual)
  /// with ||r_k||, like PETSc's -ksp_monitor. Runs on every rank.
  std::function<void(int it, double rnorm)> monitor{};
  Preconditioner preconditioner = Preconditioner::none;
  /// Divergence: stop when ||r_k|| >= dtol * ||r_0|| (0: never). PETSc's
  /// default is 1e5; off here, because BiCGSTAB's transient growth on
  /// convection-dominated systems trips it long before convergence.
  double dtol = 0;
};

struct SolveResult {
  bool converged = false;
  int iterations = 0;
  double residual_norm = 0;  ///< ||r|| of the last iterate (the recursive residual)
  /// "rtol", "atol", "max_it", "dtol", "breakdown", "indefinite matrix", "not finite".
  std::string reason;
};

}  // namespace kfuse
