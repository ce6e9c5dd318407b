#!/usr/bin/env bash
# Builds kfuse and runs its tests, in named and timed stages. CI runs this (.ci/run).
#
#   scripts/test.sh                       install what is missing, then the default stages
#   KFUSE_STAGES="serial asan" scripts/test.sh
#   JOBS=2 scripts/test.sh                build and ctest parallelism (default: nproc)
#   KFUSE_WERROR=ON scripts/test.sh       warnings are errors in kfuse's own targets
#
# Stages (default: serial asan openmp nvcc gpu; build trees: build/<stage>; docs/backends.md
# has the times of each):
#   serial  Kokkos Serial from Debian; every test, MPI tests at 1, 2 and 4 ranks
#   asan    as serial, under AddressSanitizer + UndefinedBehaviorSanitizer (KFUSE_SANITIZE),
#           without the benchmarks, examples and per-header programs (no test runs them)
#           and the tests that do not run kfuse code (compile-fail, fuzz, install and
#           lint: serial ran them)
#   openmp  Kokkos OpenMP from scripts/build-kokkos.sh openmp; every test that runs kfuse
#           code (no benchmarks or examples: serial compiles them, scripts/bench.sh builds
#           its own benchmarks),
#           with OMP_NUM_THREADS=2, MPI tests at 1 and 2 ranks (ctest -LE
#           "$KFUSE_OPENMP_CTEST_EXCLUDE": 3 or 4 ranks x 2 threads on 2 cores would only
#           measure oversubscription; compile-fail, fuzz, install and lint tests do not depend
#           on the backend and ran in serial)
#   nvcc    CUDA Kokkos from scripts/build-kokkos.sh cuda, everything compiled and linked
#           with nvcc_wrapper for sm_90 (umbrella header, examples, every test program;
#           benchmarks with KFUSE_NVCC_BENCHMARKS=ON); nothing runs (no GPU). kfuse code
#           must compile without nvcc warnings (the log is checked). Each header alone is
#           serial's check (the umbrella test has every header under nvcc).
#   gpu     scripts/gpu-check.sh prepare: the half of the GPU harness that runs here (the
#           CUDA Kokkos of the nvcc stage and the headers the GPU machine lacks, gathered
#           into .gpu/ and checked against the 64 MiB its tool carries), so it cannot rot
#   nompi   KFUSE_ENABLE_MPI=OFF
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/deps.sh
source scripts/lib/stage.sh

JOBS=${JOBS:-$(nproc)}
STAGES=${KFUSE_STAGES:-serial asan openmp nvcc gpu}
WERROR=${KFUSE_WERROR:-OFF}

# -O1: compile time stays low and the tests still run at a useful speed; Debug keeps
# assert() on. No debug information (no debugger runs here, and doctest names a failing
# check's file and line itself) but in the asan stage, whose reports name lines: GCC's
# -g1 writes every function's full template name, which for Unfused programs doubles
# the compile (tests/program/test_unfused.cpp 32 -> 73 CPU s, 1.8 -> 4.9 GiB).
# Precompiled headers: the test programs and kfuse-bench parse kfuse once, the header tests
# Kokkos (ignored by nvcc; the compile_cost files still parse kfuse themselves).
COMMON_ARGS=(
  -DCMAKE_BUILD_TYPE=Debug
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1"
  -DKFUSE_WARNINGS_AS_ERRORS="$WERROR"
  -DKFUSE_PRECOMPILE_HEADERS=ON
)
# For the stages that build kfuse-bench: its workload files compiled whole, not once per
# variant (the compile table is scripts/bench.sh's).
BENCH_ARGS=(-DKFUSE_BENCH_SPLIT_PARTS=OFF)

run_ctest() {  # BUILD_DIR [CTEST-ARG...]
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure --parallel "$JOBS" "$@")
}

