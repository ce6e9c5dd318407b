// Loops of the hand-written (`kokkos`) variants, as an expert CPU programmer
// writes them: a parallel loop over chunks of indices (rank 1) or over rows
// (rank 2) with a contiguous inner loop marked independent, and sums kept in
// local variables (registers) for a chunk or row, split over lanes kept sum by
// sum (a sparse row: two lanes, a row after the other), added to Kokkos's
// reduction value once. A kernel that stores arrays and sums per
// point into Kokkos's value (a reference the compiler cannot tell apart from
// the stored arrays) turns every sum into a store and a reload: about 5x
// slower on these CPUs; one running sum instead of lanes chains every add to
// the previous one: 2-4x slower in CG's kernels alone. A point's loads come before its
// stores, as kfuse's kernels order them (exec/statements.hpp, StoreView): arrays start on
// 2 MiB boundaries, so a store and a later load of another array at the same point agree
// in the low address bits the CPU compares first, and the load waits for the store
// (stencil_jacobi's sweep 5-20% slower with its store first). On GPUs, as a GPU programmer writes
// them: a thread per point, a box's points as one flat range, reductions as a team
// policy (the schedule of kfuse's own GPU kernels, kfuse/core/box_loop.hpp). A host loop
// runs a copy of its body made in the call, so that the body's numbers (alpha, omega) stay
// in registers: the loop's stores of doubles may otherwise be the functor's own double
// members, reloaded after every store (kfuse's kernels hold theirs as integers, exec/
// lower.hpp's HeldValue). The copy's views count no references: Kokkos copied the functor
// with reference counting off, and copies of such views carry that on.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench::hand {

using IndexRange = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;

/// M sums reduced at once. A struct, not a Kokkos array reduction: Kokkos 3
/// and 4 take it the same way.
template <unsigned M>
struct Sums {
  double v[M];
};

