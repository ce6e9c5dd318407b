// Parallel loops over an index box (view coordinates), a thread per point on GPUs.
//
// On a GPU a box of rank 2 or more runs as one 1-D RangePolicy over its points, index k
// split row-major into (i, j, ...), rather than as an MDRangePolicy. Kokkos 3.4's CUDA
// MDRangePolicy maps threadIdx.x to the first dimension, the strided one of a LayoutRight
// view, in blocks of its default tile (16 x 2: 32 threads); its reductions run only the
// first tile-product threads of each block, in at most block-size blocks. Every 2-D
// reduction, kfuse's and the hand-written benchmarks' alike, ran at 6-7% of an H100's
// STREAM triad so. A flat range is read coalesced along the contiguous last dimension
// and launched like every 1-D kernel; the price is an integer division per dimension
// beyond the first. Host CPUs keep RangePolicy / MDRangePolicy over rows (kfuse's own
// kernels loop inside a row there: exec/kernel.hpp).
//
// A GPU reduction runs as a TeamPolicy, not as a RangePolicy parallel_reduce: Kokkos' CUDA
// RangePolicy reduction (3.4 and 4.x) launches at most as many blocks as a block has threads
// (3.4: 256 of 256), a quarter of an H100's threads, too few loads in flight to stream: a
// fused kernel whose points do much (a sparse row and a dot product, a stencil and a norm)
// ran at 37-53% of the device triad, where the same statements as separate kernels ran at
// 97%. A team policy's reduction launches a block per team, and kfuse asks for as many
// teams as the device holds threads for (ReduceLeague), each summing a share of the points.
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
struct HostSchedule {};    ///< host CPUs: boxes as MD ranges; kfuse's kernels loop along rows
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

/// The points of a box as one flat range [0, size()), row-major.
template <int N>
struct FlatBox {
  index_t lo[N];
  index_t extent[N];

  explicit FlatBox(const Box<N>& box) {
    for (int d = 0; d < N; ++d) {
      lo[d] = box.lo[d];
      extent[d] = box.hi[d] > box.lo[d] ? box.hi[d] - box.lo[d] : 0;
    }
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
    for (int d = N - 1; d > 0; --d) {
      const index_t q = k / extent[d];
      index[d] = lo[d] + (k - q * extent[d]);
      k = q;
    }
    index[0] = lo[0] + k;
    call_with(index, f, std::make_integer_sequence<int, N>{}, rest...);
  }

 private:
  template <class F, int... D, class... Rest>
  KOKKOS_INLINE_FUNCTION static void call_with(const index_t (&index)[N], const F& f,
                                               std::integer_sequence<int, D...>, Rest&... rest) {
    f(index[D]..., rest...);
  }
};

/// parallel_for functor: f(i, j, ...) at flat point k.
template <int N, class F>
struct FlatBoxFor {
  F f;
  FlatBox<N> box;
  KOKKOS_INLINE_FUNCTION void operator()(index_t k) const { box.call(k, f); }
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

/// Threads a team of a GPU reduction asks for (fewer where the backend allows fewer: one on
/// Serial).
inline constexpr int reduce_team_threads = 256;

/// How a GPU reduction of `points` points is cut: `teams` teams of `threads` threads, team t
/// taking points [t * per_team, (t + 1) * per_team). As many teams as the device holds
/// threads at once (`concurrency`), no more: Kokkos' CUDA reduction ends with one warp of the
/// last block reading every block's value (volatile loads, one after the other), which
/// at thousands of blocks costs tens of microseconds a reduction.
struct ReduceLeague {
  index_t teams, per_team;
  static ReduceLeague of(index_t points, int threads, index_t concurrency) {
    const index_t wanted = (points + threads - 1) / threads;
    const index_t held = concurrency / threads > 1 ? concurrency / threads : 1;
    const index_t teams = wanted < held ? (wanted > 1 ? wanted : 1) : held;
    return {teams, (points + teams - 1) / teams};
  }
};

/// TeamPolicy parallel_reduce functor: f(i, j, ..., value) at each flat point of the team's
/// share, its threads striding through it (coalesced). Every thread sums into its own value,
/// and Kokkos joins those of every thread of every team.
template <int N, class F>
struct TeamBoxReduce : ReducesAs<F> {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  FlatBox<N> box;
  index_t size;      // box.size(), not recomputed per team
  index_t per_team;  // ReduceLeague::per_team
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, typename F::value_type& value) const {
    const index_t begin = index_t(team.league_rank()) * per_team;
    const index_t end = begin + per_team < size ? begin + per_team : size;
    for (index_t k = begin + team.team_rank(); k < end; k += team.team_size())
      box.call(k, this->f, value);
  }
};

