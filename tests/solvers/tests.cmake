# Krylov solvers against PETSc (Debian libpetsc-real-dev through pkg-config), in MPI builds.
if(TARGET PkgConfig::PETSC)
  kfuse_add_test(NAME solvers.solvers SOURCES solvers/test_solvers.cpp support/main.cpp
                 RANKS 1 2 4 LABELS solvers LIBRARIES PkgConfig::PETSC TIMEOUT 600)
  if(KFUSE_MATRICES_DIR)
    target_compile_definitions(test_solvers_solvers PRIVATE KFUSE_MATRICES_DIR="${KFUSE_MATRICES_DIR}")
  endif()
else()
  message(STATUS "kfuse: PETSc not found (pkg-config petsc); the solver tests are left out")
endif()
