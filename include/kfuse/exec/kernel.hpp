// Lowered statements and the one Kokkos functor a group becomes.
//
// A group's body is a StatementList of lowered statements run in program
// order at each point: StoreView (array target), StoreRegister (temporary in
// a register), Accumulate (one reduction slot). A group with reductions is a
// parallel_reduce whose value is an AccumulatorFile holding one slot per
// reduction, so several sums/maxima/minima of mixed types are one kernel and,
// afterwards, one MPI_Allreduce (Comm::allreduce_joined).
#pragma once

#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/core/stream_store.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/exec/prefetch.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/walk.hpp"
#include "kfuse/expr/where.hpp"

namespace kfuse::detail {

// ---- accumulators -----------------------------------------------------------

template <int J, class Op, class T>
struct AccumulatorSlot {
  T value;
};

template <int J, class Op, class T>
KOKKOS_INLINE_FUNCTION T& accumulator_of(AccumulatorSlot<J, Op, T>& slot) {
  return slot.value;
}
template <int J, class Op, class T>
KOKKOS_INLINE_FUNCTION const T& accumulator_of(const AccumulatorSlot<J, Op, T>& slot) {
  return slot.value;
}

template <class... Slots>
struct AccumulatorFile;

template <int... J, class... Op, class... T>
struct AccumulatorFile<AccumulatorSlot<J, Op, T>...> : AccumulatorSlot<J, Op, T>... {
  static constexpr int size = sizeof...(J);
  KOKKOS_INLINE_FUNCTION void init() {
    ((accumulator_of<J>(*this) = Op::template identity<T>()), ...);
  }
  KOKKOS_INLINE_FUNCTION void join(const AccumulatorFile& other) {
    (Op::join(accumulator_of<J>(*this), accumulator_of<J>(other)), ...);
  }
};

/// Kernels without reductions.
struct NoAccumulators {};

// ---- the lanes of a host call -------------------------------------------------

template <int J, class Op, class T, int L>
struct LaneSlot {
  T lane[L];
};

template <int J, class Op, class T, int L>
KOKKOS_INLINE_FUNCTION T* lanes_of(LaneSlot<J, Op, T, L>& slot) {
  return slot.lane;
}
template <int J, class Op, class T, int L>
KOKKOS_INLINE_FUNCTION const T* lanes_of(const LaneSlot<J, Op, T, L>& slot) {
  return slot.lane;
}

/// L copies of an accumulator file kept slot by slot, each slot's L lanes
/// side by side, so a vector of consecutive points adds into a vector of one
/// sum. (An array of L files interleaves the sums of a group with several:
/// the vectorised loop then transposes them at every step.)
template <class File, int L>
struct LaneFile;

template <int... J, class... Op, class... T, int L>
struct LaneFile<AccumulatorFile<AccumulatorSlot<J, Op, T>...>, L> : LaneSlot<J, Op, T, L>... {
  using File = AccumulatorFile<AccumulatorSlot<J, Op, T>...>;
  KOKKOS_INLINE_FUNCTION void init() {
    for (int l = 0; l < L; ++l) ((lanes_of<J>(*this)[l] = Op::template identity<T>()), ...);
  }
  /// The lanes joined pairwise (0+1, 2+3, ..., then pairs of pairs).
  KOKKOS_INLINE_FUNCTION File joined() {
    for (int step = 1; step < L; step *= 2)
      for (int l = 0; l + step < L; l += 2 * step)
        (Op::join(lanes_of<J>(*this)[l], lanes_of<J>(*this)[l + step]), ...);
    File file;
    ((accumulator_of<J>(file) = lanes_of<J>(*this)[0]), ...);
    return file;
  }
};

/// L lanes of T as one value: a GCC vector where T is a number (an array otherwise).
template <class T, int L, bool = std::is_arithmetic_v<T> && sizeof(T) <= 8>
struct LaneVector {
  using type = T[L];
};
template <class T, int L>
struct LaneVector<T, L, true> {
  typedef T type __attribute__((vector_size(sizeof(T) * L)));
};

/// Slot J of a HeldLanes: its L lanes as one value.
template <int J, class T, int L>
struct HeldSlot {
  typename LaneVector<T, L>::type lanes;
};

/// A LaneFile held as values, each slot's lanes one vector, between the steps of a loop
/// that copies it into a LaneFile for each step (InnerLoop::streamed). GCC keeps an array's
/// sums in registers across a loop only where nothing in the loop may write to it, and a
/// streaming store (a builtin) might: a streamed loop's lanes went through the stack at
/// every line, a load-add-store chain. A value stays in registers; the step's LaneFile,
/// copied from it and back, vanishes.
template <class Lanes>
struct HeldLanes;

template <int... J, class... Op, class... T, int L>
struct HeldLanes<LaneFile<AccumulatorFile<AccumulatorSlot<J, Op, T>...>, L>>
    : HeldSlot<J, T, L>... {
  using Lanes = LaneFile<AccumulatorFile<AccumulatorSlot<J, Op, T>...>, L>;
  explicit HeldLanes(const Lanes& lanes) { hold(lanes); }
  void hold(const Lanes& lanes) {
    (std::memcpy(&this->HeldSlot<J, T, L>::lanes, lanes_of<J>(lanes), sizeof(T) * L), ...);
  }
  Lanes file() const {
    Lanes lanes;
    (std::memcpy(lanes_of<J>(lanes), &this->HeldSlot<J, T, L>::lanes, sizeof(T) * L), ...);
    return lanes;
  }
};

/// Lane l of a LaneFile: what a point's Accumulate statements add into.
template <class Lanes>
struct LaneOf {
  Lanes* lanes;
  int l;
};

template <int J, class Lanes>
KOKKOS_INLINE_FUNCTION auto& accumulator_of(const LaneOf<Lanes>& lane) {
  return lanes_of<J>(*lane.lanes)[lane.l];
}

// ---- statement lists --------------------------------------------------------

/// The statements of one group, run in order at each point.
template <class... S>
struct StatementList;
template <>
struct StatementList<> {
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P&, R&, A&) const {}
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P&, R&, A&) const {}
};
template <class S, class... Rest>
struct StatementList<S, Rest...> {
  S head;
  StatementList<Rest...> tail;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A& accumulators) const {
    head.run(p, registers, accumulators);
    tail.run(p, registers, accumulators);
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P& p, R& registers, A& accumulators) const {
    head.flush(p, registers, accumulators);
    tail.flush(p, registers, accumulators);
  }
};

