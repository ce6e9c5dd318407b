// STREAM triad (a = b + s*c) measured by the benchmark binary itself, on the
// same ranks and in the same run as the workloads: every rank runs the triad
// on its own arrays at once; a rate is the best over some repetitions of
// (all ranks' bytes) / (slowest rank's time), as STREAM reports. The suite
// measures it once at the start (the table's header) and again alongside
// every timed repetition of every workload, so that % of STREAM compares
// times taken under the same machine conditions (these machines drift).
//
// A rate measures memory only when the data is well beyond the last-level
// cache: STREAM's rule is 4x. The triad's arrays are sized by that rule from
// the cache this process sees, and a workload's % STREAM is printed only
// where its working set is that large too.
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

struct StreamResult {
  double gbps = 0;                 ///< all ranks together
  /// The in-place update a += s*c on the triad's arrays, counted as STREAM counts (24 bytes an
  /// element), all ranks together; 0 when not measured (measure_update). Its written array is
  /// read first, so it pays no write-allocate read: kernels that update arrays in place may
  /// exceed 100% of the triad by as much as this rate exceeds it.
  double update_gbps = 0;
  std::int64_t elements_per_rank = 0;
  int repetitions = 0;
  std::int64_t cache_bytes = 0;  ///< last_level_cache_bytes()
};

/// Bytes of the last-level cache in front of the memory the kernels use: on a
/// host, the highest-level caches of the CPUs this process may run on, each
/// instance once (sysfs; sysconf where sysfs does not say), taken as the
/// node's (ranks bound to CPUs behind other instances of that level are not
/// counted); a GPU's L2; 0 when unknown.
std::int64_t last_level_cache_bytes();

/// Ranks of `comm` on this rank's node, which share its cache. Collective.
int ranks_on_node(const Comm& comm);

/// Whether `bytes` spread evenly over all ranks put at least 4x the last-level
/// cache on each node (STREAM's rule); `node_share`: the fraction of the ranks
/// on a node (ranks_on_node / ranks).
bool beyond_cache(double bytes, double node_share, std::int64_t cache_bytes);

/// The triad's arrays, allocated, initialised and warmed up once (collective,
/// like measure()).
class StreamTriad {
 public:
  /// elements_per_rank = 0: the fewest (at least 2^23) that put the three
  /// arrays beyond the cache.
  StreamTriad(const Comm& comm, std::int64_t elements_per_rank);
  /// Best rate over `repetitions` timed triads.
  StreamResult measure(int repetitions) const;
  /// Best rate over `repetitions` timed in-place updates (StreamResult::update_gbps).
  double measure_update(int repetitions) const;

 private:
  void run() const;  // one triad, not fenced
  template <class Kernel>
  double best_gbps(int repetitions, const Kernel& kernel) const;

  using View = Kokkos::View<double*, detail::MemSpace>;
  Comm comm_;
  std::int64_t n_;
  View a_, b_, c_;
};

}  // namespace kfuse::bench
