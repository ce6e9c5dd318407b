// The solvers' explicitly instantiated cases, compiled once for every solver
// test: the one-line file a user's program has (docs/user-guide.md §9).
#include <kfuse/solvers/instantiate.hpp>
