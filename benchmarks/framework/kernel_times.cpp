#include "kernel_times.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <Kokkos_Core.hpp>

#include "timer.hpp"

namespace kfuse::bench {

namespace {

struct Open {
  std::string label;
  double start;
};

struct TimerState {
  bool active = false;
  std::vector<Open> open;  // launches begun and not ended; the kernel id is the index
  std::map<std::string, KernelTime> by_label;
};

TimerState& state() {
  static TimerState instance;
  return instance;
}

void on_begin(const char* label, std::uint32_t /*device*/, std::uint64_t* kernel_id) {
  Kokkos::fence();  // what was launched before is not this kernel's time
  auto& s = state();
  *kernel_id = s.open.size();
  s.open.push_back({label, wall_time()});
}

void on_end(std::uint64_t kernel_id) {
  Kokkos::fence();
  auto& s = state();
  if (kernel_id >= s.open.size()) return;  // begun before the timer
  const Open launch = s.open[kernel_id];
  s.open.resize(kernel_id);
  KernelTime& t = s.by_label[launch.label];
  t.label = launch.label;
  ++t.launches;
  t.seconds += wall_time() - launch.start;
}

void set_callbacks(bool on) {
  namespace tools = Kokkos::Tools::Experimental;
  tools::set_begin_parallel_for_callback(on ? &on_begin : nullptr);
  tools::set_begin_parallel_reduce_callback(on ? &on_begin : nullptr);
  tools::set_begin_parallel_scan_callback(on ? &on_begin : nullptr);
  tools::set_end_parallel_for_callback(on ? &on_end : nullptr);
  tools::set_end_parallel_reduce_callback(on ? &on_end : nullptr);
  tools::set_end_parallel_scan_callback(on ? &on_end : nullptr);
}

}  // namespace

KernelTimer::KernelTimer() {
  if (state().active) throw std::logic_error("kfuse-bench: one KernelTimer at a time");
  state() = TimerState{};
  state().active = true;
  set_callbacks(true);
}

KernelTimer::~KernelTimer() {
  set_callbacks(false);
  state().active = false;
}

std::vector<KernelTime> KernelTimer::times() const {
  std::vector<KernelTime> out;
  for (const auto& entry : state().by_label) out.push_back(entry.second);
  std::sort(out.begin(), out.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace kfuse::bench
