// The convergence test of kfuse's Krylov solvers, PETSc's
// KSPConvergedDefault with the unpreconditioned norm: converged when
// ||r_k|| <= max(rtol * ||b||, atol); stopped after max_it iterations, on
// divergence (||r_k|| >= dtol ||r_0||) or on a non-finite residual. Every rank sees the same (reduced) norms, so every rank
// stops at the same iteration.
#pragma once

#include <algorithm>
#include <cmath>

#include "kfuse/solvers/options.hpp"

namespace kfuse::detail {

class Convergence {
 public:
  Convergence(const SolverOptions& options, double b_norm)
      : options_(options), tolerance_(std::max(options.rtol * b_norm, options.atol)) {}

  /// Records ||r_it|| (monitor included); true when the solve should stop.
  bool done(int it, double rnorm, SolveResult& result) {
    result.iterations = it;
    result.residual_norm = rnorm;
    if (options_.monitor) options_.monitor(it, rnorm);
    if (it == 0) initial_ = rnorm;
    if (!std::isfinite(rnorm)) return stop(result, false, "not finite");
    if (rnorm <= tolerance_)
      return stop(result, true, rnorm <= options_.atol ? "atol" : "rtol");
    if (options_.dtol > 0 && it > 0 && rnorm >= options_.dtol * initial_)
      return stop(result, false, "dtol");
    if (it >= options_.max_it) return stop(result, false, "max_it");
    return false;
  }

  static bool stop(SolveResult& result, bool converged, const char* reason) {
    result.converged = converged;
    result.reason = reason;
    return true;
  }

 private:
  const SolverOptions& options_;
  double tolerance_;
  double initial_ = 0;  // ||r_0||
};

}  // namespace kfuse::detail
