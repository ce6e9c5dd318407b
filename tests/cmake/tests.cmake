# Checks of kfuse's CMake package logic (configure only; label cmake).
kfuse_add_script_test(NAME cmake.kokkos_pairing SCRIPT cmake/kokkos_pairing.sh
                      ARGS "${PROJECT_SOURCE_DIR}" "${Kokkos_DIR}" "${CMAKE_CXX_COMPILER}"
                      TIMEOUT 120 LABELS cmake)
