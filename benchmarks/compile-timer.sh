#!/usr/bin/env bash
# Compiler launcher of kfuse-bench (benchmarks/CMakeLists.txt): runs the compile command and
# records its time in OUTDIR/<source file name>.seconds as "<cpu seconds> <wall seconds>"
# (CPU = user + system of the compiler: on a loaded machine it varies much less than wall).
#   compile-timer.sh OUTDIR COMPILER ARGS...   (the source file follows -c)
out=$1
shift
source=""
previous=""
for arg in "$@"; do
  if [[ "$previous" == "-c" ]]; then source=$arg; fi
  previous=$arg
done
times=$(mktemp)
TIMEFORMAT='%3R %3U %3S'
{ time "$@" 2>&3; } 3>&2 2>"$times"
status=$?
if [[ "$status" -eq 0 && -n "$source" ]]; then
  read -r wall user sys <"$times"
  awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f %.2f\n", u + s, w }' \
    >"$out/$(basename "$source").seconds" 2>/dev/null || true
fi
rm -f "$times"
exit "$status"
