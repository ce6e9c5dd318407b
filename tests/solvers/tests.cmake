# Krylov solvers and preconditioners: the checks that need no PETSc (every build; the
# one-rank-wrong errors at 2 and 3 ranks), then the comparisons with PETSc (Debian's
# libpetsc-real-dev through pkg-config, MPI builds). They link the solvers' common cases,
# explicitly instantiated once (solver_support.hpp); so does errors.bad_input
# (tests/errors/tests.cmake).
add_library(kfuse_test_solver_instances STATIC solvers/solver_instances.cpp)
target_link_libraries(kfuse_test_solver_instances PRIVATE kfuse::kfuse kfuse_warnings
                                                          kfuse_sanitizers)
kfuse_add_test(NAME solvers.krylov SOURCES solvers/test_krylov.cpp support/main.cpp
               RANKS 1 2 3 4 LABELS solvers LIBRARIES kfuse_test_solver_instances)
kfuse_add_test(NAME solvers.multigrid SOURCES solvers/test_multigrid.cpp support/main.cpp
               RANKS 1 2 3 4 LABELS solvers LIBRARIES kfuse_test_solver_instances)
if(TARGET PkgConfig::PETSC)
  kfuse_add_test(NAME solvers.solvers SOURCES solvers/test_solvers.cpp support/main.cpp
                 RANKS 1 2 4 LABELS solvers
                 LIBRARIES PkgConfig::PETSC kfuse_test_solver_instances TIMEOUT 600)
  kfuse_add_test(NAME solvers.preconditioned SOURCES solvers/test_preconditioned.cpp
                 support/main.cpp RANKS 1 2 4 LABELS solvers
                 LIBRARIES PkgConfig::PETSC kfuse_test_solver_instances TIMEOUT 900)
  if(KFUSE_MATRICES_DIR)
    foreach(_kfuse_target IN ITEMS test_solvers_solvers test_solvers_preconditioned)
      target_compile_definitions(${_kfuse_target} PRIVATE KFUSE_MATRICES_DIR="${KFUSE_MATRICES_DIR}")
    endforeach()
  endif()
else()
  message(STATUS "kfuse: PETSc not found (pkg-config petsc); the comparisons with PETSc are left out")
endif()
