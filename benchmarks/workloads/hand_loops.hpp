// Loops of the hand-written (`kokkos`) variants, as an expert CPU programmer
// writes them: a parallel loop over chunks of indices (rank 1) or over rows
// (rank 2) with a contiguous inner loop marked independent, and sums kept in
// local variables (registers) for a chunk or row, added to Kokkos's reduction
// value once. A kernel that stores arrays and sums per point into Kokkos's
// value (a reference the compiler cannot tell apart from the stored arrays)
// turns every sum into a store and a reload: about 5x slower on these CPUs.
#pragma once

#include <cstdint>
#include <string>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench::hand {

using IndexRange = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;

/// Base of functors reducing M sums at once (Kokkos array reductions).
template <unsigned M>
struct SumsOf {
  using value_type = double[];
  static constexpr unsigned value_count = M;
  KOKKOS_INLINE_FUNCTION void init(double* sums) const {
    for (unsigned m = 0; m < M; ++m) sums[m] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(double* into, const double* from) const {
    for (unsigned m = 0; m < M; ++m) into[m] += from[m];
  }
#if !KFUSE_KOKKOS_4
  KOKKOS_INLINE_FUNCTION void join(volatile double* into, const volatile double* from) const {
    for (unsigned m = 0; m < M; ++m) into[m] += from[m];
  }
#endif
};

/// Indices per chunk of a rank-1 loop.
inline constexpr std::int64_t chunk_size =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible ? 512 : 1;

/// body(i, local) for i in [0, n), by chunks, M sums in `local`.
template <unsigned M, class Body>
struct Chunked : SumsOf<M> {
  Body body;
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t chunk, double* sums) const {
    double local[M];
    for (unsigned m = 0; m < M; ++m) local[m] = 0;
    const std::int64_t begin = chunk * chunk_size;
    const std::int64_t end = begin + chunk_size < n ? begin + chunk_size : n;
    KFUSE_INDEPENDENT_ITERATIONS
    for (std::int64_t i = begin; i < end; ++i) body(i, local);
    for (unsigned m = 0; m < M; ++m) sums[m] += local[m];
  }
};

/// parallel_reduce of body(i, sums) over [0, n) in chunks; M sums into `sums`.
template <unsigned M, class Body>
void reduce(const std::string& label, std::int64_t n, const Body& body, double* sums) {
  Kokkos::parallel_reduce(label, IndexRange(0, (n + chunk_size - 1) / chunk_size),
                          Chunked<M, Body>{{}, body, n}, sums);
}

/// A 2-D index box [lo0, hi0) x [lo1, hi1).
struct Range2 {
  std::int64_t lo0, lo1, hi0, hi1;
  bool empty() const { return lo0 >= hi0 || lo1 >= hi1; }
};

/// body(i, j, local) along row i, M sums in `local`.
template <unsigned M, class Body>
struct RowSums : SumsOf<M> {
  Body body;
  std::int64_t j0, j1;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double* sums) const {
    double local[M];
    for (unsigned m = 0; m < M; ++m) local[m] = 0;
    KFUSE_INDEPENDENT_ITERATIONS
    for (std::int64_t j = j0; j < j1; ++j) body(i, j, local);
    for (unsigned m = 0; m < M; ++m) sums[m] += local[m];
  }
};

/// parallel_reduce of body(i, j, sums) over a box by rows; M sums into `sums`.
template <unsigned M, class Body>
void reduce_box(const std::string& label, const Range2& box, const Body& body, double* sums) {
  Kokkos::parallel_reduce(label, IndexRange(box.lo0, box.hi0),
                          RowSums<M, Body>{{}, body, box.lo1, box.hi1}, sums);
}

/// body(i, j) along row i.
template <class Body>
struct RowLoop {
  Body body;
  std::int64_t j0, j1;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    KFUSE_INDEPENDENT_ITERATIONS
    for (std::int64_t j = j0; j < j1; ++j) body(i, j);
  }
};

/// parallel_for of body(i, j) over a box by rows.
template <class Body>
void for_box(const std::string& label, const Range2& box, const Body& body) {
  Kokkos::parallel_for(label, IndexRange(box.lo0, box.hi0), RowLoop<Body>{body, box.lo1, box.hi1});
}

/// The owned box of a grid's arrays, in view coordinates.
inline Range2 owned_box(const Grid<2>& grid) {
  const std::int64_t h = grid.halo();
  return {h, h, h + grid.local_extent(0), h + grid.local_extent(1)};
}

}  // namespace kfuse::bench::hand
