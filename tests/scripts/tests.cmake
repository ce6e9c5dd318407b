# Checks of the tools under scripts/ (label lint: backend independent, no kfuse build).
kfuse_add_script_test(NAME scripts.crash_report SCRIPT scripts/crash_report.sh
                      ARGS "${PROJECT_SOURCE_DIR}" TIMEOUT 60 LABELS lint)
