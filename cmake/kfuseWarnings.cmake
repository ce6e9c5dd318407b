# Helper INTERFACE targets for kfuse's own programs (tests, examples, benchmarks). They are
# never exported or installed: kfuse::kfuse imposes no flags on its users.
#
#   kfuse_warnings    -Wall -Wextra -Wpedantic (-Werror with KFUSE_WARNINGS_AS_ERRORS)
#   kfuse_sanitizers  -fsanitize=address,undefined with KFUSE_SANITIZE (compile and link)
#
# Dependencies' headers come in as SYSTEM includes, so these flags only judge kfuse's code.
include_guard(GLOBAL)

add_library(kfuse_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(kfuse_warnings INTERFACE -Wall -Wextra -Wpedantic)
  if(KFUSE_WARNINGS_AS_ERRORS)
    target_compile_options(kfuse_warnings INTERFACE -Werror)
  endif()
elseif(MSVC)
  target_compile_options(kfuse_warnings INTERFACE /W4 $<$<BOOL:${KFUSE_WARNINGS_AS_ERRORS}>:/WX>)
endif()

add_library(kfuse_sanitizers INTERFACE)
if(KFUSE_SANITIZE)
  set(_kfuse_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                            -fno-omit-frame-pointer)
  target_compile_options(kfuse_sanitizers INTERFACE ${_kfuse_sanitize_flags})
  target_link_options(kfuse_sanitizers INTERFACE ${_kfuse_sanitize_flags})
  unset(_kfuse_sanitize_flags)
endif()
