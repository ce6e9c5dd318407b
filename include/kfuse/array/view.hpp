// The Kokkos views behind arrays: rank-N, LayoutRight (row-major), in the
// default execution space's memory.
#pragma once

#include <atomic>
#include <cstddef>

#include <Kokkos_Core.hpp>

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

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

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