/// Whether a statement (or one of a list's) stores to memory as it runs rather than in
/// `flush`: every store of a group that reads a captured handle does (a StoreView without a
/// register slot, exec/statements.hpp), so that a later read of an array that may be the
/// same sees it.
template <class S>
struct stores_in_run : std::false_type {};
template <class... S>
struct stores_in_run<StatementList<S...>> : std::disjunction<stores_in_run<S>...> {};

template <class S, class... Rest>
StatementList<S, Rest...> prepend(const S& s, const StatementList<Rest...>& rest) {
  return {s, rest};
}

/// A statement list's children: its statements (each lowered statement's: its expression).
template <class... S>
auto children(const StatementList<S...>& list) {
  if constexpr (sizeof...(S) == 0)
    return ChildRefs<>{};
  else
    return child_refs(list.head, list.tail);
}

// ---- streamed stores ------------------------------------------------------------

/// Whether a lowered statement is a store that a host call may stream (a StoreView of
/// doubles of rank 2 or 3: specialised in exec/statements.hpp).
template <class S>
struct streamable_store : std::false_type {};

/// The lines a host call that streams its stores fills, one per store (StreamedStore's W),
/// before it writes them to memory whole (InnerLoop::streamed).
template <int Stores>
struct StreamStage {
  alignas(64) double line[Stores][stream_line_doubles];
};

/// What a point of a host call that streams its stores runs with in place of its
/// accumulators: the lane its reductions add into (a LaneOf, or NoAccumulators), the
/// call's stage, and the point's place in its cache line (`at`).
template <class Lane, class Stage>
struct StagedLane {
  Lane lane;
  Stage* stage;
  int at;
};
template <int J, class Lane, class Stage>
KOKKOS_INLINE_FUNCTION auto& accumulator_of(const StagedLane<Lane, Stage>& staged) {
  return accumulator_of<J>(staged.lane);
}

/// A store (a StoreView: its expr, its register slot) whose value goes to line W of the
/// call's stage instead of memory, as its statement computes it (forwarded stores keep their
/// register slot too). The kernel loads all its reads first (ReadFile, below), and the stage
/// is memory the compiler cannot tell from the arrays (InnerLoop::streamed): a store between
/// a point's loads and their later uses keeps GCC from folding each load into every use as
/// a memory operand (SWE's sweep: 33 vector loads a line of 8 points instead of 16, most
/// split over two cache lines; with the stores at the end, or a stage it could see, it folded
/// them).
template <int W, class Store>
struct StreamedStore {
  Store store;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A& staged) const {
    const double value = static_cast<double>(store.expr.eval(p, registers));
    if constexpr (Store::slot >= 0) register_of<Store::slot>(registers) = value;
    staged.stage->line[W][staged.at] = value;
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P&, R&, A&) const {}
};
template <int W, class Store>
auto children(const StreamedStore<W, Store>& s) {
  return children(s.store);
}
template <int W, class Store>
struct stores_in_run<StreamedStore<W, Store>> : std::true_type {};
template <class S>
struct is_streamed_store : std::false_type {};
template <int W, class Store>
struct is_streamed_store<StreamedStore<W, Store>> : std::true_type {};

