// Text of expressions and statements for explain(), to_dot() and kernel
// labels. Placeholders are named through a callback (position -> label).
#pragma once

#include <string>

#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class T, class Names>
std::string describe(const Constant<T>& c, const Names&) {
  std::string s = std::to_string(c.value);
  if (s.find('.') != std::string::npos) {  // 0.250000 -> 0.25
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
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
template <int I, class T, int N, class Names>
std::string describe(const ArrayParam<I, T, N>&, const Names& names) {
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
template <class Op, class E, class Names>
std::string describe(const Unary<Op, E>& u, const Names& names) {
  if constexpr (std::is_same_v<Op, PowInt>)
    return "pow(" + describe(u.arg, names) + ", " + std::to_string(u.op.exponent) + ")";
  else if constexpr (std::is_same_v<Op, Negate> || std::is_same_v<Op, LogicalNot>)
    return std::string(Op::symbol) + describe(u.arg, names);
  else
    return std::string(Op::symbol) + "(" + describe(u.arg, names) + ")";
}
template <class Op, class L, class R, class Names>
std::string describe(const Binary<Op, L, R>& b, const Names& names) {
  if constexpr (Op::infix)
    return "(" + describe(b.lhs, names) + " " + Op::symbol + " " + describe(b.rhs, names) + ")";
  else
    return std::string(Op::symbol) + "(" + describe(b.lhs, names) + ", " +
           describe(b.rhs, names) + ")";
}
template <class C, class A, class B, class Names>
std::string describe(const Where<C, A, B>& w, const Names& names) {
  return "where(" + describe(w.cond, names) + ", " + describe(w.if_true, names) + ", " +
         describe(w.if_false, names) + ")";
}
template <class Op, class E, class F, class Names>
std::string describe(const Reduction<Op, E, F>& r, const Names& names) {
  const std::string inner = describe(r.arg, names);
  if constexpr (!std::is_same_v<F, NoFinish>)
    return "sqrt(sum(" + inner + "))";
  else
    return std::string(Op::symbol) + "(" + inner + ")";
}

template <class S>
struct is_reduce_statement : std::false_type {};
template <class T, class R>
struct is_reduce_statement<Reduce<T, R>> : std::true_type {};

/// "assign v" / "reduce res": the short form used in kernel labels.
template <class S, class Names>
std::string statement_label(const S& s, const Names& names) {
  return (is_reduce_statement<S>::value ? "reduce " : "assign ") + describe(s.target, names);
}

/// "assign v = expr" / "reduce res = sum(...)": the long form for explain().
template <class S, class Names>
std::string statement_text(const S& s, const Names& names) {
  if constexpr (is_reduce_statement<S>::value)
    return "reduce " + describe(s.target, names) + " = " + describe(s.reduction, names);
  else
    return "assign " + describe(s.target, names) + " = " + describe(s.expr, names);
}

}  // namespace kfuse::detail
