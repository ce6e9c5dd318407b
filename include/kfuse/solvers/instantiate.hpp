// Compiles what <kfuse/solvers/extern.hpp> declares extern (the solvers' common
// cases and the double sparse machinery under them): include it in exactly one
// source file of the program (a one-line file:
// `#include <kfuse/solvers/instantiate.hpp>`). docs/user-guide.md §9.
#pragma once

#include "kfuse/solvers/extern.hpp"

#define KFUSE_DETAIL_INSTANTIATE_SOLVER(solver, M) \
  template KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M);
#define KFUSE_DETAIL_INSTANTIATE_DECLARATION(...) template __VA_ARGS__;

namespace kfuse {
KFUSE_DETAIL_SOLVER_INSTANCES(KFUSE_DETAIL_INSTANTIATE_SOLVER)
KFUSE_DETAIL_PRECONDITIONER_MEMBERS(KFUSE_DETAIL_INSTANTIATE_DECLARATION)
KFUSE_DETAIL_SPARSE_INSTANCES(KFUSE_DETAIL_INSTANTIATE_DECLARATION)
}  // namespace kfuse
