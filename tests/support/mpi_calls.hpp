// MPI_Allreduce calls of this process, counted through MPI's profiling interface:
// tests/support/main.cpp defines MPI_Allreduce and forwards to PMPI_Allreduce, so every
// allreduce a test program makes (kfuse's, and the libraries' it links) is counted. Tests
// compare a solver's or program's counted allreduces with the ones it claims; kernel
// counts alone do not see an agreement or a reduction added to an iteration.
#pragma once

#include <cstdint>

namespace kfuse_test {

/// Whether allreduces are counted (an MPI build); without MPI there are none.
bool counts_allreduces();
/// MPI_Allreduce calls of this process so far.
std::int64_t allreduce_calls();

}  // namespace kfuse_test
