// Compile-cost sample (benchmarks/CMakeLists.txt): solver_file.cpp as a user compiles it
// with the solvers' common cases explicitly instantiated in another file of the program
// (kfuse/solvers/extern.hpp; solver_instances.cpp is that file).
#include <kfuse/kfuse.hpp>
#include <kfuse/solvers/extern.hpp>

#include "solver_file.cpp"
