// Parallel loops over an index box (view coordinates), a thread per point on GPUs.
//
// On a GPU a box of rank 2 or more runs as one 1-D launch over its points, index k split
// row-major into (i, j, ...), rather than as an MDRangePolicy. Kokkos 3.4's CUDA
// MDRangePolicy maps threadIdx.x to the first dimension, the strided one of a LayoutRight
// view, in blocks of its default tile (16 x 2: 32 threads); its reductions run only the
// first tile-product threads of each block, in at most block-size blocks. Every 2-D
// reduction, kfuse's and the hand-written benchmarks' alike, ran at 6-7% of an H100's
// STREAM triad so. A flat range is read coalesced along the contiguous last dimension
// and launched like every 1-D kernel; the price is an integer division per dimension
// beyond the first. Host CPUs take a RangePolicy over rows instead, each a plain loop
// along the last dimension (kfuse's own kernels too: exec/kernel.hpp).
//
// A GPU loop is a TeamPolicy of 256-thread teams, not a RangePolicy. Kokkos' CUDA
// RangePolicy (3.4) takes the smallest block that reaches the highest theoretical
// occupancy: 64 threads for a light kernel. Such blocks live for a few loads each, the
// multiprocessors start them more slowly than they finish (30% achieved occupancy on an
// H200), and streaming kernels ran at 2.4 TB/s where the same loads and stores in a
// 256-thread team kernel ran at 3.5 TB/s. A parallel_for takes a team per 256 points, a
// thread a point (TeamBoxFor). A reduction's RangePolicy launches at most as many blocks as a
// block has threads (3.4: 256 of 256), a quarter of an H100's threads, too few loads in
// flight to stream: a fused kernel whose points do much (a sparse row and a dot product, a
// stencil and a norm) ran at 37-53% of the device triad, where the same statements as
// separate kernels ran at 97%. A reduction takes as many teams as the device holds threads
// for (ReduceLeague), striding through the points together (TeamBoxReduce).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/core/spaces.hpp"
#include "kfuse/core/view.hpp"

namespace kfuse::detail {

/// Schedules: how a loop's points map onto threads, one per kind of execution space. A
/// backend whose threads want another mapping adds a schedule, its BoxLoops below and its
/// GroupLauncher (exec/kernel.hpp) (docs/architecture.md §13.4).
struct HostSchedule {};    ///< host CPUs: a range of rows, each a loop along the last dimension
struct DeviceSchedule {};  ///< GPUs: a flat range, a thread per point; reductions by teams

/// The schedule of ExecSpace. A program compiled with KFUSE_DEVICE_SCHEDULE_ON_HOST=1 runs
/// the GPU schedule on a host backend, so that builds without a GPU test it too
/// (tests/program, *.device_schedule).
#if defined(KFUSE_DEVICE_SCHEDULE_ON_HOST) && KFUSE_DEVICE_SCHEDULE_ON_HOST
using default_schedule = DeviceSchedule;
#else
using default_schedule =
    std::conditional_t<std::is_same_v<ExecSpace, Kokkos::DefaultHostExecutionSpace>, HostSchedule,
                       DeviceSchedule>;
#endif

/// Division by a fixed divisor d (1 <= d < 2^32) of numerators below 2^32, as a multiply, an
/// add and a shift (Granlund and Montgomery's round-up method, Hacker's Delight 10-9). A GPU
/// has no integer divider: nvcc's 64-bit division takes a 32-bit path when both operands fit,
/// and that is a conversion to float, a reciprocal, a conversion back and corrections (the
/// first three at a quarter of the multiply-add rate on Hopper), made for every dimension but
/// the first of every point of a flat box.
struct NarrowDivisor {
  std::uint32_t divisor = 1, magic = 1;
  int shift = 0;

