// STREAM triad (a = b + s*c) measured by the benchmark binary itself, on the
// same ranks and in the same run as the workloads: every rank runs the triad
// on its own arrays at once; the rate is the best over the repetitions of
// (all ranks' bytes) / (slowest rank's time), as STREAM reports.
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

struct StreamResult {
  double gbps = 0;                 ///< all ranks together
  std::int64_t elements_per_rank = 0;
  int repetitions = 0;
};

StreamResult stream_triad(const Comm& comm, std::int64_t elements_per_rank, int repetitions);

}  // namespace kfuse::bench
