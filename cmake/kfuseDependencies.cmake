# kfuse's dependencies, in one place for the build and for consumers.
#
# Included by CMakeLists.txt (with the real target `kfuse`) and by the installed
# kfuseConfig.cmake (with the imported target `kfuse::kfuse`, after kfuseTargets.cmake).
# It finds Kokkos, Kokkos Kernels, Boost (Hana is header-only) and, when KFUSE_ENABLE_MPI,
# MPI, and links them to that target. Every difference between Debian's Trilinos packages
# and upstream Kokkos / Kokkos Kernels installs is handled here and nowhere else.
#
# Why the links are attached here and not exported: kfuseTargets.cmake is written once, at
# install time, but the consumer's Kokkos may be another one (Debian's names its Kokkos
# Kernels target `trilinos_kokkoskernels`, upstream `Kokkos::kokkoskernels`). So the build
# links through $<BUILD_INTERFACE:...> (which install(EXPORT) drops), and the package
# configuration links the consumer's own targets to the imported kfuse::kfuse.
#
# In:  KFUSE_DEPENDENCIES_TARGET  kfuse (build) or kfuse::kfuse (package configuration)
#      KFUSE_ENABLE_MPI           ON: find MPI and link MPI::MPI_CXX; OFF: no MPI at all
# Out: the target's INTERFACE_LINK_LIBRARIES; KFUSE_KOKKOSKERNELS_TARGET (the name found).
#      In a package configuration a missing dependency sets kfuse_FOUND to FALSE (with
#      kfuse_NOT_FOUND_MESSAGE) and returns, as find_dependency() does.

if(NOT TARGET ${KFUSE_DEPENDENCIES_TARGET})
  message(FATAL_ERROR "kfuseDependencies.cmake: set KFUSE_DEPENDENCIES_TARGET to an existing "
                      "target (kfuse or kfuse::kfuse) before including this file")
endif()
get_target_property(_kfuse_imported ${KFUSE_DEPENDENCIES_TARGET} IMPORTED)

include(CMakeFindDependencyMacro)

# find_dependency() in a package configuration (forwards QUIET/REQUIRED, reports failure
# through kfuse_FOUND), find_package(... REQUIRED) in the build.
macro(_kfuse_find_package)
  if(_kfuse_imported)
    find_dependency(${ARGN})
  else()
    find_package(${ARGN} REQUIRED)
  endif()
endmacro()

macro(_kfuse_dependency_error _kfuse_message)
  if(_kfuse_imported)
    set(kfuse_NOT_FOUND_MESSAGE "${_kfuse_message}")
    set(kfuse_FOUND FALSE)
    return()
  else()
    message(FATAL_ERROR "${_kfuse_message}")
  endif()
endmacro()

# --- Kokkos ------------------------------------------------------------------
# No version in the call: upstream Kokkos accepts only its own major version (3.x or 4.x).
_kfuse_find_package(Kokkos)
if(Kokkos_FOUND AND Kokkos_VERSION VERSION_LESS 3.4)
  _kfuse_dependency_error("kfuse needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} in ${Kokkos_DIR}")
endif()

# Debian (libtrilinos-kokkos-dev, a TriBITS-generated configuration): Kokkos::kokkos names
# <prefix>/lib/include, which does not exist, and CMake refuses to generate for an imported
# target with a missing include directory. The headers are in Kokkos_INCLUDE_DIRS
# (/usr/include/trilinos). Fix the imported target itself, so that everything linking
# Kokkos::kokkos (kfuse, benchmarks, users) gets them, as SYSTEM includes like every
# imported target's: Kokkos' own warnings never show in our builds.
set(_kfuse_kokkos_includes "")
if(TARGET Kokkos::kokkos)
  get_target_property(_kfuse_kokkos_includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
endif()
if(_kfuse_kokkos_includes)
  set(_kfuse_kept_includes "")
  set(_kfuse_dropped_include OFF)
  foreach(_kfuse_dir IN LISTS _kfuse_kokkos_includes)
    if(_kfuse_dir MATCHES [[\$<]] OR EXISTS "${_kfuse_dir}")
      list(APPEND _kfuse_kept_includes "${_kfuse_dir}")
    else()
      set(_kfuse_dropped_include ON)
    endif()
  endforeach()
  if(_kfuse_dropped_include)
    foreach(_kfuse_dir IN LISTS Kokkos_INCLUDE_DIRS)
      get_filename_component(_kfuse_dir "${_kfuse_dir}" ABSOLUTE)
      list(APPEND _kfuse_kept_includes "${_kfuse_dir}")
    endforeach()
    list(REMOVE_DUPLICATES _kfuse_kept_includes)
    set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                 "${_kfuse_kept_includes}")
  endif()
endif()

# --- Kokkos Kernels ------------------------------------------------------------
# Looked for beside the Kokkos found (its lib/cmake directory) before the system's
# directories: a consumer that sets only Kokkos_ROOT to an upstream install must not get
# Debian's Kokkos Kernels (/usr/lib/<arch>/cmake), which is built on Debian's Kokkos.
get_filename_component(_kfuse_kokkos_cmake_dir "${Kokkos_DIR}" DIRECTORY)
_kfuse_find_package(KokkosKernels HINTS "${_kfuse_kokkos_cmake_dir}")
if(TARGET Kokkos::kokkoskernels)  # upstream installs
  set(KFUSE_KOKKOSKERNELS_TARGET Kokkos::kokkoskernels)