/// The reads of a lowered tree, each ParamRead type once, as a ReadFile.
template <class E, class Found>
struct collect_reads : fold_children<collect_reads, children_t<E>, Found> {};
template <int K, class T, int N, class Offsets, class... Reads>
struct collect_reads<ParamRead<K, T, N, Offsets>, ReadFile<Reads...>> {
  using Read = ParamRead<K, T, N, Offsets>;
  using type = std::conditional_t<(std::is_same_v<Read, Reads> || ...), ReadFile<Reads...>,
                                  ReadFile<Reads..., Read>>;
};

/// What a kernel of lowered `Body` loads before its statements run (PointIn): with its
/// stores streamed, every read (they store as they go and read no array they store); else,
/// where none of its statements stores before `flush`, its views' values at the point.
template <class Body, class Views, bool Streams = holds_node<is_streamed_store, Body>()>
struct loads_ahead {
  using type = typename collect_reads<Body, ReadFile<>>::type;
};
template <class Body, class Views>
struct loads_ahead<Body, Views, false> {
  using type =
      std::conditional_t<stores_in_run<Body>::value, NoCentres, typename centres_of<Views>::type>;
};

/// `list` with its stores of rows streamed, numbered from W in statement order (the order
/// of stored_rows_of, exec/prefetch.hpp).
template <int W>
StatementList<> with_streamed_stores(const StatementList<>& list) {
  return list;
}
template <int W, class S, class... Rest>
auto with_streamed_stores(const StatementList<S, Rest...>& list) {
  if constexpr (stores_rows<S>::value)
    return prepend(StreamedStore<W, S>{list.head}, with_streamed_stores<W + 1>(list.tail));
  else
    return prepend(list.head, with_streamed_stores<W>(list.tail));
}

// ---- integer powers ---------------------------------------------------------

template <class E>
struct is_pow_int : std::false_type {};
template <class E>
struct is_pow_int<Unary<PowInt, E>> : std::true_type {};

/// Whether every pow(e, n) of integer n in a lowered tree has n in 1..3.
template <class E>
bool all_powers_small(const E& e) {
  return every_node<is_pow_int>(e, [](const auto& node) { return node.op.small(); });
}

/// Whether every pow(e, n) of integer n in a lowered tree has n = 2.
template <class E>
bool all_powers_squares(const E& e) {
  return every_node<is_pow_int>(e, [](const auto& node) { return node.op.is_square(); });
}

// ---- the kernel -----------------------------------------------------------

/// One group as a Kokkos functor over view coordinates, so the same functor
/// runs any box of the owned region; `views` holds the parameters' arrays.
/// Facts: what the launch checked for every point (PointFacts); a launch
/// that checked more runs the kernel `under` more facts.
template <int N, class Registers, class Accumulators, class Body, class Views = NoViews,
          class Facts = PointFacts<>>
struct GroupKernel {
  Body body;
  Views views;

  using value_type = Accumulators;

  template <class More>
  GroupKernel<N, Registers, Accumulators, Body, Views, More> under() const {
    return {body, views};
  }

  static constexpr bool holds_powers = holds_node<is_pow_int, Body>();
  static constexpr bool reads_sparse_rows = holds_node<is_sparse_row_read, Body>();
  /// A stencil's: host calls prefetch its rows from memory (exec/prefetch.hpp).
  static constexpr bool reads_other_rows = holds_node<reads_other_row, Body>();
  auto prefetch_rows() const { return prefetch_rows_of(body, views); }
  /// Its stores of rows, and whether a host call may stream them (InnerLoop::streamed): all
  /// of doubles, in a build with streaming stores.
  static constexpr int row_stores = count_nodes<stores_rows, Body>();
  static constexpr bool may_stream_stores = stream_stores_available && N > 1 && row_stores > 0 &&
                                            count_nodes<streamable_store, Body>() == row_stores;
  auto stored_rows() const { return stored_rows_of<row_stores>(body); }
  /// This kernel with its stores going to a StagedLane's stage.
  auto streaming_stores() const {
    using Streamed = decltype(with_streamed_stores<0>(body));
    return GroupKernel<N, Registers, Accumulators, Streamed, Views, Facts>{
        with_streamed_stores<0>(body), views};
  }
  bool powers_small() const { return all_powers_small(body); }
  bool powers_squares() const { return all_powers_squares(body); }
  auto assuming_small_powers() const { return under<typename Facts::with_small_powers>(); }
  auto assuming_squares() const { return under<typename Facts::with_squares>(); }
  auto assuming_owned_columns() const { return under<typename Facts::with_owned_columns>(); }

