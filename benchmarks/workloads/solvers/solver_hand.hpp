// Building blocks of the hand-written (`kokkos`) solver variants: what an
// expert writes on top of the matrix's local CSR block and import plan.
//
// A vector that a sparse product reads is kept as one array over every local
// column of A (owned entries, then the ghosts: the import lands in its tail),
// so the product's inner loop reads one array without a branch. Products run
// overlapped with the ghost import: the rows without ghost columns while the
// messages fly, then the other rows (labelled ":boundary", as kfuse does).
//
// Reductions run in chunks of consecutive indices, split over lanes
// (hand_loops.hpp).
#pragma once

#include <string>
#include <utility>

#include "../common/hand_loops.hpp"
#include "solvers.hpp"

namespace kfuse::bench::solvers::hand {

using namespace kfuse::bench::hand;  // loops and reductions

using Rows = Kokkos::View<const int*, Kokkos::LayoutRight, detail::MemSpace>;

/// A zero-filled work vector of n entries placed as kfuse places a Vector's
/// (detail::allocate_storage: on a 2 MiB boundary where huge pages back it, so that
/// they cover all of it): the placement is not what the comparison measures.
inline View work_vector(const std::string& label, std::int64_t n) {
  return detail::allocate_storage<double>("hand-written solver", label, std::array<index_t, 1>{n},
                                          alignof(double))
      .view();
}

/// A vector over A's columns: all() = owned entries, then ghosts.
struct ColumnVector {
  View all;
  std::int64_t owned = 0;
  ColumnVector(const Matrix& A, const std::string& label)
      : all(work_vector(label, A.domain().local_size() + A.num_ghosts())),
        owned(A.domain().local_size()) {}
  View owned_part() const { return Kokkos::subview(all, std::make_pair(std::int64_t(0), owned)); }
  View ghosts() const {
    return Kokkos::subview(all, std::make_pair(owned, std::int64_t(all.extent(0))));
  }
  /// Imports the ghosts (not overlapped).
  void import(const Matrix& A) const { A.import_plan().run(owned_part(), ghosts()); }
};

/// The local block: row i of A times a column vector. Where the matrix exceeds the
/// cache, a row prefetches the matrix's values and column indices ahead, as an expert adds
/// it to a product that streams, by kfuse's helpers (kfuse/core/prefetch.hpp), as kfuse's
/// row read does (kfuse/expr/sparse_product.hpp, which has the figures).
struct Csr {
  Matrix::offset_view row_ptr;
  Matrix::index_view col;
  ConstView val;
  bool prefetch;
  explicit Csr(const Matrix& A)
      : row_ptr(A.row_ptr()),
        col(A.col_idx()),
        val(A.values()),
        prefetch(detail::sparse_rows_prefetch<double>(index_t(A.values().extent(0)))) {}
  KOKKOS_INLINE_FUNCTION double row_times(std::int64_t row, const ConstView& x) const {
    // Raw pointers in locals (the views are contiguous) and a 64-bit row, as
    // kfuse's row read does: the compiler then keeps the loop's addresses in
    // registers (an int row was sign-extended and rescaled at every row).
    const int* const column = col.data();
    const double* const value = val.data();
    const double* const xs = x.data();
    const auto begin = row_ptr(row), end = row_ptr(row + 1);
    if (detail::host_prefetch && prefetch)
      detail::prefetch_sparse_row_ahead(value, column, begin, end);
    double y = 0;
    for (auto k = begin; k < end; ++k) y += value[k] * xs[column[k]];
    return y;
  }
};

/// Ap = A p and p.Ap over the rows row_of(k) (CG's first kernel; p: all columns).
template <class RowOf>
struct SpmvPAp {
  Csr A;
  ConstView p;
  View Ap;
  RowOf row_of;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, Lane sums) const {
    const std::int64_t row = row_of(k);
    const double y = A.row_times(row, p), pi = p(row);
    Ap(row) = y;
    sums[0] += pi * y;
  }
};

/// The start of CG and BiCGSTAB: r = b - A x, copy = r (CG's p, BiCGSTAB's
/// r_hat), with r.r and b.b (x: all columns).
struct ResidualStart {
  Csr A;
  ConstView x, b;
  View r, copy;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double bi = b(i), ri = bi - A.row_times(i, x);
    r(i) = ri;
    copy(i) = ri;
    sums[0] += ri * ri;
    sums[1] += bi * bi;
  }
};

/// Which row launch index k is: the k-th of a list, or the k-th after `first`.
struct ListedRows {
  Rows rows;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t k) const { return rows(k); }
};
struct RowsFrom {
  std::int64_t first;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t k) const { return first + k; }
};

/// Runs `make(row_of)` (a body over launch indices k, row_of(k) its row,
/// summing M values) for the rows of A while x's ghosts are imported:
/// interior rows first (a range when consecutive), then, once the ghosts
/// are in, the boundary rows.
template <unsigned M, class Make>
void overlapped_rows(const std::string& label, const Matrix& A, const ColumnVector& x,
                     const Make& make, double* sums) {
  GhostImport<double>& plan = A.import_plan();
  plan.start(x.owned_part(), x.ghosts());
  const Rows interior = A.interior_rows(), boundary = A.boundary_rows();
  if (const auto& range = A.interior_range())
    reduce_rows<M>(label, range->second - range->first, make(RowsFrom{range->first}), sums);
  else
    reduce_rows<M>(label, std::int64_t(interior.extent(0)), make(ListedRows{interior}), sums);
  plan.finish();
  double part[M];
  reduce_rows<M>(label + ":boundary", std::int64_t(boundary.extent(0)), make(ListedRows{boundary}),
                 part);
  for (unsigned m = 0; m < M; ++m) sums[m] += part[m];
}

/// The same for a body without sums: `make(row_of)` is a parallel_for body
/// over launch indices k.
template <class Make>
void overlapped_rows_for(const std::string& label, const Matrix& A, const ColumnVector& x,
                         const Make& make) {
  GhostImport<double>& plan = A.import_plan();
  plan.start(x.owned_part(), x.ghosts());
  const Rows interior = A.interior_rows(), boundary = A.boundary_rows();
  if (const auto& range = A.interior_range())
    for_points(label, 0, range->second - range->first, make(RowsFrom{range->first}));
  else
    for_points(label, 0, std::int64_t(interior.extent(0)), make(ListedRows{interior}));
  plan.finish();
  for_points(label + ":boundary", 0, std::int64_t(boundary.extent(0)), make(ListedRows{boundary}));
}

}  // namespace kfuse::bench::solvers::hand
