// The Kokkos views behind arrays: rank-N, LayoutRight (row-major), in the
// default execution space's memory.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/core/spaces.hpp"

namespace kfuse::detail {

template <class T, int N>
struct view_data;
template <class T>
struct view_data<T, 1> {
  using type = T*;
};
template <class T>
struct view_data<T, 2> {
  using type = T**;
};
template <class T>
struct view_data<T, 3> {
  using type = T***;
};

template <class T, int N>
using view_t = Kokkos::View<typename view_data<T, N>::type, Kokkos::LayoutRight, MemSpace>;

/// Where the next array's data starts within a 4 KiB page: successive arrays
/// 704 bytes (11 cache lines) apart, so the few arrays one kernel streams
/// never share an address offset modulo 4 KiB. When a kernel's stores and
/// the next iteration's loads do, the core stalls each load on the store
/// (4K aliasing): SWE lost up to 13% to it (docs/benchmarks.md).
inline constexpr std::size_t array_page = 4096;
inline std::size_t next_array_offset() {
  static std::atomic<std::size_t> count{0};
  constexpr std::size_t line = 64, stride = 11;
  return (count++ * stride % (array_page / line)) * line;
}

/// Asks the kernel for transparent huge pages (2 MiB) behind a fresh host
/// allocation of at least 4 MiB, before its first touch: a kernel streaming
/// such arrays through 4 KiB pages misses the TLB once per page, a page walk
/// that a virtual machine's nested paging makes long (the STREAM triad on the
/// AMD EPYC VM of docs/benchmarks.md: about 30 GB/s, up to 60 on huge pages).
/// Linux only; advice, which THP `never` or a lack of free huge pages refuses.
/// KFUSE_HUGE_PAGES=0 in the environment turns it off.
inline void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const bool wanted = [] {
    const char* setting = std::getenv("KFUSE_HUGE_PAGES");
    return setting == nullptr || std::string(setting) != "0";
  }();
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  if (!wanted || data == nullptr || bytes < 2 * huge) return;
  // madvise takes page-aligned ranges: the 2 MiB-aligned part of the allocation.
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

/// advise_huge_pages for a View's data, when it lies in HostSpace (not in memory
/// that a GPU driver maps, such as CUDA's managed or pinned host memory).
template <class View>
void advise_huge_pages(const View& view) {
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>)
    advise_huge_pages(static_cast<void*>(view.data()),
                      view.span() * sizeof(typename View::value_type));
}

/// Tag of the handle constructors that throw on this rank only.
struct LocalErrors {};
inline constexpr LocalErrors local_errors{};

/// Zeroes a fresh allocation 8 bytes a store, the last partial word byte by byte. Kokkos
/// 3.4 value-initialises a View<char*> a char at a time (a third of a 128 MiB array's
/// allocation time, the rest being the kernel's page faults); a parallel_for on the
/// execution space touches the pages first from the threads that will use them, as Kokkos'
/// own initialisation does (NUMA placement under OpenMP), which a memset would not.
struct ZeroFill {
  char* data;  // 8-byte aligned (a Kokkos allocation)
  index_t bytes;
  index_t words() const { return (bytes + 7) / 8; }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    if ((i + 1) * 8 <= bytes)
      reinterpret_cast<std::uint64_t*>(data)[i] = 0;
    else
      for (index_t b = i * 8; b < bytes; ++b) data[b] = 0;
  }
};

/// A labelled, zero-initialised 1-D View of the product of `extents` values
/// of `element` bytes, plus `extra` bytes (a multiple of the View's value
/// size). A size that overflows, or memory the space cannot give (Kokkos
/// throws std::runtime_error or std::bad_alloc), is a kfuse::Error naming the
/// API, the label and the fix, thrown on this rank.
template <class View, std::size_t N>
View allocate_view(const char* api, const std::string& label, const std::array<index_t, N>& extents,
                   std::size_t element, std::size_t extra = 0) {
  std::string shape;
  for (std::size_t d = 0; d < N; ++d) shape += (d ? " x " : "") + std::to_string(extents[d]);
  const std::optional<index_t> elements = checked_product(extents);
  const std::optional<index_t> bytes =
      elements ? checked_product(*elements, static_cast<index_t>(element)) : std::nullopt;
  if (!bytes || *bytes > std::numeric_limits<index_t>::max() - static_cast<index_t>(extra))
    throw Error(error_message(api, " '", label, "': ", shape, " values of ", element,
                              " bytes overflow a 64-bit size; use more ranks"));
  const std::size_t total = static_cast<std::size_t>(*bytes) + extra;
  auto failure = [&](const std::string& why) {
    return Error(error_message(api, " '", label, "': cannot allocate ",
                               describe_bytes(double(total)), " (", shape, " values of ", element,
                               " bytes): ", why,
                               "; use more ranks (or nodes) or a smaller problem"));
  };
  // Host memory is zero-filled at once: more than the machine has would end in
  // the OOM killer where the kernel overcommits, not in a failed allocation.
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
    const std::uint64_t available = available_host_bytes();
    if (total > available)
      throw failure(describe_bytes(double(available)) + " of host memory is available");
  }
  View view;
  try {
    view = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
                total / sizeof(typename View::value_type));
  } catch (const std::exception& e) {
    throw failure(e.what());
  }
  advise_huge_pages(view);
  const ZeroFill fill{reinterpret_cast<char*>(view.data()),
                      static_cast<index_t>(view.span() * sizeof(typename View::value_type))};
  Kokkos::parallel_for("zero-fill [" + label + "]",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(0, fill.words()),
                       fill);
  Kokkos::fence();
  return view;
}

/// A rectangular index box in view coordinates, [lo, hi) per dimension.
template <int N>
struct Box {
  std::int64_t lo[N];
  std::int64_t hi[N];
  std::int64_t size() const {
    std::int64_t n = 1;
    for (int d = 0; d < N; ++d) n *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    return n;
  }
};

}  // namespace kfuse::detail
