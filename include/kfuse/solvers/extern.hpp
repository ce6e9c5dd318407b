// Explicitly instantiated solvers: the common cases compiled once per program.
//
// Including this header (after or instead of <kfuse/kfuse.hpp>) declares
// kfuse::cg, bicgstab, gmres and fgmres for double on the default execution
// space, with no preconditioner, pc::Jacobi, pc::BlockJacobiIlu0, pc::Chebyshev
// and pc::Multigrid, the setup and apply of those preconditioners' classes, and
// the double sparse machinery a solver file calls besides its programs (Vector,
// CsrMatrix, its assembly, generators and Matrix Market reader, its ghost
// import), `extern template`: a file that calls them, or builds one of those
// preconditioners, compiles no solver or preconditioner body and no matrix
// assembly. Exactly one file of the program includes
// <kfuse/solvers/instantiate.hpp>, which compiles them all. Other cases (float,
// a user callable as M, cg_matfree, a multigrid under another fusion policy)
// instantiate as usual, in the file that calls them. docs/user-guide.md §9
// ("Compile time").
#pragma once

#include "kfuse/array/vector.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/ghost_import.hpp"
#include "kfuse/exec/exchange.hpp"
#include "kfuse/solvers/bicgstab.hpp"
#include "kfuse/solvers/cg.hpp"
#include "kfuse/solvers/chebyshev.hpp"
#include "kfuse/solvers/gmres.hpp"
#include "kfuse/solvers/multigrid.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/sparse/csr_matrix.hpp"
#include "kfuse/sparse/generators.hpp"
#include "kfuse/sparse/matrix_market.hpp"

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

// X(member) for each explicitly instantiated member of the preconditioner
// classes built from a matrix: their setup and applies. Members, not whole
// classes: `extern template class` would instantiate the classes' programs'
// types in every file that includes this header, used or not (100 MiB more).
#define KFUSE_DETAIL_PRECONDITIONER_MEMBERS(X)                                                    \
  X(pc::BlockJacobiIlu0<double>::BlockJacobiIlu0(const CsrMatrix<double>&))                       \
  X(void pc::BlockJacobiIlu0<double>::operator()(const Vector<double>&, Vector<double>&) const)   \
  X(void pc::BlockJacobiIlu0<double>::apply(const Vector<double>&, Vector<double>&) const)        \
  X(pc::Chebyshev<double>::Chebyshev(const CsrMatrix<double>&, int, const pc::ChebyshevOptions&)) \
  X(void pc::Chebyshev<double>::operator()(const Vector<double>&, Vector<double>&) const)         \
  X(void pc::Chebyshev<double>::apply(const Vector<double>&, Vector<double>&) const)              \
  X(pc::Multigrid<double>::Multigrid(const CsrMatrix<double>&, std::vector<index_t>,              \
                                     const pc::MultigridOptions&))                                \
  X(std::string pc::Multigrid<double>::explain() const)                                           \
  X(int pc::Multigrid<double>::kernels_per_cycle() const)                                         \
  X(void pc::Multigrid<double>::operator()(const Vector<double>&, Vector<double>&) const)         \
  X(void pc::Multigrid<double>::apply(const Vector<double>&, Vector<double>&) const)              \
  X(pc::Multigrid<double>::Ends pc::Multigrid<double>::ends(const Vector<double>&,                \
                                                            const Vector<double>&) const)         \
  X(void pc::Multigrid<double>::apply_from_first_sweep(const Vector<double>&, Vector<double>&)    \
        const)

// X(declaration) for each explicitly instantiated class or function of the double sparse
// machinery under the solvers: what a file that builds a matrix, its vectors and a solve
// compiles besides its programs (benchmarks/compile/solver_file_extern.cpp: 167 KB of
// code without them, 76 KB with them). Whole classes here: their members instantiate no
// program.
#define KFUSE_DETAIL_SPARSE_INSTANCES(X)                                                         \
  X(class Vector<double>)                                                                        \
  X(class CsrMatrix<double>)                                                                     \
  X(class GhostImport<double>)                                                                   \
  X(detail::Storage<double> detail::allocate_storage<double, 1>(                                 \
      const char*, const std::string&, const std::array<index_t, 1>&, std::size_t, std::size_t)) \
  X(CsrMatrix<double> detail::assemble_csr<double>(                                              \
      const RowMap&, const RowMap&, std::vector<detail::Triplet<double>>, std::string))          \
  X(CsrMatrix<double> detail::assemble_routed<double>(                                           \
      const RowMap&, const RowMap&, const std::vector<detail::Triplet<double>>&, std::string))   \
  X(CsrMatrix<double> detail::stencil_matrix<double, 2>(                                         \
      const Comm&, const char*, const std::array<index_t, 2>&, double,                           \
      const std::array<double, 2>&, const std::array<double, 2>&, std::string))                  \
  X(CsrMatrix<double> detail::stencil_matrix<double, 3>(                                         \
      const Comm&, const char*, const std::array<index_t, 3>&, double,                           \
      const std::array<double, 3>&, const std::array<double, 3>&, std::string))                  \
  X(CsrMatrix<double> read_matrix_market<double>(const Comm&, const std::string&, std::string))  \
  X(Vector<double> detail::inverse_diagonal<double>(const char*, const CsrMatrix<double>&))      \
  X(void detail::GhostRefresh::add<double>(const char*, const CsrMatrix<double>&,                \
                                           const Vector<double>&, const RowMap*))                \
  X(void detail::GhostRefresh::check<double>(const char*, const CsrMatrix<double>&,              \
                                             const Vector<double>&, const RowMap*))

#define KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M)                                                  \
  SolveResult solver<double, M>(const CsrMatrix<double>&, Vector<double>&, const Vector<double>&, \
                                const SolverOptions&, const M&)
#define KFUSE_DETAIL_EXTERN_SOLVER(solver, M) \
  extern template KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M);
#define KFUSE_DETAIL_EXTERN_DECLARATION(...) extern template __VA_ARGS__;

namespace kfuse {
KFUSE_DETAIL_SOLVER_INSTANCES(KFUSE_DETAIL_EXTERN_SOLVER)
KFUSE_DETAIL_PRECONDITIONER_MEMBERS(KFUSE_DETAIL_EXTERN_DECLARATION)
KFUSE_DETAIL_SPARSE_INSTANCES(KFUSE_DETAIL_EXTERN_DECLARATION)
}  // namespace kfuse
