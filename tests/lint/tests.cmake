# Checks of kfuse's own sources that need no build (label lint: backend independent).
kfuse_add_script_test(NAME lint.kokkos4_api SCRIPT lint/kokkos4_api.sh ARGS "${PROJECT_SOURCE_DIR}"
                      TIMEOUT 60 LABELS lint)
kfuse_add_script_test(NAME lint.header_lambdas SCRIPT lint/header_lambdas.sh
                      ARGS "${PROJECT_SOURCE_DIR}" TIMEOUT 60 LABELS lint)
kfuse_add_script_test(NAME lint.layers SCRIPT lint/layers.sh ARGS "${PROJECT_SOURCE_DIR}"
                      TIMEOUT 60 LABELS lint)
