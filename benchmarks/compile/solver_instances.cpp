// Compile-cost sample (benchmarks/CMakeLists.txt): the one-line file that compiles the
// solvers' explicitly instantiated cases once for a program (kfuse/solvers/extern.hpp).
#include <kfuse/solvers/instantiate.hpp>
