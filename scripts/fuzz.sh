#!/usr/bin/env bash
# Fuzzes the Matrix Market parser (kfuse::detail::parse_matrix_market) with libFuzzer.
#
#   scripts/fuzz.sh [SECONDS] [LIBFUZZER-ARG...]     default 60 seconds
#   FUZZ_CXX=clang++-14 scripts/fuzz.sh 600 -jobs=2
#
# Builds tests/fuzz/fuzz_matrix_market.cpp with clang (-fsanitize=fuzzer,address,undefined)
# into build/fuzz/, grows the corpus build/fuzz/corpus from the seeds in tests/fuzz/corpus,
# and leaves any input that crashes, hangs or leaks in build/fuzz/ (crash-*, timeout-*,
# leak-*); replay one with `build/fuzz/fuzz_matrix_market build/fuzz/crash-...`. Installs
# Debian's clang and libclang-rt-dev (libFuzzer) when missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/deps.sh

seconds=${1:-60}
shift $(($# > 0 ? 1 : 0))

if [[ -z "${FUZZ_CXX:-}" ]] && ! command -v clang++ >/dev/null; then
  kfuse_install_packages clang libclang-rt-dev
fi
cxx=${FUZZ_CXX:-clang++}
out=build/fuzz
mkdir -p "$out/corpus"

"$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Wall -Wextra -Wpedantic -Iinclude tests/fuzz/fuzz_matrix_market.cpp -o "$out/fuzz_matrix_market"

exec "$out/fuzz_matrix_market" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -dict=tests/fuzz/matrix_market.dict -artifact_prefix="$out/" -print_final_stats=1 "$@" \
  "$out/corpus" tests/fuzz/corpus
