// KernelCounter: counts Kokkos kernel launches by label through Kokkos Tools
// callbacks, applying kfuse's labelling rule (docs/architecture.md §10): a compute kernel is
// a launch labelled "kfuse:..." that is neither a halo/ghost pack kernel nor
// the ":boundary" half of a split group. Tests compare the count with a
// program's kernel_count; benchmarks report it per iteration.
//
// The callbacks are process-wide, so one counter is active at a time; it
// replaces (and on destruction clears) any begin-kernel callbacks.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include <Kokkos_Core.hpp>

#include "kfuse/core/error.hpp"

namespace kfuse {

struct KernelCounts {
  std::int64_t compute = 0;   ///< kfuse compute kernels (what kernel_count predicts)
  std::int64_t boundary = 0;  ///< second launches of split groups ("...:boundary")
  std::int64_t exchange = 0;  ///< kfuse:halo... and kfuse:ghost... pack/unpack kernels
  std::int64_t other = 0;     ///< every other launch (Kokkos' own, user kernels)
};

namespace detail {

inline bool label_starts_with(const char* label, const char* prefix) {
  return std::strncmp(label, prefix, std::strlen(prefix)) == 0;
}

inline bool label_ends_with(const char* label, const char* suffix) {
  const std::size_t n = std::strlen(label), m = std::strlen(suffix);
  return n >= m && std::strcmp(label + n - m, suffix) == 0;
}

/// Sorts one launch into the categories of KernelCounts.
inline void classify_launch(const char* label, KernelCounts& counts) {
  if (!label_starts_with(label, "kfuse:")) {
    ++counts.other;
  } else if (label_starts_with(label, "kfuse:halo") || label_starts_with(label, "kfuse:ghost")) {
    ++counts.exchange;
  } else if (label_ends_with(label, ":boundary")) {
    ++counts.boundary;
  } else {
    ++counts.compute;
  }
}

struct KernelCounterState {
  static KernelCounts& counts() {
    static KernelCounts instance;
    return instance;
  }
  static bool& active() {
    static bool instance = false;
    return instance;
  }
  static void on_begin(const char* label, std::uint32_t /*device*/, std::uint64_t* kernel_id) {
    *kernel_id = 0;
    classify_launch(label, counts());
  }
};

}  // namespace detail

/// RAII counter of kernel launches; see the header comment for the rule.
class KernelCounter {
 public:
  KernelCounter() {
    if (detail::KernelCounterState::active())
      throw Error("kfuse::KernelCounter: another counter is active (Kokkos Tools callbacks are "
                  "process-wide); destroy it first");
    detail::KernelCounterState::active() = true;
    reset();
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(&detail::KernelCounterState::on_begin);
    tools::set_begin_parallel_reduce_callback(&detail::KernelCounterState::on_begin);
    tools::set_begin_parallel_scan_callback(&detail::KernelCounterState::on_begin);
  }
  ~KernelCounter() {
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(nullptr);
    tools::set_begin_parallel_reduce_callback(nullptr);
    tools::set_begin_parallel_scan_callback(nullptr);
    detail::KernelCounterState::active() = false;
  }
  KernelCounter(const KernelCounter&) = delete;
  KernelCounter& operator=(const KernelCounter&) = delete;

  void reset() { detail::KernelCounterState::counts() = KernelCounts{}; }
  const KernelCounts& counts() const { return detail::KernelCounterState::counts(); }
  /// Compute kernels launched since construction or the last reset().
  std::int64_t compute_kernels() const { return counts().compute; }
};

}  // namespace kfuse
