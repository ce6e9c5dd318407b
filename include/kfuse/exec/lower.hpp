// Lowering: turns a user-facing expression tree (placeholders, Array and
// Scalar handles) into a kernel-side tree of the same node templates whose
// leaves hold views, register reads and captured scalar values.
//
// `Context` supplies what the placeholders are bound to:
//   ctx.template argument<I>()   the handle bound to (or Array allocated for) position I
//   ctx.template scalar<I>()     the Scalar bound to position I
//   Context::template in_register<I>   whether temporary I lives in a register
//   ctx.index_offset(d)          global index of view coordinate 0 along d
//   Context::template slot<I>    the kernel-side index of position I (ParamRead,
//                                RegisterRead: exec/group.hpp's SlotContext)
// and, inside a group, Forwarding says which arrays are read from registers.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kfuse/expr/literal.hpp"
#include "kfuse/expr/operation.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/walk.hpp"
#include "kfuse/expr/where.hpp"

namespace kfuse::detail {

/// The context of a statement inside a group: `Stored` are the positions
/// the group's earlier statements stored at this point. Reading one of them
/// (necessarily at offset 0: the fusion rules) takes the stored value from a
/// register instead of memory. Besides saving the load, this keeps the
/// compiler from assuming that the store and the reload, made through two
/// copies of the view, may overlap, which defeats vectorisation.
template <class Ctx, class Stored>
struct Forwarding;
template <class Ctx, int... Stored>
struct Forwarding<Ctx, std::integer_sequence<int, Stored...>> : Ctx {
  explicit Forwarding(const Ctx& base) : Ctx(base) {}
  const Ctx& base() const { return *this; }
};

template <class Ctx, int I>
struct forwarded : std::false_type {};
template <class Ctx, int... Stored, int I>
struct forwarded<Forwarding<Ctx, std::integer_sequence<int, Stored...>>, I>
    : std::bool_constant<((I == Stored) || ...)> {};

template <class Leaf, class Ctx>
constexpr bool leaf_forwarded() {
  if constexpr (is_array_param<Leaf>::value)
    return forwarded<Ctx, Leaf::index>::value;
  else
    return false;
}

template <class Ctx>
const Ctx& without_forwarding(const Ctx& ctx) {
  return ctx;
}
template <class Ctx, class Stored>
const Ctx& without_forwarding(const Forwarding<Ctx, Stored>& ctx) {
  return ctx.base();
}

/// The unsigned integer a kernel holds a floating-point number as (HeldValue); other
/// numbers are held as they are.
template <class T, std::size_t Size = sizeof(T)>
struct held_bits {
  using type = T;
};
template <class T>
struct held_bits<T, 4> {
  using type = std::conditional_t<std::is_floating_point_v<T>, std::uint32_t, T>;
};
template <class T>
struct held_bits<T, 8> {
  using type = std::conditional_t<std::is_floating_point_v<T>, std::uint64_t, T>;
};

/// A number a kernel holds: a Scalar's value captured at launch (Strict: it keeps its
/// element type) or a Constant (it takes the type of what it meets). A floating-point
/// number is held as its bits in an unsigned integer: a host loop's stores of T through
/// the kernel's views may, as far as the compiler knows, be the kernel's own T members,
/// so it reloads such a member after every store, and retests a condition on it
/// (BiCGSTAB's guarded x update: eight reloads and two compares a vector), while no store
/// of T reaches an integer, which then stays in a register for the whole loop.
template <class T, bool Strict>
struct HeldValue : ExprTag {
  using value_type = T;
  static constexpr bool strict = Strict;
  static constexpr int domain = domain::scalar;
  typename held_bits<T>::type bits;
  static HeldValue of(T value) {
    HeldValue held{};
    std::memcpy(&held.bits, &value, sizeof(T));
    return held;
  }
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P&, R&) const {
    const auto loaded = bits;  // an integer load: a copy straight from `bits` would load it
                               // as bytes, which every store may alias
    T value;
    memcpy(&value, &loaded, sizeof(T));
    return value;
  }
};
template <class T>
using ScalarValue = HeldValue<T, true>;

/// A centred read moved to offsets O.
template <int... O, int K, class T, int N, class Zero>
auto shifted(ParamRead<K, T, N, Zero>) {
  return ParamRead<K, T, N, std::integer_sequence<int, O...>>{};
}
template <int... O, class T, int N, class Zero>
auto shifted(const ViewRead<T, N, Zero>& read) {
  return ViewRead<T, N, std::integer_sequence<int, O...>>{{}, read.view};
}

