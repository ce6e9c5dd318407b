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
#include <vector>

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
/// (4K aliasing): SWE lost up to 13% to it (docs/benchmarks-log.md).
inline constexpr std::size_t array_page = 4096;
inline std::size_t next_array_offset() {
  static std::atomic<std::size_t> count{0};
  constexpr std::size_t line = 64, stride = 11;
  return (count++ * stride % (array_page / line)) * line;
}

/// A transparent huge page on x86-64 and most Linux targets.
inline constexpr std::size_t huge_page = std::size_t{2} << 20;

/// Whether kfuse asks for huge pages: on Linux, unless KFUSE_HUGE_PAGES=0 is
/// in the environment (read once).
inline bool huge_pages_wanted() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static const bool wanted = [] {
    const char* setting = std::getenv("KFUSE_HUGE_PAGES");
    return setting == nullptr || std::string(setting) != "0";
  }();
  return wanted;
#else
  return false;
#endif
}

/// Whether kfuse asks for huge pages behind `bytes` of data in `Space`: host
/// memory (not memory that a GPU driver maps, such as CUDA's managed or pinned
/// host memory) of at least 4 MiB, where wanted. A kernel streaming such arrays
/// through 4 KiB pages misses the TLB once per page, a page walk that a virtual
/// machine's nested paging makes long (the STREAM triad on the AMD EPYC VM of
/// docs/benchmarks-log.md: about 30 GB/s, up to 60 on huge pages).
template <class Space>
bool huge_pages_back(std::size_t bytes) {
  if constexpr (std::is_same_v<Space, Kokkos::HostSpace>)
    return huge_pages_wanted() && bytes >= 2 * huge_page;
  else
    return false;
}

/// Asks the kernel for transparent huge pages (2 MiB) behind the 2 MiB-aligned
/// part of [data, data + bytes), a fresh host allocation that huge_pages_back
/// admits, before its first touch (all of the data for allocate_storage's arrays
/// and vectors). Advice, which THP `never` or a lack of free huge pages refuses.
inline void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = huge_page;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

/// advise_huge_pages for a View's data, where huge_pages_back admits them.
template <class View>
void advise_huge_pages(const View& view) {
  const std::size_t bytes = view.span() * sizeof(typename View::value_type);
  if (huge_pages_back<typename View::memory_space>(bytes))
    advise_huge_pages(static_cast<void*>(view.data()), bytes);
}

/// functor(i) for every i in [0, n) on the execution space, then a fence: the launch of
/// the data-movement kernels here (zero-fill, fill, copy), done before the data are used.
template <class Functor>
void launch_and_wait(const std::string& label, index_t n, const Functor& functor) {
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(0, n),
                       functor);
  Kokkos::fence();
}

/// Copies `from` into `to` element by element (copy_values' kernel).
template <class T>
struct CopyInto {
  T* to;
  const T* from;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const { to[i] = from[i]; }
};

/// Sets `to[i]` to `value` (fill_values' kernel).
template <class T>
struct FillInto {
  T* to;
  T value;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const { to[i] = value; }
};

/// Every element of a contiguous view (an Array's or a Vector's) set to `value`: a
/// kernel on the execution space, as Kokkos::deep_copy(view, value) would run, without
/// compiling deep_copy's cases for every view type (each translation unit pays them).
template <class View>
void fill_values(const std::string& label, const View& view,
                 const typename View::non_const_value_type& value) {
  using T = typename View::non_const_value_type;
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "kfuse::detail::fill_values: the view must live where kfuse's kernels run");
  launch_and_wait(label, static_cast<index_t>(view.span()), FillInto<T>{view.data(), value});
}

/// to = from for contiguous rank-1 views of one length: a kernel when both lie in one
/// memory space that the execution space reads (every copy of a host build), else
/// Kokkos::deep_copy (between host and device).
template <class To, class From>
void copy_values(const std::string& label, const To& to, const From& from) {
  using T = typename To::non_const_value_type;
  using Space = typename To::memory_space;
  if constexpr (std::is_same_v<Space, typename From::memory_space> &&
                Kokkos::SpaceAccessibility<ExecSpace, Space>::accessible) {
    if (to.span() != from.span())  // deep_copy's own check
      throw Error(error_message("kfuse: copying ", from.span(), " values into ", to.span(), " (",
                                label, ")"));
    if (to.data() == from.data()) return;  // a mirror of itself
    launch_and_wait(label, static_cast<index_t>(to.span()), CopyInto<T>{to.data(), from.data()});
  } else {
    Kokkos::deep_copy(to, from);
  }
}

