# Collective error tests: an error seen on one rank ends in kfuse::Error on every rank.
# The short timeout turns a hang (a rank throwing alone) into a failure.
kfuse_add_test(NAME errors.collective SOURCES errors/test_collective_errors.cpp support/main.cpp
               RANKS 2 3 TIMEOUT 60 LABELS errors)
# Bad input from the reliability probe (files, sizes, options, rebinding), each case at 1, 2
# and 3 ranks; the solvers' common cases linked, explicitly instantiated (tests/solvers).
kfuse_add_test(NAME errors.bad_input SOURCES errors/test_bad_input.cpp support/main.cpp
               RANKS 1 2 3 TIMEOUT 120 LABELS errors
               LIBRARIES kfuse_test_solver_instances)
