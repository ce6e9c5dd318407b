// Counts MPI_Allreduce calls of this process through the MPI profiling
// interface (the binary defines MPI_Allreduce and forwards to PMPI_Allreduce),
// so allreduces per iteration are counted, not taken from a plan. Without MPI
// there is nothing to count: counting() is false.
#pragma once

#include <cstdint>

namespace kfuse::bench {

struct AllreduceCounter {
  /// True when calls are really counted (an MPI build).
  static bool counting();
  /// MPI_Allreduce calls of this process so far.
  static std::int64_t calls();
};

}  // namespace kfuse::bench
