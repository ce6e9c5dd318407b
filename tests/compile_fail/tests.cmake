# Misuse that must not compile, each with the static_assert message that names the API.
kfuse_add_compile_fail_test(NAME compile_fail.reduce_into_array
  SOURCE compile_fail/reduce_into_array.cpp REGEX "kfuse::assign\\(array, reduction\\)")
kfuse_add_compile_fail_test(NAME compile_fail.stencil_in_place
  SOURCE compile_fail/stencil_in_place.cpp REGEX "kfuse::assign\\(u, e\\): e reads u at a non-zero offset")
kfuse_add_compile_fail_test(NAME compile_fail.element_type_mismatch
  SOURCE compile_fail/element_type_mismatch.cpp REGEX "kfuse: operands have different element types")
kfuse_add_compile_fail_test(NAME compile_fail.literal_too_long
  SOURCE compile_fail/literal_too_long.cpp REGEX "kfuse::literals: a literal of kfuse \\(1.5_kf\\) is a decimal number of at most 15")
kfuse_add_compile_fail_test(NAME compile_fail.shift_rank_mismatch
  SOURCE compile_fail/shift_rank_mismatch.cpp REGEX "kfuse::shift<O...>\\(a\\): the number of offsets")
kfuse_add_compile_fail_test(NAME compile_fail.rank_mismatch
  SOURCE compile_fail/rank_mismatch.cpp REGEX "kfuse: operands live on different domains")
kfuse_add_compile_fail_test(NAME compile_fail.lambda_arity
  SOURCE compile_fail/lambda_arity.cpp REGEX "kfuse::fuse\\(args..., lambda\\): the lambda must take one `auto` parameter per argument")
kfuse_add_compile_fail_test(NAME compile_fail.lambda_without_return
  SOURCE compile_fail/lambda_without_return.cpp REGEX "kfuse::fuse\\(args..., lambda\\): the lambda returns nothing")
kfuse_add_compile_fail_test(NAME compile_fail.placeholders_in_a_struct
  SOURCE compile_fail/placeholders_in_a_struct.cpp REGEX "a lambda parameter \\(or expression\\) is stored in a variable of another parameter.s type")
