# Sparse matrices: assembly from triplets, ghost import and SpMV, generators, Matrix Market.
kfuse_add_test(NAME sparse.csr_matrix SOURCES sparse/test_csr_matrix.cpp support/main.cpp
               RANKS 1 2 4 LABELS sparse)
# .staged: the ghost import through host staging buffers (KFUSE_MPI_DEVICE_BUFFERS=0), the
# path a GPU build without a CUDA-aware MPI takes; on host backends the same copies run.
if(KFUSE_ENABLE_MPI)
  kfuse_add_test_run(NAME sparse.csr_matrix.staged TEST sparse.csr_matrix RANKS 2 4
                     ENVIRONMENT KFUSE_MPI_DEVICE_BUFFERS=0 LABELS sparse device)
endif()
kfuse_add_test(NAME sparse.generators SOURCES sparse/test_generators.cpp support/main.cpp
               RANKS 1 2 4 LABELS sparse)
kfuse_add_test(NAME sparse.matrix_market SOURCES sparse/test_matrix_market.cpp support/main.cpp
               RANKS 1 2 4 LABELS sparse)

# The real matrices (KFUSE_MATRICES_DIR, found by tests/CMakeLists.txt): without them the
# test of real matrices is left out.
if(KFUSE_MATRICES_DIR)
  target_compile_definitions(test_sparse_matrix_market PRIVATE
                             KFUSE_MATRICES_DIR="${KFUSE_MATRICES_DIR}")
else()
  message(STATUS "kfuse: shared/matrices not found (set KFUSE_MATRICES_DIR); "
                 "sparse.matrix_market runs without the real matrices")
endif()
