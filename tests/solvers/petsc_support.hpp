// PETSc 3.18 as the solver tests' reference: the same matrix (MPIAIJ with
// kfuse's row split, so block Jacobi sees the same blocks), right-hand side
// and tolerance, a KSP of the given type and preconditioner, the
// unpreconditioned norm.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <petscksp.h>

#include <kfuse/kfuse.hpp>

#include "solver_support.hpp"

namespace kfuse_test {

/// How PETSc solves.
struct PetscSettings {
  KSPType type = KSPCG;
  PCType pc = PCNONE;
  PCSide side = PC_SIDE_DEFAULT;  // KSP's own (BCGS with PCNONE: left, unpreconditioned norm)
  int restart = 30;               // GMRES, FGMRES
  double rtol = 1e-8;
  int max_it = 20000;
  /// PCSHELL's apply (pc = PCSHELL): z = M r on PETSc vectors; `apply` counts the calls.
  std::function<void(Mat A, Vec r, Vec z, int apply)> shell{};
  /// Called on the KSP before the options database is read (e.g. PCKSP's inner KSP).
  std::function<void(KSP ksp, Mat A)> configure{};
  /// Called on the KSP after the solve (e.g. to read what its preconditioner estimated).
  std::function<void(KSP ksp)> inspect{};
};

/// PETSc's answer to A x = b from x = 0: iterations and the solution.
struct PetscSolve {
  PetscInt iterations = 0;
  bool converged = false;  // KSPConvergedReason > 0
  std::vector<double> x;
};

namespace petsc_detail {
struct Shell {
  const PetscSettings* settings;
  Mat A;
  int applies = 0;
};
inline PetscErrorCode shell_apply(PC pc, Vec r, Vec z) {
  void* context = nullptr;
  PCShellGetContext(pc, &context);
  auto* shell = static_cast<Shell*>(context);
  shell->settings->shell(shell->A, r, z, shell->applies++);
  return 0;
}
}  // namespace petsc_detail

/// A as an MPIAIJ matrix with kfuse's row and column split (the caller destroys it),
/// preallocated row by row: without it each insertion past PETSc's guess copies the
/// matrix (slow under AddressSanitizer, whose large blocks are fresh mappings).
inline Mat petsc_matrix(const kfuse::CsrMatrix<double>& A) {
  const auto entries = kfuse::detail::local_triplets(A);
  const kfuse::index_t first = A.range().local_begin();
  std::vector<PetscInt> in_block(static_cast<std::size_t>(A.local_rows()), 0);
  std::vector<PetscInt> off_block(in_block.size(), 0);
  for (const auto& e : entries)
    ++(A.domain().owns(e.col) ? in_block : off_block)[static_cast<std::size_t>(e.row - first)];
  Mat M;
  MatCreateAIJ(A.range().comm().native(), A.local_rows(), A.domain().local_size(), A.global_rows(),
               A.global_cols(), 0, in_block.data(), 0, off_block.data(), &M);
  for (const auto& e : entries) {
    const PetscInt i = e.row, j = e.col;
    MatSetValue(M, i, j, e.value, INSERT_VALUES);
  }
  MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY);
  return M;
}

/// v's entries into PETSc vector `out` (split as v is), assembled: each rank sets its own.
inline void copy_to_petsc(const kfuse::Vector<double>& v, Vec out) {
  const auto mine = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.view());
  const PetscInt begin = v.row_map().local_begin();
  for (PetscInt i = 0; i < PetscInt(mine.extent(0)); ++i)
    VecSetValue(out, begin + i, mine(i), INSERT_VALUES);
  VecAssemblyBegin(out);
  VecAssemblyEnd(out);
}

/// A PETSc vector's entries, gathered on every rank.
inline std::vector<double> gather_petsc(Vec v) {
  Vec all;
  VecScatter to_all;
  VecScatterCreateToAll(v, &to_all, &all);
  VecScatterBegin(to_all, v, all, INSERT_VALUES, SCATTER_FORWARD);
  VecScatterEnd(to_all, v, all, INSERT_VALUES, SCATTER_FORWARD);
  const PetscScalar* values;
  PetscInt n;
  VecGetSize(all, &n);
  VecGetArrayRead(all, &values);
  std::vector<double> out(values, values + n);
  VecRestoreArrayRead(all, &values);
  VecScatterDestroy(&to_all);
  VecDestroy(&all);
  return out;
}

/// z = M r for PETSc's preconditioner `type` built on A (its defaults: PCBJACOBI's blocks
/// factorised by ILU(0)), gathered on every rank.
inline std::vector<double> petsc_pc_apply(const kfuse::CsrMatrix<double>& A,
                                          const kfuse::Vector<double>& r, PCType type) {
  Mat M = petsc_matrix(A);
  Vec pr, pz;
  MatCreateVecs(M, &pz, &pr);
  copy_to_petsc(r, pr);
  PC pc;
  PCCreate(A.range().comm().native(), &pc);
  PCSetOperators(pc, M, M);
  PCSetType(pc, type);
  PCSetUp(pc);
  PCApply(pc, pr, pz);
  std::vector<double> z = gather_petsc(pz);
  PCDestroy(&pc);
  VecDestroy(&pz);
  VecDestroy(&pr);
  MatDestroy(&M);
  return z;
}

inline PetscSolve petsc_solve(const kfuse::CsrMatrix<double>& A, const kfuse::Vector<double>& b,
                              const PetscSettings& s) {
  const MPI_Comm comm = A.range().comm().native();
  Mat M = petsc_matrix(A);

  Vec pb, px;
  MatCreateVecs(M, &px, &pb);
  copy_to_petsc(b, pb);
  VecSet(px, 0.0);

  KSP ksp;
  KSPCreate(comm, &ksp);
  KSPSetOperators(ksp, M, M);
  KSPSetType(ksp, s.type);
  PC prec;
  KSPGetPC(ksp, &prec);
  PCSetType(prec, s.pc);
  petsc_detail::Shell shell{&s, M};
  if (std::string(s.pc) == PCSHELL) {
    PCShellSetContext(prec, &shell);
    PCShellSetApply(prec, petsc_detail::shell_apply);
  }
  if (s.side != PC_SIDE_DEFAULT) KSPSetPCSide(ksp, s.side);
  KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED);
  if (std::string(s.type) == KSPGMRES) KSPGMRESSetRestart(ksp, s.restart);
  if (std::string(s.type) == KSPFGMRES) KSPGMRESSetRestart(ksp, s.restart);
  KSPSetTolerances(ksp, s.rtol, PETSC_DEFAULT, 1e300, s.max_it);  // no dtol: as kfuse's default
  if (s.configure) s.configure(ksp, M);
  KSPSetFromOptions(ksp);  // PETSC_OPTIONS="-ksp_monitor" shows PETSc's history
  KSPSolve(ksp, pb, px);
  if (s.inspect) s.inspect(ksp);

  PetscSolve out;
  KSPGetIterationNumber(ksp, &out.iterations);
  KSPConvergedReason reason;
  KSPGetConvergedReason(ksp, &reason);
  out.converged = reason > 0;
  out.x = gather_petsc(px);
  KSPDestroy(&ksp);
  VecDestroy(&px);
  VecDestroy(&pb);
  MatDestroy(&M);
  return out;
}

}  // namespace kfuse_test
