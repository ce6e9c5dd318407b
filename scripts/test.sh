#!/usr/bin/env bash
# Builds kfuse and runs its tests, in named and timed stages. CI runs this (.ci/run).
#
#   scripts/test.sh                       install what is missing, then the default stages
#   KFUSE_STAGES="serial asan" scripts/test.sh
#   JOBS=2 scripts/test.sh                build and ctest parallelism (default: nproc)
#   KFUSE_WERROR=ON scripts/test.sh       warnings are errors in kfuse's own targets
#
# Stages: serial (default; Kokkos Serial from Debian, MPI tests at 1, 2 and 4 ranks),
#         nompi (KFUSE_ENABLE_MPI=OFF), asan (KFUSE_SANITIZE=ON). Build trees: build/<stage>.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/deps.sh
source scripts/lib/stage.sh

JOBS=${JOBS:-$(nproc)}
STAGES=${KFUSE_STAGES:-serial}
WERROR=${KFUSE_WERROR:-OFF}

# -O1 and little debug information: compile time stays low and the tests still run
# at a useful speed; Debug keeps assert() on.
COMMON_ARGS=(
  -DCMAKE_BUILD_TYPE=Debug
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
  -DKFUSE_WARNINGS_AS_ERRORS="$WERROR"
)

run_ctest() {  # BUILD_DIR [CTEST-ARG...]
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure --parallel "$JOBS" "$@")
}

# configure, build and ctest one build tree, each a stage of its own.
build_and_test() {  # NAME [CMAKE-ARG...]
  local name=$1
  shift
  stage "$name:configure" cmake -S . -B "build/$name" "${COMMON_ARGS[@]}" "$@"
  stage "$name:build" cmake --build "build/$name" --parallel "$JOBS"
  stage "$name:test" run_ctest "build/$name"
}

stage_serial() {
  build_and_test serial -DKFUSE_ENABLE_MPI=ON
}

stage_nompi() {
  build_and_test nompi -DKFUSE_ENABLE_MPI=OFF
}

stage_asan() {
  build_and_test asan -DKFUSE_SANITIZE=ON -DKFUSE_BUILD_HEADER_TESTS=OFF
}

# ---------------------------------------------------------------------------------------------
# More stages go here: a function stage_<name> (usually one build_and_test call), then
# KFUSE_STAGES="serial <name>" runs it. Planned:
#   openmp  Kokkos/Kokkos Kernels with OpenMP from scripts/build-kokkos.sh:
#           build_and_test openmp -DKokkos_ROOT=... -DKokkosKernels_ROOT=...
#   nvcc    CUDA Kokkos, compile only (no GPU on CI):
#           stage nvcc:configure cmake -S . -B build/nvcc -DCMAKE_CXX_COMPILER=.../nvcc_wrapper ...
#           stage nvcc:build cmake --build build/nvcc --parallel "$JOBS"
# ---------------------------------------------------------------------------------------------

stage deps kfuse_install_packages
kfuse_mpi_environment

for name in $STAGES; do
  if ! declare -F "stage_$name" >/dev/null; then
    echo "test.sh: unknown stage '$name' (KFUSE_STAGES)" >&2
    exit 2
  fi
  "stage_$name"
done
