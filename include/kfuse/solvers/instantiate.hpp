// Compiles the solvers that <kfuse/solvers/extern.hpp> declares extern: include
// it in exactly one source file of the program (a one-line file:
// `#include <kfuse/solvers/instantiate.hpp>`). docs/user-guide.md §9.
#pragma once

#include "kfuse/solvers/extern.hpp"

#define KFUSE_DETAIL_INSTANTIATE_SOLVER(solver, M) \
  template KFUSE_DETAIL_SOLVER_SIGNATURE(solver, M);
#define KFUSE_DETAIL_INSTANTIATE_MEMBER(member) template member;

namespace kfuse {
KFUSE_DETAIL_SOLVER_INSTANCES(KFUSE_DETAIL_INSTANTIATE_SOLVER)
KFUSE_DETAIL_PRECONDITIONER_MEMBERS(KFUSE_DETAIL_INSTANTIATE_MEMBER)
}  // namespace kfuse
