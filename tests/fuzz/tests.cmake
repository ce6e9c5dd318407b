# Fuzzing (label fuzz): libFuzzer runs the Matrix Market parser for a bounded time, seeded
# from tests/fuzz/corpus. The target is built by a clang that links libFuzzer (Debian: clang
# and libclang-rt-dev), whatever CMAKE_CXX_COMPILER is; without one the test is left out.
# The seed is fixed, so a CI run explores what the last one did (a failure there is the
# change's, not the dice's); scripts/fuzz.sh explores with random seeds, for longer.
set(KFUSE_FUZZ_SECONDS 25 CACHE STRING "Seconds the fuzz.* ctest tests fuzz for")
set(KFUSE_FUZZ_SEED 1 CACHE STRING "libFuzzer seed of the fuzz.* ctest tests")
find_program(KFUSE_FUZZ_CXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15
                                  clang++-14 DOC "clang++ with libFuzzer, for the fuzz targets")

set(_kfuse_fuzz_flags -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined
                      -fno-sanitize-recover=undefined)
if(KFUSE_FUZZ_CXX AND NOT DEFINED KFUSE_FUZZ_CXX_WORKS)
  # Does it link a fuzzer? (clang without libclang-rt-<version>-dev does not.)
  set(_kfuse_probe "${CMAKE_CURRENT_BINARY_DIR}/fuzz/probe")
  file(WRITE "${_kfuse_probe}.cpp"
       "#include <cstddef>\n#include <cstdint>\n"
       "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(COMMAND "${KFUSE_FUZZ_CXX}" ${_kfuse_fuzz_flags} "${_kfuse_probe}.cpp"
                          -o "${_kfuse_probe}"
                  RESULT_VARIABLE _kfuse_result OUTPUT_QUIET ERROR_QUIET)
  if(_kfuse_result EQUAL 0)
    set(KFUSE_FUZZ_CXX_WORKS ON CACHE BOOL "${KFUSE_FUZZ_CXX} links libFuzzer")
  else()
    set(KFUSE_FUZZ_CXX_WORKS OFF CACHE BOOL "${KFUSE_FUZZ_CXX} links libFuzzer")
  endif()
endif()

if(KFUSE_FUZZ_CXX AND KFUSE_FUZZ_CXX_WORKS)
  set(_kfuse_fuzzer "${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_matrix_market")
  set(_kfuse_fuzz_dir "${CMAKE_CURRENT_SOURCE_DIR}/fuzz")
  add_custom_command(
    OUTPUT "${_kfuse_fuzzer}"
    COMMAND "${KFUSE_FUZZ_CXX}" ${_kfuse_fuzz_flags} -Wall -Wextra -Wpedantic
            "-I${PROJECT_SOURCE_DIR}/include" "${_kfuse_fuzz_dir}/fuzz_matrix_market.cpp"
            -o "${_kfuse_fuzzer}"
    DEPENDS "${_kfuse_fuzz_dir}/fuzz_matrix_market.cpp"
            "${PROJECT_SOURCE_DIR}/include/kfuse/sparse/matrix_market_parser.hpp"
            "${PROJECT_SOURCE_DIR}/include/kfuse/core/error.hpp"
            "${PROJECT_SOURCE_DIR}/include/kfuse/core/config.hpp"
    COMMENT "Building the libFuzzer target fuzz_matrix_market with ${KFUSE_FUZZ_CXX}"
    VERBATIM)
  add_custom_target(fuzz_matrix_market ALL DEPENDS "${_kfuse_fuzzer}")

  # New inputs go to the test's own corpus folder; the seeds in the source tree are read only.
  set(_kfuse_work "${CMAKE_CURRENT_BINARY_DIR}/work/fuzz.matrix_market")
  file(MAKE_DIRECTORY "${_kfuse_work}/corpus")
  add_test(NAME fuzz.matrix_market
           COMMAND "${_kfuse_fuzzer}" -seed=${KFUSE_FUZZ_SEED}
                   -max_total_time=${KFUSE_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -dict=${_kfuse_fuzz_dir}/matrix_market.dict
                   -artifact_prefix=${_kfuse_work}/ -print_final_stats=1
                   "${_kfuse_work}/corpus" "${_kfuse_fuzz_dir}/corpus")
  set_tests_properties(fuzz.matrix_market PROPERTIES
    LABELS fuzz WORKING_DIRECTORY "${_kfuse_work}" TIMEOUT 300)
else()
  message(STATUS "kfuse: no clang++ with libFuzzer (Debian: clang, libclang-rt-dev); "
                 "the fuzz tests are left out")
endif()
unset(_kfuse_fuzz_flags)
unset(_kfuse_probe)
unset(_kfuse_result)
unset(_kfuse_fuzzer)
unset(_kfuse_fuzz_dir)
unset(_kfuse_work)
