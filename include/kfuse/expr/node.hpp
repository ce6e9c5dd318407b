// Expression-node foundations shared by every operator: the ExprTag marker,
// domains (what an expression iterates over), the element-type rule
// (constants, comparisons and indices adapt to the array side), and operand
// wrapping (arithmetic values become Constant leaves).
//
// Every node is a plain aggregate of its children. The same node templates
// serve two worlds: the user-facing tree (placeholders, Arrays, Scalars as
// leaves) that the planner inspects, and the lowered tree (view and register
// leaves) that a Kokkos kernel evaluates through eval(point, registers).
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"

namespace kfuse {

/// Base of every expression node and leaf (Array and Scalar opt in by
/// trait). It lives in kfuse so that argument-dependent lookup finds kfuse's
/// operators and functions for every node.
struct ExprTag {};

/// Base of reductions (sum, dot, ...), which are not values inside expressions.
struct ReductionTag {};

}  // namespace kfuse

namespace kfuse::detail {

using kfuse::ExprTag;
using kfuse::ReductionTag;

/// What an expression iterates over, as an int code (domains are template
/// arguments, and C++17 takes no class types there): grid(rank) for the
/// arrays of a rank-1..3 grid, or one of the codes below, which no rank takes.
namespace domain {
inline constexpr int scalar = 0;    ///< only constants and Scalars: no kernel needed
inline constexpr int any = -1;      ///< array-like, rank fixed by context (temporaries, index<d>)
inline constexpr int row_map = -2;  ///< 1-D distributed vectors of the sparse side

/// The domain of the arrays of a grid of rank 1..3, and back.
constexpr int grid(int rank) { return rank; }
constexpr bool is_grid(int d) { return d >= grid(1) && d <= grid(3); }
constexpr int rank_of(int d) { return d; }  ///< is_grid(d)

constexpr bool compatible(int a, int b) {
  return a == b || a == scalar || b == scalar || a == any || b == any;
}
constexpr int combine(int a, int b) {
  return a == b ? a : (a == scalar || a == any) ? (b == scalar ? a : b) : a;
}
}  // namespace domain

/// What `children(node)` returns (the node protocol, expr/walk.hpp): references to a
/// node's children (c0, c1, c2), tuple-like for std::tuple_size and std::tuple_element, read
/// by `child<I>`. A plain aggregate rather than a std::tuple, whose every type instantiates
/// its constructors' constraints: the trees of one program hold hundreds of nodes.
template <class... C>
struct ChildRefs {
  static_assert(sizeof...(C) <= 3,
                "kfuse node protocol: children(node) returns at most 3 children; give "
                "ChildRefs (expr/node.hpp) a specialisation for more");
};
template <class A>
struct ChildRefs<A> {
  const A& c0;
};
template <class A, class B>
struct ChildRefs<A, B> {
  const A& c0;
  const B& c1;
};
template <class A, class B, class C>
struct ChildRefs<A, B, C> {
  const A& c0;
  const B& c1;
  const C& c2;
};

/// A node's children, for its `children(node)`.
template <class... C>
ChildRefs<C...> child_refs(const C&... c) {
  return {c...};
}

/// Child I of a node's ChildRefs.
template <std::size_t I, class... C>
const auto& child(const ChildRefs<C...>& refs) {
  if constexpr (I == 0)
    return refs.c0;
  else if constexpr (I == 1)
    return refs.c1;
  else
    return refs.c2;
}

/// A leaf has no children (the node protocol's default).
template <class E>
ChildRefs<> children(const E&) {
  return {};
}
template <class E>
using children_t = decltype(children(std::declval<const E&>()));

template <template <class> class Is, class E>
constexpr bool holds_node();

template <template <class> class Is, class... Child>
constexpr bool holds_node_in(const ChildRefs<Child...>*) {
  return (holds_node<Is, Child>() || ...);
}

/// Whether a tree of type E has a node N with Is<N>::value (at compile time).
template <template <class> class Is, class E>
constexpr bool holds_node() {
  return Is<E>::value || holds_node_in<Is>(static_cast<const children_t<E>*>(nullptr));
}

template <template <class> class Is, class E>
constexpr int count_nodes();

template <template <class> class Is, class... Child>
constexpr int count_nodes_in(const ChildRefs<Child...>*) {
  return (0 + ... + count_nodes<Is, Child>());
}

/// How many nodes N with Is<N>::value a tree of type E has (at compile time).
template <template <class> class Is, class E>
constexpr int count_nodes() {
  return int(Is<E>::value) + count_nodes_in<Is>(static_cast<const children_t<E>*>(nullptr));
}

/// Opt-in for leaf types defined in lower layers (Array, Scalar, Vector).
template <class T, class = void>
struct is_leaf_handle : std::false_type {};

template <class E>
inline constexpr bool is_expr_v =
    std::is_base_of_v<ExprTag, std::decay_t<E>> || is_leaf_handle<std::decay_t<E>>::value;

template <class E>
inline constexpr bool is_operand_v = is_expr_v<E> || std::is_arithmetic_v<std::decay_t<E>>;

/// Describes a node's value: its type, and whether that type is "strict"
/// (comes from an Array/Scalar element type) or adapts to the other operand.
template <class E, class = void>
struct expr_traits {
  using value_type = typename E::value_type;
  static constexpr bool strict = E::strict;
  static constexpr int domain = E::domain;
};

/// The element type of a binary operation: strict sides must agree; a
/// flexible side (constant, comparison, index) takes the strict side's type.
template <class L, class R>
struct common_value {
  using LT = expr_traits<L>;
  using RT = expr_traits<R>;
  static constexpr bool strict = LT::strict || RT::strict;
  static constexpr bool mismatch =
      LT::strict && RT::strict && !std::is_same_v<typename LT::value_type, typename RT::value_type>;
  using type = std::conditional_t<
      LT::strict, typename LT::value_type,
      std::conditional_t<RT::strict, typename RT::value_type,
                         std::common_type_t<typename LT::value_type, typename RT::value_type>>>;
};

/// A compile-time constant or captured value, converted to the element type
/// of the expression it meets.
template <class T>
struct Constant : ExprTag {
  using value_type = T;
  static constexpr bool strict = false;
  static constexpr int domain = domain::scalar;
  T value;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P&, R&) const {
    return value;
  }
};