  using Loaded = typename loads_ahead<Body, Views>::type;

  // exec and the operators are forced inline: a host lane loop vectorises only with the whole
  // point inlined into it, and GCC's inliner stops at a size limit that a large group passes
  // (SWE's fused kernel, once its views' loads went first: scalar, 5x slower).
  template <class A>  // Accumulators, or a host call's LaneOf
  KOKKOS_FORCEINLINE_FUNCTION void exec(const Point<N>& point, A& acc) const {
    const PointIn<N, Views, Facts, Loaded> p{
        point, &views, load_ahead(static_cast<Loaded*>(nullptr), views, point)};
    Registers registers;
    body.run(p, registers, acc);
    body.flush(p, registers, acc);
  }

  // parallel_for
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i) const {
    Accumulators none;
    exec(Point<N>{{i}}, none);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j) const {
    Accumulators none;
    exec(Point<N>{{i, j}}, none);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j, index_t k) const {
    Accumulators none;
    exec(Point<N>{{i, j, k}}, none);
  }
  // parallel_reduce
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, Accumulators& acc) const {
    exec(Point<N>{{i}}, acc);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j, Accumulators& acc) const {
    exec(Point<N>{{i, j}}, acc);
  }
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j, index_t k,
                                              Accumulators& acc) const {
    exec(Point<N>{{i, j, k}}, acc);
  }
  // a host call's lane (InnerLoop)
  template <class Lanes>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, const LaneOf<Lanes>& lane) const {
    exec(Point<N>{{i}}, lane);
  }
  template <class Lanes>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j,
                                              const LaneOf<Lanes>& lane) const {
    exec(Point<N>{{i, j}}, lane);
  }
  template <class Lanes>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j, index_t k,
                                              const LaneOf<Lanes>& lane) const {
    exec(Point<N>{{i, j, k}}, lane);
  }
  // a point of a host call that streams its stores (InnerLoop::streamed)
  template <class Lane, class Stage>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j,
                                              const StagedLane<Lane, Stage>& staged) const {
    exec(Point<N>{{i, j}}, staged);
  }
  template <class Lane, class Stage>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(index_t i, index_t j, index_t k,
                                              const StagedLane<Lane, Stage>& staged) const {
    exec(Point<N>{{i, j, k}}, staged);
  }
  KOKKOS_INLINE_FUNCTION void init(Accumulators& acc) const { acc.init(); }
  KOKKOS_INLINE_FUNCTION void join(Accumulators& into, const Accumulators& from) const {
    into.join(from);
  }
  KFUSE_VOLATILE_JOIN(Accumulators)
};

/// Row indices of a launch over rows (a ghost import's interior or boundary rows).
using RowList = Kokkos::View<const int*, Kokkos::LayoutRight, MemSpace>;

/// A group kernel that reads sparse rows, run over rows of its row map:
/// index k of a launch is row rows(k) when the launch lists its rows (the
/// interior or boundary rows of a ghost import), else row k (a range): one
/// functor type, one compiled kernel, for the launches off the hot path
/// (boundary rows, and ranges that may read ghost columns: run_kernel,
/// run_rows_overlapped); a row's test of the list is small against its loop
/// over its entries.
template <class Kernel>
struct RowListKernel {
  Kernel kernel;
  RowList rows;  // empty: a range

  KOKKOS_INLINE_FUNCTION index_t row(index_t k) const {
    return rows.data() != nullptr ? index_t(rows(k)) : k;
  }

  using value_type = typename Kernel::value_type;

