#!/usr/bin/env bash
# Fault injection for checkpoints: a save killed (SIGKILL) in the middle of writing
# leaves the previous checkpoint complete and loadable; the next save succeeds and
# leaves no temporary file behind.
#
#   checkpoint_killed.sh TOOL [LAUNCHER...]   TOOL: tests/io/checkpoint_tool.cpp's
#                                             program; LAUNCHER: e.g. mpiexec -n 2
set -euo pipefail
tool=$1
shift
launcher=("$@")
launch() { "${launcher[@]}" "$tool" "$@"; }

path=killed.ckpt
rm -f "$path" "$path.tmp"
launch save "$path" 1 >/dev/null

# Kill a run of saves while its temporary file is being written; a kill that falls
# between two saves (no temporary file left), or after a temporary file was complete
# (it loads), is tried again.
for attempt in $(seq 20); do
  rm -f "$path.tmp"  # what an earlier attempt left
  setsid "${launcher[@]}" "$tool" saves "$path" >/dev/null 2>&1 &
  leader=$!
  for _ in $(seq 3000); do  # up to 30 s for data to appear (the header comes last)
    [[ -s "$path.tmp" ]] && break
    sleep 0.01
  done
  # The whole session: mpiexec puts each rank in a process group of its own.
  pkill -KILL -s "$leader" || true
  wait "$leader" 2>/dev/null || true
  for _ in $(seq 100); do  # up to 10 s (a rank in the middle of a sync dies late)
    ps -s "$leader" -o stat= | grep -qv '^Z' || break  # zombies are dead, not yet reaped
    sleep 0.1
  done
  if ps -s "$leader" -o stat= | grep -qv '^Z'; then
    echo "FAIL: processes of the killed save are still running" >&2
    pkill -KILL -s "$leader" || true
    exit 1
  fi
  if [[ ! -e "$path.tmp" ]]; then
    echo "attempt $attempt: the kill fell between two saves; again"
  elif launch check "$path.tmp" >/dev/null 2>&1; then
    echo "attempt $attempt: the kill fell after a temporary file was complete; again"
  else
    torn=1
    break
  fi
done
[[ -n "${torn:-}" ]] || { echo "FAIL: no save was killed mid-write in 20 attempts" >&2; exit 1; }
echo "killed mid-write: $path.tmp left with $(stat -c %s "$path.tmp") bytes, not loadable"

# The previous checkpoint is complete: every cell holds the value of one whole save.
value=$(launch check "$path")
echo "the previous checkpoint loads: value $value"

# The next save replaces the temporary file and publishes; nothing is left behind.
launch save "$path" 7 >/dev/null
[[ ! -e "$path.tmp" ]] || { echo "FAIL: $path.tmp is still there after a save" >&2; exit 1; }
value=$(launch check "$path")
[[ "$value" == 7 ]] || { echo "FAIL: loaded $value after saving 7" >&2; exit 1; }
echo "the next save leaves no temporary file and loads: value $value"