  NarrowDivisor() = default;
  explicit NarrowDivisor(std::uint32_t d) : divisor(d) {
    while ((std::uint64_t(1) << shift) < d) ++shift;  // ceil(log2(d))
    magic = std::uint32_t(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << shift) - d)) / d + 1);
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t divide(std::uint32_t n) const {
    const std::uint64_t high = (std::uint64_t(n) * magic) >> 32;
    return std::uint32_t((high + n) >> shift);
  }
};

/// The points of a box as one flat range [0, size()), row-major.
template <int N>
struct FlatBox {
  index_t lo[N];
  index_t extent[N];
  /// Every flat index fits in 32 bits (the common case): call() divides by `narrow`.
  bool is_narrow = false;
  NarrowDivisor narrow[N];

  explicit FlatBox(const Box<N>& box) {
    for (int d = 0; d < N; ++d) {
      lo[d] = box.lo[d];
      extent[d] = box.hi[d] > box.lo[d] ? box.hi[d] - box.lo[d] : 0;
    }
    is_narrow = size() <= index_t(UINT32_MAX);
    if (is_narrow)
      for (int d = 1; d < N; ++d)
        if (extent[d] > 0) narrow[d] = NarrowDivisor(std::uint32_t(extent[d]));
  }
  index_t size() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d) n *= extent[d];
    return n;
  }
  /// f(i, j, ..., rest...) at point k.
  template <class F, class... Rest>
  KOKKOS_INLINE_FUNCTION void call(index_t k, const F& f, Rest&... rest) const {
    index_t index[N];
    if (is_narrow) {  // the same for every thread of a launch: no divergence
      std::uint32_t n = std::uint32_t(k);
      for (int d = N - 1; d > 0; --d) {
        const std::uint32_t q = narrow[d].divide(n);
        index[d] = lo[d] + index_t(n - q * narrow[d].divisor);
        n = q;
      }
      index[0] = lo[0] + index_t(n);
    } else {
      for (int d = N - 1; d > 0; --d) {
        const index_t q = k / extent[d];
        index[d] = lo[d] + (k - q * extent[d]);
        k = q;
      }
      index[0] = lo[0] + k;
    }
    call_with(index, f, std::make_integer_sequence<int, N>{}, rest...);
  }

 private:
  template <class F, int... D, class... Rest>
  KOKKOS_INLINE_FUNCTION static void call_with(const index_t (&index)[N], const F& f,
                                               std::integer_sequence<int, D...>, Rest&... rest) {
    f(index[D]..., rest...);
  }
};

/// TeamPolicy parallel_for functor (GPUs): f(i, j, ...) at flat point k = team * threads +
/// rank, a thread a point.
template <int N, class F>
struct TeamBoxFor {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  F f;
  FlatBox<N> box;
  index_t size;  // box.size(), not recomputed per thread
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const index_t k = index_t(team.league_rank()) * team.team_size() + team.team_rank();
    if (k < size) box.call(k, f);
  }
};

/// parallel_for functor (host CPUs): f(i, j, k) along row `row` of the outer dimensions of
/// a rank-2 or rank-3 box (rows in memory order, the last dimension a plain loop).
template <int N, class F>
struct HostRowsFor {
  F f;
  Box<N> box;
  KOKKOS_INLINE_FUNCTION void operator()(index_t row) const {
    if constexpr (N == 2) {
      for (index_t k = box.lo[1]; k < box.hi[1]; ++k) f(box.lo[0] + row, k);
    } else {
      const index_t columns = box.hi[1] - box.lo[1];
      const index_t i = box.lo[0] + row / columns, j = box.lo[1] + row % columns;
      for (index_t k = box.lo[2]; k < box.hi[2]; ++k) f(i, j, k);
    }
  }
};

/// Base of the reduction functors below: f, and f's value_type, init and join.
template <class F>
struct ReducesAs {
  using value_type = typename F::value_type;
  F f;
  KOKKOS_INLINE_FUNCTION void init(value_type& value) const { f.init(value); }
  KOKKOS_INLINE_FUNCTION void join(value_type& into, const value_type& from) const {
    f.join(into, from);
  }
  KFUSE_VOLATILE_JOIN(value_type)
};