  static constexpr bool holds_powers = Kernel::holds_powers;
  static constexpr bool reads_sparse_rows = Kernel::reads_sparse_rows;
  static constexpr bool reads_other_rows = false;  // a range of sparse rows: rank 1
  static constexpr bool may_stream_stores = false;
  bool powers_small() const { return kernel.powers_small(); }
  bool powers_squares() const { return kernel.powers_squares(); }
  auto assuming_small_powers() const { return with_kernel(kernel.assuming_small_powers()); }
  auto assuming_squares() const { return with_kernel(kernel.assuming_squares()); }
  auto assuming_owned_columns() const { return with_kernel(kernel.assuming_owned_columns()); }
  template <class Other>
  RowListKernel<Other> with_kernel(const Other& other) const {
    return {other, rows};
  }

  KOKKOS_INLINE_FUNCTION void operator()(index_t k) const { kernel(row(k)); }
  KOKKOS_INLINE_FUNCTION void operator()(index_t k, value_type& acc) const { kernel(row(k), acc); }
  template <class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(index_t k, const LaneOf<Lanes>& lane) const {
    kernel(row(k), lane);
  }
  // parallel_reduce on GPUs: the group kernel's init and join.
  KOKKOS_INLINE_FUNCTION void init(value_type& acc) const { kernel.init(acc); }
  KOKKOS_INLINE_FUNCTION void join(value_type& into, const value_type& from) const {
    kernel.join(into, from);
  }
  KFUSE_VOLATILE_JOIN(value_type)
};

/// `kernel` over the rows listed in `rows`, or over a range when `rows` is empty.
template <class Kernel>
RowListKernel<Kernel> over_rows(const Kernel& kernel, const RowList& rows = {}) {
  return {kernel, rows};
}

/// Independent accumulators of a host call: point k of a call joins lane
/// k % host_lanes (counted from the call's first point). One running sum
/// would chain every point's add to the previous one (an add's latency per
/// point, and in-order adds that keep the loop from vectorising); lanes let
/// a vector of consecutive points add into a vector of sums. Kernels that
/// read a sparse row take two lanes instead, a row after the other: a row is
/// a loop of its own that does not vectorise, and eight lanes around it only
/// add work (CG's and BiCGSTAB's products with their sums 1.02-1.12x slower
/// on an AMD EPYC host).
inline constexpr int host_lanes = 8;

/// The PrefetchRows of a kernel's host calls, or NoPrefetch.
template <bool Prefetches, class Kernel>
struct prefetch_of {
  using type = NoPrefetch;
};
template <class Kernel>
struct prefetch_of<true, Kernel> {
  using type = decltype(std::declval<const Kernel&>().prefetch_rows());
};

/// A kernel whose host calls may stream their stores with its stores staged
/// (GroupKernel::streaming_stores), or NoPrefetch.
template <bool Streams, class Kernel>
struct streaming_kernel_of {
  using type = NoPrefetch;
};
template <class Kernel>
struct streaming_kernel_of<true, Kernel> {
  using type = decltype(std::declval<const Kernel&>().streaming_stores());
};

/// The StoredRows of a kernel whose host calls may stream their stores, or NoPrefetch.
template <bool Streams, class Kernel>
struct stored_rows_of_t {
  using type = NoPrefetch;
};
template <class Kernel>
struct stored_rows_of_t<true, Kernel> {
  using type = StoredRows<Kernel::row_stores>;
};

/// Host CPUs iterate the innermost dimension (contiguous: LayoutRight) as a
/// plain loop inside the functor, one call per row (rank 2 and 3) or per
/// chunk of `chunk` points (rank 1). A call sums its reductions into local
/// lane accumulators (per-point launches leave the running sum in Kokkos'
/// reduction memory, which the compiler must assume aliases the stored
/// views: a load-add-store per point and no vectorisation) kept sum by sum
/// (LaneFile), joins the lanes pairwise (sparse rows: even + odd rows,
/// host_lanes) and stores the result in `partials[call]`; launch joins the partials in call order,
/// so a reduction is bitwise the same whatever the number of threads.
template <int N, class Kernel>
struct InnerLoop {
  using value_type = typename Kernel::value_type;

  static constexpr bool reduces = !std::is_same_v<value_type, NoAccumulators>;
  /// Stencils of rank 2 and 3 prefetch the rows they read from memory (exec/prefetch.hpp),
  /// a step of host_lanes points at a time.
  static constexpr bool prefetches = KFUSE_HOST_PREFETCH && N > 1 && Kernel::reads_other_rows;
  /// Those whose stores are of doubles and whose arrays they do not read may stream them
  /// (streamed, below).
  static constexpr bool may_stream = prefetches && Kernel::may_stream_stores;

