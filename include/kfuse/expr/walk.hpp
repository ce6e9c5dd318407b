// Walking expression trees. The node protocol: a node kind with children
// declares, next to its definition, `children(node)` (references to its
// children: `child_refs(a, b)`, expr/node.hpp) and, if it is rebuilt by lowering or the Unfused
// rewrite, `rebuild(node, children...)` (the same node over other children);
// anything else is a leaf (children_t and holds_node live with ChildRefs in expr/node.hpp,
// where Binary's evaluation order asks holds_node). The walkers below, and every pass written on
// them (what a statement reads, plan/access.hpp; lowering; the Unfused rewrite; kernel view slots;
// explain()'s text), work for every node kind alike, for user-facing trees and lowered kernel
// bodies (exec/kernel.hpp) alike.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "kfuse/expr/operation.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/where.hpp"

namespace kfuse::detail {

template <class E>
inline constexpr bool is_leaf_node_v = std::tuple_size_v<children_t<E>> == 0;

template <class E, class F>
void for_each_node(const E& e, F&& f);

// The walkers recurse through named helpers rather than std::apply and
// lambdas: every instantiation's name then holds the node's type once, not
// the whole chain of enclosing closures (which made debug builds' symbol
// strings grow with the square of a tree's size). They read a node's children
// as c.c0, c.c1, c.c2 under `if constexpr`, not through child<I>: a function less
// per child.
template <class F, class... C>
void for_each_child(const ChildRefs<C...>& c, F& f) {
  if constexpr (sizeof...(C) > 0) for_each_node(c.c0, f);
  if constexpr (sizeof...(C) > 1) for_each_node(c.c1, f);
  if constexpr (sizeof...(C) > 2) for_each_node(c.c2, f);
}

/// Calls f(node) for every node of a tree, parents first.
template <class E, class F>
void for_each_node(const E& e, F&& f) {
  f(e);
  if constexpr (!is_leaf_node_v<E>) for_each_child(children(e), f);
}

template <class F>
struct OnLeaves {
  F& f;
  template <class N>
  void operator()(const N& node) const {
    if constexpr (is_leaf_node_v<N>) f(node);
  }
};

/// Calls f(leaf) for every leaf of a tree (Shifted and SparseProduct count
/// as one leaf): an eager statement's checks of its arrays walk with it.
template <class E, class F>
void for_each_leaf(const E& e, F&& f) {
  for_each_node(e, OnLeaves<std::remove_reference_t<F>>{f});
}

/// Collect<C, Found>::type folded over a node's children C in order, from Found: a walk at
/// the type level. Collect<E, Found> recurses into E's own children the same way
/// (fold_children<Collect, children_t<E>, Found>) where it does not stop at E.
template <template <class, class> class Collect, class Children, class Found>
struct fold_children;
template <template <class, class> class Collect, class Found>
struct fold_children<Collect, ChildRefs<>, Found> {
  using type = Found;
};
template <template <class, class> class Collect, class C, class... Rest, class Found>
struct fold_children<Collect, ChildRefs<C, Rest...>, Found>
    : fold_children<Collect, ChildRefs<Rest...>, typename Collect<std::decay_t<C>, Found>::type> {};

template <template <class> class Is, class E, class F>
void for_each_node_of(const E& e, F& f);
template <template <class> class Is, class F, class... C>
void for_each_child_of(const ChildRefs<C...>& c, F& f) {
  if constexpr (sizeof...(C) > 0) for_each_node_of<Is>(c.c0, f);
  if constexpr (sizeof...(C) > 1) for_each_node_of<Is>(c.c1, f);
  if constexpr (sizeof...(C) > 2) for_each_node_of<Is>(c.c2, f);
}

/// Calls f(node) for every node N of a tree with Is<N>::value, parents first, descending
/// only into the sub-trees that hold one (holds_node, at compile time): a walk for a few
/// kinds of node compiles nothing for the rest of the tree.
template <template <class> class Is, class E, class F>
void for_each_node_of(const E& e, F& f) {
  if constexpr (holds_node<Is, E>()) {
    if constexpr (Is<E>::value) f(e);
    if constexpr (!is_leaf_node_v<E>) for_each_child_of<Is>(children(e), f);
  }
}

/// Whether pred(node) holds for every node N of a tree with Is<N>::value
/// (true when it has none): a launch's run-time facts about its kernel body.
template <template <class> class Is, class E, class Pred>
bool every_node(const E& e, const Pred& pred) {
  bool all = true;
  auto check = [&](const auto& node) { all = all && pred(node); };
  for_each_node_of<Is>(e, check);
  return all;
}

}  // namespace kfuse::detail
