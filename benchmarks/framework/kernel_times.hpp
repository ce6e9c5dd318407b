// Kernel times (kfuse-bench --kernel-times): where an iteration's time goes, kernel by kernel,
// through Kokkos Tools callbacks that fence before and after every launch and time it by its
// label. The fences serialise the launches (no launch overlaps the one before it), so the
// figures apportion an iteration; the timed repetitions, without fences, say how long it takes.
// The callbacks are process-wide: one KernelTimer at a time, and no KernelCounter beside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kfuse::bench {

/// One label's launches and their total seconds (fence to fence).
struct KernelTime {
  std::string label;
  std::int64_t launches = 0;
  double seconds = 0;
};

/// RAII: times every parallel_for/reduce/scan launched while it lives.
class KernelTimer {
 public:
  KernelTimer();
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

  /// The labels seen so far, the most time first.
  std::vector<KernelTime> times() const;
};

}  // namespace kfuse::bench
