// Layer umbrella: kfuse/solvers.
#pragma once
#include "kfuse/solvers/bicgstab.hpp"
#include "kfuse/solvers/cg.hpp"
#include "kfuse/solvers/chebyshev.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/gmres.hpp"
#include "kfuse/solvers/multigrid.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/solvers/workspace.hpp"