elseif(TARGET trilinos_kokkoskernels)  # Debian: a plain name, and no include directories
  set(KFUSE_KOKKOSKERNELS_TARGET trilinos_kokkoskernels)
  get_target_property(_kfuse_kk_includes trilinos_kokkoskernels INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _kfuse_kk_includes AND KokkosKernels_INCLUDE_DIRS)
    set(_kfuse_kk_includes "")
    foreach(_kfuse_dir IN LISTS KokkosKernels_INCLUDE_DIRS)
      get_filename_component(_kfuse_dir "${_kfuse_dir}" ABSOLUTE)
      list(APPEND _kfuse_kk_includes "${_kfuse_dir}")
    endforeach()
    set_property(TARGET trilinos_kokkoskernels PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                 "${_kfuse_kk_includes}")
  endif()
elseif(KokkosKernels_FOUND)  # (when not found, find_package has said so already)
  _kfuse_dependency_error(
    "kfuse: KokkosKernels (${KokkosKernels_DIR}) defines neither Kokkos::kokkoskernels nor trilinos_kokkoskernels")
endif()

# A mismatched pair links two Kokkos cores into one program. Debian's Kokkos Kernels (no
# version file) belongs to the Kokkos beside it; an upstream one to a Kokkos of its major
# version (Kokkos Kernels 4.7 runs on Kokkos 4.6, say).
get_filename_component(_kfuse_kk_cmake_dir "${KokkosKernels_DIR}" DIRECTORY)
set(_kfuse_kk_mismatch "")
if(KFUSE_KOKKOSKERNELS_TARGET STREQUAL "trilinos_kokkoskernels")
  get_filename_component(_kfuse_kk_cmake_dir "${_kfuse_kk_cmake_dir}" REALPATH)
  get_filename_component(_kfuse_kokkos_cmake_dir "${_kfuse_kokkos_cmake_dir}" REALPATH)
  if(NOT _kfuse_kk_cmake_dir STREQUAL _kfuse_kokkos_cmake_dir)
    set(_kfuse_kk_mismatch "Debian's Trilinos Kokkos Kernels (built on the Kokkos in ${_kfuse_kk_cmake_dir})")
  endif()
elseif(KokkosKernels_FOUND AND KokkosKernels_VERSION)
  string(REGEX MATCH "^[0-9]+" _kfuse_kk_major "${KokkosKernels_VERSION}")
  string(REGEX MATCH "^[0-9]+" _kfuse_kokkos_major "${Kokkos_VERSION}")
  if(NOT _kfuse_kk_major STREQUAL _kfuse_kokkos_major)
    set(_kfuse_kk_mismatch "Kokkos Kernels ${KokkosKernels_VERSION}")
  endif()
endif()
if(_kfuse_kk_mismatch)
  _kfuse_dependency_error(
    "kfuse: ${_kfuse_kk_mismatch} in ${KokkosKernels_DIR} does not match Kokkos ${Kokkos_VERSION} "
    "in ${Kokkos_DIR}; set KokkosKernels_ROOT to the Kokkos Kernels installed with that Kokkos "
    "(the same major version), or Kokkos_ROOT to the Kokkos it was built on")
endif()

# --- Boost (Hana) --------------------------------------------------------------
_kfuse_find_package(Boost 1.66)

# --- MPI -------------------------------------------------------------------------
if(KFUSE_ENABLE_MPI)
  # The C API only: the deprecated C++ bindings add nothing but compile time.
  if(NOT DEFINED MPI_CXX_SKIP_MPICXX)
    set(MPI_CXX_SKIP_MPICXX ON)
  endif()
  _kfuse_find_package(MPI COMPONENTS CXX)
endif()

# --- Link ----------------------------------------------------------------------
set(_kfuse_links Kokkos::kokkos ${KFUSE_KOKKOSKERNELS_TARGET} Boost::headers)
if(KFUSE_ENABLE_MPI)
  list(APPEND _kfuse_links MPI::MPI_CXX)
endif()
if(_kfuse_imported)
  # A second find_package(kfuse) in the same directory finds the imported target already
  # linked.
  get_target_property(_kfuse_linked ${KFUSE_DEPENDENCIES_TARGET} INTERFACE_LINK_LIBRARIES)
  if(NOT "Kokkos::kokkos" IN_LIST _kfuse_linked)
    target_link_libraries(${KFUSE_DEPENDENCIES_TARGET} INTERFACE ${_kfuse_links})
  endif()
else()
  foreach(_kfuse_link IN LISTS _kfuse_links)
    target_link_libraries(${KFUSE_DEPENDENCIES_TARGET} INTERFACE $<BUILD_INTERFACE:${_kfuse_link}>)
  endforeach()
endif()

unset(_kfuse_imported)
unset(_kfuse_kokkos_includes)
unset(_kfuse_kept_includes)
unset(_kfuse_dropped_include)
unset(_kfuse_kk_includes)
unset(_kfuse_kokkos_cmake_dir)
unset(_kfuse_kk_cmake_dir)
unset(_kfuse_kk_mismatch)
unset(_kfuse_kk_major)
unset(_kfuse_kokkos_major)
unset(_kfuse_dir)
unset(_kfuse_links)
unset(_kfuse_link)
unset(_kfuse_linked)
