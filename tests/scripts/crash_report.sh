#!/usr/bin/env bash
# scripts/crash-report.c, the GPU harness's backtrace where there is no gdb: a program that
# calls a null function pointer (no frame to unwind from) must be reported with the caller's
# return address, which addr2line names, and must still die of its signal.
#
#   bash tests/scripts/crash_report.sh [SOURCE-DIR]  (default: the repository of this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cc -Wall -Wextra -Werror -shared -fPIC -O1 -o "$work/crash-report.so" "$root/scripts/crash-report.c" -ldl
cat > "$work/null_call.c" <<'C'
typedef void (*callback)(void);
__attribute__((noinline)) void call_through(callback f) { f(); __asm__ volatile(""); }
int main(int argc, char** argv) {
  (void)argv;
  call_through(argc > 99 ? (callback)main : 0);
  return 0;
}
C
cc -O1 -o "$work/null_call" "$work/null_call.c"

rc=0
LD_PRELOAD=$work/crash-report.so "$work/null_call" 2> "$work/report.txt" || rc=$?
cat "$work/report.txt"
[ "$rc" = 139 ] || { echo "crash_report: exit $rc, not 139 (SIGSEGV)" >&2; exit 1; }
grep -q '^crash-report: signal 11 .* pc 0x0,' "$work/report.txt" ||
  { echo "crash_report: no 'signal 11 ... pc 0x0' line" >&2; exit 1; }
# The first stack word into the program is call_through's return address.
offset=$(awk '$2 == "stack" && $3 ~ /null_call$/ { print $4; exit }' "$work/report.txt")
[ -n "$offset" ] || { echo "crash_report: no stack line in the program" >&2; exit 1; }
caller=$(addr2line -f -e "$work/null_call" "$offset" | head -n1)
[ "$caller" = call_through ] || { echo "crash_report: $offset is in '$caller', not call_through" >&2; exit 1; }
echo "crash_report: the null call was reported from $caller ($offset)"
