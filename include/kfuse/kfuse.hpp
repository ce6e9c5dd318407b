// kfuse: compile-time fused array programs on Kokkos and MPI.
// The umbrella header: everything a user needs.
#pragma once
#include "kfuse/array.hpp"
#include "kfuse/core.hpp"
#include "kfuse/dist.hpp"
#include "kfuse/exec.hpp"
#include "kfuse/expr.hpp"
#include "kfuse/io.hpp"
#include "kfuse/plan.hpp"
#include "kfuse/program.hpp"
#include "kfuse/solvers.hpp"
#include "kfuse/sparse.hpp"
