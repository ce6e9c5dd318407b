# The `install` test (added by kfuse_add_install_test() in kfuseTesting.cmake):
#
#   cmake -DKFUSE_INSTALL_TEST_SETTINGS=<settings.cmake> -P kfuseInstallTest.cmake
#
# 1. installs the kfuse build tree into <work>/prefix;
# 2. configures examples/ as a project of its own that finds kfuse with find_package(kfuse)
#    in that prefix (with the build's compiler, build type, flags, warnings and Kokkos), and
#    builds it;
# 3. runs every example program (examples/<name>.cpp -> <name>), through mpiexec on
#    KFUSE_INSTALL_TEST_RANKS ranks (default 2) when kfuse was built with MPI.
# The settings file (generated) names the source, build and work directories and the
# build's settings to forward; ctest's environment (Open MPI as root) reaches the programs.
cmake_minimum_required(VERSION 3.16)

if(NOT KFUSE_INSTALL_TEST_SETTINGS OR NOT EXISTS "${KFUSE_INSTALL_TEST_SETTINGS}")
  message(FATAL_ERROR "kfuseInstallTest.cmake: pass -DKFUSE_INSTALL_TEST_SETTINGS=<file>")
endif()
include("${KFUSE_INSTALL_TEST_SETTINGS}")
if(NOT DEFINED KFUSE_INSTALL_TEST_RANKS)
  set(KFUSE_INSTALL_TEST_RANKS 2)
endif()

set(prefix "${KFUSE_WORK_DIR}/prefix")
set(build "${KFUSE_WORK_DIR}/examples")
set(run "${KFUSE_WORK_DIR}/run")
file(REMOVE_RECURSE "${prefix}" "${build}" "${run}")

set(config_args "")
if(KFUSE_CONFIG)
  set(config_args --config "${KFUSE_CONFIG}")
endif()

function(kfuse_step what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "install test: ${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${result})")
  endif()
endfunction()

# 1. Install.
kfuse_step("install" "${CMAKE_COMMAND}" --install "${KFUSE_BUILD_DIR}" --prefix "${prefix}"
           ${config_args})

# 2. Configure and build the examples against the installed package. The settings go in
# through an initial cache (-C): lists such as CMAKE_PREFIX_PATH stay intact.
set(cache "set(CMAKE_PREFIX_PATH [==[${prefix};${CMAKE_PREFIX_PATH}]==] CACHE STRING \"\")\n")
foreach(var IN ITEMS CMAKE_MAKE_PROGRAM CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_LAUNCHER
                     CMAKE_BUILD_TYPE CMAKE_CXX_FLAGS Kokkos_ROOT KokkosKernels_ROOT Kokkos_DIR
                     KokkosKernels_DIR Boost_ROOT MPI_HOME MPIEXEC_EXECUTABLE
                     KFUSE_WARNINGS_AS_ERRORS)
  if(DEFINED ${var})
    string(APPEND cache "set(${var} [==[${${var}}]==] CACHE STRING \"\")\n")
  endif()
endforeach()
if(CMAKE_BUILD_TYPE)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
  string(APPEND cache "set(CMAKE_CXX_FLAGS_${build_type} [==[${CMAKE_CXX_FLAGS_${build_type}}]==]"
                      " CACHE STRING \"\")\n")
endif()
string(APPEND cache "set(KFUSE_SANITIZE OFF CACHE BOOL \"\")\n")
file(WRITE "${KFUSE_WORK_DIR}/examples-cache.cmake" "${cache}")

set(generator_args -G "${CMAKE_GENERATOR}")
if(CMAKE_GENERATOR_PLATFORM)
  list(APPEND generator_args -A "${CMAKE_GENERATOR_PLATFORM}")
endif()
if(CMAKE_GENERATOR_TOOLSET)
  list(APPEND generator_args -T "${CMAKE_GENERATOR_TOOLSET}")
endif()
kfuse_step("configure examples" "${CMAKE_COMMAND}" -S "${KFUSE_SOURCE_DIR}/examples" -B "${build}"
           ${generator_args} -C "${KFUSE_WORK_DIR}/examples-cache.cmake")

# The examples must have used the installed package, not the source tree.
file(STRINGS "${build}/CMakeCache.txt" kfuse_dir REGEX "^kfuse_DIR:")
string(REGEX REPLACE "^kfuse_DIR:[A-Z]+=" "" kfuse_dir "${kfuse_dir}")
get_filename_component(real_prefix "${prefix}" REALPATH)
get_filename_component(real_kfuse_dir "${kfuse_dir}" REALPATH)
string(FIND "${real_kfuse_dir}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "install test: examples found kfuse in '${kfuse_dir}', not in '${prefix}'")
endif()

cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
if(DEFINED ENV{CMAKE_BUILD_PARALLEL_LEVEL})
  set(cores "$ENV{CMAKE_BUILD_PARALLEL_LEVEL}")
endif()
kfuse_step("build examples" "${CMAKE_COMMAND}" --build "${build}" --parallel ${cores}
           ${config_args})

# 3. Run every example.
file(GLOB sources "${KFUSE_SOURCE_DIR}/examples/*.cpp")
list(SORT sources)
set(failed "")
foreach(source IN LISTS sources)
  get_filename_component(name "${source}" NAME_WE)
  set(program "${build}/${name}")
  if(NOT EXISTS "${program}" AND KFUSE_CONFIG)
    set(program "${build}/${KFUSE_CONFIG}/${name}")
  endif()
  if(NOT EXISTS "${program}")
    message(SEND_ERROR "install test: examples/${name}.cpp built no program ${build}/${name}")
    list(APPEND failed ${name})
    continue()
  endif()
  set(command "${program}")
  if(KFUSE_ENABLE_MPI)
    set(command "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${KFUSE_INSTALL_TEST_RANKS}
                ${KFUSE_MPIEXEC_FLAGS} ${MPIEXEC_PREFLAGS} "${program}" ${MPIEXEC_POSTFLAGS})
  endif()
  file(MAKE_DIRECTORY "${run}/${name}")
  string(REPLACE ";" " " shown "${command}")
  message(STATUS "install test: run ${name}: ${shown}")
  execute_process(COMMAND ${command} WORKING_DIRECTORY "${run}/${name}" TIMEOUT 600
                  RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(SEND_ERROR "install test: example ${name} failed (${result})")
    list(APPEND failed ${name})
  endif()
endforeach()

list(LENGTH sources count)
if(failed)
  message(FATAL_ERROR "install test: examples failed: ${failed}")
endif()
message(STATUS "install test: installed kfuse, built and ran ${count} example(s) against it")
