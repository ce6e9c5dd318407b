// Building blocks of the hand-written (`kokkos`) solver variants: what an
// expert writes on top of the matrix's local CSR block and import plan.
//
// A vector that a sparse product reads is kept as one array over every local
// column of A (owned entries, then the ghosts: the import lands in its tail),
// so the product's inner loop reads one array without a branch. Products run
// overlapped with the ghost import: the rows without ghost columns while the
// messages fly, then the other rows (labelled ":boundary", as kfuse does).
//
// Reductions run in chunks of consecutive indices, each summing into local
// variables and adding them to Kokkos's reduction value once per chunk. A
// kernel that stores vectors and sums per index into Kokkos's value (a
// reference to memory the compiler cannot tell apart from the stored
// vectors) turns every sum into a store and a reload: about 5x slower on
// these CPUs for the kernels below. The chunking is for host backends; on a
// device a chunk is one index.
#pragma once

#include <string>
#include <utility>

#include "solvers.hpp"

namespace kfuse::bench::solvers::hand {

using Rows = Kokkos::View<const int*, Kokkos::LayoutRight, detail::MemSpace>;
using IndexRange = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;

/// A vector over A's columns: all() = owned entries, then ghosts.
struct ColumnVector {
  View all;
  std::int64_t owned = 0;
  ColumnVector(const Matrix& A, const std::string& label)
      : all(label, static_cast<std::size_t>(A.domain().local_size() + A.num_ghosts())),
        owned(A.domain().local_size()) {}
  View owned_part() const { return Kokkos::subview(all, std::make_pair(std::int64_t(0), owned)); }
  View ghosts() const {
    return Kokkos::subview(all, std::make_pair(owned, std::int64_t(all.extent(0))));
  }
  /// Imports the ghosts (not overlapped).
  void import(const Matrix& A) const { A.import_plan().run(owned_part(), ghosts()); }
};

/// The local block: row i of A times a column vector.
struct Csr {
  Matrix::offset_view row_ptr;
  Matrix::index_view col;
  ConstView val;
  explicit Csr(const Matrix& A) : row_ptr(A.row_ptr()), col(A.col_idx()), val(A.values()) {}
  KOKKOS_INLINE_FUNCTION double row_times(int row, const ConstView& x) const {
    double y = 0;
    for (std::size_t k = row_ptr(row); k < row_ptr(row + 1); ++k) y += val(k) * x(col(k));
    return y;
  }
};

/// Base of functors reducing M sums at once (Kokkos array reductions).
template <unsigned M>
struct SumsOf {
  using value_type = double[];
  static constexpr unsigned value_count = M;
  KOKKOS_INLINE_FUNCTION void init(double* sums) const {
    for (unsigned m = 0; m < M; ++m) sums[m] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(double* into, const double* from) const {
    for (unsigned m = 0; m < M; ++m) into[m] += from[m];
  }
#if !KFUSE_KOKKOS_4
  KOKKOS_INLINE_FUNCTION void join(volatile double* into, const volatile double* from) const {
    for (unsigned m = 0; m < M; ++m) into[m] += from[m];
  }
#endif
};

/// Indices per chunk of a chunked reduction.
inline constexpr std::int64_t chunk_size =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible ? 512 : 1;

/// body(i, local) for i in [0, n), by chunks: `local` (M sums) lives in
/// registers for a chunk, then joins Kokkos's value.
template <unsigned M, class Body>
struct Chunked : SumsOf<M> {
  Body body;
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t chunk, double* sums) const {
    double local[M];
    for (unsigned m = 0; m < M; ++m) local[m] = 0;
    const std::int64_t begin = chunk * chunk_size;
    const std::int64_t end = begin + chunk_size < n ? begin + chunk_size : n;
    for (std::int64_t i = begin; i < end; ++i) body(i, local);
    for (unsigned m = 0; m < M; ++m) sums[m] += local[m];
  }
};

/// parallel_reduce of body(i, sums) over [0, n) in chunks; M sums into `sums`.
template <unsigned M, class Body>
void reduce(const std::string& label, std::int64_t n, const Body& body, double* sums) {
  Kokkos::parallel_reduce(label, IndexRange(0, (n + chunk_size - 1) / chunk_size),
                          Chunked<M, Body>{{}, body, n}, sums);
}

/// Runs `make(rows)` (a body over list positions k, summing M values) for
/// the rows of A while x's ghosts are imported: interior rows first, then,
/// once the ghosts are in, the boundary rows.
template <unsigned M, class Make>
void overlapped_rows(const std::string& label, const Matrix& A, const ColumnVector& x,
                     const Make& make, double* sums) {
  GhostImport<double>& plan = A.import_plan();
  plan.start(x.owned_part(), x.ghosts());
  const Rows interior = A.interior_rows(), boundary = A.boundary_rows();
  reduce<M>(label, std::int64_t(interior.extent(0)), make(interior), sums);
  plan.finish();
  double part[M];
  reduce<M>(label + ":boundary", std::int64_t(boundary.extent(0)), make(boundary), part);
  for (unsigned m = 0; m < M; ++m) sums[m] += part[m];
}

}  // namespace kfuse::bench::solvers::hand
