# The device data path, and what the nvcc stage of scripts/test.sh compiles beyond the
# other areas' tests. Included by tests/CMakeLists.txt (paths relative to tests/).
#
# device.halo_buffers: HaloExchange's pooled buffers, mixed element types in one round,
# 27 directions. The .staged runs force the path through host mirrors
# (KFUSE_MPI_DEVICE_BUFFERS=0) that a build without a CUDA-aware MPI takes on a GPU; on
# host backends they exercise the same copies. dist.halo.staged does the same for the
# halo tests of tests/dist (program.sparse_program.staged, in tests/program, does it for the
# ghost imports of fused programs, sparse.csr_matrix.staged, in tests/sparse, for the eager
# SpMV).
kfuse_add_test(NAME device.halo_buffers SOURCES nvcc/test_halo_buffers.cpp support/main.cpp
               RANKS 1 2 4 LABELS dist device)
if(KFUSE_ENABLE_MPI)
  kfuse_add_test_run(NAME device.halo_buffers.staged TEST device.halo_buffers RANKS 2 4
                     ENVIRONMENT KFUSE_MPI_DEVICE_BUFFERS=0 LABELS dist device)
  if(TARGET test_dist_halo)
    kfuse_add_test_run(NAME dist.halo.staged TEST dist.halo RANKS 2
                       ENVIRONMENT KFUSE_MPI_DEVICE_BUFFERS=0 LABELS dist device)
  endif()
endif()

# The umbrella header in one program that touches every layer (compiled and linked by
# every build; the nvcc stage builds it with nvcc_wrapper and runs nothing).
kfuse_add_test(NAME device.umbrella SOURCES nvcc/umbrella.cpp support/main.cpp
               RANKS 1 2 LABELS device)

# KFUSE_SKIP_TARGETS: targets left out of `all`. The nvcc stage of scripts/test.sh lists
# here the programs that nvcc cannot compile yet (docs/backends.md says why), so that the
# rest of the build still checks every other header, test and example with nvcc.
set(KFUSE_SKIP_TARGETS "" CACHE STRING "Targets left out of the default build (a ;-list)")
function(_kfuse_skip_targets)
  foreach(target IN LISTS KFUSE_SKIP_TARGETS)
    if(TARGET ${target})
      set_property(TARGET ${target} PROPERTY EXCLUDE_FROM_ALL ON)
      message(STATUS "kfuse: ${target} is left out of the build (KFUSE_SKIP_TARGETS)")
    else()
      message(WARNING "kfuse: KFUSE_SKIP_TARGETS names ${target}, which is not a target")
    endif()
  endforeach()
endfunction()
if(KFUSE_SKIP_TARGETS)
  # At the end of the top directory, when the examples and benchmarks exist too.
  cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL _kfuse_skip_targets)
endif()
