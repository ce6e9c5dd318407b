// static_for<N>(f): calls f(std::integral_constant<int, 0>{}), ..., f(<N - 1>) in order, for
// loops whose index must be a constant (std::get<i>, a template argument): over a
// program's parameter positions or its kernel groups.
#pragma once

#include <type_traits>
#include <utility>

namespace kfuse::detail {

template <class F, int... I>
constexpr void static_for_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}

template <int N, class F>
constexpr void static_for(F&& f) {
  static_for_each(f, std::make_integer_sequence<int, N>{});
}

}  // namespace kfuse::detail
