// Leaves of expression trees.
//
// User-facing leaves: Array and Scalar handles (eager statements), and the
// placeholders a fused program's lambda receives — ArrayParam, TempParam and
// ScalarParam, whose template argument I is the parameter position, so the
// planner sees exactly which argument each statement reads and writes.
//
// Kernel-side leaves (what lowering turns the others into): ParamRead (a
// parameter's array, through the kernel's view file) and ViewRead (a handle's
// view), both at a compile-time offset, RegisterRead (a program temporary or
// an array stored earlier in the kernel), IndexRead (the global index along
// one dimension).
#pragma once

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kfuse/array/array.hpp"
#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/expr/node.hpp"

namespace kfuse::detail {

// Arrays and Scalars are leaves of eager expressions.
template <class T, int N>
struct is_leaf_handle<Array<T, N>> : std::true_type {};
template <class T>
struct is_leaf_handle<Scalar<T>> : std::true_type {};
template <class T>
struct is_leaf_handle<Vector<T>> : std::true_type {};

template <class T, int N>
struct expr_traits<Array<T, N>> {
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = domain::grid(N);
};
template <class T>
struct expr_traits<Vector<T>> {
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = domain::row_map;
};
template <class T>
struct expr_traits<Scalar<T>> {
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = domain::scalar;
};

/// Base of the placeholders below: not an aggregate, and made from no other
/// expression. In `S{u, v}`, a struct whose members all have u's placeholder
/// type, v would otherwise initialise the second member's empty ExprTag base
/// and silently become u; this names the mistake instead. (Each placeholder
/// inherits the constructor; its own copies are the implicit ones.)
struct Placeholder : ExprTag {
  Placeholder() = default;
  template <class From, std::enable_if_t<std::is_base_of_v<ExprTag, From>, int> = 0>
  Placeholder(const From&) {
    static_assert(!std::is_base_of_v<ExprTag, From>,
                  "kfuse::fuse(args..., lambda): a lambda parameter (or expression) is stored "
                  "in a variable of another parameter's type; each parameter has a type of its "
                  "own: give a struct that bundles them one template parameter per member");
  }
};

/// Placeholder for the I-th argument of kfuse::fuse, an Array<T, N> (D =
/// domain::grid(N)) or a Vector<T> (D = domain::row_map).
template <int I, class T, int D>
struct ArrayParam : Placeholder {
  using Placeholder::Placeholder;
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = D;
  static constexpr int index = I;
};

/// Placeholder for a program temporary (kfuse::temporary<T>); its rank is
/// the rank of the statements that use it. Temporaries made by the Unfused
/// policy keep the strictness of the expression they hold.
template <int I, class T, bool Strict = true>
struct TempParam : Placeholder {
  using Placeholder::Placeholder;
  using value_type = T;
  static constexpr bool strict = Strict;
  static constexpr int domain = domain::any;
  static constexpr int index = I;
};

/// Placeholder for the I-th argument of kfuse::fuse, a Scalar<T>.
template <int I, class T>
struct ScalarParam : Placeholder {
  using Placeholder::Placeholder;
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = domain::scalar;
  static constexpr int index = I;
};

template <class E>
struct is_array_param : std::false_type {};
template <int I, class T, int D>
struct is_array_param<ArrayParam<I, T, D>> : std::true_type {};
template <int I, class T, bool S>
struct is_array_param<TempParam<I, T, S>> : std::true_type {};

template <class E>
struct is_temp_param : std::false_type {};
template <int I, class T, bool S>
struct is_temp_param<TempParam<I, T, S>> : std::true_type {};

/// A kernel-side leaf that keeps a non-strict element type (see TempParam).
template <class E>
struct Flexible : ExprTag {
  using value_type = typename E::value_type;
  static constexpr bool strict = false;
  static constexpr int domain = E::domain;
  E inner;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, R& r) const {
    return inner.eval(p, r);
  }
};
template <class E>
auto children(const Flexible<E>& f) {
  return child_refs(f.inner);
}

template <class E>
struct is_scalar_param : std::false_type {};
template <int I, class T>
struct is_scalar_param<ScalarParam<I, T>> : std::true_type {};

/// Global index along dimension D (kfuse::index<D>()).
template <int D>
struct Index : ExprTag {
  using value_type = index_t;
  static constexpr bool strict = false;
  static constexpr int domain = domain::any;
};

/// An array leaf read at a constant offset (kfuse::shift<O...>(leaf)).
template <class Leaf, int... O>
struct Shifted : ExprTag {
  using value_type = typename expr_traits<Leaf>::value_type;
  static constexpr bool strict = true;
  static constexpr int domain = domain::grid(sizeof...(O));
  static constexpr bool pointwise = ((O == 0) && ...);
  static constexpr int reach = std::max({(O < 0 ? -O : O)...});
  using leaf_type = Leaf;
  Leaf leaf;
};

