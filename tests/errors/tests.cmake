# Collective error tests: an error seen on one rank ends in kfuse::Error on every rank.
# The short timeout turns a hang (a rank throwing alone) into a failure.
kfuse_add_test(NAME errors.collective SOURCES errors/test_collective_errors.cpp support/main.cpp
               RANKS 2 4 TIMEOUT 60 LABELS errors)
