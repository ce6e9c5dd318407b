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
# between two saves (no temporary file left) is tried again.
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  setsid "${launcher[@]}" "$tool" saves "$path" >/dev/null 2>&1 &
  leader=$!
  for _ in $(seq 600); do  # up to 30 s for the file to appear
    [[ -s "$path.tmp" ]] && break
    sleep 0.05
  done
  sleep "0.0$((RANDOM % 10))"
  # The whole session: mpiexec puts each rank in a process group of its own.
  pkill -KILL -s "$leader" || true
  wait "$leader" 2>/dev/null || true
  sleep 0.2
  if ps -s "$leader" -o stat= | grep -qv '^Z'; then  # zombies are dead, not yet reaped
    echo "FAIL: processes of the killed save are still running" >&2
    pkill -KILL -s "$leader" || true
    exit 1
  fi
  [[ -e "$path.tmp" ]] && break
  echo "attempt $attempt: the kill fell between two saves; again"
done
[[ -e "$path.tmp" ]] || { echo "FAIL: no save was killed mid-write in 10 attempts" >&2; exit 1; }
echo "killed mid-write: $path.tmp left with $(stat -c %s "$path.tmp") bytes"

# The previous checkpoint is complete: every cell holds the value of one whole save.
value=$(launch check "$path")
echo "the previous checkpoint loads: value $value"

# The next save replaces the temporary file and publishes; nothing is left behind.
launch save "$path" 7 >/dev/null
[[ ! -e "$path.tmp" ]] || { echo "FAIL: $path.tmp is still there after a save" >&2; exit 1; }
value=$(launch check "$path")
[[ "$value" == 7 ]] || { echo "FAIL: loaded $value after saving 7" >&2; exit 1; }
echo "the next save leaves no temporary file and loads: value $value"
