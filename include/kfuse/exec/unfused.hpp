// The Unfused policy's rewrite: every operation of every statement becomes
// its own statement writing a fresh temporary (positions First, First+1,
// ...), so the program runs one kernel per operation and materialises every
// intermediate, like an array library without fusion.
#pragma once

#include <boost/hana/concat.hpp>
#include <boost/hana/tuple.hpp>

#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class E>
constexpr bool is_operation_v = is_instance_of_unary<E>::value ||
                                is_instance_of_binary<E>::value || is_instance_of_where<E>::value ||
                                is_sparse_product<E>::value;

template <class Next, class E>
auto materialize(Next next, const E& e);

/// Replaces the operation children of `e` by temporaries.
/// Returns (statements computing them, rebuilt e, next free position).
template <class Next, class E>
auto materialize_children(Next next, const E& e) {
  if constexpr (is_instance_of_unary<E>::value) {
    auto a = materialize(next, e.arg);
    auto node = Unary<typename std::decay_t<decltype(e.op)>, std::decay_t<decltype(hana::at_c<1>(a))>>{
        {}, e.op, hana::at_c<1>(a)};
    return hana::make_tuple(hana::at_c<0>(a), node, hana::at_c<2>(a));
  } else if constexpr (is_instance_of_binary<E>::value) {
    auto l = materialize(next, e.lhs);
    auto r = materialize(hana::at_c<2>(l), e.rhs);
    auto node = Binary<std::decay_t<decltype(e.op)>, std::decay_t<decltype(hana::at_c<1>(l))>,
                       std::decay_t<decltype(hana::at_c<1>(r))>>{{}, e.op, hana::at_c<1>(l),
                                                                 hana::at_c<1>(r)};
    return hana::make_tuple(hana::concat(hana::at_c<0>(l), hana::at_c<0>(r)), node,
                            hana::at_c<2>(r));
  } else if constexpr (is_instance_of_where<E>::value) {
    auto c = materialize(next, e.cond);
    auto a = materialize(hana::at_c<2>(c), e.if_true);
    auto b = materialize(hana::at_c<2>(a), e.if_false);
    auto node = Where<std::decay_t<decltype(hana::at_c<1>(c))>,
                      std::decay_t<decltype(hana::at_c<1>(a))>,
                      std::decay_t<decltype(hana::at_c<1>(b))>>{
        {}, hana::at_c<1>(c), hana::at_c<1>(a), hana::at_c<1>(b)};
    return hana::make_tuple(
        hana::concat(hana::concat(hana::at_c<0>(c), hana::at_c<0>(a)), hana::at_c<0>(b)), node,
        hana::at_c<2>(b));
  } else {
    return hana::make_tuple(hana::make_tuple(), e, next);
  }
}

/// An operation becomes `t = op(...)` and is replaced by t; leaves stay.
template <class Next, class E>
auto materialize(Next next, const E& e) {
  if constexpr (is_operation_v<E>) {
    auto inner = materialize_children(next, e);
    constexpr int position = std::decay_t<decltype(hana::at_c<2>(inner))>::value;
    using Temp = TempParam<position, typename E::value_type, E::strict>;
    auto statement = Assign<Temp, std::decay_t<decltype(hana::at_c<1>(inner))>>{Temp{}, hana::at_c<1>(inner)};
    return hana::make_tuple(hana::append(hana::at_c<0>(inner), statement), Temp{},
                            hana::int_c<position + 1>);
  } else {
    return hana::make_tuple(hana::make_tuple(), e, next);
  }
}

/// One statement, split: (statements, next free position).
template <class Next, class Target, class E>
auto split_statement(Next next, const Assign<Target, E>& s) {
  auto inner = materialize_children(next, s.expr);
  auto root = Assign<Target, std::decay_t<decltype(hana::at_c<1>(inner))>>{s.target, hana::at_c<1>(inner)};
  return hana::make_tuple(hana::append(hana::at_c<0>(inner), root), hana::at_c<2>(inner));
}
template <class Next, class Target, class Op, class E, class F>
auto split_statement(Next next, const Reduce<Target, Reduction<Op, E, F>>& s) {
  auto inner = materialize_children(next, s.reduction.arg);
  using Arg = std::decay_t<decltype(hana::at_c<1>(inner))>;
  auto root = Reduce<Target, Reduction<Op, Arg, F>>{s.target, {{}, hana::at_c<1>(inner)}};
  return hana::make_tuple(hana::append(hana::at_c<0>(inner), root), hana::at_c<2>(inner));
}
template <class Next, class Target, class E>
auto split_statement(Next next, const ScalarAssign<Target, E>& s) {
  return hana::make_tuple(hana::make_tuple(s), next);
}

/// All statements, split; temporaries are numbered from `first`.
template <class Statements, class First>
auto split_operations(const Statements& statements, First first) {
  auto result = hana::fold_left(statements, hana::make_tuple(hana::make_tuple(), first),
                                [](auto acc, const auto& s) {
                                  auto part = split_statement(hana::at_c<1>(acc), s);
                                  return hana::make_tuple(
                                      hana::concat(hana::at_c<0>(acc), hana::at_c<0>(part)),
                                      hana::at_c<1>(part));
                                });
  return result;
}

}  // namespace kfuse::detail
