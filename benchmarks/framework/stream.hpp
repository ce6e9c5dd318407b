// STREAM triad (a = b + s*c) measured by the benchmark binary itself, on the
// same ranks and in the same run as the workloads: every rank runs the triad
// on its own arrays at once; a rate is the best over some repetitions of
// (all ranks' bytes) / (slowest rank's time), as STREAM reports. The suite
// measures it once at the start (the table's header) and again alongside
// every timed repetition of every workload, so that % of STREAM compares
// times taken under the same machine conditions (these machines drift).
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

struct StreamResult {
  double gbps = 0;                 ///< all ranks together
  std::int64_t elements_per_rank = 0;
  int repetitions = 0;
};

/// The triad's arrays, allocated, initialised and warmed up once (collective,
/// like measure()).
class StreamTriad {
 public:
  StreamTriad(const Comm& comm, std::int64_t elements_per_rank);
  /// Best rate over `repetitions` timed triads.
  StreamResult measure(int repetitions) const;

 private:
  void run() const;  // one triad, not fenced

  using View = Kokkos::View<double*, detail::MemSpace>;
  Comm comm_;
  std::int64_t n_;
  View a_, b_, c_;
};

}  // namespace kfuse::bench
