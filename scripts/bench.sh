#!/usr/bin/env bash
# Builds and runs the kfuse benchmark suite (see benchmarks/), then plots the results.
#
#   scripts/bench.sh [kfuse-bench options...]   e.g. scripts/bench.sh --workload cg
#   RANKS=4 scripts/bench.sh                     MPI ranks (default 2)
#   JOBS=2, PYTHON=/usr/bin/python3              build parallelism, plotting interpreter
#   KFUSE_BENCH_BLAS=system                      PETSc on the system's default BLAS instead
#                                                of OpenBLAS
#
# Writes results/bench.json and, with benchmarks/plot.py, the charts in results/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/deps.sh
source scripts/lib/stage.sh

JOBS=${JOBS:-$(nproc)}
RANKS=${RANKS:-2}
# Debian's interpreter, the one python3-matplotlib is installed for (PATH may lead elsewhere,
# e.g. to a pyenv shim).
PYTHON=${PYTHON:-/usr/bin/python3}

stage deps kfuse_install_packages python3-matplotlib
kfuse_mpi_environment

if [[ ! -f benchmarks/CMakeLists.txt ]]; then
  echo "bench.sh: there is no benchmarks/CMakeLists.txt yet" >&2
  exit 1
fi

stage configure cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release \
  -DKFUSE_BUILD_TESTS=OFF -DKFUSE_BUILD_EXAMPLES=OFF -DKFUSE_BUILD_BENCHMARKS=ON
stage build cmake --build build/bench --target kfuse-bench --parallel "$JOBS"

mkdir -p results
mpirun_args=(-np "$RANKS")
if ((RANKS > $(nproc))); then
  mpirun_args+=(--oversubscribe)  # timings are then not worth much
fi
# PETSc (and Kokkos Kernels' BLAS calls) on an optimised BLAS, as an expert installs it:
# Debian's OpenBLAS, for the benchmark's processes only. Debian's PETSc links the
# libblas.so.3 that update-alternatives selects, by default the unoptimised reference BLAS.
if [[ ${KFUSE_BENCH_BLAS:-openblas} == openblas ]]; then
  openblas=${KFUSE_DEPS_DIR:-$PWD/.deps}/openblas
  stage openblas kfuse_unpack_openblas "$openblas"
  blas_lib=$(kfuse_openblas_lib "$openblas")
  mpirun_args+=(-x "LD_LIBRARY_PATH=$blas_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  # OpenBLAS picks its kernels by CPU model, and falls back to its oldest (Prescott) for a
  # model it does not know, as in VMs that hide theirs: name them by the instruction set.
  if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
    if grep -qw avx512f /proc/cpuinfo; then
      OPENBLAS_CORETYPE=SkylakeX
    elif grep -qw avx2 /proc/cpuinfo; then
      OPENBLAS_CORETYPE=Haswell
    fi
  fi
  if [[ -n ${OPENBLAS_CORETYPE:-} ]]; then
    mpirun_args+=(-x "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE")
  fi
fi
# Huge pages for every variant alike: kfuse advises its own large arrays (core/view.hpp,
# advise_huge_pages); glibc's tunable advises every allocation of 2 MiB or more in the
# process (kfuse's, the hand-written code's views, the STREAM triad, PETSc's), which is
# what matters where THP is `madvise`.
if [[ ${KFUSE_HUGE_PAGES:-1} != 0 ]]; then
  mpirun_args+=(-x "GLIBC_TUNABLES=glibc.malloc.hugetlb=1${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}")
fi
stage run mpirun "${mpirun_args[@]}" build/bench/benchmarks/kfuse-bench \
  --json results/bench.json "$@"

if [[ -f benchmarks/plot.py ]]; then
  stage plot "$PYTHON" benchmarks/plot.py results/bench.json results/
fi