/// Base of functors reducing M sums at once.
template <unsigned M>
struct SumsOf {
  using value_type = Sums<M>;
  KOKKOS_INLINE_FUNCTION void init(value_type& sums) const {
    for (unsigned m = 0; m < M; ++m) sums.v[m] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(value_type& into, const value_type& from) const {
    for (unsigned m = 0; m < M; ++m) into.v[m] += from.v[m];
  }
  KFUSE_VOLATILE_JOIN(value_type)
};

/// Runs a parallel_reduce of `functor` (a SumsOf<M>) and stores its M sums in `sums`.
template <unsigned M, class Policy, class Functor>
void reduce_into(const std::string& label, const Policy& policy, const Functor& functor,
                 double* sums) {
  Sums<M> total;
  Kokkos::parallel_reduce(label, policy, functor, total);
  for (unsigned m = 0; m < M; ++m) sums[m] = total.v[m];
}

/// Runs detail::reduce_box of `functor` (a SumsOf<M>) over `box` and stores its M sums in `sums`.
template <unsigned M, int N, class Functor>
void reduce_points(const std::string& label, const detail::Box<N>& box, const Functor& functor,
                   double* sums) {
  Sums<M> total;
  detail::reduce_box(label, box, functor, total);
  for (unsigned m = 0; m < M; ++m) sums[m] = total.v[m];
}

/// Host CPUs loop along a chunk or row inside the functor; GPUs take a thread
/// per point (a thread per row would read memory strided across a warp).
inline constexpr bool host_loops =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible;

// A host chunk's or row's loop is a function of its own (KFUSE_NOINLINE on the functors'
// operator() below), called once per chunk or row, as kfuse's host kernels are
// (exec/kernel.hpp, HostCalls). Inlined into Kokkos' loop over the rows, GCC compiled
// cfd's sweep about a quarter slower (docs/benchmarks-log.md, 2026-11-30).

/// Indices per chunk of a rank-1 loop.
inline constexpr std::int64_t chunk_size = host_loops ? 1024 : 1;

/// Independent partial sums of a host loop: point k of a loop adds into lane
/// k % lanes, so consecutive points' adds do not wait on each other and a
/// vector of points adds into a vector of sums.
inline constexpr int lanes = 8;

/// Lane l of a host chunk's or row's lanes, kept sum by sum (lane[m][l], as kfuse's
/// are): sums[m] is sum m's lane l. Lanes kept point by point (lane[l][m])
/// interleave a kernel's sums, and the vectorised loop transposes them at every step.
template <unsigned M>
struct LaneSums {
  double (*lane)[lanes];
  int l;
  KOKKOS_INLINE_FUNCTION double& operator[](unsigned m) const { return lane[m][l]; }
};

/// Software prefetch of a stencil's rows from memory, as an expert adds it to a sweep: a
/// row that reads its arrays' neighbouring rows, which the rows before left in the
/// caches, leaves the hardware prefetchers too few of memory's lines in flight (kfuse's
/// host loops prefetch the same rows, kfuse/exec/prefetch.hpp, which has the figures). A
/// body that reads other rows than the point's names, for row i, each array's leading row
/// (its largest row offset) and each row it stores: `RowsAhead<R, W> ahead(i) const`, the
/// rows' first elements; the row loops prefetch them 8 KiB ahead of the point, a line
/// each `lanes` points, the rows read into the second-level cache as kfuse does.
template <int Reads, int Writes>
struct RowsAhead {
  static constexpr int reads = Reads, writes = Writes;
  static constexpr std::int64_t distance = 1024;  // doubles
  const double* read[Reads];
  const double* written[Writes > 0 ? Writes : 1];
  KOKKOS_FORCEINLINE_FUNCTION void at(std::int64_t j) const {
    for (int r = 0; r < Reads; ++r)
      detail::prefetch_line<detail::PrefetchFor::read_far>(
          reinterpret_cast<const char*>(read[r] + j + distance));
    for (int w = 0; w < Writes; ++w)
      detail::prefetch_line<detail::PrefetchFor::write>(
          reinterpret_cast<const char*>(written[w] + j + distance));
  }
  /// The rows read only, at j: a loop that streams its stores does not fetch their lines.
  KOKKOS_FORCEINLINE_FUNCTION void reads_at(std::int64_t j) const {
    for (int r = 0; r < Reads; ++r)
      detail::prefetch_line<detail::PrefetchFor::read_far>(
          reinterpret_cast<const char*>(read[r] + j + distance));
  }
  /// The lines of points j to j + block.
  KOKKOS_FORCEINLINE_FUNCTION void block(std::int64_t j) const {
    for (int line = 0; line < block_points; line += lanes) at(j + line);
  }
  static constexpr int block_points = 64;
};

/// Where a body's point puts the values it stores: `put(view, i, j, w, value)` for the w-th
/// row of its RowsAhead's `written`. Stored: straight to the view. Staged: into line w of a
/// row loop's stage, at the point's place in its cache line, which the loop then writes to
/// memory whole with a streaming store (kfuse/core/stream_store.hpp, as kfuse's loops do:
/// a row stored without being read moves no line from memory first). A body whose stored
/// arrays it does not read takes a `put` (`template <class Lane, class Put = hand::Stored>
/// operator()(i, j, [sums,] Put put = {})`) and says so: `static constexpr bool
/// streams_stores = true`. The stage is a thread's own, memory GCC cannot tell from the
/// arrays: in a body that loads its operands first and puts each value as it computes it
/// (swe_kokkos.cpp), a put between the loads and their later uses keeps the loads in
/// registers, as in kfuse's streamed calls (kfuse/exec/kernel.hpp, StreamedStore). With a
/// stage on the stack GCC folded them into every use as memory operands: SWE's sweep 39
/// vector loads a line of 8 points instead of 16, most split over two cache lines, 1.35x
/// the time.
struct Stored {
  template <class View>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const View& view, std::int64_t i, std::int64_t j, int,
                                              double value) const {
    view(i, j) = value;
  }
};
template <int Writes>
struct Staged {
  double (*line)[detail::stream_line_doubles];
  int at;
  template <class View>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const View&, std::int64_t, std::int64_t, int w,
                                              double value) const {
    line[w][at] = value;
  }
};

