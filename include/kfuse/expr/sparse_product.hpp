// The sparse matrix-vector product as an expression: `A * x` with A a
// CsrMatrix (or a matrix parameter of a program) and x a Vector (or a vector
// parameter or kfuse::temporary). Its value at row i is sum_j A(i, j) x(j),
// so it iterates A's rows (a row map) and reads x at other rows, including
// ghosts owned by other ranks: for the fusion rules it is an offset read of
// x, like a stencil, and a group computing it imports x's ghosts first.
//
// Kernel side, SparseRowRead evaluates one row of the local CSR block,
// reading owned columns from x and the rest from x's ghost buffer.
//
// On host CPUs, where the matrix exceeds the cache, a row prefetches the matrix's values
// and column indices 384 entries ahead: the 2-D Poisson product with its sum p.Ap (two
// processes' 8 Mi-row blocks, AMD EPYC) ran at 55% of the STREAM triad and at 85% so;
// prefetching x's leading entries or the stored product as well made it slower, and on a
// cached matrix the prefetches cost a fifth (docs/benchmarks.md, "2026-12-07 (night)").
#pragma once

#include <type_traits>

#include "kfuse/array/vector.hpp"
#include "kfuse/core/prefetch.hpp"
#include "kfuse/expr/node.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::detail {

/// Placeholder for the I-th argument of kfuse::fuse, a CsrMatrix<T>. Not an
/// expression on its own: it only appears as the left side of A * x.
template <int I, class T>
struct MatrixParam {
  using value_type = T;
  static constexpr int index = I;
};

template <class M>
struct is_matrix_operand : std::false_type {};
template <class T>
struct is_matrix_operand<CsrMatrix<T>> : std::true_type {};
template <int I, class T>
struct is_matrix_operand<MatrixParam<I, T>> : std::true_type {};

/// x of A * x: a vector leaf (a Vector, a vector parameter, a temporary).
template <class X>
inline constexpr bool is_vector_operand_v = (is_leaf_handle<X>::value ||
                                             is_array_param<X>::value) &&
                                            (expr_traits<X>::domain == domain::row_map ||
                                             expr_traits<X>::domain == domain::any);

/// A * x.
template <class M, class X>
struct SparseProduct : ExprTag {
  using value_type = typename M::value_type;
  static constexpr bool strict = true;
  static constexpr int domain = domain::row_map;
  M matrix;
  X x;
};

template <class E>
struct is_sparse_product : std::false_type {};
template <class M, class X>
struct is_sparse_product<SparseProduct<M, X>> : std::true_type {};

/// Kernel side: row p[0] of the local block times x (owned part `x`, then
/// `ghosts` for columns n_owned and up).
template <class T, class Offset>
struct SparseRowRead : ExprTag {
  using value_type = T;
  static constexpr bool strict = true;
  static constexpr int domain = domain::row_map;
  static constexpr bool runs_loop = true;  // the row's loop (Binary::eval computes it first)
  Kokkos::View<const Offset*, Kokkos::LayoutRight, MemSpace> row_ptr;
  Kokkos::View<const int*, Kokkos::LayoutRight, MemSpace> columns;
  Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace> values;
  Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace> x, ghosts;
  int n_owned;
  bool prefetch = false;  // the matrix streams from memory (sparse_rows_prefetch)

  template <class P, class R>
  KOKKOS_INLINE_FUNCTION T eval(const P& p, R&) const {
    // Raw pointers in locals (the views are contiguous): the compiler then
    // keeps the loop in registers inside the large fused kernel body.
    const int* const column = columns.data();
    const T* const value = values.data();
    const T* const owned = x.data();
    const T* const ghost = ghosts.data();  // columns n_owned and up
    const int n = n_owned;
    const index_t row = p[0];
    const Offset begin = row_ptr(row), end = row_ptr(row + 1);
    if (host_prefetch && prefetch) prefetch_sparse_row_ahead(value, column, begin, end);
    T sum = 0;
    if constexpr (P::facts::owned_columns) {  // the launch checked: no ghost columns
      for (Offset k = begin; k < end; ++k) sum += value[k] * owned[column[k]];
    } else {
      for (Offset k = begin; k < end; ++k) {
        const int c = column[k];
        sum += value[k] * *(c < n ? owned + c : ghost + (c - n));
      }
    }
    return sum;
  }
};

template <class E>
struct is_sparse_row_read : std::false_type {};
template <class T, class Offset>
struct is_sparse_row_read<SparseRowRead<T, Offset>> : std::true_type {};

template <class M, class X>
auto make_sparse_product(const M& A, const X& x) {
  static_assert(is_vector_operand_v<X>,
                "kfuse: A * x: x must be a kfuse::Vector (or a vector parameter or "
                "kfuse::temporary of the program); assign an expression to a kfuse::temporary "
                "first, then multiply");
  if constexpr (is_vector_operand_v<X>) {
    static_assert(std::is_same_v<typename M::value_type, typename expr_traits<X>::value_type>,
                  "kfuse: A * x: the matrix and the vector have different element types");
    return SparseProduct<M, X>{{}, A, x};
  }
}

}  // namespace kfuse::detail

namespace kfuse {

/// The sparse product A * x, an expression (runs when assigned or fused).
template <class T, class X, class = std::enable_if_t<detail::is_expr_v<X>>>
auto operator*(const CsrMatrix<T>& A, const X& x) {
  return detail::make_sparse_product(A, x);
}
template <int I, class T, class X, class = std::enable_if_t<detail::is_expr_v<X>>>
auto operator*(const detail::MatrixParam<I, T>& A, const X& x) {
  return detail::make_sparse_product(A, x);
}

}  // namespace kfuse
