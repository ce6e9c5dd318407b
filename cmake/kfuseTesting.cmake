# Test helpers for kfuse's own test suite (not installed). Included by tests/CMakeLists.txt.
#
#   kfuse_add_test(NAME <name> SOURCES <file>... [RANKS <n>...] [LABELS <label>...]
#                  [TIMEOUT <seconds>] [ARGS <arg>...] [LIBRARIES <target>...] [NO_MAIN])
#       A doctest program and its ctest tests: `<name>`, or with RANKS (MPI builds)
#       `<name>.np<n>` per rank count, run through mpiexec. The program links
#       tests/support/main.cpp (compiled once for all tests) unless NO_MAIN is given.
#       MPI runs are labelled `mpi` and `np<n>` (e.g. `ctest -LE np4` leaves out 4 ranks).
#   kfuse_add_test_run(NAME <name> TEST <kfuse_add_test name> [RANKS <n>...]
#                      [ENVIRONMENT <var=value>...] [LABELS <label>...] [ARGS <arg>...])
#       More ctest runs of a program that kfuse_add_test built, e.g. with another
#       environment: `<name>`, or `<name>.np<n>` per rank count in MPI builds.
#   kfuse_add_script_test(NAME <name> SCRIPT <file> [ARGS <arg>...] [LABELS <label>...]
#                         [TIMEOUT <seconds>])
#       `<name>`: runs `bash <file> <arg>...` (a test that drives programs itself, e.g.
#       kills one); ARGS may name programs as $<TARGET_FILE:target>.
#   kfuse_add_compile_fail_test(NAME <name> SOURCE <file> REGEX <regex>)
#       `<name>` passes when compiling <file> fails with a diagnostic matching <regex>;
#       `<name>.ok` (run first) compiles it with -DKFUSE_COMPILE_FAIL_OK, which must succeed.
#       REGEX is a ctest regular expression (no `;`: ctest would read a list of them).
#   kfuse_add_header_tests([EXCLUDE <regex>...])
#       Every include/kfuse/**/*.hpp compiled alone (and included twice), in the default build.
#       With KFUSE_PRECOMPILE_HEADERS, those that include Kokkos share a precompiled
#       <Kokkos_Core.hpp>.
#   kfuse_add_install_test()
#       `install`: installs kfuse into the build tree and builds and runs examples/ against
#       it as a separate project with find_package(kfuse).
#   kfuse_share_precompiled_header()
#       With KFUSE_PRECOMPILE_HEADERS, after every kfuse_add_test: the test programs whose
#       own definitions and options are the common ones reuse one precompiled
#       <kfuse/kfuse.hpp> and <doctest/doctest.h> (about 2 CPU seconds of parsing a file).
#
# Every test runs in a working directory of its own (tests may write files), with the
# Open MPI variables that root and oversubscription need. Test programs get
# KFUSE_TEST_SOURCE_DIR (absolute path of tests/) as a compile definition.
include_guard(GLOBAL)

find_package(doctest REQUIRED)

