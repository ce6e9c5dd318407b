// Pack: the flat tuple of a program's arguments (and of its binding's slots). A
// std::tuple of N handles instantiates N nested _Tuple_impl levels, each with its
// constructors' constraints, getters and destructor: about 130 functions for one 13-argument
// program, the largest family in a solver file (docs/architecture.md §12). A Pack is an
// aggregate with one base per element, found by its index: its special members are the
// implicit ones, and reading an element is one small function (pack_get<I>), not three.
#pragma once

#include <cstddef>
#include <utility>

namespace kfuse::detail {

template <std::size_t I, class T>
struct PackElement {
  T value;
};

template <class Indices, class... T>
struct PackBase;
template <std::size_t... I, class... T>
struct PackBase<std::index_sequence<I...>, T...> : PackElement<I, T>... {};

/// A flat tuple of T..., built as Pack<T...>{{{t}...}} (make_pack).
template <class... T>
struct Pack : PackBase<std::index_sequence_for<T...>, T...> {
  static constexpr std::size_t size = sizeof...(T);
};

/// Element I of a pack (found as its base: the index is unique).
template <std::size_t I, class T>
constexpr const T& pack_get(const PackElement<I, T>& element) {
  return element.value;
}
template <std::size_t I, class T>
constexpr T& pack_get(PackElement<I, T>& element) {
  return element.value;
}

template <std::size_t I, class T>
T pack_element_of(const PackElement<I, T>*);
/// The type of element I of pack P.
template <std::size_t I, class P>
using pack_element_t = decltype(pack_element_of<I>(static_cast<const P*>(nullptr)));

/// A Pack<T...> of `values` (converted to T...).
template <class... T, class... U>
constexpr Pack<T...> make_pack(U&&... values) {
  return {{{std::forward<U>(values)}...}};
}

}  // namespace kfuse::detail
