// Options and results shared by kfuse's Krylov solvers (kfuse::cg,
// kfuse::cg_matfree, kfuse::bicgstab, kfuse::gmres, kfuse::fgmres). Convergence follows PETSc's KSP with
// the unpreconditioned norm: the recursive residual r_k converges when
// ||r_k|| <= max(rtol * ||b||, atol); iterations are counted as PETSc counts
// them (0 when the initial guess already converges).
#pragma once

#include <functional>
#include <string>

namespace kfuse {

class SolverWorkspace;  // kfuse/solvers/workspace.hpp

enum class Preconditioner {
  none,    ///< PETSc's PCNONE
  jacobi,  ///< PCJACOBI: the inverse of A's diagonal (convergence still on ||r||)
};

/// Every rank must pass the same options (checked: a kfuse::Error on every
/// rank otherwise, as for out-of-range values); `workspace` set on every rank
/// (each its own) or on none.
struct SolverOptions {
  double rtol = 1e-8;  ///< relative to ||b||; 0 <= rtol < 1, as PETSc requires
  int max_it = 1000;   ///< >= 0
  double atol = 0;     ///< >= 0
  /// Called after every iteration k (and with k = 0 for the initial residual)
  /// with ||r_k||, like PETSc's -ksp_monitor. Runs on every rank (set on all or
  /// none). An exception it throws, on any rank, ends the solve with a
  /// kfuse::Error on every rank (one more allreduce per iteration while a
  /// monitor is set).
  std::function<void(int it, double rnorm)> monitor{};
  /// Jacobi for cg, cg_matfree and bicgstab; the same as passing
  /// kfuse::pc::jacobi(A) as the last argument of cg or bicgstab (gmres and
  /// fgmres take it only that way). Set one or the other.
  Preconditioner preconditioner = Preconditioner::none;
  /// Divergence: stop when ||r_k|| >= dtol * ||r_0|| (0: never). PETSc's
  /// default is 1e5; off here, because BiCGSTAB's transient growth on
  /// convection-dominated systems trips it long before convergence.
  double dtol = 0;
  /// Throw a kfuse::Error (on every rank, naming the reason) instead of
  /// returning an unconverged result, like PETSc's KSPSetErrorIfNotConverged.
  bool error_if_not_converged = false;
  /// GMRES(m) and FGMRES(m): Krylov vectors per cycle before a restart
  /// (PETSc's -ksp_gmres_restart, default 30); >= 1.
  int restart = 30;
  /// kfuse::cg and cg_matfree without a preconditioner: the single-reduction
  /// form (Chronopoulos and Gear; PETSc's -ksp_cg_single_reduction), 2
  /// kernels and 1 allreduce an iteration instead of 3 and 2, for one more
  /// vector and 8 more bytes a row of memory traffic. The same iterates in
  /// exact arithmetic; it pays where latency, not bandwidth, bounds an
  /// iteration (small local blocks, many ranks). cg_matfree with a stencil on
  /// Arrays of rank 2 or 3 on Kokkos::Serial runs it as one sweep an
  /// iteration instead, 48 bytes a point (kfuse/solvers/cg_sweep.hpp).
  bool cg_single_reduction = false;
  /// Where the solver keeps its work vectors between solves (see
  /// kfuse::SolverWorkspace), set on every rank or on none; none: allocated
  /// and freed by every solve.
  SolverWorkspace* workspace = nullptr;
};

/// How a solve ended. x holds the last iterate. A breakdown leaves it as it
/// was before the iteration that broke down, never inf or NaN: CG's pAp not
/// positive ("indefinite matrix"), NaN ("not finite"), or below
/// epsilon * ||A|| * p.p ("breakdown": a direction in the numerical null
/// space of a singular matrix), r.z changing sign ("indefinite
/// preconditioner") or 0 ("breakdown");
/// BiCGSTAB's r_hat.v = 0, omega = 0 or rho = 0 twice in a row (the first
/// restarts it: "breakdown (r_hat.v = 0)", "breakdown (omega = 0)",
/// "breakdown (rho = 0)") or NaN ("not finite");
/// GMRES's Arnoldi step with a zero column ("breakdown") or a non-finite one
/// ("not finite"). Only iterates that grow past the largest T (the residual
/// overflowed) can hold inf.
struct SolveResult {
  bool converged = false;
  int iterations = 0;
  double residual_norm = 0;  ///< ||r|| of the last iterate (the recursive residual)
  /// "rtol", "atol", "max_it", "dtol", "not finite", "indefinite matrix",
  /// "indefinite preconditioner", "breakdown" and "breakdown (...)" naming the rule.
  std::string reason;
};

}  // namespace kfuse