/// The largest functor launched with Kokkos' light-weight hint: below the 4 KiB of kernel
/// parameters Kokkos (3.4 and 4) passes such a functor in, with room for the policy.
inline constexpr std::size_t light_functor_bytes = 3072;

/// [begin, end) for `Functor`. A CUDA functor of 512 bytes or more goes, by default, through
/// constant memory, and that launch first waits on the host for the previous one to finish;
/// a fused kernel, holding every view and constant of its statements, is often that large.
/// The light-weight hint passes it as kernel parameters instead (ignored on host backends).
template <class Functor>
auto range_for(index_t begin, index_t end) {
  Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>> range(begin, end);
  if constexpr (sizeof(Functor) <= light_functor_bytes)
    return Kokkos::Experimental::require(range,
                                         Kokkos::Experimental::WorkItemProperty::HintLightWeight);
  else
    return range;
}

/// parallel_for and parallel_reduce over a box, per schedule: for_box(label, box, f) calls
/// f(i, j, ...) at every point, reduce_box(label, box, f, result) f(i, j, ..., value).
template <class Schedule>
struct BoxLoops;

template <>
struct BoxLoops<HostSchedule> {
  /// RangePolicy (rank 1) or MDRangePolicy.
  template <int N, class F>
  static void for_box(const std::string& label, const Box<N>& box, const F& f) {
    if constexpr (N == 1) {
      Kokkos::parallel_for(label, range_for<F>(box.lo[0], box.hi[0]), f);
    } else {
      Kokkos::Array<index_t, N> lo, hi;
      for (int d = 0; d < N; ++d) lo[d] = box.lo[d], hi[d] = box.hi[d];
      Kokkos::parallel_for(
          label,
          Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<N>, Kokkos::IndexType<index_t>>(lo, hi), f);
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
  /// A flat range of points, a thread each.
  template <int N, class F>
  static void for_box(const std::string& label, const Box<N>& box, const F& f) {
    if constexpr (N == 1) {
      Kokkos::parallel_for(label, range_for<F>(box.lo[0], box.hi[0]), f);
    } else {
      using Flat = FlatBoxFor<N, F>;
      const FlatBox<N> flat(box);
      Kokkos::parallel_for(label, range_for<Flat>(0, flat.size()), Flat{f, flat});
    }
  }
  /// A TeamPolicy of ReduceLeague's cut.
  template <int N, class F>
  static void reduce_box(const std::string& label, const Box<N>& box, const F& f,
                         typename F::value_type& result) {
    using Reduce = TeamBoxReduce<N, F>;
    const FlatBox<N> flat(box);
    Reduce reduce{{f}, flat, flat.size(), 0};
    const int threads = std::min(
        reduce_team_threads,
        Kokkos::TeamPolicy<ExecSpace>(1, 1).team_size_max(reduce, Kokkos::ParallelReduceTag()));
    const auto league = ReduceLeague::of(reduce.size, threads, ExecSpace().concurrency());
    reduce.per_team = league.per_team;
    const Kokkos::TeamPolicy<ExecSpace> policy(int(league.teams), threads);
    if constexpr (sizeof(Reduce) <= light_functor_bytes)
      Kokkos::parallel_reduce(label,
                              Kokkos::Experimental::require(
                                  policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight),
                              reduce, result);
    else
      Kokkos::parallel_reduce(label, policy, reduce, result);
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
