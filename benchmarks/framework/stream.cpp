#include "stream.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "timer.hpp"

namespace kfuse::bench {

namespace {

using View = Kokkos::View<double*, detail::MemSpace>;

struct Triad {
  View a, b, c;
  double scalar;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) = b(i) + scalar * c(i); }
};

struct Update {
  View a, c;
  double scalar;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) += scalar * c(i); }
};

struct Init {
  View a, b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    a(i) = 1.0;
    b(i) = 2.0;
    c(i) = 0.5;
  }
};

/// A sysfs size ("32768K") in bytes.
std::int64_t sysfs_bytes(const std::string& size) {
  const std::int64_t number = std::stoll(size);
  const char unit = size.back();
  return number * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
}

/// The highest-level data or unified caches in front of the CPUs this process may run on
/// (sched_getaffinity), each instance once (sysfs: its shared_cpu_list), summed; 0 where
/// sysfs does not say. sysconf(_SC_LEVEL3_CACHE_SIZE) may count the whole package: on an
/// AMD EPYC VM it reports 384 MiB, twelve dies' L3, where the two vCPUs share one 32 MiB
/// L3 (the triad there falls to the memory's rate from 4x 32 MiB on).
std::int64_t sysfs_cache_bytes() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return 0;
  int top_level = 0;
  std::int64_t total = 0;
  std::set<std::string> seen;  // instances, by their shared_cpu_list
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    for (int index = 0; index < 16; ++index) {
      const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                              std::to_string(index);
      std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size"),
          shared_file(dir + "/shared_cpu_list");
      int level = 0;
      std::string type, size, shared;
      if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
      if (type == "Instruction" || level < top_level) continue;
      if (level > top_level) top_level = level, total = 0, seen.clear();
      shared_file >> shared;
      if (seen.insert(shared).second) total += sysfs_bytes(size);
    }
  }
  return total;
}

std::int64_t host_cache_bytes() {
  if (const std::int64_t bytes = sysfs_cache_bytes(); bytes > 0) return bytes;
  for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return bytes;
  }
  return 0;
}

/// The GPU's L2 (0 where there is no device backend this knows).
std::int64_t device_cache_bytes() {
  int bytes = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device);
#endif
  return bytes;
}

}  // namespace

std::int64_t last_level_cache_bytes() {
  // Read once: every StreamTriad::measure reports it, and the host's answer is files
  // per CPU of the affinity mask.
  static const std::int64_t bytes =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible
          ? host_cache_bytes()
          : device_cache_bytes();
  return bytes;
}

int ranks_on_node(const Comm& comm) { return comm.node_allreduce(1, ReduceOp::sum); }

bool beyond_cache(double bytes, double node_share, std::int64_t cache_bytes) {
  return cache_bytes > 0 && bytes * node_share >= 4.0 * double(cache_bytes);
}

namespace {

std::int64_t triad_elements(const Comm& comm, std::int64_t n) {
  if (n > 0) return n;
  const double cache = double(last_level_cache_bytes());
  const double beyond = 4.0 * cache / (3.0 * sizeof(double) * ranks_on_node(comm));
  return std::max<std::int64_t>(std::int64_t{1} << 23, std::int64_t(beyond) + 1);
}

}  // namespace

StreamTriad::StreamTriad(const Comm& comm, std::int64_t n)
    : comm_(comm),
      n_(triad_elements(comm, n)),
      a_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:a"), n_),
      b_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:b"), n_),
      c_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:c"), n_) {
  detail::for_box("stream:init", detail::Box<1>{{0}, {n_}}, Init{a_, b_, c_});
  run();  // warm-up: the arrays' pages and the kernel are ready for every measure()
  Kokkos::fence();
}

// kfuse's loop schedule (a RangePolicy on host CPUs, 256-thread teams on GPUs, where
// Kokkos' RangePolicy of 64-thread blocks streams at 2.5 TB/s of an H200's 4.8), so that
// % STREAM compares kernels launched alike.
void StreamTriad::run() const {
  detail::for_box("stream:triad", detail::Box<1>{{0}, {n_}}, Triad{a_, b_, c_, 3.0});
}

template <class Kernel>
double StreamTriad::best_gbps(int repetitions, const Kernel& kernel) const {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const double seconds = timed_max_over_ranks(comm_, kernel);
    best = std::max(best, 24.0 * double(n_) * comm_.size() / seconds / 1e9);
  }
  return best;
}

StreamResult StreamTriad::measure(int repetitions) const {
  StreamResult result;
  result.gbps = best_gbps(repetitions, [&] { run(); });
  result.elements_per_rank = n_;
  result.repetitions = repetitions;
  result.cache_bytes = last_level_cache_bytes();
  return result;
}

double StreamTriad::measure_update(int repetitions) const {
  // a is the triad's output, rewritten by every triad: the update leaves b and c as they are.
  return best_gbps(repetitions, [&] {
    detail::for_box("stream:update", detail::Box<1>{{0}, {n_}}, Update{a_, c_, 1e-3});
  });
}

}  // namespace kfuse::bench
