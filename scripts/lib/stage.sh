# shellcheck shell=bash
# Named, timed stages for scripts/*.sh (sourced; the caller runs under `set -euo pipefail`).
#
#   stage NAME COMMAND [ARG...]   runs the command, prints how long it took
#
# A failing command ends the script (set -e); the EXIT trap then names the stage that
# failed and prints the timings of all stages so far.

KFUSE_STAGE_NAME=""
KFUSE_STAGE_START=""
KFUSE_STAGE_TIMES=()

kfuse_now() { date +%s.%N; }
kfuse_elapsed() { awk -v a="$1" -v b="$(kfuse_now)" 'BEGIN { printf "%.1f", b - a }'; }

stage() {
  KFUSE_STAGE_NAME=$1
  shift
  KFUSE_STAGE_START=$(kfuse_now)
  printf '\n==> stage %s: %s\n' "$KFUSE_STAGE_NAME" "$*"
  "$@"
  local seconds
  seconds=$(kfuse_elapsed "$KFUSE_STAGE_START")
  printf '==> stage %s: ok in %ss\n' "$KFUSE_STAGE_NAME" "$seconds"
  KFUSE_STAGE_TIMES+=("$(printf '%-24s %8ss  ok' "$KFUSE_STAGE_NAME" "$seconds")")
  KFUSE_STAGE_NAME=""
}

kfuse_stage_summary() {
  local status=$?
  if [[ -n "$KFUSE_STAGE_NAME" ]]; then
    KFUSE_STAGE_TIMES+=("$(printf '%-24s %8ss  FAILED (exit %d)' "$KFUSE_STAGE_NAME" \
      "$(kfuse_elapsed "$KFUSE_STAGE_START")" "$status")")
  fi
  if ((${#KFUSE_STAGE_TIMES[@]})); then
    printf '\n==> stages\n'
    printf '    %s\n' "${KFUSE_STAGE_TIMES[@]}"
  fi
  return "$status"
}
trap kfuse_stage_summary EXIT
