// Which program parameters an expression reads, and how: the compile-time
// facts the fusion rules work on, as sets of parameter positions
// (PositionMask, one bit a position):
//   pointwise       — arrays/temporaries read at the point itself
//   neighbour_reads — arrays read at other points: at a non-zero offset (a
//                     stencil) or through a sparse product (A * x); they need
//                     neighbour data (halos, ghosts) before the kernel reads
//   scalars         — Scalar parameters read
// One walk over the tree (for_each_read, on expr/walk.hpp's children()) gives
// them all: only the leaves that read parameters, shifts and sparse products
// say what they read; every other node reads what its children read. Reads
// in a fallback (the children a node evaluates only in a rare case:
// fallback_from) count for every rule, but not in the memory traffic model
// (`modelled`).
// Eager leaves (Array, Vector, Scalar handles) are not parameters and add no
// position; array_handles says whether an Array or Vector handle is read (one
// captured in a program's lambda): the plan cannot tell it from a parameter
// bound to the same array.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/walk.hpp"

namespace kfuse::detail {

/// The index of the lowest set bit of w != 0.
constexpr int lowest_bit(std::uint64_t w) {
#if defined(__GNUC__)
  return __builtin_ctzll(w);
#else
  int b = 0;
  for (; (w & 1u) == 0; w >>= 1) ++b;
  return b;
#endif
}

/// A set of parameter positions as bits: position p is bit p % 64 of word p / 64. A plan
/// takes as many words as its program has positions, so a program has no parameter limit.
template <int Words>
struct PositionMask {
  static constexpr int positions = 64 * Words;
  std::uint64_t word[Words] = {};

  constexpr bool test(int p) const { return (word[p / 64] >> (p % 64)) & 1u; }
  constexpr void set(int p) { word[p / 64] |= std::uint64_t{1} << (p % 64); }
  constexpr bool any() const {
    for (std::uint64_t w : word)
      if (w != 0) return true;
    return false;
  }
  constexpr int count() const {
    int n = 0;
    for_each_set([&](int) { ++n; });
    return n;
  }
  /// f(p) for every position p in the set, in order: a step per member, not per position,
  /// so that a pass over a large program (Unfused's) stays linear in its size.
  template <class F>
  constexpr void for_each_set(F&& f) const {
    for (int k = 0; k < Words; ++k)
      for (std::uint64_t w = word[k]; w != 0; w &= w - 1) f(64 * k + lowest_bit(w));
  }
  constexpr PositionMask& operator|=(const PositionMask& other) {
    for (int k = 0; k < Words; ++k) word[k] |= other.word[k];
    return *this;
  }
  friend constexpr PositionMask operator|(PositionMask a, const PositionMask& b) { return a |= b; }
  friend constexpr PositionMask operator&(PositionMask a, const PositionMask& b) {
    for (int k = 0; k < Words; ++k) a.word[k] &= b.word[k];
    return a;
  }
  friend constexpr PositionMask operator~(PositionMask a) {
    for (std::uint64_t& w : a.word) w = ~w;
    return a;
  }
};

/// How a leaf reads what it reads.
enum class Read { pointwise, neighbours, scalar, array_handle };

template <class E>
constexpr bool is_array_handle() {
  if constexpr (is_leaf_handle<E>::value)
    return expr_traits<E>::domain != domain::scalar;
  else
    return false;
}

/// The index of a node's first child evaluated only in a rare fallback (the children from
/// it on); none by default. SharedOr (plan/unfused.hpp) sets it.
template <class E>
struct fallback_from : std::integral_constant<std::size_t, std::size_t(-1)> {};

template <class E, class F>
constexpr void for_each_read(F& f, bool at_neighbours = false, bool in_fallback = false);

template <class E, class Children, class F, std::size_t... I>
constexpr void for_each_child_read(F& f, bool at_neighbours, bool in_fallback,
                                   std::index_sequence<I...>) {
  (for_each_read<std::decay_t<std::tuple_element_t<I, Children>>>(
       f, at_neighbours, in_fallback || I >= fallback_from<E>::value),
   ...);
}

/// Calls f(position, Read, in_fallback) for every parameter a tree of type E reads, and
/// f(-1, Read::array_handle, in_fallback) for every Array or Vector handle in it (at
/// compile time). `at_neighbours`: the tree is read at other points (under a shift or as
/// A * x's x); `in_fallback`: below a fallback child.
template <class E, class F>
constexpr void for_each_read(F& f, bool at_neighbours, bool in_fallback) {
  if constexpr (is_array_param<E>::value) {
    f(E::index, at_neighbours ? Read::neighbours : Read::pointwise, in_fallback);
  } else if constexpr (is_scalar_param<E>::value) {
    f(E::index, Read::scalar, in_fallback);
  } else if constexpr (is_shifted<E>::value) {  // shift<0, 0>(u) is a pointwise read
    for_each_read<typename E::leaf_type>(f, at_neighbours || !E::pointwise, in_fallback);
  } else if constexpr (is_sparse_product<E>::value) {
    // A * x reads x at other rows (and ranks). The matrix is read-only: not tracked.
    for_each_read<std::decay_t<decltype(std::declval<E>().x)>>(f, true, in_fallback);
  } else if constexpr (is_leaf_node_v<E>) {
    if constexpr (is_array_handle<E>()) f(-1, Read::array_handle, in_fallback);
  } else {
    using Children = children_t<E>;
    for_each_child_read<E, Children>(f, at_neighbours, in_fallback,
                                     std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

/// What an expression reads, as masks of Words words.
template <int Words>
struct Access {
  PositionMask<Words> pointwise, neighbour_reads, scalars;
  PositionMask<Words> modelled;  ///< arrays read outside fallbacks: the traffic model's
  bool array_handles = false;

  constexpr void operator()(int position, Read read, bool in_fallback) {
    if (!in_fallback && (read == Read::pointwise || read == Read::neighbours))
      modelled.set(position);
    switch (read) {
      case Read::pointwise:
        pointwise.set(position);
        break;
      case Read::neighbours:
        neighbour_reads.set(position);
        break;
      case Read::scalar:
        scalars.set(position);
        break;
      case Read::array_handle:
        array_handles = true;
        break;
    }
  }
};

template <int Words, class E>
constexpr Access<Words> access_of() {
  Access<Words> access;
  for_each_read<E>(access);
  return access;
}

struct NeighbourReadOf {
  int position;
  bool found = false;
  constexpr void operator()(int p, Read read, bool) {
    found = found || (p == position && read == Read::neighbours);
  }
};

/// Whether a tree of type E reads parameter `position` at other points than its own.
template <class E>
constexpr bool reads_neighbours(int position) {
  NeighbourReadOf search{position};
  for_each_read<E>(search);
  return search.found;
}

struct ArrayHandleRead {
  bool found = false;
  constexpr void operator()(int, Read read, bool) { found = found || read == Read::array_handle; }
};

template <class E>
constexpr bool reads_array_handles() {
  ArrayHandleRead search;
  for_each_read<E>(search);
  return search.found;
}

}  // namespace kfuse::detail
