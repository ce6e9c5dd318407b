# Sparse matrices: assembly from triplets, ghost import and SpMV, generators.
kfuse_add_test(NAME sparse.csr_matrix SOURCES sparse/test_csr_matrix.cpp support/main.cpp
               RANKS 1 2 4 LABELS sparse)
kfuse_add_test(NAME sparse.generators SOURCES sparse/test_generators.cpp support/main.cpp
               RANKS 1 2 4 LABELS sparse)
