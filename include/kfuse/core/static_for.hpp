// static_for<N>(f): calls f(std::integral_constant<int, 0>{}), ..., f(<N - 1>) in order, for
// loops whose index must be a constant (std::get<i>, a template argument): over a
// program's parameter positions or its kernel groups. for_each_index and apply_indices do
// the same over a std::integer_sequence (a kernel group's statements or positions): one
// function per loop, where a Hana algorithm instantiates five or six, per loop and per
// program.
#pragma once

#include <type_traits>
#include <utility>

namespace kfuse::detail {

/// f(std::integral_constant<int, I>{}) for each I, in order.
template <int... I, class F>
constexpr void for_each_index(std::integer_sequence<int, I...>, F&& f) {
  (f(std::integral_constant<int, I>{}), ...);
}

/// f(std::integral_constant<int, I>{}...): one call with every index.
template <int... I, class F>
constexpr decltype(auto) apply_indices(std::integer_sequence<int, I...>, F&& f) {
  return f(std::integral_constant<int, I>{}...);
}

template <int First, int... I>
std::integer_sequence<int, (First + I)...> offset_indices(std::integer_sequence<int, I...>);
/// The integer sequence First, ..., Last - 1.
template <int First, int Last>
using index_range_t =
    decltype(offset_indices<First>(std::make_integer_sequence<int, Last - First>{}));

template <int N, class F>
constexpr void static_for(F&& f) {
  for_each_index(std::make_integer_sequence<int, N>{}, f);
}

}  // namespace kfuse::detail
