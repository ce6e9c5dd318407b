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
#include <string>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

/// The last-level cache in front of the memory the kernels use, on each node.
struct CacheSize {
  std::int64_t bytes = 0;  ///< 0: unknown
  std::string source;      ///< "sysfs", "measured", "sysconf", "--cache-size" or "device L2"
};

struct StreamResult {
  double gbps = 0;                 ///< all ranks together
  /// The in-place update a += s*c on the triad's arrays, counted as STREAM counts (24 bytes an
  /// element), all ranks together; 0 when not measured (measure_update). Its written array is
  /// read first, so it pays no write-allocate read: kernels that update arrays in place may
  /// exceed 100% of the triad by as much as this rate exceeds it.
  double update_gbps = 0;
  /// The triad with streaming stores (on host CPUs with them, as kfuse's stencils store the
  /// arrays they do not read: no write-allocate read), all ranks together; 0 where not
  /// measured (measure_streamed) or not available. % STREAM stays against the triad.
  double streamed_gbps = 0;
  std::int64_t elements_per_rank = 0;
  int repetitions = 0;
  CacheSize cache;  ///< last_level_cache()
};

/// The last-level cache on each node (collective). `given` > 0: that many bytes
/// (--cache-size). On a host, the highest-level caches of the CPUs this process
/// may run on, each instance once (sysfs), taken as the node's (ranks bound to
/// CPUs behind other instances of that level are not counted). Where sysfs
/// does not say, measured: sysconf(_SC_LEVEL3_CACHE_SIZE) may count the whole
/// package (on an AMD EPYC VM, 508 MiB where its two vCPUs share one 32 MiB
/// L3), so the node's ranks time the triad together on working sets from
/// 4 MiB to twice sysconf's figure, and the cache is the largest set that runs
/// faster than halfway (the geometric mean) from the fastest set's rate to the
/// memory's (sysconf's figure where the rate does not fall). A GPU's L2. The
/// largest figure of any rank, so that every rank sizes alike.
CacheSize last_level_cache(const Comm& comm, std::int64_t given);

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
  /// arrays beyond `cache`.
  StreamTriad(const Comm& comm, std::int64_t elements_per_rank, CacheSize cache);
  /// Best rate over `repetitions` timed triads.
  StreamResult measure(int repetitions) const;
  /// Best rate over `repetitions` timed in-place updates (StreamResult::update_gbps).
  double measure_update(int repetitions) const;
  /// Best rate over `repetitions` timed triads with streaming stores
  /// (StreamResult::streamed_gbps); 0 on GPUs and without streaming stores.
  double measure_streamed(int repetitions) const;

 private:
  void run() const;  // one triad, not fenced
  template <class Kernel>
  double best_gbps(int repetitions, const Kernel& kernel) const;

  using View = Kokkos::View<double*, detail::MemSpace>;
  Comm comm_;
  CacheSize cache_;
  std::int64_t n_;
  View a_, b_, c_;
};

}  // namespace kfuse::bench
