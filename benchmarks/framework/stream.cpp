#include "stream.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "timer.hpp"

namespace kfuse::bench {

namespace {

using View = Kokkos::View<double*, detail::MemSpace>;
using Policy = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;

struct Triad {
  View a, b, c;
  double scalar;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) = b(i) + scalar * c(i); }
};

struct Init {
  View a, b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    a(i) = 1.0;
    b(i) = 2.0;
    c(i) = 0.5;
  }
};

/// The size of the host's highest-level data or unified cache from sysfs
/// ("32768K"), where sysconf does not know it (it answers 0 on some CPUs).
std::int64_t sysfs_cache_bytes() {
  std::int64_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
    if (type == "Instruction" || level < best_level) continue;
    std::int64_t bytes = std::stoll(size);
    const char unit = size.back();
    bytes *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
    best = bytes, best_level = level;
  }
  return best;
}

std::int64_t host_cache_bytes() {
  for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return bytes;
  }
  return sysfs_cache_bytes();
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
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible)
    return host_cache_bytes();
  else
    return device_cache_bytes();
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
  Kokkos::parallel_for("stream:init", Policy(0, n_), Init{a_, b_, c_});
  run();  // warm-up: the arrays' pages and the kernel are ready for every measure()
  Kokkos::fence();
}

void StreamTriad::run() const {
  Kokkos::parallel_for("stream:triad", Policy(0, n_), Triad{a_, b_, c_, 3.0});
}

StreamResult StreamTriad::measure(int repetitions) const {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const double seconds = timed_max_over_ranks(comm_, [&] { run(); });
    best = std::max(best, 24.0 * double(n_) * comm_.size() / seconds / 1e9);
  }
  return StreamResult{best, n_, repetitions, last_level_cache_bytes()};
}

}  // namespace kfuse::bench