  Kernel kernel;
  Box<N> box;
  index_t chunk = 1;  // rank 1: points per call
  value_type* partials = nullptr;
  typename prefetch_of<prefetches, Kernel>::type prefetch{};
  bool prefetching = false;  // prefetches, and the launch streams from memory
  typename stored_rows_of_t<may_stream, Kernel>::type stored{};
  typename streaming_kernel_of<may_stream, Kernel>::type staged{};  // its stores staged
  bool streaming = false;  // may stream, prefetching, and reads none of the stored arrays

  /// Calls per launch: chunks (rank 1) or rows of the outer dimensions.
  index_t calls() const {
    if constexpr (N == 1) return (box.hi[0] - box.lo[0] + chunk - 1) / chunk;
    index_t rows = 1;
    for (int d = 0; d + 1 < N; ++d) rows *= box.hi[d] - box.lo[d];
    return rows;
  }

  template <class... Outer>
  KOKKOS_INLINE_FUNCTION void loop(index_t call, index_t begin, index_t end, Outer... outer) const {
    if constexpr (may_stream)
      if (streaming && streamed(call, begin, end, outer...)) return;
    if constexpr (reduces && Kernel::reads_sparse_rows) {
      value_type even, odd;
      kernel.init(even);
      kernel.init(odd);
      index_t k = begin;
      for (; k + 2 <= end; k += 2) {
        kernel(outer..., k, even);
        kernel(outer..., k + 1, odd);
      }
      if (k < end) kernel(outer..., k, even);
      kernel.join(even, odd);
      partials[call] = even;
    } else if constexpr (reduces) {
      using Lanes = LaneFile<value_type, host_lanes>;
      Lanes lanes;
      lanes.init();
      [[maybe_unused]] const auto ahead = cursor(outer...);
      index_t k = begin;
      for (; k + host_lanes <= end; k += host_lanes) {
        if constexpr (prefetches)
          if (prefetching) ahead.at(k);
        KFUSE_INDEPENDENT_LANES
        for (int l = 0; l < host_lanes; ++l) kernel(outer..., k + l, LaneOf<Lanes>{&lanes, l});
      }
      // The tail sums into a copy. Were `lanes` handed to a call GCC does not inline (a large
      // group's scalar tail), every store of the vector loop above might alias it, and its
      // sums would go through memory each step (SWE's fused kernel: a load-add-store chain).
      Lanes tail = lanes;
      for (int l = 0; k + l < end; ++l) kernel(outer..., k + l, LaneOf<Lanes>{&tail, l});
      partials[call] = tail.joined();
    } else {
      if constexpr (prefetches)
        if (prefetching) {
          // Blocks of prefetch_block points, each a loop the compiler vectorises as it does
          // a whole row (a step of host_lanes points, one vector, made cfd's sweeps
          // 0.7-0.8x); a launch that does not prefetch keeps the plain loop below (cached
          // cfd with the blocks: 1.15x the time).
          const auto ahead = cursor(outer...);
          index_t k = begin;
          for (; k + prefetch_block <= end; k += prefetch_block) {
            ahead.block(k);
            KFUSE_INDEPENDENT_ITERATIONS
            for (index_t m = k; m < k + prefetch_block; ++m) kernel(outer..., m);
          }
          KFUSE_INDEPENDENT_ITERATIONS
          for (; k < end; ++k) kernel(outer..., k);
          return;
        }
      KFUSE_INDEPENDENT_ITERATIONS
      for (index_t k = begin; k < end; ++k) kernel(outer..., k);
    }
  }

