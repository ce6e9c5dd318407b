# The device data path, and what the nvcc stage of scripts/test.sh compiles beyond the
# other areas' tests. Included by tests/CMakeLists.txt (paths relative to tests/).
#
# device.halo_buffers: HaloExchange's pooled buffers, mixed element types in one round,
# 27 directions. The .staged runs force the path through host mirrors
# (KFUSE_MPI_DEVICE_BUFFERS=0) that a build without a CUDA-aware MPI takes on a GPU; on
# host backends they exercise the same copies. dist.halo.staged does the same for the
# halo tests of tests/dist.
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
