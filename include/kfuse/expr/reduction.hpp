// Reductions over all points of an array expression: sum, dot, norm2,
// reduce_max, reduce_min. They accumulate in the element type (a comparison
// counts as 0/1 and sums as index_t) and are values only as the right side
// of kfuse::reduce(...) in a program or of kfuse::eval(...).
#pragma once

#include <limits>
#include <tuple>
#include <type_traits>

#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/expr/operation.hpp"

namespace kfuse::detail {

struct SumReduce {
  static constexpr const char* symbol = "sum";
  static constexpr ReduceOp op = ReduceOp::sum;
  template <class T>
  KOKKOS_INLINE_FUNCTION static T identity() {
    return T(0);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void join(T& into, const T& v) {
    into += v;
  }
};
struct MaxReduce {
  static constexpr const char* symbol = "reduce_max";
  static constexpr ReduceOp op = ReduceOp::max;
  template <class T>
  KOKKOS_INLINE_FUNCTION static T identity() {
    return Kokkos::reduction_identity<T>::max();
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void join(T& into, const T& v) {
    if (into < v) into = v;
  }
};
struct MinReduce {
  static constexpr const char* symbol = "reduce_min";
  static constexpr ReduceOp op = ReduceOp::min;
  template <class T>
  KOKKOS_INLINE_FUNCTION static T identity() {
    return Kokkos::reduction_identity<T>::min();
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void join(T& into, const T& v) {
    if (v < into) into = v;
  }
};

/// What is done to the combined value before it is stored.
struct NoFinish {
  static constexpr const char* symbol = "";
  template <class T>
  static T apply(T v) {
    return v;
  }
};
struct SqrtFinish {
  static constexpr const char* symbol = "norm2";
  template <class T>
  static T apply(T v) {
    return static_cast<T>(math::sqrt(static_cast<floating_of<T>>(v)));
  }
};

template <class Op, class E, class Finish = NoFinish>
struct Reduction : ReductionTag {
  using op_type = Op;
  using finish_type = Finish;
  using arg_type = typename expr_traits<E>::value_type;
  using value_type = std::conditional_t<std::is_same_v<arg_type, bool>, index_t, arg_type>;
  static constexpr int domain = expr_traits<E>::domain;
  E arg;
};

template <class Op, class E, class F>
auto children(const Reduction<Op, E, F>& r) {
  return child_refs(r.arg);
}
template <class Op, class E, class F, class C>
auto rebuild(const Reduction<Op, E, F>&, const C& arg) {
  return Reduction<Op, C, F>{{}, arg};
}

template <class E>
struct is_reduction : std::false_type {};
template <class Op, class E, class F>
struct is_reduction<Reduction<Op, E, F>> : std::true_type {};

template <class Op, class Finish = NoFinish, class E>
auto make_reduction(const E& e) {
  static_assert(check_operands<E>());
  static_assert(is_expr_v<E> && expr_traits<E>::domain != domain::scalar,
                "kfuse: a reduction (sum, dot, norm2, reduce_max, reduce_min) needs an array "
                "expression to reduce over");
  return Reduction<Op, E, Finish>{{}, e};
}

}  // namespace kfuse::detail

namespace kfuse {

template <class E>
auto sum(const E& e) {
  return detail::make_reduction<detail::SumReduce>(e);
}
/// dot(a, b) = sum(a * b).
template <class A, class B>
auto dot(const A& a, const B& b) {
  return detail::make_reduction<detail::SumReduce>(a * b);
}
/// norm2(e) = sqrt(sum(e * e)).
template <class E>
auto norm2(const E& e) {
  return detail::make_reduction<detail::SumReduce, detail::SqrtFinish>(e * e);
}
template <class E>
auto reduce_max(const E& e) {
  return detail::make_reduction<detail::MaxReduce>(e);
}
template <class E>
auto reduce_min(const E& e) {
  return detail::make_reduction<detail::MinReduce>(e);
}

}  // namespace kfuse