/// Turns an operand into a node: arithmetic values become Constant leaves.
template <class E>
auto as_node(const E& e) {
  if constexpr (std::is_arithmetic_v<E>)
    return Constant<E>{{}, e};
  else
    return e;
}

template <class E>
using node_t = decltype(as_node(std::declval<std::decay_t<E>>()));

/// What a launch checked to hold at every point it runs, as compile-time
/// flags that let eval() drop a run-time test (see exec/kernel.hpp, launch):
/// SmallPowers, every pow(e, n) has n in 1..3 (PowInt::small); Squares, every
/// one has n = 2; OwnedColumns, every row of a sparse product A * x has only
/// owned columns (no ghosts).
template <bool SmallPowers = false, bool Squares = false, bool OwnedColumns = false>
struct PointFacts {
  static constexpr bool small_powers = SmallPowers;
  static constexpr bool squares = Squares;
  static constexpr bool owned_columns = OwnedColumns;
  using with_small_powers = PointFacts<true, Squares, OwnedColumns>;
  using with_squares = PointFacts<true, true, OwnedColumns>;
  using with_owned_columns = PointFacts<SmallPowers, Squares, true>;
};

/// Points handed to eval(): view coordinates (index 0 = first halo cell).
/// A plain point promises nothing (PointIn carries a launch's facts).
template <int N>
struct Point {
  using facts = PointFacts<>;
  index_t i[N];
  KOKKOS_INLINE_FUNCTION index_t operator[](int d) const { return i[d]; }
};

/// Empty register file, for kernels without register temporaries.
struct NoRegisters {};

}  // namespace kfuse::detail

// The tuple protocol of ChildRefs (std::tuple_size_v and std::tuple_element_t of children_t).
namespace std {
template <class... C>
struct tuple_size<kfuse::detail::ChildRefs<C...>> : integral_constant<size_t, sizeof...(C)> {};
template <size_t I, class... C>
struct tuple_element<I, kfuse::detail::ChildRefs<C...>> : tuple_element<I, tuple<C...>> {};
}  // namespace std