/// A copy of host values in memory space `Space` (huge pages advised where
/// huge_pages_back admits them), through copy_values: in host memory one parallel
/// copy, which touches the pages first from the threads that will use them (NUMA
/// placement under OpenMP, as Kokkos' own initialisation does).
template <class T, class Space = MemSpace>
Kokkos::View<T*, Kokkos::LayoutRight, Space> device_copy(const std::string& label,
                                                         const std::vector<T>& host) {
  Kokkos::View<T*, Kokkos::LayoutRight, Space> view(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label), host.size());
  advise_huge_pages(view);
  copy_values("copy [" + label + "]", view,
              Kokkos::View<const T*, Kokkos::LayoutRight, Kokkos::HostSpace,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), host.size()));
  return view;
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
  char* data;  // 8-byte aligned
  index_t bytes;
  index_t words() const { return (bytes + 7) / 8; }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    if ((i + 1) * 8 <= bytes)
      reinterpret_cast<std::uint64_t*>(data)[i] = 0;
    else
      for (index_t b = i * 8; b < bytes; ++b) data[b] = 0;
  }
};

/// The memory of an Array or a Vector: the allocation, which owns it (labelled), and
/// where the data lie in it.
template <class T>
struct Storage {
  view_t<T, 1> allocation;
  std::size_t first = 0;  ///< the data's first element
  std::size_t count = 0;  ///< and their number
  T* data() const { return allocation.data() + first; }
  /// The data as a view that keeps the allocation alive.
  view_t<T, 1> view() const {
    return Kokkos::subview(allocation, std::make_pair(first, first + count));
  }
};

/// Zero-initialised storage for the product of `extents` values of T, the data
/// `offset` bytes past a multiple of `align` bytes (to within an element's size).
/// Where huge pages back the data (huge_pages_back), the data start at `offset` past
/// a 2 MiB boundary and every huge page they fill at least half of is advised: huge
/// pages then cover all of the data but a tail under 1 MiB, where an allocation
/// placed anywhere gets them only for its 2 MiB-aligned middle (half of a 4 MiB
/// array), and a huge page costs at most 1 MiB the data do not use. Only the data
/// are written: the padding around them is never touched, so it takes no memory. A
/// size that overflows, or memory the space cannot give (Kokkos throws
/// std::runtime_error or std::bad_alloc), is a kfuse::Error naming the API, the
/// label and the fix, thrown on this rank.
template <class T, std::size_t N>
Storage<T> allocate_storage(const char* api, const std::string& label,
                            const std::array<index_t, N>& extents, std::size_t align,
                            std::size_t offset = 0) {
  std::string shape;
  for (std::size_t d = 0; d < N; ++d) shape += (d ? " x " : "") + std::to_string(extents[d]);
  const std::optional<index_t> elements = checked_product(extents);
  const std::optional<index_t> bytes =
      elements ? checked_product(*elements, static_cast<index_t>(sizeof(T))) : std::nullopt;
  const index_t padding = static_cast<index_t>(2 * huge_page + align + offset + sizeof(T));
  if (!bytes || *bytes > std::numeric_limits<index_t>::max() - padding)
    throw Error(error_message(api, " '", label, "': ", shape, " values of ", sizeof(T),
                              " bytes overflow a 64-bit size; use more ranks"));
  const std::size_t data_bytes = static_cast<std::size_t>(*bytes);
  const bool huge = huge_pages_back<MemSpace>(data_bytes);
  if (huge) align = huge_page;
  // From the aligned address to the data's end (the end of their last huge page),
  // the data starting up to an element past `offset`; plus room to move the
  // allocation's start up to a multiple of `align`. Virtual memory: what the data do
  // not reach is never touched.
  const std::size_t reach = offset + sizeof(T) - 1 + data_bytes;
  const std::size_t total =
      align - 1 + (huge ? (reach + huge_page - 1) / huge_page * huge_page : reach);
  auto failure = [&](const std::string& why) {
    return Error(error_message(api, " '", label, "': cannot allocate ",
                               describe_bytes(double(total)), " (", shape, " values of ", sizeof(T),
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
  Storage<T> storage;
  try {
    storage.allocation = view_t<T, 1>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
                                      (total + sizeof(T) - 1) / sizeof(T));
  } catch (const std::exception& e) {
    throw failure(e.what());
  }
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(storage.allocation.data());
  const std::uintptr_t aligned = (start + align - 1) / align * align;
  storage.first = (aligned + offset - start + sizeof(T) - 1) / sizeof(T);
  storage.count = static_cast<std::size_t>(*elements);
  if (huge) {  // the huge pages the data fill at least half of
    const std::size_t end = storage.first * sizeof(T) + data_bytes - (aligned - start);
    const std::size_t tail = end % huge_page;
    advise_huge_pages(reinterpret_cast<void*>(aligned),
                      end - tail + (2 * tail >= huge_page ? huge_page : 0));
  }
  // From the 8-byte word holding the data's first byte (an element of odd size can
  // start inside one; Kokkos aligns the allocation to more than 8 bytes).
  const std::uintptr_t data = reinterpret_cast<std::uintptr_t>(storage.data());
  const ZeroFill fill{reinterpret_cast<char*>(data / 8 * 8),
                      static_cast<index_t>(data % 8 + data_bytes)};
  launch_and_wait("zero-fill [" + label + "]", fill.words(), fill);
  return storage;
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
