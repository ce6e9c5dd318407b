# The kfuse test list, included by tests/CMakeLists.txt. Helpers: cmake/kfuseTesting.cmake.
kfuse_add_test(NAME expr.operators SOURCES expr/test_operators.cpp support/main.cpp LABELS expr)
kfuse_add_test(NAME expr.vector_math SOURCES expr/test_vector_math.cpp support/main.cpp LABELS expr)
kfuse_add_test(NAME plan.plan SOURCES plan/test_plan.cpp support/main.cpp LABELS plan)
kfuse_add_test(NAME exec.program SOURCES exec/test_program.cpp support/main.cpp RANKS 1 2 4 LABELS exec)
kfuse_add_test(NAME dist.halo SOURCES dist/test_halo.cpp support/main.cpp RANKS 1 2 4 LABELS dist)

kfuse_add_compile_fail_test(NAME compile_fail.reduce_into_array
  SOURCE compile_fail/reduce_into_array.cpp REGEX "kfuse::assign\\(array, reduction\\)")
kfuse_add_compile_fail_test(NAME compile_fail.stencil_in_place
  SOURCE compile_fail/stencil_in_place.cpp REGEX "kfuse::assign\\(u, e\\): e reads u at a non-zero offset")
kfuse_add_compile_fail_test(NAME compile_fail.element_type_mismatch
  SOURCE compile_fail/element_type_mismatch.cpp REGEX "kfuse: operands have different element types")
kfuse_add_compile_fail_test(NAME compile_fail.shift_rank_mismatch
  SOURCE compile_fail/shift_rank_mismatch.cpp REGEX "kfuse::shift<O...>\\(a\\): the number of offsets")
kfuse_add_compile_fail_test(NAME compile_fail.rank_mismatch
  SOURCE compile_fail/rank_mismatch.cpp REGEX "kfuse: operands live on different domains")
kfuse_add_compile_fail_test(NAME compile_fail.lambda_arity
  SOURCE compile_fail/lambda_arity.cpp REGEX "kfuse::fuse\\(args..., lambda\\): the lambda must take one `auto` parameter per argument")
kfuse_add_compile_fail_test(NAME compile_fail.lambda_without_return
  SOURCE compile_fail/lambda_without_return.cpp REGEX "kfuse::fuse\\(args..., lambda\\): the lambda returns nothing")
kfuse_add_test(NAME exec.sparse_program SOURCES exec/test_sparse_program.cpp support/main.cpp RANKS 1 2 4 LABELS exec)

# The GPU launch schedule (a thread per point, Kokkos' own reductions) on the host backend
# of this build: the same programs compiled with KFUSE_DEVICE_SCHEDULE_ON_HOST
# (exec/kernel.hpp; the shared main runs no kernel).
foreach(_kfuse_program IN ITEMS program sparse_program)
  kfuse_add_test(NAME exec.${_kfuse_program}.device_schedule
                 SOURCES exec/test_${_kfuse_program}.cpp support/main.cpp RANKS 1 2 LABELS exec device)
  target_compile_definitions(test_exec_${_kfuse_program}_device_schedule PRIVATE
                             KFUSE_DEVICE_SCHEDULE_ON_HOST=1)
endforeach()
