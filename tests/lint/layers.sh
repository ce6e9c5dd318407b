#!/usr/bin/env bash
# Fails when a header of kfuse includes a header of a higher layer (docs/architecture.md §1):
#   core < dist < array, sparse < expr < plan < exec < program < io, solvers
# A header may include its own layer and lower ones; array and sparse do not include each
# other, nor do io and solvers.
#
#   bash tests/lint/layers.sh [SOURCE-DIR]  (default: the repository of this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

rank() {
  case $1 in
    core) echo 0 ;; dist) echo 1 ;; array | sparse) echo 2 ;; expr) echo 3 ;;
    plan) echo 4 ;; exec) echo 5 ;; program) echo 6 ;; io | solvers) echo 7 ;; *) echo -1 ;;
  esac
}
# Layer `from` may include layer `to`.
allowed() {
  local from=$1 to=$2
  [ "$from" = "$to" ] && return 0
  [ "$(rank "$to")" -ge 0 ] || return 1
  [ "$(rank "$to")" -lt "$(rank "$from")" ]
}

# The rule must reject these, so that it cannot stop checking and pass forever.
for bad in "dist array" "array sparse" "expr exec" "exec program" "io solvers" "core dist" "plan nowhere"; do
  # shellcheck disable=SC2086  # two words: from, to
  if allowed $bad; then echo "layers: the rule lets '${bad% *}' include '${bad#* }'" >&2; exit 1; fi
done

cd "$root/include/kfuse"
layers=$(find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
violations=() headers=0
for layer in $layers; do
  [ "$(rank "$layer")" -ge 0 ] || { echo "layers: $layer/ is not in the layer order" >&2; exit 1; }
  for f in "$layer"/*.hpp; do
    headers=$((headers + 1))
    while IFS= read -r to; do
      allowed "$layer" "$to" || violations+=("$f includes kfuse/$to/")
    done < <(grep -o '#include "kfuse/[a-z_]*/' "$f" | cut -d/ -f2 | sort -u)
  done
done
if ((${#violations[@]} > 0)); then
  printf 'layers: a header includes a higher layer (docs/architecture.md §1):\n' >&2
  printf '  %s\n' "${violations[@]}" >&2
  exit 1
fi
echo "layers: $headers headers in $(wc -w <<<"$layers") layers, each including only its own and lower ones"
