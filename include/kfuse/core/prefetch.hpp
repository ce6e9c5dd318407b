// Software prefetch on host CPUs: the instruction, and the test of whether a launch's data
// come from memory at all.
//
// Host loops that read several streams at once, some of them from the caches, leave the
// hardware prefetchers too few of memory's lines in flight. Two kernels prefetch: stencils
// (exec/prefetch.hpp: the rows they read from memory and the rows they store) and sparse
// products (expr/sparse_product.hpp: the matrix's values and column indices), each only
// where its data exceed the cache (streams_from_memory). KFUSE_HOST_PREFETCH=0
// (core/config.hpp) compiles both out.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/spaces.hpp"

namespace kfuse::detail {

/// What a prefetched line is for, and so where it goes: `read` into the first-level cache
/// (a sparse row's entries, 3 KiB ahead on two streams), `read_far` into the second (a
/// stencil's rows, 8 KiB ahead on several streams at once, SWE's three read and three
/// stored: its sweep ran 1.2x slower with them read into the first level, docs/benchmarks.md,
/// "2026-12-07 (late)"), `write` a line the loop stores (x86-64's prefetchw).
enum class PrefetchFor { read, read_far, write };

/// Prefetches the cache line at `address`; nothing where the compiler has no prefetch
/// builtin, and nothing on a device. On x86-64 an asm statement that takes the address in a
/// register and touches no memory the compiler knows of: GCC takes __builtin_prefetch for a
/// write to memory, and an asm with the line as a memory operand for a read of any
/// addressable local, so that a step reloaded a view's stride after it, or kept a row's lane
/// sums in memory.
template <PrefetchFor For>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_line(const char* address) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
  if constexpr (For == PrefetchFor::write)
    asm volatile("prefetchw (%0)" : : "r"(address));
  else if constexpr (For == PrefetchFor::read_far)
    asm volatile("prefetcht1 (%0)" : : "r"(address));
  else
    asm volatile("prefetcht0 (%0)" : : "r"(address));
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
  __builtin_prefetch(address, For == PrefetchFor::write ? 1 : 0,
                     For == PrefetchFor::read_far ? 2 : 3);
#else
  (void)address;
#endif
}

/// A cache size as sysfs writes it ("32768K", "2M") in bytes.
inline index_t sysfs_cache_bytes(const std::string& size) {
  const index_t number = std::stoll(size);
  const char unit = size.back();
  return number * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
}

/// This process's share of the last-level cache, in bytes: on Linux the highest cache level
/// in front of CPU 0 (sysfs) over the CPUs that share it, read once; 0 where unknown.
inline index_t host_cache_share() {
  static const index_t share = [] {
    index_t bytes = 0, sharing = 1;
    int top = 0;
    for (int index = 0; index < 16; ++index) {
      const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
      std::ifstream level_file(dir + "/level"), type_file(dir + "/type"), size_file(dir + "/size"),
          shared_file(dir + "/shared_cpu_list");
      int level = 0;
      std::string type, size, shared;
      if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) break;
      if (type == "Instruction" || level <= top) continue;
      top = level;
      bytes = sysfs_cache_bytes(size);
      sharing = 0;  // "0-1,4-5": CPUs, by ranges
      shared_file >> shared;
      for (std::size_t at = 0; at < shared.size();) {
        const std::size_t end = std::min(shared.find(',', at), shared.size());
        const std::string range = shared.substr(at, end - at);
        const std::size_t dash = range.find('-');
        sharing += dash == std::string::npos
                       ? 1
                       : std::stoll(range.substr(dash + 1)) - std::stoll(range.substr(0, dash)) + 1;
        at = end + 1;
      }
    }
    return sharing > 0 ? bytes / sharing : bytes;
  }();
  return share;
}

/// Bytes that streams_from_memory takes for the cache share instead of host_cache_share()
/// where set (0 or more): tests set 0, so that small arrays take the paths of data from
/// memory (prefetches, streaming stores).
inline index_t& cache_share_override() {
  static index_t bytes = -1;
  return bytes;
}

/// Whether a launch of `points` points streams its prefetched data from memory: their
/// bytes over the launch exceed this process's share of the last-level cache (or the share
/// is unknown). Data that stays in the caches gains nothing from prefetches and pays their
/// instructions: cfd's sweeps of a 512 x 512 grid 10-30% slower, a cached sparse product
/// 1.2x slower.
inline bool streams_from_memory(index_t row_bytes_per_point, index_t points) {
  const index_t share = cache_share_override() >= 0 ? cache_share_override() : host_cache_share();
  return share == 0 || row_bytes_per_point * points > share;
}

/// Whether kfuse's kernels run on host CPUs, where the loops prefetch.
inline constexpr bool host_prefetch = KFUSE_HOST_PREFETCH &&
                                      std::is_same_v<ExecSpace, Kokkos::DefaultHostExecutionSpace>;

/// Entries ahead of a sparse row that its loop prefetches the matrix: 3 KiB of 8-byte
/// values; 64 to 768 measured, 256 to 512 best (docs/benchmarks.md, "2026-12-07 (night)").
inline constexpr int sparse_prefetch_ahead = 384;

/// Whether a sparse row loop over a matrix block of `entries` entries of T (and 32-bit
/// column indices) prefetches it: on host CPUs, where the block exceeds the cache share.
template <class T>
bool sparse_rows_prefetch(index_t entries) {
  return host_prefetch && streams_from_memory(index_t(sizeof(T) + sizeof(int)), entries);
}

/// Prefetches the lines of entries [begin, end) of a CSR block's values and column indices,
/// sparse_prefetch_ahead entries on: a line each 8 entries, every line of both arrays.
template <class T, class Offset>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_sparse_row_ahead(const T* value, const int* column,
                                                           Offset begin, Offset end) {
  for (Offset k = begin + sparse_prefetch_ahead; k < end + sparse_prefetch_ahead; k += 8) {
    prefetch_line<PrefetchFor::read>(reinterpret_cast<const char*>(value + k));
    prefetch_line<PrefetchFor::read>(reinterpret_cast<const char*>(column + k));
  }
}

}  // namespace kfuse::detail