template <class T, class Ctx>
auto lower(const Constant<T>& c, const Ctx&) {
  return HeldValue<T, false>::of(c.value);
}
template <char... C, class Ctx>
auto lower(const Literal<C...>& c, const Ctx&) {
  return c;
}
template <int D, class Ctx>
auto lower(const Index<D>&, const Ctx& ctx) {
  return IndexRead<D>{{}, ctx.index_offset(D)};
}
template <class T, int N, class Ctx>
auto lower(const Array<T, N>& a, const Ctx&) {
  return ViewRead<T, N, zero_offsets<N>>{{}, a.view()};
}
template <class T, class Ctx>
auto lower(const Vector<T>& v, const Ctx&) {
  return ViewRead<T, 1, zero_offsets<1>>{{}, v.view()};
}
template <class T, class Ctx>
auto lower(const Scalar<T>& s, const Ctx&) {
  return ScalarValue<T>::of(s.value());
}
/// Parameter I's array, read through the kernel's view file.
template <int I, class Ctx>
auto param_read(const Ctx& ctx) {
  using V = std::decay_t<decltype(ctx.template argument<I>().view())>;
  return ParamRead<Ctx::template slot<I>, typename V::non_const_value_type, int(V::rank),
                   zero_offsets<int(V::rank)>>{};
}

template <int I, class T, int D, class Ctx>
auto lower(const ArrayParam<I, T, D>&, const Ctx& ctx) {
  if constexpr (forwarded<Ctx, I>::value)
    return RegisterRead<Ctx::template slot<I>, T, true>{};
  else
    return param_read<I>(ctx);
}
template <int I, class T, bool Strict, class Ctx>
auto lower(const TempParam<I, T, Strict>&, const Ctx& ctx) {
  if constexpr (Ctx::template in_register<I> || forwarded<Ctx, I>::value) {
    return RegisterRead<Ctx::template slot<I>, T, Strict>{};
  } else if constexpr (Strict) {
    return param_read<I>(ctx);
  } else {
    using V = decltype(param_read<I>(ctx));
    return Flexible<V>{{}, param_read<I>(ctx)};
  }
}
template <int I, class T, class Ctx>
auto lower(const ScalarParam<I, T>&, const Ctx& ctx) {
  return ScalarValue<T>::of(ctx.template scalar<I>().value());
}
template <class Leaf, int... O, class Ctx>
auto lower(const Shifted<Leaf, O...>& s, const Ctx& ctx) {
  // A pointwise shift of an array stored earlier in the group is a register
  // read like the array itself; other shifts never read such arrays (the
  // fusion rules) and read memory.
  if constexpr (Shifted<Leaf, O...>::pointwise && leaf_forwarded<Leaf, Ctx>())
    return lower(s.leaf, ctx);
  else
    return lower_shifted(s, without_forwarding(ctx));
}
template <class Leaf, int... O, class Ctx>
auto lower_shifted(const Shifted<Leaf, O...>& s, const Ctx& ctx) {
  return shifted<O...>(lower(s.leaf, ctx));  // the leaf lowers to a centred read
}
/// The CsrMatrix and the Vector of a product, from handles or placeholders.
template <class T, class Ctx>
const CsrMatrix<T>& matrix_of(const CsrMatrix<T>& A, const Ctx&) {
  return A;
}
template <int I, class T, class Ctx>
const auto& matrix_of(const MatrixParam<I, T>&, const Ctx& ctx) {
  return ctx.template argument<I>();
}
template <class T, class Ctx>
const Vector<T>& vector_of(const Vector<T>& x, const Ctx&) {
  return x;
}
template <class X, class Ctx>
const auto& vector_of(const X&, const Ctx& ctx) {
  return ctx.template argument<X::index>();
}

template <class M, class X, class Ctx>
auto lower(const SparseProduct<M, X>& p, const Ctx& ctx) {
  using T = typename M::value_type;
  const auto& A = matrix_of(p.matrix, ctx);
  const auto& x = vector_of(p.x, ctx);
  using Matrix = std::decay_t<decltype(A)>;
  return SparseRowRead<T, typename Matrix::offset_type>{
      {},
      A.row_ptr(),
      A.col_idx(),
      A.values(),
      x.view(),
      x.ghost_buffer(A.storage(), A.num_ghosts()),
      static_cast<int>(A.domain().local_size()),
      sparse_rows_prefetch<T>(index_t(A.values().extent(0)))};
}

template <class E, class Ctx, class... C>
auto lower_children(const E& e, const ChildRefs<C...>& c, const Ctx& ctx);

/// Any other node: the same node over its lowered children (expr/walk.hpp's protocol).
template <class E, class Ctx, std::enable_if_t<!is_leaf_node_v<E>, int> = 0>
auto lower(const E& e, const Ctx& ctx) {
  return lower_children(e, children(e), ctx);
}
template <class E, class Ctx, class... C>
auto lower_children(const E& e, const ChildRefs<C...>& c, const Ctx& ctx) {
  // c.c0, c.c1, c.c2 rather than child<I>(c): a function less per child (expr/walk.hpp)
  if constexpr (sizeof...(C) == 1)
    return rebuild(e, lower(c.c0, ctx));
  else if constexpr (sizeof...(C) == 2)
    return rebuild(e, lower(c.c0, ctx), lower(c.c1, ctx));
  else
    return rebuild(e, lower(c.c0, ctx), lower(c.c1, ctx), lower(c.c2, ctx));
}

}  // namespace kfuse::detail