  /// The call with its stores streamed: its stored rows' whole lines computed into a stage
  /// (StreamStage) by the kernel with its stores staged (`staged`), a line of each at a
  /// time, and written to memory without being read (core/stream_store.hpp); the points
  /// before the first whole line and after the last through the stage too, their values then
  /// stored as usual (partial_points). A point adds into the lane of its place in its cache
  /// line. False (and nothing run) where the stored rows do not share their place in the
  /// line or the row holds no whole line.
  template <class... Outer>
  bool streamed(index_t call, index_t begin, index_t end, Outer... outer) const {
    constexpr int stores = Kernel::row_stores, line = stream_line_doubles;
    double* row[stores];
    for (int w = 0; w < stores; ++w) row[w] = stored.template at<double>(w, outer...);
    const index_t first = first_whole_line(row, stores, begin, end);
    if (first + line > end) return false;
    const auto ahead = cursor(outer...);
    // The kernel copied here, the stage a thread's own: the stage's stores then may be any
    // array's to GCC (StreamedStore: the loads stay in registers) but not the kernel's
    // pointers and strides (with the kernel reached through `this`, GCC reloaded them and
    // recomputed every row's address at each line: SWE's loop 129 instructions, not 85).
    const auto local = staged;
    static thread_local StreamStage<stores> stage;
    index_t k = first;
    if constexpr (reduces) {
      using Lanes = LaneFile<value_type, host_lanes>;
      static_assert(host_lanes == stream_line_doubles,
                    "InnerLoop::streamed: host_lanes must equal stream_line_doubles, a lane "
                    "per place in a cache line");
      Lanes start;
      start.init();
      HeldLanes<Lanes> held(start);
      for (; k + line <= end; k += line) {
        ahead.reads_at(k);
        Lanes lanes = held.file();
        KFUSE_INDEPENDENT_LANES
        for (int l = 0; l < line; ++l)
          local(outer..., k + l,
                StagedLane<LaneOf<Lanes>, StreamStage<stores>>{{&lanes, l}, &stage, l});
        held.hold(lanes);
        for (int w = 0; w < stores; ++w) stream_line(row[w] + k, stage.line[w]);
      }
      Lanes rest = held.file();
      partial_points(row, &rest, begin, first, outer...);
      partial_points(row, &rest, k, end, outer...);
      partials[call] = rest.joined();
    } else {
      for (; k + line <= end; k += line) {
        ahead.reads_at(k);
        KFUSE_INDEPENDENT_LANES
        for (int l = 0; l < line; ++l)
          local(outer..., k + l, StagedLane<NoAccumulators, StreamStage<stores>>{{}, &stage, l});
        for (int w = 0; w < stores; ++w) stream_line(row[w] + k, stage.line[w]);
      }
      partial_points(row, static_cast<NoAccumulators*>(nullptr), begin, first, outer...);
      partial_points(row, static_cast<NoAccumulators*>(nullptr), k, end, outer...);
    }
    stream_fence();
    return true;
  }

  /// Points [from, to) of a streamed call outside its whole lines, each through a stage and
  /// then stored as usual. A function of its own, so that each holds one copy of the
  /// kernel's body: with a second in `streamed`, GCC called the statements of one out of
  /// line (SWE's kernel 5-8% slower).
  template <class Lanes, class... Outer>
  KFUSE_NOINLINE void partial_points(double* const* row, Lanes* lanes, index_t from, index_t to,
                                     Outer... outer) const {
    StreamStage<Kernel::row_stores> stage;
    for (index_t m = from; m < to; ++m) {
      const int at = line_position(row[0] + m);
      if constexpr (reduces)
        staged(outer..., m, StagedLane<LaneOf<Lanes>, decltype(stage)>{{lanes, at}, &stage, at});
      else
        staged(outer..., m, StagedLane<NoAccumulators, decltype(stage)>{{}, &stage, at});
      for (int w = 0; w < Kernel::row_stores; ++w) row[w][m] = stage.line[w][at];
    }
  }

  template <class... Outer>
  KOKKOS_INLINE_FUNCTION auto cursor(Outer... outer) const {
    if constexpr (prefetches)
      return PrefetchCursor<decltype(prefetch)::reads, decltype(prefetch)::writes>(prefetch,
                                                                                   outer...);
    else
      return NoPrefetch{};
  }

  /// Call c: rank 1, chunk c; rank 2 and 3, row c of the outer dimensions in memory order
  /// (one range for every rank: a Kokkos MDRangePolicy over rank 3's rows cost more to
  /// compile, its tiles, than a division per row costs to run).
  KOKKOS_INLINE_FUNCTION void operator()(index_t c) const {
    const index_t lo = box.lo[N - 1], hi = box.hi[N - 1];
    if constexpr (N == 1) {
      const index_t begin = lo + c * chunk;
      loop(c, begin, begin + chunk < hi ? begin + chunk : hi);
    } else if constexpr (N == 2) {
      loop(c, lo, hi, box.lo[0] + c);
    } else {
      const index_t columns = box.hi[1] - box.lo[1];
      loop(c, lo, hi, box.lo[0] + c / columns, box.lo[1] + c % columns);
    }
  }
};

/// Rank-1 points per InnerLoop call on host CPUs.
inline constexpr index_t host_chunk = 1024;

/// Scratch for the per-call partial reductions of host launches, reused
/// across launches (one per accumulator type and thread).
template <class Accumulators>
Accumulators* host_partials(index_t calls) {
  static thread_local std::vector<Accumulators> partials;
  if (partials.size() < std::size_t(calls)) partials.resize(std::size_t(calls));
  return partials.data();
}

