#!/usr/bin/env bash
# Compiler launcher of kfuse-bench (benchmarks/CMakeLists.txt): runs the compile command and
# records what it cost in OUTDIR/<source file name>.seconds as
# "<cpu seconds> <wall seconds> <peak MiB>": CPU = user + system of the compiler (on a loaded
# machine it varies much less than wall), peak = its largest resident set (GNU time; 0 where
# /usr/bin/time is missing). OUTDIR/<source file name>.command keeps the compile (the
# working directory, then one argument a line), so that the compile_cost test can compile
# a file again (compile-cost.cmake).
#   compile-timer.sh OUTDIR COMPILER ARGS...   (the source file follows -c)
out=$1
shift
source=""
object=""
syntax_only=0
previous=""
for arg in "$@"; do
  if [[ "$previous" == "-c" ]]; then source=$arg; fi
  if [[ "$previous" == "-o" ]]; then object=$arg; fi
  if [[ "$arg" == "-fsyntax-only" ]]; then syntax_only=1; fi
  previous=$arg
done
times=$(mktemp)
if [[ -x /usr/bin/time ]]; then
  /usr/bin/time -f '%e %U %S %M' -o "$times" "$@"
  status=$?
  read -r wall user sys peak_kib <"$times"
else
  TIMEFORMAT='%3R %3U %3S'
  { time "$@" 2>&3; } 3>&2 2>"$times"
  status=$?
  read -r wall user sys <"$times"
  peak_kib=0
fi
if [[ "$status" -eq 0 && -n "$source" ]]; then
  awk -v w="$wall" -v u="$user" -v s="$sys" -v m="$peak_kib" \
    'BEGIN { printf "%.2f %.2f %.0f\n", u + s, w, m / 1024 }' \
    >"$out/$(basename "$source").seconds" 2>/dev/null || true
  printf '%s\n' "$PWD" "$@" >"$out/$(basename "$source").command" 2>/dev/null || true
fi
rm -f "$times"
# A compile only checked (-fsyntax-only, the compile samples of a test build) writes no
# object: an empty one tells the build it is done.
if [[ "$status" -eq 0 && "$syntax_only" -eq 1 && -n "$object" ]]; then
  : >"$object"
fi
exit "$status"
