// where(c, a, b): per point, a where c holds, else b (NumPy's where).
#pragma once

#include <tuple>

#include "kfuse/expr/operation.hpp"

namespace kfuse::detail {

template <class C, class A, class B>
struct Where : ExprTag {
  static constexpr const char* symbol = "where";  // explain(), labels
  using value_type = typename common_value<A, B>::type;
  static constexpr bool strict = common_value<A, B>::strict;
  static constexpr int domain = domain::combine(
      expr_traits<C>::domain, domain::combine(expr_traits<A>::domain, expr_traits<B>::domain));
  C cond;
  A if_true;
  B if_false;
  /// Both branches evaluated, then one selected, as NumPy's where takes two computed arrays:
  /// a select vectorises where a branch does not. (With the branch, a condition on Scalars
  /// that the kernel's stores might alias was reloaded and tested at every point, and
  /// BiCGSTAB's guarded update ran scalar: docs/benchmarks-log.md.)
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, R& r) const {
    const bool chosen = cond.eval(p, r);
    const auto a = static_cast<value_type>(if_true.eval(p, r));
    const auto b = static_cast<value_type>(if_false.eval(p, r));
    return chosen ? a : b;
  }
};

template <class C, class A, class B>
auto children(const Where<C, A, B>& w) {
  return child_refs(w.cond, w.if_true, w.if_false);
}
template <class C, class A, class B, class X, class Y, class Z>
auto rebuild(const Where<C, A, B>&, const X& cond, const Y& if_true, const Z& if_false) {
  return Where<X, Y, Z>{{}, cond, if_true, if_false};
}

}  // namespace kfuse::detail

namespace kfuse {

template <class C, class A, class B>
auto where(const C& c, const A& a, const B& b) {
  static_assert(detail::is_operand_v<C> && detail::is_operand_v<A> && detail::is_operand_v<B>,
                "kfuse::where(c, a, b): arguments must be expressions or numbers");
  static_assert(detail::check_operands<C, A, B>() && detail::check_binary<A, B>() &&
                detail::check_binary<C, A>());
  return detail::Where<detail::node_t<C>, detail::node_t<A>, detail::node_t<B>>{
      {}, detail::as_node(c), detail::as_node(a), detail::as_node(b)};
}

}  // namespace kfuse