# PETSc, the oracle of the solver tests, through pkg-config: PkgConfig::PETSC when found.
# Use it as `if(TARGET PkgConfig::PETSC) kfuse_add_test(... LIBRARIES PkgConfig::PETSC) endif()`.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND AND KFUSE_ENABLE_MPI)
  pkg_check_modules(PETSC QUIET IMPORTED_TARGET petsc)
  # Debian's PETSc loads Debian's shared Kokkos; a program that carries a static Kokkos
  # (scripts/build-kokkos.sh) would export that Kokkos's globals to it, and both would
  # destroy them at exit (a double free, now and then). Archive symbols stay hidden.
  if(TARGET PkgConfig::PETSC AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set_property(TARGET PkgConfig::PETSC APPEND PROPERTY INTERFACE_LINK_OPTIONS
                 "LINKER:--exclude-libs,ALL")
  endif()
endif()

set(KFUSE_TEST_MAIN "${PROJECT_SOURCE_DIR}/tests/support/main.cpp"
    CACHE FILEPATH "main() linked into every kfuse_add_test program (unless NO_MAIN)")
set(KFUSE_TEST_TIMEOUT 300 CACHE STRING "Default ctest timeout (seconds) of kfuse_add_test")

set(_kfuse_test_environment
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
if(KFUSE_SANITIZE)
  # Open MPI's own allocations outlive MPI_Finalize: leak reports would drown real errors.
  # allocator_may_return_null: tests of allocations larger than memory expect an error.
  list(APPEND _kfuse_test_environment ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
       UBSAN_OPTIONS=print_stacktrace=1)
endif()

if(KFUSE_ENABLE_MPI)
  # --oversubscribe lets 4 ranks run on 2 cores; only Open MPI's mpiexec knows the flag.
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
                  OUTPUT_VARIABLE _kfuse_mpiexec_version ERROR_QUIET)
  if(_kfuse_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(_kfuse_mpiexec_default_flags --oversubscribe)
  else()
    set(_kfuse_mpiexec_default_flags "")
  endif()
  set(KFUSE_MPIEXEC_FLAGS "${_kfuse_mpiexec_default_flags}"
      CACHE STRING "Flags after `mpiexec -n <k>` in kfuse's MPI tests")
endif()

# Runs `cmake --build` of one target of this build tree, as a test command.
function(_kfuse_build_target_command out target)
  set(command "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target ${target})
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(multi_config)
    list(APPEND command --config $<CONFIG>)
  endif()
  set(${out} "${command}" PARENT_SCOPE)
endfunction()

# Properties every kfuse test gets: environment, timeout, labels, its own working directory.
function(_kfuse_set_test_properties test timeout labels)
  set(work_dir "${CMAKE_CURRENT_BINARY_DIR}/work/${test}")
  file(MAKE_DIRECTORY "${work_dir}")
  list(REMOVE_ITEM labels "")
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "${_kfuse_test_environment}"
    TIMEOUT ${timeout}
    LABELS "${labels}"
    WORKING_DIRECTORY "${work_dir}")
endfunction()

# The test main, compiled once and linked into every kfuse_add_test program.
function(_kfuse_test_main_target out)
  if(NOT EXISTS "${KFUSE_TEST_MAIN}")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET kfuse_test_main)
    add_library(kfuse_test_main OBJECT "${KFUSE_TEST_MAIN}")
    target_link_libraries(kfuse_test_main PUBLIC kfuse::kfuse doctest::doctest
                                          PRIVATE kfuse_warnings kfuse_sanitizers)
  endif()
  set(${out} kfuse_test_main PARENT_SCOPE)
endfunction()

function(kfuse_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "NO_MAIN" "NAME;TIMEOUT" "SOURCES;RANKS;LABELS;ARGS;LIBRARIES")
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "kfuse_add_test(NAME <name> SOURCES <file>...) needs NAME and SOURCES")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kfuse_add_test(${arg_NAME}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${KFUSE_TEST_TIMEOUT})
  endif()

  # The shared main replaces a main.cpp listed among the sources.
  set(main "")
  if(NOT arg_NO_MAIN)
    _kfuse_test_main_target(main)
  endif()
  set(sources "")
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT (main AND path STREQUAL KFUSE_TEST_MAIN))
      list(APPEND sources "${source}")
    endif()
  endforeach()

  string(MAKE_C_IDENTIFIER "test_${arg_NAME}" target)
  add_executable(${target} ${sources})
  set_property(GLOBAL APPEND PROPERTY KFUSE_TEST_PROGRAMS ${target})
  target_link_libraries(${target} PRIVATE ${main} kfuse::kfuse doctest::doctest
                                          kfuse_warnings kfuse_sanitizers ${arg_LIBRARIES})
  target_compile_definitions(${target} PRIVATE
                             KFUSE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}/tests")

  if(arg_RANKS AND KFUSE_ENABLE_MPI)
    foreach(ranks IN LISTS arg_RANKS)
      set(test "${arg_NAME}.np${ranks}")
      add_test(NAME ${test}
               COMMAND "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                       ${KFUSE_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}>
                       ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
      _kfuse_set_test_properties(${test} ${arg_TIMEOUT} "mpi;np${ranks};${arg_LABELS}")
      set_tests_properties(${test} PROPERTIES PROCESSORS ${ranks})
    endforeach()
  else()
    add_test(NAME ${arg_NAME} COMMAND ${target} ${arg_ARGS})
    _kfuse_set_test_properties(${arg_NAME} ${arg_TIMEOUT} "${arg_LABELS}")
  endif()
endfunction()

function(kfuse_add_test_run)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;TEST;TIMEOUT" "RANKS;ENVIRONMENT;LABELS;ARGS")
  if(NOT arg_NAME OR NOT arg_TEST OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kfuse_add_test_run(NAME <name> TEST <test> ...) needs NAME and TEST")
  endif()
  string(MAKE_C_IDENTIFIER "test_${arg_TEST}" target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kfuse_add_test_run(${arg_NAME}): no test program ${arg_TEST} "
                        "(kfuse_add_test(NAME ${arg_TEST} ...) first)")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${KFUSE_TEST_TIMEOUT})
  endif()
  set(tests "")
  if(arg_RANKS AND KFUSE_ENABLE_MPI)
    foreach(ranks IN LISTS arg_RANKS)
      set(test "${arg_NAME}.np${ranks}")
      add_test(NAME ${test}
               COMMAND "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                       ${KFUSE_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}>
                       ${MPIEXEC_POSTFLAGS} ${arg_ARGS})
      _kfuse_set_test_properties(${test} ${arg_TIMEOUT} "mpi;np${ranks};${arg_LABELS}")
      set_tests_properties(${test} PROPERTIES PROCESSORS ${ranks})
      list(APPEND tests ${test})
    endforeach()
  else()
    add_test(NAME ${arg_NAME} COMMAND ${target} ${arg_ARGS})
    _kfuse_set_test_properties(${arg_NAME} ${arg_TIMEOUT} "${arg_LABELS}")
    list(APPEND tests ${arg_NAME})
  endif()
  if(arg_ENVIRONMENT)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${arg_ENVIRONMENT})
  endif()
