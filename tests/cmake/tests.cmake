# Checks of kfuse's CMake package logic (configure only; label cmake).
string(REPLACE ";" ":" _kfuse_prefix_path "${CMAKE_PREFIX_PATH}")
kfuse_add_script_test(NAME cmake.kokkos_pairing SCRIPT cmake/kokkos_pairing.sh
                      ARGS "${PROJECT_SOURCE_DIR}" "${Kokkos_DIR}" "${CMAKE_CXX_COMPILER}"
                           "${_kfuse_prefix_path}"
                      TIMEOUT 120 LABELS cmake)
