# Programs and eager statements run (exec, through the program layer) against host loops.
kfuse_add_test(NAME exec.program SOURCES exec/test_program.cpp support/main.cpp RANKS 1 2 4 LABELS exec)
kfuse_add_test(NAME exec.sparse_program SOURCES exec/test_sparse_program.cpp support/main.cpp RANKS 1 2 4 LABELS exec)

# The GPU launch schedule (DeviceSchedule: a thread per point, Kokkos' own reductions) on
# the host backend of this build: the same programs compiled with
# KFUSE_DEVICE_SCHEDULE_ON_HOST (core/box_loop.hpp; the shared main runs no kernel).
foreach(_kfuse_program IN ITEMS program sparse_program)
  kfuse_add_test(NAME exec.${_kfuse_program}.device_schedule
                 SOURCES exec/test_${_kfuse_program}.cpp support/main.cpp RANKS 1 2 LABELS exec device)
  target_compile_definitions(test_exec_${_kfuse_program}_device_schedule PRIVATE
                             KFUSE_DEVICE_SCHEDULE_ON_HOST=1)
endforeach()
