// Explicitly instantiated solvers: the common cases compiled once per program.
//
// Including this header (after or instead of <kfuse/kfuse.hpp>) declares
// kfuse::cg, bicgstab, gmres and fgmres for double on the default execution
// space, with no preconditioner, pc::Jacobi, pc::BlockJacobiIlu0, pc::Chebyshev
// and pc::Multigrid, and those preconditioners' classes (their setup and
// apply), `extern template`: a file that calls them, or builds one of those
// preconditioners, compiles no solver or preconditioner body. Exactly one file
// of the program includes <kfuse/solvers/instantiate.hpp>, which compiles them
// all. Other cases (float, a user callable as M, cg_matfree, a multigrid under
// another fusion policy) instantiate as usual, in the file that calls them.
// docs/user-guide.md §9 ("Compile time").
#pragma once

#include "kfuse/solvers/bicgstab.hpp"
#include "kfuse/solvers/cg.hpp"
#include "kfuse/solvers/chebyshev.hpp"
#include "kfuse/solvers/gmres.hpp"
#include "kfuse/solvers/multigrid.hpp"
#include "kfuse/solvers/preconditioners.hpp"

// X(solver, M) for each explicitly instantiated solver and preconditioner.
#define KFUSE_DETAIL_SOLVER_WITH_EACH_PRECONDITIONER(X, solver) \
  X(solver, pc::None)                                           \
  X(solver, pc::Jacobi<double>)                                 \
  X(solver, pc::BlockJacobiIlu0<double>)                        \
  X(solver, pc::Chebyshev<double>)                              \
  X(solver, pc::Multigrid<double>)
#define KFUSE_DETAIL_SOLVER_INSTANCES(X)                    \
  KFUSE_DETAIL_SOLVER_WITH_EACH_PRECONDITIONER(X, cg)       \
  KFUSE_DETAIL_SOLVER_WITH_EACH_PRECONDITIONER(X, bicgstab) \
  KFUSE_DETAIL_SOLVER_WITH_EACH_PRECONDITIONER(X, gmres)    \
  KFUSE_DETAIL_SOLVER_WITH_EACH_PRECONDITIONER(X, fgmres)

// X(class) for each explicitly instantiated preconditioner class.
#define KFUSE_DETAIL_PRECONDITIONER_INSTANCES(X) \
  X(pc::Jacobi<double>)                          \
  X(pc::BlockJacobiIlu0<double>)                 \
  X(pc::Chebyshev<double>)                       \
  X(pc::Multigrid<double>)

#define KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M)                                                  \
  SolveResult solver<double, M>(const CsrMatrix<double>&, Vector<double>&, const Vector<double>&, \
                                const SolverOptions&, const M&)
#define KFUSE_DETAIL_EXTERN_SOLVER(solver, M) \
  extern template KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M);
#define KFUSE_DETAIL_EXTERN_PRECONDITIONER(M) extern template class M;

namespace kfuse {
KFUSE_DETAIL_SOLVER_INSTANCES(KFUSE_DETAIL_EXTERN_SOLVER)
KFUSE_DETAIL_PRECONDITIONER_INSTANCES(KFUSE_DETAIL_EXTERN_PRECONDITIONER)
}  // namespace kfuse
