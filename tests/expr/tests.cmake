# Tests of the expression layer: operators and vectorised math against host loops.
kfuse_add_test(NAME expr.operators SOURCES expr/test_operators.cpp support/main.cpp LABELS expr)
kfuse_add_test(NAME expr.vector_math SOURCES expr/test_vector_math.cpp support/main.cpp LABELS expr)
