#!/usr/bin/env bash
# Fails on a use, in kfuse's own sources, of a Kokkos 3 API that Kokkos 4 removed, or on a
# Kokkos version test outside include/kfuse/core/kokkos_compat.hpp, which keeps every
# difference between the versions (use kfuse::detail::math::sin, KFUSE_VOLATILE_JOIN, ...).
#
#   bash tests/lint/kokkos4_api.sh [SOURCE-DIR]     (default: the repository of this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
compat=include/kfuse/core/kokkos_compat.hpp

# Each rule: an extended regular expression, then (after a tab) a line it must catch, so that
# a rule that stops matching anything fails here instead of passing forever.
rules=$(cat <<'RULES'
Kokkos::Experimental::(abs|fabs|fmod|remainder|fmin|fmax|fdim|exp|exp2|expm1|log|log10|log2|log1p|pow|sqrt|cbrt|hypot|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|erf|erfc|tgamma|lgamma|ceil|floor|trunc|round|nearbyint|logb|nextafter|copysign|isfinite|isinf|isnan|signbit)[[:space:]]*\(	return Kokkos::Experimental::sin(x);
Kokkos::Experimental::[a-z0-9_]+_v\b	double c = Kokkos::Experimental::pi_v<double>;
Kokkos::InitArguments	Kokkos::InitArguments args;
join[[:space:]]*\([^)]*volatile	void join(volatile T& a, const volatile T& b) const {
KOKKOS_VERSION|KFUSE_KOKKOS_4	#if KOKKOS_VERSION >= 40000
\.(dimension_[0-7]|ptr_on_device)[[:space:]]*\(	n = v.dimension_0();
Kokkos::Impl::Timer	Kokkos::Impl::Timer t;
RULES
)

failed=0
while IFS=$'\t' read -r pattern sample; do
  if ! grep -Eq -- "$pattern" <<<"$sample"; then
    echo "kokkos4_api: rule '$pattern' does not catch its own example '$sample'" >&2
    failed=1
  fi
done <<<"$rules"

files=$(cd "$root" && find include tests examples benchmarks -type f \
          \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.cu' \) ! -path "$compat" |
        sort)
[ -n "$files" ] || { echo "kokkos4_api: no sources under $root" >&2; exit 1; }

while IFS=$'\t' read -r pattern _; do
  # shellcheck disable=SC2086  # file names without spaces, one per word
  if hits=$(cd "$root" && grep -En -- "$pattern" $files); then
    printf 'kokkos4_api: Kokkos 3-only API or version test (keep it in %s):\n%s\n' \
      "$compat" "$hits" >&2
    failed=1
  fi
done <<<"$rules"

[ "$failed" = 0 ] && echo "kokkos4_api: $(wc -l <<<"$files") files, no Kokkos 3-only API outside $compat"
exit "$failed"