template <class E>
struct is_shifted : std::false_type {};
template <class Leaf, int... O>
struct is_shifted<Shifted<Leaf, O...>> : std::true_type {};

// ---- kernel-side leaves ---------------------------------------------------

template <int... D>
std::integer_sequence<int, (D * 0)...> zeros_like(std::integer_sequence<int, D...>);
/// N zero offsets.
template <int N>
using zero_offsets = decltype(zeros_like(std::make_integer_sequence<int, N>{}));

/// What the view reads below share: a rank-N view of T read at point + (O...).
template <class T, int N, class Offsets>
struct OffsetRead;
template <class T, int N, int... O>
struct OffsetRead<T, N, std::integer_sequence<int, O...>> : ExprTag {
  static_assert(sizeof...(O) == N, "kfuse: internal: offset count differs from the view rank");
  using value_type = T;
  static constexpr bool strict = true;
  // Also reads a Vector (a rank-1 view): lowered trees are past the domain checks.
  static constexpr int domain = domain::grid(N);
  static constexpr bool centre = ((O == 0) && ...);
  static constexpr int offset[N] = {O...};
  /// Whether the read is along another row than the point's (an offset in an outer
  /// dimension): a stencil's (exec/prefetch.hpp).
  static constexpr bool other_row = [] {
    for (int d = 0; d + 1 < N; ++d)
      if (offset[d] != 0) return true;
    return false;
  }();

  template <class P>
  KOKKOS_INLINE_FUNCTION static T read(const view_t<T, N>& view, const P& p) {
    return at(view, p, std::make_integer_sequence<int, N>{});
  }

 private:
  template <class P, int... D>
  KOKKOS_INLINE_FUNCTION static T at(const view_t<T, N>& view, const P& p,
                                     std::integer_sequence<int, D...>) {
    return view((p[D] + O)...);
  }
};

/// Reads a view (of a handle) at point + Offsets.
template <class T, int N, class Offsets>
struct ViewRead : OffsetRead<T, N, Offsets> {
  view_t<T, N> view;

  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P& p, R&) const {
    return this->read(view, p);
  }
};

/// One view of a kernel's view file: the array bound to parameter K.
template <int K, class T, int N>
struct ViewSlot {
  view_t<T, N> view;
};
template <int K, class T, int N>
KOKKOS_INLINE_FUNCTION const view_t<T, N>& view_of(const ViewSlot<K, T, N>& slot) {
  return slot.view;
}

/// The views of one kernel, one per array parameter it reads: every read of
/// an array then goes through the same data pointer and strides, which the
/// compiler keeps in registers and can tell apart for reuse.
template <class... Slots>
struct ViewFile : Slots... {};
struct NoViews {};

/// One slot of a register file: a value a kernel keeps for position K (a program
/// temporary that lives in a register, or a view's value at the point).
template <int K, class T>
struct RegisterSlot {
  T value;
};

template <int K, class T>
KOKKOS_INLINE_FUNCTION T& register_of(RegisterSlot<K, T>& slot) {
  return slot.value;
}
template <int K, class T>
KOKKOS_INLINE_FUNCTION const T& register_of(const RegisterSlot<K, T>& slot) {
  return slot.value;
}

/// Registers: one slot per register temporary of a kernel body, or per view of
/// a kernel (its centres, below).
template <class... Slots>
struct RegisterFile : Slots... {};

/// The values of a kernel's views at the point itself, loaded before the point's statements
/// run, as a hand-written kernel loads its operands first: nvcc issues a load where the
/// source has it, and one behind a branch of log's waits out a memory latency that the
/// loads ahead could have covered (Black-Scholes' `T`, docs/benchmarks.md). A view the body
/// reads only at other offsets is a dead load, which the compiler drops.
struct NoCentres {};
template <class Views>
struct centres_of {
  using type = NoCentres;
};
template <int... K, class... T, int... N>
struct centres_of<ViewFile<ViewSlot<K, T, N>...>> {
  using type = RegisterFile<RegisterSlot<K, T>...>;
};

/// Every read of a kernel at its offset (each ParamRead type once: ReadSlot<ParamRead>),
/// loaded before the point's statements run. For kernels whose statements store as they go
/// (a host call that streams its stores, exec/kernel.hpp): no read then follows a store.
template <class Read>
struct ReadSlot {
  typename Read::value_type value;
};
template <class... Reads>
struct ReadFile : ReadSlot<Reads>... {};