/// parallel_reduce functor (host CPUs): f(i, j, ..., value) at flat point k.
template <int N, class F>
struct FlatBoxReduce : ReducesAs<F> {
  FlatBox<N> box;
  KOKKOS_INLINE_FUNCTION void operator()(index_t k, typename F::value_type& value) const {
    box.call(k, this->f, value);
  }
};

/// Threads a team of a GPU loop asks for (fewer where the backend allows fewer: one on
/// Serial).
inline constexpr int device_team_threads = 256;

/// How a GPU reduction of `points` points is cut: `teams` teams of `threads` threads, as many
/// as the device holds threads for at once (`concurrency`), no more: Kokkos' CUDA reduction
/// ends with one warp of the last block reading every block's value (volatile loads, one
/// after the other), which at thousands of blocks costs tens of microseconds a reduction.
/// The league strides through the points together, a block of `threads` points per team and
/// step (first() and stride()), so that at any time its threads work on one contiguous
/// window of the points, as a thread-per-point launch does: a stencil's or a sparse row's
/// neighbours a grid row away are read again while still in the GPU's L2 cache. (Each team
/// taking a contiguous share of its own spreads the threads over `teams` windows, each
/// reading its neighbours from memory again.)
struct ReduceLeague {
  index_t teams;
  static ReduceLeague of(index_t points, int threads, index_t concurrency) {
    const index_t wanted = (points + threads - 1) / threads;
    const index_t held = concurrency / threads > 1 ? concurrency / threads : 1;
    return {wanted < held ? (wanted > 1 ? wanted : 1) : held};
  }
  /// The first point of thread `rank` of team `team`, and the step of every thread.
  KOKKOS_INLINE_FUNCTION static index_t first(index_t team, index_t rank, index_t threads) {
    return team * threads + rank;
  }
  KOKKOS_INLINE_FUNCTION static index_t stride(index_t teams, index_t threads) {
    return teams * threads;
  }
};

/// TeamPolicy parallel_reduce functor: f(i, j, ..., value) at each flat point of the box, the
/// league striding through it as ReduceLeague says (coalesced). Every thread sums into its own
/// value, and Kokkos joins those of every thread of every team.
template <int N, class F>
struct TeamBoxReduce : ReducesAs<F> {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  FlatBox<N> box;
  index_t size;  // box.size(), not recomputed per team
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, typename F::value_type& value) const {
    const index_t threads = team.team_size();
    const index_t step = ReduceLeague::stride(team.league_size(), threads);
    for (index_t k = ReduceLeague::first(team.league_rank(), team.team_rank(), threads); k < size;
         k += step)
      box.call(k, this->f, value);
  }
};

/// The largest functor launched with Kokkos' light-weight hint: below the 4 KiB of kernel
/// parameters Kokkos (3.4 and 4) passes such a functor in, with room for the policy.
inline constexpr std::size_t light_functor_bytes = 3072;

/// `policy` for `Functor`: a CUDA functor of 512 bytes or more goes, by default, through
/// constant memory, and that launch first waits on the host for the previous one to finish;
/// a fused kernel, holding every view and constant of its statements, is often that large.
/// The light-weight hint passes it as kernel parameters instead (ignored on host backends).
template <class Functor, class Policy>
auto light_if_small(const Policy& policy) {
  if constexpr (sizeof(Functor) <= light_functor_bytes)
    return Kokkos::Experimental::require(policy,
                                         Kokkos::Experimental::WorkItemProperty::HintLightWeight);
  else
    return policy;
}

/// [begin, end) for `Functor`.
template <class Functor>
auto range_for(index_t begin, index_t end) {
  return light_if_small<Functor>(
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(begin, end));
}