template <class Body, class = void>
struct streams_stores : std::false_type {};
template <class Body>
struct streams_stores<Body, std::enable_if_t<Body::streams_stores>>
    : std::bool_constant<detail::stream_stores_available> {};

/// The line a row loop that streams starts at (detail::first_whole_line of its stored rows).
template <class Ahead>
std::int64_t first_whole_line(const Ahead& ahead, std::int64_t j0, std::int64_t j1) {
  return detail::first_whole_line(ahead.written, Ahead::writes, j0, j1);
}

/// The rows ahead of a body that names none: nothing prefetched.
struct NoRowsAhead {
  KOKKOS_FORCEINLINE_FUNCTION void at(std::int64_t) const {}
};

template <class Body, class = void>
struct has_rows_ahead : std::false_type {};
template <class Body>
struct has_rows_ahead<Body, std::void_t<decltype(std::declval<const Body&>().ahead(0))>>
    : std::bool_constant<KFUSE_HOST_PREFETCH> {};  // kfuse's switch turns both off

/// point(k, local) for k in [begin, end), M sums split over the lanes, then
/// added to `sums` (a host chunk or row); `ahead` prefetches a row's streams.
/// sum_over_lanes with the stores streamed (Staged): false, and nothing run, where the row
/// holds no whole line that all its stored rows share. A point adds into the lane of its
/// place in its cache line, as kfuse's streamed loops do.
template <unsigned M, class Body, class Ahead>
bool sum_over_lanes_streamed(std::int64_t i, std::int64_t begin, std::int64_t end, const Body& body,
                             double* sums, const Ahead& ahead) {
  constexpr int line = detail::stream_line_doubles, writes = Ahead::writes;
  const std::int64_t first = first_whole_line(ahead, begin, end);
  if (first + line > end) return false;
  // The sums held as vectors between lines and copied into an array for each (kfuse's
  // HeldLanes): GCC keeps an array's sums in registers only across a loop that cannot write
  // to it, and a streaming store might; they went through the stack at every line.
  typedef double LaneVector __attribute__((vector_size(sizeof(double) * lanes)));
  LaneVector held[M] = {};
  alignas(64) static thread_local double stage[writes][line];  // see Stored
  std::int64_t j = first;
  for (; j + line <= end; j += line) {
    ahead.reads_at(j);
    double lane[M][lanes];
    std::memcpy(lane, held, sizeof lane);
    KFUSE_INDEPENDENT_LANES
    for (int l = 0; l < line; ++l) body(i, j + l, LaneSums<M>{lane, l}, Staged<writes>{stage, l});
    std::memcpy(held, lane, sizeof lane);
    for (int w = 0; w < writes; ++w)
      detail::stream_line(const_cast<double*>(ahead.written[w]) + j, stage[w]);
  }
  double rest[M][lanes];
  std::memcpy(rest, held, sizeof rest);
  // The points outside whole lines through the stage too, each value then stored as usual:
  // one copy of the body in the loop, as kfuse's (kfuse/exec/kernel.hpp, InnerLoop::streamed).
  const auto partial = [&](std::int64_t k) {
    const int at = detail::line_position(ahead.written[0] + k);
    body(i, k, LaneSums<M>{rest, at}, Staged<writes>{stage, at});
    for (int w = 0; w < writes; ++w) const_cast<double*>(ahead.written[w])[k] = stage[w][at];
  };
  for (std::int64_t k = begin; k < first; ++k) partial(k);
  for (; j < end; ++j) partial(j);
  detail::stream_fence();
  for (unsigned m = 0; m < M; ++m) {
    for (int step = 1; step < lanes; step *= 2)
      for (int l = 0; l + step < lanes; l += 2 * step) rest[m][l] += rest[m][l + step];
    sums[m] += rest[m][0];
  }
  return true;
}