/// What Kokkos launches on host CPUs: call c of a host loop, through a pointer to the
/// function for the loop's type. One Kokkos::parallel_for instantiation (its ParallelFor,
/// its Kokkos Tools hooks, its name) serves every kernel, where each InnerLoop type
/// compiled its own (a solver file: 192 ParallelFor instances at -O0, 25 after); the price
/// is one indirect call per row, or per chunk of host_chunk points.
struct HostCalls {
  void (*call)(const void* loop, index_t c);
  const void* loop;
  void operator()(index_t c) const { call(loop, c); }
};
template <class Loop>
void call_host_loop(const void* loop, index_t c) {
  (*static_cast<const Loop*>(loop))(c);
}

/// Host launches that chose to stream their stores (InnerLoop::streamed), counted for tests.
inline index_t& streaming_launches() {
  static index_t count = 0;
  return count;
}

/// The host part of launch: InnerLoop calls, their partials joined in order. The loop
/// lives in this frame, so the launch is waited for (host spaces run it before returning).
template <int N, class Kernel, class Accumulators>
void launch_on_host(const std::string& label, const Box<N>& box, const Kernel& kernel,
                    Accumulators* acc) {
  using Index = Kokkos::IndexType<index_t>;
  using Loop = InnerLoop<N, Kernel>;
  constexpr bool reduces = !std::is_same_v<Accumulators, NoAccumulators>;
  Loop rows{kernel, box, host_chunk};
  if constexpr (Loop::prefetches) {
    rows.prefetch = kernel.prefetch_rows();
    rows.prefetching = streams_from_memory(rows.prefetch.bytes_per_point(), box.size());
    if constexpr (Loop::may_stream) {
      rows.stored = kernel.stored_rows();
      rows.staged = kernel.streaming_stores();
      rows.streaming = rows.prefetching && !rows.prefetch.reads_stored;
      if (rows.streaming) ++streaming_launches();
    }
  }
  const index_t calls = rows.calls();
  if constexpr (reduces) rows.partials = host_partials<Accumulators>(calls);
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Index>(0, calls),
                       HostCalls{&call_host_loop<Loop>, &rows});
  ExecSpace().fence();
  if constexpr (reduces)
    for (index_t c = 0; c < calls; ++c) acc->join(rows.partials[c]);
}

/// How a group kernel runs over a box, per schedule (core/box_loop.hpp):
/// run(label, box, kernel, acc) leaves the group's reductions, if any, joined into `acc`.
template <class Schedule>
struct GroupLauncher;

/// Host CPUs: an InnerLoop over the innermost dimension, whose partial sums are joined in
/// call order. A kernel with integer powers whose exponents all are small runs under
/// PointFacts::small_powers: its loop then holds no test on n and vectorises; one whose
/// exponents all are 2 (the common case) under PointFacts::squares: not even a select.
template <>
struct GroupLauncher<HostSchedule> {
  template <int N, class Kernel, class Accumulators>
  static void run(const std::string& label, const Box<N>& box, const Kernel& kernel,
                  Accumulators* acc) {
    if constexpr (Kernel::holds_powers) {
      if (kernel.powers_squares())
        return launch_on_host(label, box, kernel.assuming_squares(), acc);
      if (kernel.powers_small())
        return launch_on_host(label, box, kernel.assuming_small_powers(), acc);
    }
    launch_on_host(label, box, kernel, acc);
  }
};

/// GPUs: a thread per point of the box's flat range (BoxLoops<DeviceSchedule>: 256-thread
/// teams; reductions a league of them). No small-powers variant: the test on n is uniform
/// across threads.
template <>
struct GroupLauncher<DeviceSchedule> {
  template <int N, class Kernel, class Accumulators>
  static void run(const std::string& label, const Box<N>& box, const Kernel& kernel,
                  Accumulators* acc) {
    if constexpr (!std::is_same_v<Accumulators, NoAccumulators>)
      BoxLoops<DeviceSchedule>::reduce_box(label, box, kernel, *acc);
    else
      BoxLoops<DeviceSchedule>::for_box(label, box, kernel);
  }
};

/// Launches `kernel` over `box` (view coordinates) on ExecSpace's schedule and, when the
/// group has reductions, leaves their values in `acc`.
template <int N, class Kernel, class Accumulators>
void launch(const std::string& label, const Box<N>& box, const Kernel& kernel, Accumulators* acc) {
  if constexpr (!std::is_same_v<Accumulators, NoAccumulators>) acc->init();
  if (box.size() == 0) return;
  GroupLauncher<default_schedule>::run(label, box, kernel, acc);
}

}  // namespace kfuse::detail