# configure, build and ctest one build tree, each a stage of its own.
build_and_test() {  # NAME [CMAKE-ARG...] [-- CTEST-ARG...]
  local name=$1 cmake_args=() ctest_args=()
  shift
  while (($#)) && [[ $1 != -- ]]; do
    cmake_args+=("$1")
    shift
  done
  (($#)) && shift
  ctest_args=("$@")
  stage "$name:configure" cmake -S . -B "build/$name" "${COMMON_ARGS[@]}" "${cmake_args[@]}"
  stage "$name:build" cmake --build "build/$name" --parallel "$JOBS"
  stage "$name:test" run_ctest "build/$name" "${ctest_args[@]}"
}

# Labels of the tests that do not run kfuse code, whatever the backend: the serial stage
# runs them, the others leave them out (a ctest -LE alternation).
BACKEND_INDEPENDENT='compile_fail|fuzz|install|lint'

# No examples in the tree: the install test builds every one against the installed
# package, with this build's compiler and flags, and runs it (a second build of them here
# cost about 160 CPU s and checked nothing more).
stage_serial() {
  build_and_test serial -DKFUSE_ENABLE_MPI=ON -DKFUSE_BUILD_EXAMPLES=OFF "${BENCH_ARGS[@]}"
}

stage_nompi() {
  build_and_test nompi -DKFUSE_ENABLE_MPI=OFF "${BENCH_ARGS[@]}"
}

# The fuzz target (tests/fuzz, built by clang whatever the compiler) is built and run in
# the serial stage only.
NO_FUZZ=(-DKFUSE_FUZZ_CXX_WORKS=OFF)

# Every test that runs kfuse code under AddressSanitizer and UndefinedBehaviorSanitizer;
# the benchmarks, examples and per-header programs are left out (they add build time and
# no code the tests miss).
stage_asan() {
  build_and_test asan -DKFUSE_ENABLE_MPI=ON -DKFUSE_SANITIZE=ON -DKFUSE_BUILD_HEADER_TESTS=OFF \
    -DKFUSE_BUILD_BENCHMARKS=OFF -DKFUSE_BUILD_EXAMPLES=OFF "${NO_FUZZ[@]}" \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -- -LE "^($BACKEND_INDEPENDENT)\$"
}

# Labels of the tests the openmp stage leaves out (a ctest -LE regular expression).
OPENMP_CTEST_EXCLUDE=${KFUSE_OPENMP_CTEST_EXCLUDE:-^(np3|np4|$BACKEND_INDEPENDENT)\$}

run_ctest_openmp() {  # BUILD_DIR [CTEST-ARG...]
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false run_ctest "$@"
}

stage_openmp() {
  local kokkos=$PWD/.deps/kokkos-openmp
  stage openmp:kokkos scripts/build-kokkos.sh openmp "$kokkos"
  stage openmp:configure cmake -S . -B build/openmp "${COMMON_ARGS[@]}" -DKFUSE_ENABLE_MPI=ON \
    -DKokkos_ROOT="$kokkos" -DKokkosKernels_ROOT="$kokkos" -DKFUSE_BUILD_HEADER_TESTS=OFF \
    -DKFUSE_BUILD_BENCHMARKS=OFF -DKFUSE_BUILD_EXAMPLES=OFF "${NO_FUZZ[@]}"
  stage openmp:build cmake --build build/openmp --parallel "$JOBS"
  stage openmp:test run_ctest_openmp build/openmp -LE "$OPENMP_CTEST_EXCLUDE"
}

# nvcc's own diagnostics ("file(line): warning #550-D: ...") in kfuse's headers and
# sources; the log is written by the build step.
check_nvcc_log() {  # LOG
  local found
  found=$(grep -E '^[^ ]*/(include/kfuse|tests|examples|benchmarks)/[^(]*\([0-9]+\): (warning|error)' "$1" |
    sort -u || true)
  if [[ -n "$found" ]]; then
    printf 'nvcc diagnostics in kfuse code:\n%s\n' "$found" >&2
    return 1
  fi
  echo "no nvcc warnings in kfuse code"
}

build_nvcc() {  # BUILD_DIR LOG
  cmake --build "$1" --parallel "$JOBS" 2>&1 | tee "$2"
}

# Left out of the nvcc stage: the benchmarks, for time (about 10 minutes more on 2 cores;
# KFUSE_NVCC_BENCHMARKS=ON builds them), and the programs in KFUSE_NVCC_SKIP (target
# names; empty, the default: build everything).
NVCC_BENCHMARKS=${KFUSE_NVCC_BENCHMARKS:-OFF}
NVCC_SKIP=${KFUSE_NVCC_SKIP-}

stage_nvcc() {
  local kokkos=$PWD/.deps/kokkos-cuda bench_args=()
  [[ $NVCC_BENCHMARKS == ON ]] && bench_args=("${BENCH_ARGS[@]}")
  stage nvcc:kokkos scripts/build-kokkos.sh cuda "$kokkos"
  # nvcc_wrapper needs nvcc: on PATH, or /usr/local/cuda (see scripts/build-kokkos.sh).
  stage nvcc:configure cmake -S . -B build/nvcc "${COMMON_ARGS[@]}" -DKFUSE_ENABLE_MPI=ON \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DKokkos_ROOT="$kokkos" \
    -DKokkosKernels_ROOT="$kokkos" -DKFUSE_BUILD_BENCHMARKS="$NVCC_BENCHMARKS" "${NO_FUZZ[@]}" \
    "${bench_args[@]}" -DKFUSE_BUILD_HEADER_TESTS=OFF \
    -DKFUSE_SKIP_TARGETS="${NVCC_SKIP// /;}"
  stage nvcc:build build_nvcc build/nvcc build/nvcc/build.log
  stage nvcc:warnings check_nvcc_log build/nvcc/build.log
}

stage_gpu() {
  stage gpu:prepare scripts/gpu-check.sh prepare
}

# ---------------------------------------------------------------------------------------------
# More stages go here: a function stage_<name> (usually one build_and_test call), then
# KFUSE_STAGES="serial <name>" runs it.
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
