# Programs and eager statements (fuse, Program, the binding checks, explain, eager
# assignment and eval) run against host loops, through exec's lowering, launchers and
# exchanges; test_program.cpp also checks core's box loops.
kfuse_add_test(NAME program.program SOURCES program/test_program.cpp support/main.cpp
               RANKS 1 2 4 LABELS program)
kfuse_add_test(NAME program.unfused SOURCES program/test_unfused.cpp support/main.cpp
               RANKS 1 2 4 LABELS program)
kfuse_add_test(NAME program.sparse_program SOURCES program/test_sparse_program.cpp
               support/main.cpp RANKS 1 2 4 LABELS program)
# .staged: the ghost imports of fused programs through host staging buffers
# (KFUSE_MPI_DEVICE_BUFFERS=0), the path a GPU build without a CUDA-aware MPI takes; on
# host backends the same copies run.
if(KFUSE_ENABLE_MPI)
  kfuse_add_test_run(NAME program.sparse_program.staged TEST program.sparse_program RANKS 2
                     ENVIRONMENT KFUSE_MPI_DEVICE_BUFFERS=0 LABELS program device)
endif()

# The GPU launch schedule (DeviceSchedule: a thread per point, Kokkos' own reductions) on
# the host backend of this build: the same programs compiled with
# KFUSE_DEVICE_SCHEDULE_ON_HOST (core/box_loop.hpp; the shared main runs no kernel).
if(KFUSE_TEST_DEVICE_SCHEDULE_ON_HOST)
  foreach(_kfuse_program IN ITEMS program sparse_program)
    kfuse_add_test(NAME program.${_kfuse_program}.device_schedule
                   SOURCES program/test_${_kfuse_program}.cpp support/main.cpp RANKS 1 2
                   LABELS program device)
    target_compile_definitions(test_program_${_kfuse_program}_device_schedule PRIVATE
                               KFUSE_DEVICE_SCHEDULE_ON_HOST=1)
  endforeach()
endif()
