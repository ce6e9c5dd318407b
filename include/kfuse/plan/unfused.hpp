// The Unfused policy's rewrite: every operation of every statement becomes
// its own statement writing a fresh temporary (positions First, First+1,
// ...), so the program runs one kernel per operation and materialises every
// intermediate, like an array library without fusion.
#pragma once

#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include <boost/hana/append.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/tuple.hpp>

#include "kfuse/expr/walk.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

/// What the rewrite materialises: every node with children (expr/walk.hpp), and A * x.
template <class E>
constexpr bool is_operation_v = !is_leaf_node_v<E> || is_sparse_product<E>::value;

template <class E>
constexpr int operation_count();
template <class Children, std::size_t... I>
constexpr int operation_count_in(std::index_sequence<I...>) {
  return (0 + ... + operation_count<std::decay_t<std::tuple_element_t<I, Children>>>());
}
/// How many temporaries the rewrite makes below the root of a tree of type E (for its
/// children): the root of a statement stays in the statement.
template <class E>
constexpr int child_operation_count() {
  using Children = children_t<E>;
  return operation_count_in<Children>(std::make_index_sequence<std::tuple_size_v<Children>>{});
}
/// How many temporaries the rewrite makes for a tree of type E.
template <class E>
constexpr int operation_count() {
  return (is_operation_v<E> ? 1 : 0) + child_operation_count<E>();
}

/// Where each child's temporaries start: after those of the children before it.
template <int Next, class Children, std::size_t... I>
constexpr std::array<int, sizeof...(I)> child_starts(std::index_sequence<I...>) {
  std::array<int, sizeof...(I)> start{};
  int next = Next;
  ((start[I] = next, next += operation_count<std::decay_t<std::tuple_element_t<I, Children>>>()),
   ...);
  return start;
}

template <int Next, class E>
auto materialize(const E& e);

template <int Next, class E, class Children, std::size_t... I>
auto materialize_children_in(const E& e, const Children& c, std::index_sequence<I...>) {
  [[maybe_unused]] constexpr auto start = child_starts<Next, Children>(std::index_sequence<I...>{});
  auto parts = hana::make_tuple(materialize<start[I]>(std::get<I>(c))...);
  return hana::make_tuple(
      hana::flatten(hana::make_tuple(hana::make_tuple(), hana::at_c<0>(hana::at_c<I>(parts))...)),
      rebuild(e, hana::at_c<1>(hana::at_c<I>(parts))...));
}

/// Replaces the operation children of `e` by temporaries numbered from Next, children
/// first, depth first. Returns (statements computing them, rebuilt e).
template <int Next, class E>
auto materialize_children(const E& e) {
  if constexpr (is_leaf_node_v<E>) {
    return hana::make_tuple(hana::make_tuple(), e);
  } else {
    using Children = children_t<E>;
    return materialize_children_in<Next>(e, children(e),
                                         std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

/// An operation becomes `t = op(...)` (t: the position after its children's temporaries)
/// and is replaced by t; leaves stay. Returns (statements, replacement).
template <int Next, class E>
auto materialize(const E& e) {
  if constexpr (is_operation_v<E>) {
    auto inner = materialize_children<Next>(e);
    constexpr int position = Next + child_operation_count<E>();
    using Temp = TempParam<position, typename E::value_type, E::strict>;
    auto statement =
        Assign<Temp, std::decay_t<decltype(hana::at_c<1>(inner))>>{Temp{}, hana::at_c<1>(inner)};
    return hana::make_tuple(hana::append(hana::at_c<0>(inner), statement), Temp{});
  } else {
    return hana::make_tuple(hana::make_tuple(), e);
  }
}

/// One statement, split: (statements, next free position). The root operation stays in
/// the statement; its children are materialised.
template <class Next, class S>
auto split_statement(Next next, const S& s) {
  if constexpr (StatementInfo<S>::kernel) {
    (void)next;
    using E = std::decay_t<decltype(statement_expr(s))>;
    auto inner = materialize_children<Next::value>(statement_expr(s));
    auto root = with_expr(s, hana::at_c<1>(inner));
    return hana::make_tuple(hana::append(hana::at_c<0>(inner), root),
                            hana::int_c<Next::value + child_operation_count<E>()>);
  } else {  // a host statement runs as it is
    return hana::make_tuple(hana::make_tuple(s), next);
  }
}

/// All statements, split; temporaries are numbered from `first`.
template <class Statements, class First>
auto split_operations(const Statements& statements, First first) {
  auto result = hana::fold_left(
      statements, hana::make_tuple(hana::make_tuple(), first), [](auto acc, const auto& s) {
        auto part = split_statement(hana::at_c<1>(acc), s);
        return hana::make_tuple(hana::concat(hana::at_c<0>(acc), hana::at_c<0>(part)),
                                hana::at_c<1>(part));
      });
  return result;
}

}  // namespace kfuse::detail