template <unsigned M, class Point, class Ahead = NoRowsAhead>
KOKKOS_INLINE_FUNCTION void sum_over_lanes(std::int64_t begin, std::int64_t end, const Point& point,
                                           double* sums, const Ahead& ahead = {},
                                           bool prefetching = false) {
  double lane[M][lanes] = {};
  std::int64_t k = begin;
  for (; k + lanes <= end; k += lanes) {
    if (prefetching) ahead.at(k);
    KFUSE_INDEPENDENT_LANES
    for (int l = 0; l < lanes; ++l) point(k + l, LaneSums<M>{lane, l});
  }
  for (int l = 0; k + l < end; ++l) point(k + l, LaneSums<M>{lane, l});
  for (unsigned m = 0; m < M; ++m) {
    double total = 0;
    for (int l = 0; l < lanes; ++l) total += lane[m][l];
    sums[m] += total;
  }
}

/// point(k, local) for k in [begin, end) where a point has a loop of its own (a sparse
/// row): one point after the other, alternately into two lanes held in registers. Eight
/// interleaved points run eight row loops at once, and lanes in memory picked by k % 8
/// add addresses: either way the row loop ran out of general registers and reloaded its
/// array addresses from vector registers at every entry (product kernels 1.4-1.9x slower).
template <unsigned M, class Point>
KOKKOS_INLINE_FUNCTION void sum_rows_over_two_lanes(std::int64_t begin, std::int64_t end,
                                                    const Point& point, double* sums) {
  double even[M] = {}, odd[M] = {};
  std::int64_t k = begin;
  for (; k + 2 <= end; k += 2) {
    point(k, even);
    point(k + 1, odd);
  }
  if (k < end) point(k, even);
  for (unsigned m = 0; m < M; ++m) sums[m] += even[m] + odd[m];
}

/// body(i, local) for i in [0, n), by chunks (host CPUs); Rows: body is a sparse row.
template <unsigned M, class Body, bool Rows>
struct Chunked : SumsOf<M> {
  Body body;
  std::int64_t n;
  KFUSE_NOINLINE void operator()(std::int64_t chunk, Sums<M>& sums) const {
    const std::int64_t begin = chunk * chunk_size;
    const std::int64_t end = begin + chunk_size < n ? begin + chunk_size : n;
    const Body local = body;  // numbers in registers (the file's first lines)
    if constexpr (Rows)
      sum_rows_over_two_lanes<M>(begin, end, local, sums.v);
    else
      sum_over_lanes<M>(begin, end, local, sums.v);
  }
};

/// body(i, sums) or body(i, j, sums) at one point (GPUs).
template <unsigned M, class Body>
struct PointSums : SumsOf<M> {
  Body body;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Sums<M>& sums) const { body(i, sums.v); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Sums<M>& sums) const {
    body(i, j, sums.v);
  }
};

/// parallel_reduce of body(i, sums) over [0, n): in chunks on host CPUs, a thread per point on
/// GPUs (detail::reduce_box: a team policy, whose reductions launch enough blocks to stream
/// memory, kfuse/core/box_loop.hpp); M sums into `sums`. Rows: body(i, ...) reads a sparse
/// row (reduce_rows).
template <unsigned M, bool Rows = false, class Body>
void reduce(const std::string& label, std::int64_t n, const Body& body, double* sums) {
  if (n == 0) {
    for (unsigned m = 0; m < M; ++m) sums[m] = 0;
    return;
  }
  if constexpr (host_loops)
    reduce_into<M>(label, IndexRange(0, (n + chunk_size - 1) / chunk_size),
                   Chunked<M, Body, Rows>{{}, body, n}, sums);
  else
    reduce_points<M>(label, detail::Box<1>{{0}, {n}}, PointSums<M, Body>{{}, body}, sums);
}

