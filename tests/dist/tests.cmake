# Tests of the distribution layer: halo exchanges against a gathered host copy.
kfuse_add_test(NAME dist.halo SOURCES dist/test_halo.cpp support/main.cpp RANKS 1 2 4 LABELS dist)
