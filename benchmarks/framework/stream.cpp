#include "stream.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

#if KFUSE_STREAM_STORES_X86
/// The triad with streaming stores, as kfuse's host stencils store arrays they do not read
/// (kfuse/core/stream_store.hpp): a chunk of 1024 elements a call, a cache line at a time.
struct StreamedTriad {
  View a, b, c;
  double scalar;
  std::int64_t n;
  void operator()(std::int64_t chunk) const {
    constexpr int line = detail::stream_line_doubles;
    const std::int64_t begin = chunk * 1024, end = std::min(n, begin + 1024);
    alignas(64) double values[line];
    std::int64_t k = begin;
    for (; k + line <= end; k += line) {
      for (int l = 0; l < line; ++l) values[l] = b(k + l) + scalar * c(k + l);
      detail::stream_line(a.data() + k, values);
    }
    for (; k < end; ++k) a(k) = b(k) + scalar * c(k);
    detail::stream_fence();
  }
};
#endif

struct Init {
  View a, b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    a(i) = 1.0;
    b(i) = 2.0;
    c(i) = 0.5;
  }
};

/// The highest-level data or unified caches in front of the CPUs this process may run on
/// (sched_getaffinity), each instance once (sysfs: its shared_cpu_list), summed; 0 where
/// sysfs does not say.
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
      if (seen.insert(shared).second) total += detail::sysfs_cache_bytes(size);
    }
  }
  return total;
}

std::int64_t sysconf_cache_bytes() {
  for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return bytes;
  }
  return 0;
}

/// The largest node working set, of those from 4 MiB doubling to `largest` or just past
/// it, on which the node's ranks run the triad together faster than halfway (on a log
/// scale: the geometric mean) from the fastest set's rate to the largest set's, the
/// memory's. The rate falls over a few sizes past the cache (2 ranks of an AMD EPYC VM
/// whose L3 is 32 MiB, five runs: 137-203 GB/s up to 16 MiB, 119-200 on 32, 66-112 on 64,
/// then 55-89, 51-77 and 48-73 on 128 to 1024 MiB; halfway 86-121), and the halfway point
/// of the fall is where a sharp edge would be. 0 where the fastest is not 1.2x the memory's (no
/// cache edge in the range). Collective.
std::int64_t measured_cache_bytes(const Comm& comm, std::int64_t largest) {
  const double per_set = 3.0 * sizeof(double) * ranks_on_node(comm);  // bytes a node per index
  std::int64_t top = std::int64_t{4} << 20;
  while (top < largest) top *= 2;
  const std::int64_t most = std::int64_t(double(top) / per_set);
  View a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:probe:a"), most);
  View b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:probe:b"), most);
  View c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:probe:c"), most);
  detail::for_box("stream:probe:init", detail::Box<1>{{0}, {most}}, Init{a, b, c});
  std::vector<std::pair<std::int64_t, double>> rates;  // (node bytes, best bytes a second)
  for (std::int64_t set = std::int64_t{4} << 20; set <= top; set *= 2) rates.emplace_back(set, 0);
  // Rounds over all sets, so that a moment when the machine's other tenants load its caches
  // or its memory weighs on no set alone.
  for (int round = 0; round < 4; ++round)
    for (auto& [set, best] : rates) {
      const std::int64_t n = std::int64_t(double(set) / per_set);
      // Triads enough for 256 MiB a timing, so that the barrier is noise next to them.
      const std::int64_t passes = std::max<std::int64_t>(1, (std::int64_t{1} << 28) / set);
      for (int r = 0; r < 2; ++r) {
        const double seconds = timed_max_over_ranks(comm, [&] {
          for (std::int64_t p = 0; p < passes; ++p)
            detail::for_box("stream:probe", detail::Box<1>{{0}, {n}}, Triad{a, b, c, 3.0});
        });
        best = std::max(best, double(set) * double(passes) / seconds);
      }
    }
  const double memory = rates.back().second;
  double fastest = 0;
  std::string report;
  for (const auto& [set, rate] : rates) {
    fastest = std::max(fastest, rate);
    report += " " + std::to_string(set >> 20) + " MiB " + std::to_string(std::lround(rate / 1e9));
  }
  std::int64_t cache = 0;
  for (const auto& [set, rate] : rates)
    if (fastest > 1.2 * memory && rate > std::sqrt(fastest * memory)) cache = set;
  if (comm.rank() == 0)
    std::fprintf(stderr, "[kfuse-bench] triad GB/s a node by working set:%s\n", report.c_str());
  return cache;
}

CacheSize host_cache(const Comm& comm) {
  // sysfs's figure only where every rank has one: the probe is collective, so all ranks
  // take the same path.
  const std::int64_t listed = sysfs_cache_bytes();
  if (comm.allreduce(listed, ReduceOp::min) > 0) return {listed, "sysfs"};
  const std::int64_t reported = sysconf_cache_bytes();
  constexpr std::int64_t lowest = std::int64_t{64} << 20, highest = std::int64_t{2} << 30;
  const std::int64_t largest = std::clamp(2 * reported, lowest, highest);
  if (const std::int64_t measured = measured_cache_bytes(comm, largest); measured > 0)
    return {measured, "measured"};
  return {reported, "sysconf"};
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

CacheSize last_level_cache(const Comm& comm, std::int64_t given) {
  CacheSize cache = given > 0 ? CacheSize{given, "--cache-size"}
                    : Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible
                        ? host_cache(comm)
                        : CacheSize{device_cache_bytes(), "device L2"};
  cache.bytes = comm.allreduce(cache.bytes, ReduceOp::max);
  return cache;
}

int ranks_on_node(const Comm& comm) { return comm.node_allreduce(1, ReduceOp::sum); }

bool beyond_cache(double bytes, double node_share, std::int64_t cache_bytes) {
  return cache_bytes > 0 && bytes * node_share >= 4.0 * double(cache_bytes);
}

namespace {

std::int64_t triad_elements(const Comm& comm, std::int64_t n, const CacheSize& cache_size) {
  if (n > 0) return n;
  const double cache = double(cache_size.bytes);
  const double beyond = 4.0 * cache / (3.0 * sizeof(double) * ranks_on_node(comm));
  return std::max<std::int64_t>(std::int64_t{1} << 23, std::int64_t(beyond) + 1);
}

}  // namespace

StreamTriad::StreamTriad(const Comm& comm, std::int64_t n, CacheSize cache)
    : comm_(comm),
      cache_(std::move(cache)),
      n_(triad_elements(comm, n, cache_)),
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
  result.cache = cache_;
  return result;
}

double StreamTriad::measure_update(int repetitions) const {
  // a is the triad's output, rewritten by every triad: the update leaves b and c as they are.
  return best_gbps(repetitions, [&] {
    detail::for_box("stream:update", detail::Box<1>{{0}, {n_}}, Update{a_, c_, 1e-3});
  });
}

double StreamTriad::measure_streamed([[maybe_unused]] int repetitions) const {
#if KFUSE_STREAM_STORES_X86  // not in device compilers' builds: the loop is host code
  constexpr bool host = std::is_same_v<detail::ExecSpace, Kokkos::DefaultHostExecutionSpace>;
  if (!host || reinterpret_cast<std::uintptr_t>(a_.data()) % 64 != 0) return 0;
  const StreamedTriad triad{a_, b_, c_, 3.0, n_};
  return best_gbps(repetitions, [&] {
    Kokkos::parallel_for(
        "stream:triad-streamed",
        Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>(
            0, (n_ + 1023) / 1024),
        triad);
  });
#else
  return 0;
#endif
}

}  // namespace kfuse::bench