/// reduce of a body that reads a sparse row (sum_rows_over_two_lanes).
template <unsigned M, class Body>
void reduce_rows(const std::string& label, std::int64_t n, const Body& body, double* sums) {
  reduce<M, true>(label, n, body, sums);
}

/// body(i) for the indices of one chunk of [begin, end), the inner loop marked independent.
template <class Body>
struct ChunkLoop {
  Body body;
  std::int64_t begin, end;
  KFUSE_NOINLINE void operator()(std::int64_t chunk) const {
    const std::int64_t first = begin + chunk * chunk_size;
    const std::int64_t last = first + chunk_size < end ? first + chunk_size : end;
    const Body local = body;  // numbers in registers (the file's first lines)
    KFUSE_INDEPENDENT_ITERATIONS
    for (std::int64_t i = first; i < last; ++i) local(i);
  }
};

/// parallel_for of body(i) over [begin, end): on host CPUs by chunks, each a loop of its
/// own, as kfuse's host kernels run (a RangePolicy over the points, whose loop reads the
/// body's views through the functor, made the solvers' updates and sparse products without
/// sums 1.1-1.3x slower than kfuse's, 2026-12-07 (night)); kfuse's schedule on GPUs (a
/// 256-thread team per 256 points: Kokkos' RangePolicy takes 64-thread blocks).
template <class Body>
void for_points(const std::string& label, std::int64_t begin, std::int64_t end, const Body& body) {
  if (begin >= end) return;
  if constexpr (host_loops)
    Kokkos::parallel_for(label, IndexRange(0, (end - begin + chunk_size - 1) / chunk_size),
                         ChunkLoop<Body>{body, begin, end});
  else
    detail::for_box(label, detail::Box<1>{{begin}, {end}}, body);
}

/// A 2-D index box [lo0, hi0) x [lo1, hi1).
struct Range2 {
  std::int64_t lo0, lo1, hi0, hi1;
  bool empty() const { return lo0 >= hi0 || lo1 >= hi1; }
};

/// Whether a box of a body that names rows ahead streams them from memory, as kfuse decides
/// for its own launches (kfuse/exec/prefetch.hpp): only then do the row loops prefetch.
template <class Body>
bool streams_from_memory(const Body& body, const Range2& box) {
  if constexpr (has_rows_ahead<Body>::value) {
    using Ahead = decltype(body.ahead(0));
    const std::int64_t points = (box.hi0 - box.lo0) * (box.hi1 - box.lo1);
    return detail::streams_from_memory(
        std::int64_t(sizeof(double)) * (Ahead::reads + Ahead::writes), points);
  }
  return false;
}

/// body(i, j, local) at column j of row i (a point of sum_over_lanes).
template <class Body>
struct AlongRow {
  const Body& body;
  std::int64_t i;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j, Lane local) const {
    body(i, j, local);
  }
};

/// body(i, j, local) along row i, M sums split over the lanes (host CPUs).
template <unsigned M, class Body>
struct RowSums : SumsOf<M> {
  Body body;
  std::int64_t j0, j1;
  bool prefetching;
  KFUSE_NOINLINE void operator()(std::int64_t i, Sums<M>& sums) const {
    const Body local = body;  // numbers in registers (the file's first lines)
    if constexpr (has_rows_ahead<Body>::value && streams_stores<Body>::value)
      if (prefetching && sum_over_lanes_streamed<M>(i, j0, j1, local, sums.v, local.ahead(i)))
        return;
    if constexpr (has_rows_ahead<Body>::value)
      sum_over_lanes<M>(j0, j1, AlongRow<Body>{local, i}, sums.v, local.ahead(i), prefetching);
    else
      sum_over_lanes<M>(j0, j1, AlongRow<Body>{local, i}, sums.v);
  }
};