/// Threads a team of `functor` takes on a GPU: device_team_threads, fewer where its
/// registers or the backend allow fewer.
template <class Tag, class Functor>
int device_threads(const Functor& functor) {
  return std::min(device_team_threads,
                  Kokkos::TeamPolicy<ExecSpace>(1, 1).team_size_max(functor, Tag()));
}

/// parallel_for and parallel_reduce over a box, per schedule: for_box(label, box, f) calls
/// f(i, j, ...) at every point, reduce_box(label, box, f, result) f(i, j, ..., value).
template <class Schedule>
struct BoxLoops;

template <>
struct BoxLoops<HostSchedule> {
  /// A RangePolicy over points (rank 1) or rows (HostRowsFor): lighter to compile than an
  /// MDRangePolicy's tiles.
  template <int N, class F>
  static void for_box(const std::string& label, const Box<N>& box, const F& f) {
    if constexpr (N == 1) {
      Kokkos::parallel_for(label, range_for<F>(box.lo[0], box.hi[0]), f);
    } else {
      if (box.size() == 0) return;
      index_t rows = 1;
      for (int d = 0; d + 1 < N; ++d) rows *= box.hi[d] - box.lo[d];
      const HostRowsFor<N, F> loop{f, box};
      Kokkos::parallel_for(label, range_for<HostRowsFor<N, F>>(0, rows), loop);
    }
  }
  /// A flat RangePolicy (kfuse's own kernels reduce along rows inside their functors
  /// instead: exec/kernel.hpp's GroupLauncher).
  template <int N, class F>
  static void reduce_box(const std::string& label, const Box<N>& box, const F& f,
                         typename F::value_type& result) {
    if constexpr (N == 1) {
      Kokkos::parallel_reduce(label, range_for<F>(box.lo[0], box.hi[0]), f, result);
    } else {
      const FlatBox<N> flat(box);
      Kokkos::parallel_reduce(label, range_for<FlatBoxReduce<N, F>>(0, flat.size()),
                              FlatBoxReduce<N, F>{{f}, flat}, result);
    }
  }
};

template <>
struct BoxLoops<DeviceSchedule> {
  /// A team per device_team_threads points, a thread a point.
  template <int N, class F>
  static void for_box(const std::string& label, const Box<N>& box, const F& f) {
    using For = TeamBoxFor<N, F>;
    const FlatBox<N> flat(box);
    const For loop{f, flat, flat.size()};
    if (loop.size == 0) return;
    const int threads = device_threads<Kokkos::ParallelForTag>(loop);
    const Kokkos::TeamPolicy<ExecSpace> policy(int((loop.size + threads - 1) / threads), threads);
    Kokkos::parallel_for(label, light_if_small<For>(policy), loop);
  }
  /// A TeamPolicy of ReduceLeague's cut.
  template <int N, class F>
  static void reduce_box(const std::string& label, const Box<N>& box, const F& f,
                         typename F::value_type& result) {
    using Reduce = TeamBoxReduce<N, F>;
    const FlatBox<N> flat(box);
    const Reduce reduce{{f}, flat, flat.size()};
    const int threads = device_threads<Kokkos::ParallelReduceTag>(reduce);
    const auto league = ReduceLeague::of(reduce.size, threads, ExecSpace().concurrency());
    Kokkos::parallel_reduce(
        label, light_if_small<Reduce>(Kokkos::TeamPolicy<ExecSpace>(int(league.teams), threads)),
        reduce, result);
  }
};

/// parallel_for of f(i, j, ...) over `box`, on ExecSpace's schedule.
template <int N, class F>
void for_box(const std::string& label, const Box<N>& box, const F& f) {
  BoxLoops<default_schedule>::for_box(label, box, f);
}

/// parallel_reduce of f(i, j, ..., value) over `box` into `result`, on ExecSpace's schedule.
template <int N, class F>
void reduce_box(const std::string& label, const Box<N>& box, const F& f,
                typename F::value_type& result) {
  BoxLoops<default_schedule>::reduce_box(label, box, f, result);
}

}  // namespace kfuse::detail
