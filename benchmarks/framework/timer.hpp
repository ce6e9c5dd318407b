// Wall-clock timing of collective work: barrier, run, fence, and the slowest
// rank's time (MPI_Wtime; steady_clock without MPI).
#pragma once

#include <chrono>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

inline double wall_time() {
#if KFUSE_ENABLE_MPI
  return MPI_Wtime();
#else
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
#endif
}

/// Seconds `work` takes on the slowest rank (collective).
template <class F>
double timed_max_over_ranks(const Comm& comm, F&& work) {
  comm.barrier();
  const double start = wall_time();
  work();
  Kokkos::fence();
  const double seconds = wall_time() - start;
  return comm.allreduce(seconds, ReduceOp::max);
}

}  // namespace kfuse::bench