/// The box as kfuse's loops take it: on GPUs they run a thread per point as a flat range,
/// coalesced along rows, where Kokkos 3.4's MDRangePolicy is slow (kfuse/core/box_loop.hpp).
inline detail::Box<2> points_of(const Range2& box) {
  return {{box.lo0, box.lo1}, {box.hi0, box.hi1}};
}

/// parallel_reduce of body(i, j, sums) over a box (by rows on host CPUs); M sums into `sums`.
template <unsigned M, class Body>
void reduce_box(const std::string& label, const Range2& box, const Body& body, double* sums) {
  if constexpr (host_loops)
    reduce_into<M>(label, IndexRange(box.lo0, box.hi0),
                   RowSums<M, Body>{{}, body, box.lo1, box.hi1, streams_from_memory(body, box)},
                   sums);
  else
    reduce_points<M>(label, points_of(box), PointSums<M, Body>{{}, body}, sums);
}

/// body(i, j) along row i; blocks of 64 points where it prefetches rows (kfuse's loops do the
/// same: a step of `lanes` points vectorised worse), each path a function of its own (with
/// both in one, GCC compiled cfd's plain sweep 1.25x slower).
template <class Body>
struct RowLoop {
  Body body;
  std::int64_t j0, j1;
  bool prefetching;
  void operator()(std::int64_t i) const {
    if constexpr (has_rows_ahead<Body>::value && streams_stores<Body>::value)
      if (prefetching && streamed(i)) return;
    if constexpr (has_rows_ahead<Body>::value)
      if (prefetching) return prefetched(i);
    plain(i);
  }
  /// The row with its stores streamed (Staged), as sum_over_lanes_streamed.
  KFUSE_NOINLINE bool streamed(std::int64_t i) const {
    const Body local = body;
    const auto ahead = local.ahead(i);
    constexpr int line = detail::stream_line_doubles, writes = decltype(ahead)::writes;
    const std::int64_t first = first_whole_line(ahead, j0, j1);
    if (first + line > j1) return false;
    alignas(64) static thread_local double stage[writes][line];  // see Stored
    std::int64_t j = first;
    for (; j + line <= j1; j += line) {
      ahead.reads_at(j);
      KFUSE_INDEPENDENT_LANES
      for (int l = 0; l < line; ++l) local(i, j + l, Staged<writes>{stage, l});
      for (int w = 0; w < writes; ++w)
        detail::stream_line(const_cast<double*>(ahead.written[w]) + j, stage[w]);
    }
    const auto partial = [&](std::int64_t k) {  // as sum_over_lanes_streamed's
      const int at = detail::line_position(ahead.written[0] + k);
      local(i, k, Staged<writes>{stage, at});
      for (int w = 0; w < writes; ++w) const_cast<double*>(ahead.written[w])[k] = stage[w][at];
    };
    for (std::int64_t k = j0; k < first; ++k) partial(k);
    for (; j < j1; ++j) partial(j);
    detail::stream_fence();
    return true;
  }
  KFUSE_NOINLINE void plain(std::int64_t i) const {
    const Body local = body;  // numbers in registers (the file's first lines)
    KFUSE_INDEPENDENT_ITERATIONS
    for (std::int64_t j = j0; j < j1; ++j) local(i, j);
  }
  KFUSE_NOINLINE void prefetched(std::int64_t i) const {
    const Body local = body;
    const auto ahead = local.ahead(i);
    constexpr int block = decltype(ahead)::block_points;
    std::int64_t j = j0;
    for (; j + block <= j1; j += block) {
      ahead.block(j);
      KFUSE_INDEPENDENT_ITERATIONS
      for (std::int64_t m = j; m < j + block; ++m) local(i, m);
    }
    KFUSE_INDEPENDENT_ITERATIONS
    for (; j < j1; ++j) local(i, j);
  }
};

/// body(i, j) at one point (GPUs).
template <class Body>
struct PointLoop {
  Body body;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const { body(i, j); }
};

