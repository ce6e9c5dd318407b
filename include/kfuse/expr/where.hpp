// where(c, a, b): per point, a where c holds, else b (NumPy's where).
#pragma once

#include "kfuse/expr/operation.hpp"

namespace kfuse::detail {

template <class C, class A, class B>
struct Where : ExprTag {
  using value_type = typename common_value<A, B>::type;
  static constexpr bool strict = common_value<A, B>::strict;
  static constexpr int domain = domain::combine(
      expr_traits<C>::domain, domain::combine(expr_traits<A>::domain, expr_traits<B>::domain));
  C cond;
  A if_true;
  B if_false;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, R& r) const {
    return cond.eval(p, r) ? static_cast<value_type>(if_true.eval(p, r))
                           : static_cast<value_type>(if_false.eval(p, r));
  }
};

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

namespace kfuse::detail {

template <class E>
struct is_instance_of_unary : std::false_type {};
template <class Op, class E>
struct is_instance_of_unary<Unary<Op, E>> : std::true_type {};
template <class E>
struct is_instance_of_binary : std::false_type {};
template <class Op, class L, class R>
struct is_instance_of_binary<Binary<Op, L, R>> : std::true_type {};
template <class E>
struct is_instance_of_where : std::false_type {};
template <class C, class A, class B>
struct is_instance_of_where<Where<C, A, B>> : std::true_type {};

}  // namespace kfuse::detail
