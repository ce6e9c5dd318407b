// What kfuse::fuse's arguments become: each argument's placeholder (param_for,
// what the lambda gets) and its binding slot (slot_for, what the Program
// stores: the handle, a program temporary in memory, or nothing for a
// temporary kept in registers).
#pragma once

#include <optional>
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
