// Text of expressions for explain(), to_dot() and kernel labels (a statement kind's own
// text is in plan/statement.hpp). Placeholders are named through a callback (position ->
// label).
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kfuse/expr/literal.hpp"
#include "kfuse/expr/operation.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/walk.hpp"

namespace kfuse::detail {

template <class Op, class = void>
struct has_infix : std::false_type {};
template <class Op>
struct has_infix<Op, std::void_t<decltype(Op::infix)>> : std::true_type {};
/// Whether an operation is written between its operands ("a + b") or before one ("-a").
template <class Op>
constexpr bool is_infix() {
  if constexpr (has_infix<Op>::value)
    return Op::infix;
  else
    return false;
}

template <class T, class Names>
std::string describe(const Constant<T>& c, const Names&) {
  std::string s = std::to_string(c.value);
  if (s.find('.') != std::string::npos) {  // 0.250000 -> 0.25
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}
template <char... C, class Names>
std::string describe(const Literal<C...>&, const Names&) {
  return std::string{C...};  // as written, without its suffix
}
template <int D, class Names>
std::string describe(const Index<D>&, const Names&) {
  return "index<" + std::to_string(D) + ">";
}
template <class T, int N, class Names>
std::string describe(const Array<T, N>& a, const Names&) {
  return a.label();
}
template <class T, class Names>
std::string describe(const Scalar<T>& s, const Names&) {
  return s.label();
}
template <int I, class T, int D, class Names>
std::string describe(const ArrayParam<I, T, D>&, const Names& names) {
  return names(I);
}
template <int I, class T, bool S, class Names>
std::string describe(const TempParam<I, T, S>&, const Names& names) {
  return names(I);
}
template <int I, class T, class Names>
std::string describe(const ScalarParam<I, T>&, const Names& names) {
  return names(I);
}
template <int I, class T, class Names>
std::string describe(const MatrixParam<I, T>&, const Names& names) {
  return names(I);
}
template <class T, class Names>
std::string describe(const CsrMatrix<T>& A, const Names&) {
  return A.label();
}
template <class T, class Names>
std::string describe(const Vector<T>& v, const Names&) {
  return v.label();
}
template <class M, class X, class Names>
std::string describe(const SparseProduct<M, X>& p, const Names& names) {
  return describe(p.matrix, names) + " * " + describe(p.x, names);
}
template <class Leaf, int... O, class Names>
std::string describe(const Shifted<Leaf, O...>& s, const Names& names) {
  std::string offsets;
  ((offsets += (offsets.empty() ? "" : ",") + std::to_string(O)), ...);
  return "shift<" + offsets + ">(" + describe(s.leaf, names) + ")";
}
template <class E, class Names>
std::string describe(const Unary<PowInt, E>& u, const Names& names) {  // the exponent is data
  return "pow(" + describe(u.arg, names) + ", " + std::to_string(u.op.exponent) + ")";
}

/// The symbol of a node: its operation's (Unary, Binary) or its own (Where).
template <class N, class = void>
struct node_symbol {
  static constexpr const char* symbol = N::symbol;
  static constexpr bool infix = false;
};
template <class N>
struct node_symbol<N, std::void_t<decltype(std::declval<N>().op)>> {
  using Op = decltype(std::declval<N>().op);
  static constexpr const char* symbol = Op::symbol;
  static constexpr bool infix = is_infix<Op>();
};

template <class Children, class Names, std::size_t... I>
std::vector<std::string> describe_children(const Children& c, const Names& names,
                                           std::index_sequence<I...>) {
  return {describe(child<I>(c), names)...};
}

/// Any other node, from its symbol: "(a + b)" and "-a" for infix operations, "f(a, b)" else.
template <class E, class Names, std::enable_if_t<!is_leaf_node_v<E>, int> = 0>
std::string describe(const E& e, const Names& names) {
  using Children = children_t<E>;
  const auto args = describe_children(children(e), names,
                                      std::make_index_sequence<std::tuple_size_v<Children>>{});
  const std::string symbol = node_symbol<E>::symbol;
  if (node_symbol<E>::infix && args.size() == 1) return symbol + args[0];
  if (node_symbol<E>::infix && args.size() == 2)
    return "(" + args[0] + " " + symbol + " " + args[1] + ")";
  std::string text = symbol + "(";
  for (std::size_t k = 0; k < args.size(); ++k) text += (k == 0 ? "" : ", ") + args[k];
  return text + ")";
}
template <class Op, class E, class F, class Names>
std::string describe(const Reduction<Op, E, F>& r, const Names& names) {
  const std::string inner = describe(r.arg, names);
  if constexpr (!std::is_same_v<F, NoFinish>)
    return "sqrt(sum(" + inner + "))";
  else
    return std::string(Op::symbol) + "(" + inner + ")";
}

}  // namespace kfuse::detail
