// Which program parameters an expression reads, and how: the compile-time
// facts the fusion rules work on. Sets are Boost.Hana sets of
// hana::int_<position>:
//   pointwise — arrays/temporaries read at the point itself
//   offset    — arrays read at a non-zero offset (stencil) or through a
//               sparse product (A * x): reads that need neighbour data
//   scalars   — Scalar parameters read
// Eager leaves (Array, Vector, Scalar handles) are not parameters and add
// nothing to the sets; array_handles says whether an Array or Vector handle
// is read (one captured in a program's lambda): the plan cannot tell it from
// a parameter bound to the same array.
#pragma once

#include <boost/hana/fold_left.hpp>
#include <boost/hana/set.hpp>
#include <boost/hana/core/to.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/union.hpp>

#include "kfuse/expr/operation.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/where.hpp"

namespace kfuse::detail {

namespace hana = boost::hana;

template <class E>
constexpr bool is_array_handle() {
  if constexpr (is_leaf_handle<E>::value)
    return expr_traits<E>::domain != domain::scalar;
  else
    return false;
}

/// Leaves that read no parameter (constants, indices, eager handles).
template <class E, class = void>
struct Access {
  static constexpr auto pointwise = hana::make_set();
  static constexpr auto offset = hana::make_set();
  static constexpr auto scalars = hana::make_set();
  static constexpr bool array_handles = is_array_handle<E>();
};

template <int I, class T, int N>
struct Access<ArrayParam<I, T, N>> {
  static constexpr auto pointwise = hana::make_set(hana::int_c<I>);
  static constexpr auto offset = hana::make_set();
  static constexpr auto scalars = hana::make_set();
  static constexpr bool array_handles = false;
};
template <int I, class T, bool S>
struct Access<TempParam<I, T, S>> : Access<ArrayParam<I, T, 1>> {};

template <int I, class T>
struct Access<ScalarParam<I, T>> {
  static constexpr auto pointwise = hana::make_set();
  static constexpr auto offset = hana::make_set();
  static constexpr auto scalars = hana::make_set(hana::int_c<I>);
  static constexpr bool array_handles = false;
};

template <bool Centred, class Leaf>
struct ShiftedAccess {  // shift<0, 0>(u) is a pointwise read
  static constexpr auto pointwise = Access<Leaf>::pointwise;
  static constexpr auto offset = hana::make_set();
  static constexpr auto scalars = hana::make_set();
  static constexpr bool array_handles = Access<Leaf>::array_handles;
};
template <class Leaf>
struct ShiftedAccess<false, Leaf> {
  static constexpr auto pointwise = hana::make_set();
  static constexpr auto offset = Access<Leaf>::pointwise;
  static constexpr auto scalars = hana::make_set();
  static constexpr bool array_handles = Access<Leaf>::array_handles;
};
template <class Leaf, int... O>
struct Access<Shifted<Leaf, O...>> : ShiftedAccess<Shifted<Leaf, O...>::pointwise, Leaf> {};

/// Nodes: the union of their children's accesses.
template <class... Children>
struct AccessUnion {
  static constexpr auto pointwise = hana::fold_left(
      hana::make_tuple(Access<Children>::pointwise...), hana::make_set(), hana::union_);
  static constexpr auto offset = hana::fold_left(hana::make_tuple(Access<Children>::offset...),
                                                 hana::make_set(), hana::union_);
  static constexpr auto scalars = hana::fold_left(hana::make_tuple(Access<Children>::scalars...),
                                                  hana::make_set(), hana::union_);
  static constexpr bool array_handles = (Access<Children>::array_handles || ...);
};

/// A * x reads x at other rows (and ranks): an offset read. The matrix is
/// read-only, so the planner does not track it.
template <class M, class X>
struct Access<SparseProduct<M, X>> {
  static constexpr auto pointwise = hana::make_set();
  static constexpr auto offset = Access<X>::pointwise;
  static constexpr auto scalars = hana::make_set();
  static constexpr bool array_handles = Access<X>::array_handles;
};

template <class Op, class E>
struct Access<Unary<Op, E>> : AccessUnion<E> {};
template <class Op, class L, class R>
struct Access<Binary<Op, L, R>> : AccessUnion<L, R> {};
template <class C, class A, class B>
struct Access<Where<C, A, B>> : AccessUnion<C, A, B> {};
template <class Op, class E, class F>
struct Access<Reduction<Op, E, F>> : AccessUnion<E> {};

template <class E>
constexpr bool reads_at_offset(int position) {
  return hana::fold_left(hana::to_tuple(Access<E>::offset), false,
                         [position](bool found, auto i) { return found || decltype(i)::value == position; });
}

}  // namespace kfuse::detail
