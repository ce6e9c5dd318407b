#!/usr/bin/env bash
# Fails on an extended (host-device) lambda in a header of kfuse's own: KOKKOS_LAMBDA,
# KOKKOS_CLASS_LAMBDA, or a lambda marked KOKKOS_FUNCTION or __host__ __device__. nvcc keeps
# the copy function of each such lambda in a per-translation-unit variable; when several
# translation units compile the same inline function or template, the linker keeps one
# unit's code, whose variable may never have been set, and a copy of the lambda calls a null
# pointer (docs/backends.md, "Lambdas in headers"). Headers use functors.
#
#   bash tests/lint/header_lambdas.sh [SOURCE-DIR]  (default: the repository of this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
pattern='KOKKOS(_CLASS)?_LAMBDA|\][[:space:]]*(KOKKOS_(INLINE_)?FUNCTION|__host__[[:space:]]+__device__|__device__[[:space:]]+__host__)'

# The rule must catch these, so that it cannot stop matching and pass forever.
for sample in 'b.fill_with(KOKKOS_LAMBDA(long k) { return k; });' \
              'auto f = [=] KOKKOS_FUNCTION(long i) { return i; };' \
              'auto g = [=] __host__ __device__ (int i) { return i; };'; do
  grep -Eq -- "$pattern" <<<"$sample" ||
    { echo "header_lambdas: the rule does not catch '$sample'" >&2; exit 1; }
done

files=$(cd "$root" && find include tests examples benchmarks -type f \( -name '*.hpp' -o -name '*.h' \) | sort)
[ -n "$files" ] || { echo "header_lambdas: no headers under $root" >&2; exit 1; }
# shellcheck disable=SC2086  # file names without spaces, one per word
if hits=$(cd "$root" && grep -En -- "$pattern" $files); then
  printf 'header_lambdas: extended lambdas in headers (write a functor):\n%s\n' "$hits" >&2
  exit 1
fi
echo "header_lambdas: $(wc -l <<<"$files") headers, no extended lambda"
