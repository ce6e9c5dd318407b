# Tests of the array layer (Array's own tests live with the programs in exec/).
kfuse_add_test(NAME array.vector SOURCES array/test_vector.cpp support/main.cpp RANKS 1 2 4 LABELS array)
