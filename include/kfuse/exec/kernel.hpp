// Lowered statements and the one Kokkos functor a group becomes.
//
// A group's body is a StatementList of lowered statements run in program
// order at each point: StoreView (array target), StoreRegister (temporary in
// a register), Accumulate (one reduction slot). A group with reductions is a
// parallel_reduce whose value is an AccumulatorFile holding one slot per
// reduction, so several sums/maxima/minima of mixed types are one kernel and,
// afterwards, one MPI_Allreduce (combine_over_ranks).
#pragma once

#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "kfuse/array/view.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/terminal.hpp"

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
  KOKKOS_INLINE_FUNCTION void init() { ((accumulator_of<J>(*this) = Op::template identity<T>()), ...); }
  KOKKOS_INLINE_FUNCTION void join(const AccumulatorFile& other) {
    (Op::join(accumulator_of<J>(*this), accumulator_of<J>(other)), ...);
  }
};

/// Kernels without reductions.
struct NoAccumulators {};

// ---- lowered statements ---------------------------------------------------

template <class T, int N, class E>
struct StoreView {
  view_t<T, N> view;
  E expr;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A&) const {
    const T value = static_cast<T>(expr.eval(p, registers));
    if constexpr (N == 1) view(p[0]) = value;
    if constexpr (N == 2) view(p[0], p[1]) = value;
    if constexpr (N == 3) view(p[0], p[1], p[2]) = value;
  }
};

template <int K, class T, class E>
struct StoreRegister {
  E expr;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A&) const {
    register_of<K>(registers) = static_cast<T>(expr.eval(p, registers));
  }
};

template <int J, class Op, class T, class E>
struct Accumulate {
  E expr;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A& accumulators) const {
    Op::join(accumulator_of<J>(accumulators), static_cast<T>(expr.eval(p, registers)));
  }
};

/// The statements of one group, run in order at each point.
template <class... S>
struct StatementList;
template <>
struct StatementList<> {
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P&, R&, A&) const {}
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
};

template <class S, class... Rest>
StatementList<S, Rest...> prepend(const S& s, const StatementList<Rest...>& rest) {
  return {s, rest};
}

// ---- the kernel -----------------------------------------------------------

/// One group as a Kokkos functor. `origin` shifts policy indices to view
/// coordinates, so the same functor runs any box of the owned region.
template <int N, class Registers, class Accumulators, class Body>
struct GroupKernel {
  Body body;

  using value_type = Accumulators;

  KOKKOS_INLINE_FUNCTION void exec(const Point<N>& p, Accumulators& acc) const {
    Registers registers;
    body.run(p, registers, acc);
  }

  // parallel_for
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    Accumulators none;
    exec(Point<N>{{i}}, none);
  }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, index_t j) const {
    Accumulators none;
    exec(Point<N>{{i, j}}, none);
  }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, index_t j, index_t k) const {
    Accumulators none;
    exec(Point<N>{{i, j, k}}, none);
  }
  // parallel_reduce
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, Accumulators& acc) const {
    exec(Point<N>{{i}}, acc);
  }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, index_t j, Accumulators& acc) const {
    exec(Point<N>{{i, j}}, acc);
  }
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, index_t j, index_t k,
                                         Accumulators& acc) const {
    exec(Point<N>{{i, j, k}}, acc);
  }
  KOKKOS_INLINE_FUNCTION void init(Accumulators& acc) const { acc.init(); }
  KOKKOS_INLINE_FUNCTION void join(Accumulators& into, const Accumulators& from) const {
    into.join(from);
  }
#if !KFUSE_KOKKOS_4
  KOKKOS_INLINE_FUNCTION void join(volatile Accumulators& into,
                                   const volatile Accumulators& from) const {
    Accumulators a = const_cast<Accumulators&>(into);
    a.join(const_cast<const Accumulators&>(from));
    const_cast<Accumulators&>(into) = a;
  }
#endif
};

/// Launches `kernel` over `box` (view coordinates): parallel_for, or
/// parallel_reduce into `acc` when the group has reductions.
template <int N, class Kernel, class Accumulators>
void launch(const std::string& label, const Box<N>& box, const Kernel& kernel, Accumulators* acc) {
  using Index = Kokkos::IndexType<index_t>;
  if (box.size() == 0) {
    if constexpr (!std::is_same_v<Accumulators, NoAccumulators>) acc->init();
    return;
  }
  auto run = [&](const auto& policy) {
    if constexpr (std::is_same_v<Accumulators, NoAccumulators>)
      Kokkos::parallel_for(label, policy, kernel);
    else
      Kokkos::parallel_reduce(label, policy, kernel, *acc);
  };
  if constexpr (N == 1) {
    run(Kokkos::RangePolicy<ExecSpace, Index>(box.lo[0], box.hi[0]));
  } else {
    Kokkos::Array<index_t, N> lo, hi;
    for (int d = 0; d < N; ++d) lo[d] = box.lo[d], hi[d] = box.hi[d];
    run(Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<N>, Index>(lo, hi));
  }
}

/// One MPI_Allreduce for every reduction of a group, whatever their ops and
/// types: the accumulator file travels as one element of a contiguous
/// datatype under a user operation that joins slot by slot.
template <class Accumulators>
void combine_over_ranks(const Comm& comm, Accumulators& acc) {
  static_assert(std::is_trivially_copyable_v<Accumulators>,
                "kfuse: internal: accumulators must be trivially copyable");
#if KFUSE_ENABLE_MPI
  MPI_Datatype type;
  MPI_Type_contiguous(static_cast<int>(sizeof(Accumulators)), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Op op;
  MPI_Op_create(
      [](void* in, void* inout, int* count, MPI_Datatype*) {
        auto* from = static_cast<Accumulators*>(in);
        auto* into = static_cast<Accumulators*>(inout);
        for (int k = 0; k < *count; ++k) into[k].join(from[k]);
      },
      1, &op);
  MPI_Allreduce(MPI_IN_PLACE, &acc, 1, type, op, comm.native());
  MPI_Op_free(&op);
  MPI_Type_free(&type);
#else
  (void)comm, (void)acc;
#endif
}

}  // namespace kfuse::detail