template <class Loaded>
struct is_read_file : std::false_type {};
template <class... Reads>
struct is_read_file<ReadFile<Reads...>> : std::true_type {};

template <class Views, class P>
KOKKOS_INLINE_FUNCTION NoCentres load_ahead(NoCentres*, const Views&, const P&) {
  return {};
}
template <int... K, class... T, int... N, class P>
KOKKOS_INLINE_FUNCTION RegisterFile<RegisterSlot<K, T>...> load_ahead(
    RegisterFile<RegisterSlot<K, T>...>*, const ViewFile<ViewSlot<K, T, N>...>& views, const P& p) {
  return {RegisterSlot<K, T>{OffsetRead<T, N, zero_offsets<N>>::read(view_of<K>(views), p)}...};
}
template <class Views, class P, class... Reads>
KOKKOS_INLINE_FUNCTION ReadFile<Reads...> load_ahead(ReadFile<Reads...>*, const Views& views,
                                                     const P& p) {
  return {ReadSlot<Reads>{Reads::read(view_of<Reads::param>(views), p)}...};
}

/// A point of a kernel together with the kernel's view file, the facts its
/// launch checked (PointFacts) and what it loaded before its statements: its views' values
/// at the point (centres_of), its every read (a ReadFile), or nothing (NoCentres: the
/// kernel reads each view as it goes).
template <int N, class Views, class Facts = PointFacts<>, class Loaded = NoCentres>
struct PointIn : Point<N> {
  using facts = Facts;
  static constexpr bool reads_loaded = is_read_file<Loaded>::value;
  static constexpr bool centres_loaded = !std::is_same_v<Loaded, NoCentres> && !reads_loaded;
  const Views* views;
  Loaded loaded;
};

/// Reads parameter K's array (from the kernel's view file) at point + Offsets.
template <int K, class T, int N, class Offsets>
struct ParamRead : OffsetRead<T, N, Offsets> {
  static constexpr int param = K;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P& p, R&) const {
    if constexpr (P::reads_loaded)
      return static_cast<const ReadSlot<ParamRead>&>(p.loaded).value;
    else if constexpr (ParamRead::centre && P::centres_loaded)
      return register_of<K>(p.loaded);
    else
      return this->read(view_of<K>(*p.views), p);
  }
};

/// Reads a program temporary that lives in a register.
template <int K, class T, bool Strict = true>
struct RegisterRead : ExprTag {
  using value_type = T;
  static constexpr bool strict = Strict;
  static constexpr int domain = domain::any;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P&, R& registers) const {
    return register_of<K>(registers);
  }
};

/// Global index along D: view coordinate + (first owned global index - halo).
template <int D>
struct IndexRead : ExprTag {
  using value_type = index_t;
  static constexpr bool strict = false;
  static constexpr int domain = domain::any;
  index_t offset;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION index_t eval(const P& p, R&) const {
    return p[D] + offset;
  }
};

}  // namespace kfuse::detail

namespace kfuse {

/// The global index of the point along dimension D, as an expression.
template <int D>
constexpr detail::Index<D> index() {
  static_assert(D >= 0 && D < 3, "kfuse::index<D>(): D must be 0, 1 or 2");
  return {};
}

/// Reads `a` at the constant offset (O...) from the point: a stencil access.
/// `a` must be an array (an Array, or an array/temporary parameter of a
/// program) with one offset per dimension.
template <int... O, class A>
auto shift(const A& a) {
  static_assert(sizeof...(O) >= 1 && sizeof...(O) <= 3,
                "kfuse::shift<O...>(a): give one offset per dimension (1 to 3)");
  constexpr bool is_array = detail::is_array_param<A>::value ||
                            (detail::is_leaf_handle<A>::value &&
                             detail::expr_traits<A>::domain != detail::domain::scalar);
  static_assert(is_array,
                "kfuse::shift<O...>(a): `a` must be an array (Array, array parameter or "
                "kfuse::temporary); to shift an expression, assign it to a kfuse::temporary first");
  static_assert(detail::expr_traits<A>::domain != detail::domain::row_map,
                "kfuse::shift<O...>(v): a Vector has no neighbouring points; stencils need an "
                "Array on a Grid (sparse couplings are a CsrMatrix product, A * v)");
  if constexpr (is_array) {
    constexpr int d = detail::expr_traits<A>::domain;  // any (a temporary): rank not known yet
    static_assert(
        !detail::domain::is_grid(d) || detail::domain::rank_of(d) == static_cast<int>(sizeof...(O)),
        "kfuse::shift<O...>(a): the number of offsets must equal the array's rank");
  }
  return detail::Shifted<A, O...>{{}, a};
}

}  // namespace kfuse
