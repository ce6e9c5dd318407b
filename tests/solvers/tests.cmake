# Krylov solvers and preconditioners against PETSc (Debian libpetsc-real-dev through pkg-config), in MPI builds.
if(TARGET PkgConfig::PETSC)
  kfuse_add_test(NAME solvers.solvers SOURCES solvers/test_solvers.cpp support/main.cpp
                 RANKS 1 2 4 LABELS solvers LIBRARIES PkgConfig::PETSC TIMEOUT 600)
  kfuse_add_test(NAME solvers.preconditioned SOURCES solvers/test_preconditioned.cpp
                 support/main.cpp RANKS 1 2 4 LABELS solvers LIBRARIES PkgConfig::PETSC TIMEOUT 900)
  if(KFUSE_MATRICES_DIR)
    foreach(_kfuse_target IN ITEMS test_solvers_solvers test_solvers_preconditioned)
      target_compile_definitions(${_kfuse_target} PRIVATE KFUSE_MATRICES_DIR="${KFUSE_MATRICES_DIR}")
    endforeach()
  endif()
else()
  message(STATUS "kfuse: PETSc not found (pkg-config petsc); the solver tests are left out")
endif()