endfunction()

function(kfuse_add_script_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SCRIPT;TIMEOUT" "ARGS;LABELS")
  if(NOT arg_NAME OR NOT arg_SCRIPT OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kfuse_add_script_test(NAME <name> SCRIPT <file> ...) needs NAME and SCRIPT")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT ${KFUSE_TEST_TIMEOUT})
  endif()
  get_filename_component(script "${arg_SCRIPT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  add_test(NAME ${arg_NAME} COMMAND bash "${script}" ${arg_ARGS})
  _kfuse_set_test_properties(${arg_NAME} ${arg_TIMEOUT} "${arg_LABELS}")
endfunction()

function(kfuse_add_compile_fail_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SOURCE;REGEX" "")
  if(NOT arg_NAME OR NOT arg_SOURCE OR NOT arg_REGEX OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
            "kfuse_add_compile_fail_test(NAME <name> SOURCE <file> REGEX <regex>) needs all three")
  endif()
  string(MAKE_C_IDENTIFIER "${arg_NAME}" target)
  if(NOT target MATCHES "^compile_fail")
    set(target compile_fail_${target})
  endif()

  # Two copies of the one file, built only by their tests: as written (must fail), and with
  # the bad line switched off (must compile), which shows the failure comes from that line.
  foreach(variant IN ITEMS lib ok)
    add_library(${target}_${variant} STATIC EXCLUDE_FROM_ALL "${arg_SOURCE}")
    set_target_properties(${target}_${variant} PROPERTIES EXCLUDE_FROM_DEFAULT_BUILD ON)
    target_link_libraries(${target}_${variant} PRIVATE kfuse::kfuse)
  endforeach()
  target_compile_definitions(${target}_ok PRIVATE KFUSE_COMPILE_FAIL_OK)
  # The test builds this custom target, which runs (every time) only once the file has
  # compiled: its message fails the test even where the regex matched some other line.
  add_custom_target(${target}
                    COMMAND "${CMAKE_COMMAND}" -E echo "kfuse: ${arg_SOURCE} compiled, but it must not"
                    VERBATIM)
  add_dependencies(${target} ${target}_lib)

  _kfuse_build_target_command(ok_command ${target}_ok)
  add_test(NAME ${arg_NAME}.ok COMMAND ${ok_command})
  _kfuse_set_test_properties(${arg_NAME}.ok ${KFUSE_TEST_TIMEOUT} compile_fail)
  set_tests_properties(${arg_NAME}.ok PROPERTIES FIXTURES_SETUP ${arg_NAME}.ok)

  _kfuse_build_target_command(fail_command ${target})
  add_test(NAME ${arg_NAME} COMMAND ${fail_command})
  _kfuse_set_test_properties(${arg_NAME} ${KFUSE_TEST_TIMEOUT} compile_fail)
  set_tests_properties(${arg_NAME} PROPERTIES
    PASS_REGULAR_EXPRESSION "${arg_REGEX}"
    FAIL_REGULAR_EXPRESSION "compiled, but it must not"
    FIXTURES_REQUIRED ${arg_NAME}.ok)

  # Ninja has no lock on its build log: never run two builds of this tree at once.
  if(CMAKE_GENERATOR MATCHES "Ninja")
    set_tests_properties(${arg_NAME} ${arg_NAME}.ok PROPERTIES RESOURCE_LOCK kfuse_build_tree)
  endif()
endfunction()

function(kfuse_add_header_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "EXCLUDE")
  if(NOT KFUSE_BUILD_HEADER_TESTS)
    return()
  endif()
  set(include_dir "${PROJECT_SOURCE_DIR}/include")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${include_dir}"
       "${include_dir}/kfuse/*.hpp")
  list(SORT headers)

  set(sources "")
  foreach(header IN LISTS headers)
    set(excluded OFF)
    foreach(regex IN LISTS arg_EXCLUDE)
      if(header MATCHES "${regex}")
        set(excluded ON)
      endif()
    endforeach()
    if(excluded)
      continue()
    endif()
    set(source "${CMAKE_CURRENT_BINARY_DIR}/header_tests/${header}.cpp")
    string(CONCAT content
           "// Generated by kfuse_add_header_tests(): ${header} must compile on its own.\n"
           "#include <${header}>\n"
           "#include <${header}>  // twice: the include guard works\n")
    # Rewritten only when it changes, so that reconfiguring recompiles nothing.
    set(old_content "")
    if(EXISTS "${source}")
      file(READ "${source}" old_content)
    endif()
    if(NOT old_content STREQUAL content)
      file(WRITE "${source}" "${content}")
    endif()
    list(APPEND sources "${source}")
  endforeach()

  if(sources)
    add_library(kfuse_header_tests OBJECT ${sources})
    target_link_libraries(kfuse_header_tests PRIVATE kfuse::kfuse kfuse_warnings)
    if(KFUSE_PRECOMPILE_HEADERS)
      _kfuse_precompile_kokkos_for_header_tests("${include_dir}" "${headers}")
    endif()
  endif()
endfunction()

# <Kokkos_Core.hpp> parsed once for the header tests rather than by each header that
# includes it (1.1 of a header's 1.5-2.8 CPU s). Only the headers that reach a Kokkos
# header, through their own includes or other kfuse headers', use it: the others still
# compile without Kokkos, so one of them that used Kokkos without including it fails.
function(_kfuse_precompile_kokkos_for_header_tests include_dir headers)
  set(include_regex "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
  foreach(header IN LISTS headers)
    file(STRINGS "${include_dir}/${header}" lines REGEX "${include_regex}")
    set(includes_${header} "")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "${include_regex}" unused "${line}")
      list(APPEND includes_${header} "${CMAKE_MATCH_1}")
    endforeach()
  endforeach()
  # A fixed point: a header reaches Kokkos when it includes a Kokkos or Kokkos Kernels
  # header, or a kfuse header that reaches Kokkos.
  set(reaching_kokkos "")
  set(changed ON)
  while(changed)
    set(changed OFF)
    foreach(header IN LISTS headers)
      if(header IN_LIST reaching_kokkos)
        continue()
      endif()
      foreach(included IN LISTS includes_${header})
        if(included MATCHES "^Kokkos" OR included IN_LIST reaching_kokkos)
          list(APPEND reaching_kokkos "${header}")
          set(changed ON)
          break()
        endif()
      endforeach()
    endforeach()
  endwhile()
  target_precompile_headers(kfuse_header_tests PRIVATE <Kokkos_Core.hpp>)
  foreach(header IN LISTS headers)
    if(NOT header IN_LIST reaching_kokkos)
      set_source_files_properties("${CMAKE_CURRENT_BINARY_DIR}/header_tests/${header}.cpp"
                                  PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

function(kfuse_add_install_test)
  if(NOT EXISTS "${PROJECT_SOURCE_DIR}/examples/CMakeLists.txt")
    message(STATUS "kfuse: no examples/CMakeLists.txt, so no install test")
    return()
  endif()
  set(work_dir "${CMAKE_CURRENT_BINARY_DIR}/install_test")

  # The settings go through a file (file(GENERATE), one per configuration): lists and
  # flags with spaces survive, which a command line of -D options would mangle.
  set(forward "")
  foreach(var IN ITEMS CMAKE_GENERATOR CMAKE_GENERATOR_PLATFORM CMAKE_GENERATOR_TOOLSET
                       CMAKE_MAKE_PROGRAM CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_LAUNCHER
                       CMAKE_BUILD_TYPE CMAKE_CXX_FLAGS CMAKE_PREFIX_PATH
                       Kokkos_ROOT KokkosKernels_ROOT Kokkos_DIR KokkosKernels_DIR
                       Boost_ROOT MPI_HOME KFUSE_ENABLE_MPI MPIEXEC_EXECUTABLE
                       MPIEXEC_NUMPROC_FLAG MPIEXEC_PREFLAGS MPIEXEC_POSTFLAGS
                       KFUSE_MPIEXEC_FLAGS KFUSE_WARNINGS_AS_ERRORS)
    if(DEFINED ${var} AND NOT "${${var}}" STREQUAL "")
      string(APPEND forward "set(${var} [==[${${var}}]==])\n")
    endif()
  endforeach()
  if(CMAKE_BUILD_TYPE)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
    string(APPEND forward
           "set(CMAKE_CXX_FLAGS_${build_type} [==[${CMAKE_CXX_FLAGS_${build_type}}]==])\n")
  endif()
  file(GENERATE OUTPUT "${work_dir}/settings-$<CONFIG>.cmake" CONTENT
"# Generated by kfuse_add_install_test(): what cmake/kfuseInstallTest.cmake needs.
set(KFUSE_SOURCE_DIR [==[${PROJECT_SOURCE_DIR}]==])
set(KFUSE_BUILD_DIR [==[${PROJECT_BINARY_DIR}]==])
set(KFUSE_WORK_DIR [==[${work_dir}/$<CONFIG>]==])
set(KFUSE_CONFIG [==[$<CONFIG>]==])
${forward}")

  add_test(NAME install
           COMMAND "${CMAKE_COMMAND}" "-DKFUSE_INSTALL_TEST_SETTINGS=${work_dir}/settings-$<CONFIG>.cmake"
                   -P "${PROJECT_SOURCE_DIR}/cmake/kfuseInstallTest.cmake")
  _kfuse_set_test_properties(install 1800 install)
endfunction()

function(kfuse_share_precompiled_header)
  if(NOT KFUSE_PRECOMPILE_HEADERS)
    return()
  endif()
  set(source "${CMAKE_CURRENT_BINARY_DIR}/kfuse_test_pch.cpp")
  file(GENERATE OUTPUT "${source}" CONTENT "// Compiles the test programs' shared precompiled header.\n")
  add_library(kfuse_test_pch OBJECT "${source}")
  target_link_libraries(kfuse_test_pch PRIVATE kfuse::kfuse doctest::doctest kfuse_warnings
                                               kfuse_sanitizers)
  target_compile_definitions(kfuse_test_pch PRIVATE
                             KFUSE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}/tests")
  target_precompile_headers(kfuse_test_pch PRIVATE <kfuse/kfuse.hpp> <doctest/doctest.h>)
  get_target_property(common_definitions kfuse_test_pch COMPILE_DEFINITIONS)
  get_property(programs GLOBAL PROPERTY KFUSE_TEST_PROGRAMS)
  get_target_property(common_libraries kfuse_test_pch LINK_LIBRARIES)
  foreach(program IN LISTS programs)
    # A program compiled under definitions or options of its own keeps its own parse: GCC
    # would not use the header (KFUSE_DEVICE_SCHEDULE_ON_HOST, PETSc's _FORTIFY_SOURCE).
    # Data paths do not count.
    get_target_property(definitions ${program} COMPILE_DEFINITIONS)
    list(FILTER definitions EXCLUDE REGEX "^KFUSE_MATRICES_DIR=")
    get_target_property(options ${program} COMPILE_OPTIONS)
    set(shares OFF)
    if(definitions STREQUAL common_definitions AND NOT options)
      set(shares ON)
    endif()
    get_target_property(libraries ${program} LINK_LIBRARIES)
    foreach(library IN LISTS libraries)
      if(TARGET ${library} AND NOT library IN_LIST common_libraries)
        get_target_property(library_options ${library} INTERFACE_COMPILE_OPTIONS)
        get_target_property(library_definitions ${library} INTERFACE_COMPILE_DEFINITIONS)
        if(library_options OR library_definitions)
          set(shares OFF)
        endif()
      endif()
    endforeach()
    if(shares)
      target_precompile_headers(${program} REUSE_FROM kfuse_test_pch)
    endif()
  endforeach()
endfunction()
