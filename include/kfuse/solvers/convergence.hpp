// The convergence test of kfuse's Krylov solvers, PETSc's
// KSPConvergedDefault with the unpreconditioned norm: converged when
// ||r_k|| <= max(rtol * ||b||, atol); stopped after max_it iterations, on
// divergence (||r_k|| >= dtol ||r_0||) or on a non-finite residual. Every
// rank sees the same (reduced) norms, so every rank stops at the same
// iteration; the options are checked to be the same on every rank, and a
// monitor that throws on one rank is agreed on, for the same reason.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "kfuse/core/error.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/system.hpp"

namespace kfuse::detail {

/// The first option out of range, "" when none.
inline std::string solver_options_error(const char* api, const SolverOptions& o) {
  if (!(o.rtol >= 0 && o.rtol < 1))
    return error_message(api, ": SolverOptions::rtol is ", o.rtol, "; it must be >= 0 and < 1");
  if (!(o.atol >= 0 && std::isfinite(o.atol)))
    return error_message(api, ": SolverOptions::atol is ", o.atol, "; it must be finite and >= 0");
  if (!(o.dtol >= 0 && std::isfinite(o.dtol)))
    return error_message(api, ": SolverOptions::dtol is ", o.dtol,
                         "; it must be finite and >= 0 (0: no divergence test)");
  if (o.max_it < 0)
    return error_message(api, ": SolverOptions::max_it is ", o.max_it, "; it must be >= 0");
  if (o.restart < 1)
    return error_message(api, ": SolverOptions::restart is ", o.restart, "; it must be >= 1");
  return {};
}

/// A solve's checks, collective, in one allreduce before the solve touches x: a
/// kfuse::Error on every rank when any rank found `local_error` (the first of
/// its arguments' checks that failed there) or an option out of range, or when
/// the ranks passed different options. A workspace counts as an option: a
/// preconditioner keeps its programs bound to the vectors of the last solve,
/// and a rank that reused them while another allocated new ones would bind
/// alone (a collective) and wait forever.
inline void agree_on_solve(const char* api, const Comm& comm, std::string local_error,
                           const SolverOptions& o) {
  if (local_error.empty()) local_error = solver_options_error(api, o);
  check_same_values(api, comm,
                    {bits_of(o.rtol), bits_of(o.atol), bits_of(o.dtol), o.max_it, o.monitor ? 1 : 0,
                     static_cast<std::int64_t>(o.preconditioner), o.error_if_not_converged ? 1 : 0,
                     o.restart, o.cg_single_reduction ? 1 : 0, o.workspace != nullptr ? 1 : 0},
                    "SolverOptions (tolerances, max_it, monitor set or not, preconditioner, "
                    "error_if_not_converged, restart, cg_single_reduction or workspace set or not)",
                    local_error);
}

class Convergence {
 public:
  Convergence(const char* api, const Comm& comm, const SolverOptions& options, double b_norm)
      : api_(api),
        comm_(comm),
        options_(options),
        b_norm_(b_norm),
        tolerance_(std::max(options.rtol * b_norm, options.atol)) {}

  /// Records ||r_it|| (monitor included, unless `monitored` is false: GMRES
  /// reports the last estimate of a cycle only when it does not restart);
  /// true when the solve should stop.
  bool done(int it, double rnorm, SolveResult& result, bool monitored = true) {
    result.iterations = it;
    result.residual_norm = rnorm;
    if (monitored) report(it, rnorm);
    if (it == 0) {
      initial_ = rnorm;
      // PETSc's special case: b = 0 with a nonzero initial guess tests
      // against ||r_0|| (else nothing but atol could stop it).
      if (b_norm_ == 0) tolerance_ = std::max(options_.rtol * rnorm, options_.atol);
    }
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

  /// The result as the solver returns it: with error_if_not_converged, an
  /// unconverged one is a kfuse::Error (every rank has the same result).
  const SolveResult& finish(const SolveResult& result) const {
    if (options_.error_if_not_converged && !result.converged)
      throw Error(error_message(api_, ": not converged (", result.reason, ") after ",
                                result.iterations, " iteration(s), ||r|| = ", result.residual_norm,
                                "; SolverOptions::error_if_not_converged is set"));
    return result;
  }

  /// Calls the monitor, if one is set (collective: a throw on any rank is agreed on).
  void report(int it, double rnorm) const {
    if (options_.monitor) monitor(it, rnorm);
  }

 private:
  void monitor(int it, double rnorm) const {
    std::string error;
    try {
      options_.monitor(it, rnorm);
    } catch (const std::exception& e) {
      error = error_message(api_, ": the monitor threw at iteration ", it, ": ", e.what());
    } catch (...) {
      error = error_message(api_, ": the monitor threw at iteration ", it);
    }
    comm_.agree_or_throw(error);
  }

  const char* api_;
  Comm comm_;
  const SolverOptions& options_;
  double b_norm_;
  double tolerance_;
  double initial_ = 0;  // ||r_0||
};

}  // namespace kfuse::detail
