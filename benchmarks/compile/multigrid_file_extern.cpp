// Compile-cost sample (benchmarks/CMakeLists.txt): multigrid_file.cpp as a user compiles it
// with the solvers and preconditioners' common cases explicitly instantiated in another
// file of the program (kfuse/solvers/extern.hpp; solver_instances.cpp is that file).
#include <kfuse/kfuse.hpp>
#include <kfuse/solvers/extern.hpp>

#include "multigrid_file.cpp"
