// Elementwise math functions on expressions: exp, sqrt, log, sin, cos, abs,
// pow, min, max, cast. Integer arguments (index<d>()) compute in double.
#pragma once

#include <type_traits>

#include "kfuse/expr/operation.hpp"

namespace kfuse {

#define KFUSE_UNARY_FUNCTION(NAME, OP)                                       \
  template <class E, class = std::enable_if_t<detail::is_operator_arg_v<E>>> \
  auto NAME(const E& e) {                                                    \
    return detail::make_unary<detail::OP>(e);                                \
  }
KFUSE_UNARY_FUNCTION(exp, Exp)
KFUSE_UNARY_FUNCTION(sqrt, Sqrt)
KFUSE_UNARY_FUNCTION(log, Log)
KFUSE_UNARY_FUNCTION(sin, Sin)
KFUSE_UNARY_FUNCTION(cos, Cos)
KFUSE_UNARY_FUNCTION(abs, Absolute)
#undef KFUSE_UNARY_FUNCTION

/// pow(e, n): an integer n multiplies (e*e for n = 2); a floating n calls pow.
template <class E, class X, class = std::enable_if_t<detail::is_operator_arg_v<E>>>
auto pow(const E& e, const X& x) {
  if constexpr (std::is_integral_v<X>)
    return detail::make_unary(e, detail::PowInt{static_cast<int>(x)});
  else
    return detail::make_binary<detail::PowReal>(e, x);
}

template <class L, class R, class = std::enable_if_t<detail::enable_binary_v<L, R>>>
auto min(const L& l, const R& r) {
  return detail::make_binary<detail::Minimum>(l, r);
}
template <class L, class R, class = std::enable_if_t<detail::enable_binary_v<L, R>>>
auto max(const L& l, const R& r) {
  return detail::make_binary<detail::Maximum>(l, r);
}

/// Converts an expression's element type: cast<float>(double_array).
template <class To, class E, class = std::enable_if_t<detail::is_operator_arg_v<E>>>
auto cast(const E& e) {
  static_assert(std::is_arithmetic_v<To>, "kfuse::cast<T>(e): T must be an arithmetic type");
  return detail::make_unary<detail::Cast<To>>(e);
}

}  // namespace kfuse
