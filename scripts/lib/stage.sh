# shellcheck shell=bash
# Named, timed stages for scripts/*.sh (sourced; the caller runs under `set -euo pipefail`).
#
#   stage NAME COMMAND [ARG...]   runs the command, prints how long it took: wall time and
#                                 the CPU time (user + system) of the processes it ran, which
#                                 tells a stage's cost on a machine shared with other jobs
#
# A failing command ends the script (set -e); the EXIT trap then names the stage that
# failed and prints the timings of all stages so far.

KFUSE_STAGE_NAME=""
KFUSE_STAGE_START=""
KFUSE_STAGE_CPU_START=""
KFUSE_STAGE_TIMES=()

kfuse_now() { date +%s.%N; }
kfuse_elapsed() { awk -v a="$1" -v b="$(kfuse_now)" 'BEGIN { printf "%.1f", b - a }'; }
# User + system seconds of this shell's finished children (cutime, cstime of /proc/$$/stat;
# `times` would have to run in this shell, not in a pipe).
KFUSE_CLOCK_TICKS=$(getconf CLK_TCK 2>/dev/null || echo 100)
kfuse_cpu_now() {
  if [[ -r /proc/$$/stat ]]; then
    sed 's/^.*) //' "/proc/$$/stat" | awk -v hz="$KFUSE_CLOCK_TICKS" '{ printf "%.1f", ($14 + $15) / hz }'
  else
    echo 0
  fi
}
kfuse_cpu_elapsed() { awk -v a="$1" -v b="$(kfuse_cpu_now)" 'BEGIN { printf "%.1f", b - a }'; }

stage() {
  KFUSE_STAGE_NAME=$1
  shift
  KFUSE_STAGE_START=$(kfuse_now)
  KFUSE_STAGE_CPU_START=$(kfuse_cpu_now)
  printf '\n==> stage %s: %s\n' "$KFUSE_STAGE_NAME" "$*"
  "$@"
  local seconds cpu
  seconds=$(kfuse_elapsed "$KFUSE_STAGE_START")
  cpu=$(kfuse_cpu_elapsed "$KFUSE_STAGE_CPU_START")
  printf '==> stage %s: ok in %ss (cpu %ss)\n' "$KFUSE_STAGE_NAME" "$seconds" "$cpu"
  KFUSE_STAGE_TIMES+=("$(printf '%-24s %8ss  cpu %8ss  ok' "$KFUSE_STAGE_NAME" "$seconds" "$cpu")")
  KFUSE_STAGE_NAME=""
}

kfuse_stage_summary() {
  local status=$?
  if [[ -n "$KFUSE_STAGE_NAME" ]]; then
    KFUSE_STAGE_TIMES+=("$(printf '%-24s %8ss  cpu %8ss  FAILED (exit %d)' "$KFUSE_STAGE_NAME" \
      "$(kfuse_elapsed "$KFUSE_STAGE_START")" "$(kfuse_cpu_elapsed "$KFUSE_STAGE_CPU_START")" \
      "$status")")
  fi
  if ((${#KFUSE_STAGE_TIMES[@]})); then
    printf '\n==> stages (wall, and cpu = user + system of the commands)\n'
    printf '    %s\n' "${KFUSE_STAGE_TIMES[@]}"
  fi
  return "$status"
}
trap kfuse_stage_summary EXIT
