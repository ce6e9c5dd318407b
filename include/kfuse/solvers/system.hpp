// Checks of a system A x = b shared by kfuse's solvers and preconditioners
// (collective: a kfuse::Error on every rank before anything is modified), and
// what their programs share.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/walk.hpp"
#include "kfuse/program/arguments.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::detail {

/// The bits of a double: options compared across ranks exactly (NaN included).
inline std::int64_t bits_of(double x) {
  std::int64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// Collective: a kfuse::Error on every rank when any rank found `local_error`
/// (its arguments' first failed check, "" when none) or unless every rank
/// passed the same `values` (`what` names them). Ranks with other options
/// would run other numbers of kernels, imports and allreduces, and wait in
/// each other's. One allreduce; every rank sees the same extremes, so all
/// throw alike.
inline void check_same_values(const char* api, const Comm& comm, std::vector<std::int64_t> values,
                              const char* what, const std::string& local_error = {}) {
  if (comm.agree_or_throw(local_error, values) != values)
    throw Error(
        error_message(api, ": ranks passed different ", what, "; every rank must pass the same"));
}

/// A matrix as a solver's operator: apply(v) is the expression A * v. A named
/// type, not a lambda of each kfuse::cg<T, M>, so that the solver bodies a
/// file instantiates are shared between calls with different M that run the
/// same way (pc::none with SolverOptions::preconditioner = jacobi and
/// pc::jacobi(A) run one Jacobi-preconditioned body).
template <class T>
struct MatrixOperator {
  CsrMatrix<T> A;
  template <class V>
  auto operator()(const V& v) const {
    return A * v;
  }
};

/// Whether leaf L of an operator's expression reads an array other than the
/// operator's argument P: an Array or Vector (a captured handle or another
/// program argument), shifted or not, or a matrix (a product). Scalars,
/// numbers and indices read no array.
template <class P, class L>
constexpr bool reads_another_array() {
  if constexpr (is_shifted<L>::value)
    return !std::is_same_v<typename L::leaf_type, P>;
  else if constexpr (is_array_param<L>::value)
    return !std::is_same_v<L, P>;
  else if constexpr (is_leaf_handle<L>::value)
    return expr_traits<L>::domain != domain::scalar;
  else
    return is_sparse_product<L>::value;
}

template <class P, class E>
constexpr bool reads_only();

template <class P, class... C>
constexpr bool children_read_only(ChildRefs<C...>*) {
  return (reads_only<P, std::decay_t<C>>() && ...);
}

/// Whether expression E reads no array but P.
template <class P, class E>
constexpr bool reads_only() {
  if constexpr (is_leaf_node_v<E>)
    return !reads_another_array<P, E>();
  else
    return children_read_only<P>(static_cast<children_t<E>*>(nullptr));
}

/// Whether an operator reads nothing but its argument (a constant-coefficient
/// stencil): applying it again then costs less than storing its product and
/// reading it back, so CG applies it twice (cg_iteration without Ap). An
/// operator that reads coefficients or a matrix would read them twice: CG
/// stores its product (one coefficient array read again costs about what the
/// store saves: 8 bytes a row against 8, or 16 where stores read their lines
/// first; a matrix costs far more).
template <class Apply, class V, class P = typename param_for<0, V>::type>
inline constexpr bool reads_only_its_argument_v =
    reads_only<P, decltype(std::declval<const Apply&>()(std::declval<const P&>()))>();

/// Where A is not square or x, b do not lie on its columns and rows, why (on
/// this rank; the solvers agree on it with their options, agree_on_solve).
template <class T>
std::string system_error(const char* api, const CsrMatrix<T>& A, const Vector<T>& x,
                         const Vector<T>& b) {
  if (A.global_rows() != A.global_cols())
    return error_message(api, ": '", A.label(), "' is ", A.global_rows(), " x ", A.global_cols(),
                         "; the method needs a square matrix");
  if (x.row_map() != A.domain())
    return error_message(api, ": x ('", x.label(), "', ", x.row_map().describe(),
                         ") does not lie on the columns of '", A.label(), "' (",
                         A.domain().describe(), ")");
  if (b.row_map() != A.range())
    return error_message(api, ": b ('", b.label(), "', ", b.row_map().describe(),
                         ") does not lie on the rows of '", A.label(), "' (", A.range().describe(),
                         ")");
  return {};
}

/// Checks that A is square with rows and columns split alike, so that each
/// rank's diagonal block is its owned columns (block Jacobi needs that).
template <class T>
void check_square_blocks(const char* api, const CsrMatrix<T>& A) {
  std::string error;
  if (A.global_rows() != A.global_cols())
    error = error_message(api, ": '", A.label(), "' is ", A.global_rows(), " x ", A.global_cols(),
                          "; a preconditioner needs a square matrix");
  else if (A.range().local_begin() != A.domain().local_begin() ||
           A.range().local_size() != A.domain().local_size())
    error = error_message(api, ": the rows of '", A.label(), "' (", A.range().describe(),
                          ") and its columns (", A.domain().describe(),
                          ") are split differently; build the matrix with one RowMap for both");
  A.range().comm().agree_or_throw(error);
}

/// inverse_diagonal's kernel: out(row) = 1 / A(row, row), counting rows whose diagonal is
/// missing or zero.
template <class T, class RowPtr, class Columns, class Values, class Out>
struct InvertDiagonal {
  RowPtr row_ptr;
  Columns columns;
  Values values;
  Out out;
  index_t shift;  // global row - global column of a diagonal entry's local column
  KOKKOS_INLINE_FUNCTION void operator()(index_t row, index_t& bad) const {
    T diagonal = 0;
    for (auto k = row_ptr(row); k < row_ptr(row + 1); ++k)
      if (columns(k) == row + shift) diagonal += values(k);
    if (diagonal == T(0)) ++bad;
    out(row) = diagonal == T(0) ? T(0) : T(1) / diagonal;
  }
};

/// 1 / A(i, i) for every owned row (Jacobi); an error if a diagonal entry is
/// missing or zero.
template <class T>
Vector<T> inverse_diagonal(const char* api, const CsrMatrix<T>& A) {
  Vector<T> inverse(A.range(), A.label() + ".inverse_diagonal");
  const auto row_ptr = A.row_ptr();
  const auto columns = A.col_idx();
  const auto values = A.values();
  const auto out = inverse.view();
  const index_t shift = A.range().local_begin() - A.domain().local_begin();
  index_t missing = 0;
  Kokkos::parallel_reduce(
      "kfuse:inverse_diagonal",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(0, A.local_rows()),
      InvertDiagonal<T, decltype(row_ptr), decltype(columns), decltype(values), decltype(out)>{
          row_ptr, columns, values, out, shift},
      missing);
  std::string error;
  if (missing > 0)
    error = error_message(api, ": Jacobi needs a nonzero diagonal, but ", missing, " row(s) of '",
                          A.label(), "' have none on this rank");
  A.range().comm().agree_or_throw(error);
  return inverse;
}

/// A product as a program reads it: the vector that stores it when there is
/// one, else the product's expression itself (the operator applied again).
template <class E, class... Stored>
auto stored_or(const E& product, const Stored&... stored) {
  if constexpr (sizeof...(Stored) == 0)
    return product;
  else
    return (stored, ...);
}

}  // namespace kfuse::detail
