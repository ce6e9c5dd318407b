// How each statement kind runs (its plan side is plan/statement.hpp): the kernel-side
// statement a kernel statement lowers to, with the register or accumulator slot it needs,
// and what happens after the launch; a host statement's evaluation. Each kernel-side
// statement has run(p, registers, accumulators) at a point and flush(p, registers,
// accumulators) after
// the group's statements ran there (exec/kernel.hpp's StatementList). The generic code that
// uses them (exec/group.hpp):
//   lower_statement<J, Forward>(s, ctx)   J: its first accumulator slot (reductions are
//                                         numbered in statement order)
//   forwarded_position<S>                 the array it stores and forwards in a register
//   register_slot_of<L>, accumulator_slot_of<L>   the slots of lowered statement L
//   store_result<J>(s, ctx, accumulators) after the launch (default: nothing)
//   run_on_host(s, ctx)                   a host statement (StatementInfo<S>::kernel false)
#pragma once

#include <tuple>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "kfuse/core/view.hpp"
#include "kfuse/exec/kernel.hpp"
#include "kfuse/exec/lower.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class S>
struct forwarded_position : std::integral_constant<int, -1> {};
template <class L>
struct register_slot_of {
  using type = void;
};
template <class L>
struct accumulator_slot_of {
  using type = void;
};
/// Most statements produce nothing after the launch.
template <int J, class S, class Ctx, class Acc>
void store_result(const S&, const Ctx&, const Acc&) {}

// ---- Assign: StoreView (memory) or StoreRegister (a register temporary) -------

/// Stores to a view. With K >= 0 the value goes to register slot K, where
/// the group's later statements read it (see Forwarding), and to memory in
/// `flush`, after every statement of the group ran at this point: with all
/// loads ahead of all stores, the compiler need not reload an operand after
/// a store it cannot prove to be elsewhere.
template <class T, int N, class E, int K = -1>
struct StoreView {
  static constexpr int slot = K;
  view_t<T, N> view;
  E expr;
  template <class P>
  KOKKOS_INLINE_FUNCTION void store(const P& p, const T& value) const {
    if constexpr (N == 1) view(p[0]) = value;
    if constexpr (N == 2) view(p[0], p[1]) = value;
    if constexpr (N == 3) view(p[0], p[1], p[2]) = value;
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A&) const {
    const T value = static_cast<T>(expr.eval(p, registers));
    if constexpr (K >= 0)
      register_of<K>(registers) = value;
    else
      store(p, value);
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P& p, R& registers, A&) const {
    if constexpr (K >= 0) store(p, register_of<K>(registers));
  }
};
template <class T, int N, class E, int K>
auto children(const StoreView<T, N, E, K>& s) {
  return child_refs(s.expr);
}
template <class T, int N, class E>
struct stores_in_run<StoreView<T, N, E, -1>> : std::true_type {};
template <class T, int N, class E, int K>
struct stores_rows<StoreView<T, N, E, K>> : std::bool_constant<(N > 1)> {};
template <int N, class E, int K>
struct streamable_store<StoreView<double, N, E, K>> : std::bool_constant<(N > 1)> {};
template <class T, int N, class E, int K>
struct register_slot_of<StoreView<T, N, E, K>> {
  using type = std::conditional_t<(K < 0), void, RegisterSlot<K, T>>;
};

template <int K, class T, class E>
struct StoreRegister {
  E expr;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A&) const {
    register_of<K>(registers) = static_cast<T>(expr.eval(p, registers));
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P&, R&, A&) const {}
};
template <int K, class T, class E>
auto children(const StoreRegister<K, T, E>& s) {
  return child_refs(s.expr);
}
template <int K, class T, class E>
struct register_slot_of<StoreRegister<K, T, E>> {
  using type = RegisterSlot<K, T>;
};

/// With Forward, an array target is kept in register slot<Target::index> for
/// the group's later statements (Forwarding) and stored to memory once they
/// have all run (StoreView).
template <int J, bool Forward, class Target, class E, class Ctx>
auto lower_statement(const Assign<Target, E>& s, const Ctx& ctx) {
  using T = typename Target::value_type;
  auto expr = lower(s.expr, ctx);
  if constexpr (is_array_param<Target>::value && Ctx::template in_register<Target::index>) {
    return StoreRegister<Ctx::template slot<Target::index>, T, decltype(expr)>{expr};
  } else {
    const auto& target = ctx.template argument<Target::index>();
    using A = std::decay_t<decltype(target)>;
    if constexpr (Forward && is_array_param<Target>::value)
      return StoreView<T, A::rank, decltype(expr), Ctx::template slot<Target::index>>{target.view(),
                                                                                      expr};
    else
      return StoreView<T, A::rank, decltype(expr)>{target.view(), expr};
  }
}
template <class Target, class E>
struct forwarded_position<Assign<Target, E>>
    : std::integral_constant<int, is_array_param<Target>::value ? Target::index : -1> {};

// ---- Reduce: Accumulate into accumulator slot J, then its Scalar ------------------

template <int J, class Op, class T, class E>
struct Accumulate {
  E expr;
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void run(const P& p, R& registers, A& accumulators) const {
    Op::join(accumulator_of<J>(accumulators), static_cast<T>(expr.eval(p, registers)));
  }
  template <class P, class R, class A>
  KOKKOS_INLINE_FUNCTION void flush(const P&, R&, A&) const {}
};
template <int J, class Op, class T, class E>
auto children(const Accumulate<J, Op, T, E>& s) {
  return child_refs(s.expr);
}
template <int J, class Op, class T, class E>
struct accumulator_slot_of<Accumulate<J, Op, T, E>> {
  using type = AccumulatorSlot<J, Op, T>;
};

template <int J, bool Forward, class Target, class Op, class E, class F, class Ctx>
auto lower_statement(const Reduce<Target, Reduction<Op, E, F>>& s, const Ctx& ctx) {
  auto expr = lower(s.reduction.arg, ctx);
  return Accumulate<J, Op, typename Reduction<Op, E, F>::value_type, decltype(expr)>{expr};
}
/// The reduction, combined over ranks, finished (norm2's sqrt) into its Scalar.
template <int J, class Target, class R, class Ctx, class Acc>
void store_result(const Reduce<Target, R>&, const Ctx& ctx, const Acc& accumulators) {
  auto scalar = ctx.template scalar<Target::index>();
  scalar = R::finish_type::apply(accumulator_of<J>(accumulators));
}

// ---- ScalarAssign: evaluated once on the host ------------------------------------

template <class Target, class E, class Ctx>
void run_on_host(const ScalarAssign<Target, E>& s, const Ctx& ctx) {
  NoRegisters none;
  auto target = ctx.template argument<Target::index>();
  target = static_cast<typename Target::value_type>(lower(s.expr, ctx).eval(Point<1>{{0}}, none));
}

}  // namespace kfuse::detail