/// parallel_for of body(i, j) over a box (by rows on host CPUs).
template <class Body>
void for_box(const std::string& label, const Range2& box, const Body& body) {
  if constexpr (host_loops)
    Kokkos::parallel_for(label, IndexRange(box.lo0, box.hi0),
                         RowLoop<Body>{body, box.lo1, box.hi1, streams_from_memory(body, box)});
  else
    detail::for_box(label, points_of(box), PointLoop<Body>{body});
}

/// The owned box of a grid's arrays, in view coordinates.
inline Range2 owned_box(const Grid<2>& grid) {
  const std::int64_t h = grid.halo();
  return {h, h, h + grid.local_extent(0), h + grid.local_extent(1)};
}

/// A stencil's owned box cut for a halo exchange in flight, as kfuse's overlapped kernels
/// cut theirs: the interior, shrunk by the halo width only at faces whose halo comes by message
/// (a fixed boundary's is ready at once), and the strips around it (the rows above and
/// below the interior across, then the columns beside it); the whole box is one strip when
/// the block is too thin for an interior.
struct OverlapBoxes {
  Range2 owned, interior{};
  std::vector<Range2> strips;

  explicit OverlapBoxes(const Grid<2>& grid) : owned(owned_box(grid)) {
    const HaloExchange<2> faces(grid);
    auto margin = [&](int d, int side) -> std::int64_t {
      return faces.ready_after_start(d, side) ? 0 : grid.halo();
    };
    interior = {owned.lo0 + margin(0, 0), owned.lo1 + margin(1, 0), owned.hi0 - margin(0, 1),
                owned.hi1 - margin(1, 1)};
    if (interior.empty()) {
      interior = {0, 0, 0, 0};
      strips.push_back(owned);
      return;
    }
    const Range2 in = interior;
    for (const Range2& strip :
         {Range2{owned.lo0, owned.lo1, in.lo0, owned.hi1},
          Range2{in.hi0, owned.lo1, owned.hi0, owned.hi1},
          Range2{in.lo0, owned.lo1, in.hi0, in.lo1}, Range2{in.lo0, in.hi1, in.hi0, owned.hi1}})
      if (!strip.empty()) strips.push_back(strip);
  }
};

/// launch(label, box) over the owned box while `exchange` brings the halo it reads:
/// start(), the interior, finish(), then each strip (labelled ":boundary", as kfuse labels
/// its second launches); one launch when the exchange has nothing to bring.
template <class Launch>
void overlapped(const std::string& label, const OverlapBoxes& boxes, HaloExchange<2>& exchange,
                const Launch& launch) {
  if (exchange.empty()) return launch(label, boxes.owned);
  exchange.start();
  if (!boxes.interior.empty()) launch(label, boxes.interior);
  exchange.finish();
  for (const Range2& strip : boxes.strips) launch(label + ":boundary", strip);
}

/// for_box of body(i, j) over the owned box, overlapped with `exchange`.
template <class Body>
void for_box_overlapped(const std::string& label, const OverlapBoxes& boxes,
                        HaloExchange<2>& exchange, const Body& body) {
  overlapped(label, boxes, exchange,
             [&](const std::string& name, const Range2& box) { for_box(name, box, body); });
}

/// reduce_box of body(i, j, sums) over the owned box, overlapped with `exchange`; M sums
/// into `sums`.
template <unsigned M, class Body>
void reduce_box_overlapped(const std::string& label, const OverlapBoxes& boxes,
                           HaloExchange<2>& exchange, const Body& body, double* sums) {
  for (unsigned m = 0; m < M; ++m) sums[m] = 0;
  overlapped(label, boxes, exchange, [&](const std::string& name, const Range2& box) {
    double part[M];
    reduce_box<M>(name, box, body, part);
    for (unsigned m = 0; m < M; ++m) sums[m] += part[m];
  });
}

}  // namespace kfuse::bench::hand
