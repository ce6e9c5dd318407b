// What kfuse::fuse's arguments become: each argument's placeholder (param_for,
// what the lambda gets) and its binding slot (slot_for, what the Program
// stores: the handle, a program temporary in memory, or nothing for a
// temporary kept in registers).
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "kfuse/array/array.hpp"
#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/exec/space.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse {

/// Argument of kfuse::fuse for an array the program owns: kfuse::temporary<T>
/// (docs/user-guide.md, Temporaries).
template <class T>
struct TemporaryTag {
  using value_type = T;
};
template <class T>
inline constexpr TemporaryTag<T> temporary{};

}  // namespace kfuse

namespace kfuse::detail {

template <int I, class A>
struct param_for {
  static_assert(sizeof(A) == 0,
                "kfuse::fuse(args..., lambda): each argument must be a kfuse::Array, "
                "kfuse::Vector, kfuse::CsrMatrix, kfuse::Scalar or kfuse::temporary<T>, and the "
                "lambda comes last");
};
template <int I, class T, int N>
struct param_for<I, Array<T, N>> {
  using type = ArrayParam<I, T, domain::grid(N)>;
};
template <int I, class T>
struct param_for<I, Vector<T>> {
  using type = ArrayParam<I, T, domain::row_map>;
};
template <int I, class T>
struct param_for<I, CsrMatrix<T>> {
  using type = MatrixParam<I, T>;
};
template <int I, class T>
struct param_for<I, Scalar<T>> {
  using type = ScalarParam<I, T>;
};
template <int I, class T>
struct param_for<I, TemporaryTag<T>> {
  using type = TempParam<I, T>;
};

template <class T>
struct is_temporary_tag : std::false_type {};
template <class T>
struct is_temporary_tag<TemporaryTag<T>> : std::true_type {};

/// Binding slot of a temporary kept in registers: nothing to store.
struct RegisterTemporary {};

template <class Plan, int I, class A>
struct slot_for {
  using type = A;  // the user's handles
};
template <class Plan, int I, class T>
struct slot_for<Plan, I, TemporaryTag<T>> {
  static constexpr int domain = Plan::temporary_domain(I);
  static constexpr bool in_memory = !Plan::in_register(I);
  static_assert(!in_memory || has_space(domain),
                "kfuse::fuse: a temporary that must live in memory is never written by an array "
                "statement, so its rank is unknown; assign it from an expression with arrays");
  using container =
      typename space_traits<has_space(domain) ? domain : domain::grid(1)>::template container<T>;
  using type = std::conditional_t<in_memory, std::optional<container>, RegisterTemporary>;
};

template <class S>
struct is_optional_array : std::false_type {};
template <class T, int N>
struct is_optional_array<std::optional<Array<T, N>>> : std::true_type {};
template <class T>
struct is_optional_array<std::optional<Vector<T>>> : std::true_type {};

// What a binding's slot holds: free functions of the slot's type, shared by every program
// (a binding's member template per position compiled a function per program and position).

/// The object in a slot: the bound handle or the allocated temporary (nullptr: a register
/// temporary, or one not allocated yet).
template <class S>
const auto* slot_object(const S& slot) {
  if constexpr (is_optional_array<S>::value)
    return slot ? &*slot : nullptr;
  else if constexpr (std::is_same_v<S, RegisterTemporary>)
    return static_cast<const Array<double, 1>*>(nullptr);
  else
    return &slot;
}

/// The label of the handle in a slot (nullptr for a temporary's slot).
template <class S>
const std::string* slot_label(const S& slot) {
  if constexpr (is_optional_array<S>::value || std::is_same_v<S, RegisterTemporary>)
    return nullptr;
  else
    return &slot.label();
}

/// The index space of the array in a slot if that has domain D, else nullptr.
template <int D, class S>
const space_t<D>* slot_space(const S& slot) {
  const auto* a = slot_object(slot);
  using A = std::decay_t<decltype(*a)>;
  if constexpr (is_space_handle<A>::value)
    if constexpr (domain_of<A>::value == D) return a != nullptr ? &space_of(*a) : nullptr;
  return nullptr;
}

/// Whether argument `arg` lives where the previous binding's slot did (true for arguments
/// without an index space): the previous binding's temporaries are kept if all do.
template <class A, class S>
bool same_space(const A& arg, const S& previous) {
  if constexpr (is_space_handle<A>::value)
    return space_of(arg) == space_of(previous);
  else
    return true;
}

/// The slot of argument `arg`: the handle itself, or for a temporary the previous
/// binding's (`kept`, if any) or an empty one.
template <class S, class A>
S make_slot(const A& arg, const S* kept) {
  if constexpr (is_temporary_tag<A>::value)
    return kept != nullptr ? S(*kept) : S{};
  else
    return S(arg);
}

/// What an argument bound to a parameter of type A stores its values in
/// (arrays and vectors: their storage; scalars: their handle's), so that two
/// parameters bound to one object show as one identity; nullptr for
/// temporaries (the program's own) and matrices (never written). A named
/// function: nvcc does not discard `if constexpr` branches inside generic
/// lambdas the way g++ does.
template <class A, class X>
const void* argument_storage(const X& x) {
  if constexpr (is_temporary_tag<A>::value || is_matrix_operand<A>::value) {
    (void)x;
    return nullptr;
  } else {
    return x.storage_id();
  }
}

}  // namespace kfuse::detail
