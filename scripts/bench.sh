#!/usr/bin/env bash
# Builds and runs the kfuse benchmark suite (see benchmarks/), then plots the results.
#
#   scripts/bench.sh [kfuse-bench options...]   e.g. scripts/bench.sh --workload cg
#   RANKS=4 scripts/bench.sh                     MPI ranks (default 2)
#   JOBS=2, PYTHON=/usr/bin/python3              build parallelism, plotting interpreter
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
stage run mpirun "${mpirun_args[@]}" build/bench/benchmarks/kfuse-bench \
  --json results/bench.json "$@"

if [[ -f benchmarks/plot.py ]]; then
  stage plot "$PYTHON" benchmarks/plot.py results/bench.json results/
fi
