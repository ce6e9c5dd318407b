// detail::SparseLu: L U = A for a sparse matrix held whole by one rank, made
// by Kokkos Kernels' SpILUK. Natural ordering, no pivoting (as PETSc's ILU
// and its sequential LU on these matrices). Fill level 0 keeps A's pattern
// (ILU(0): pc::bjacobi_ilu0); a level of n drops no fill, so L U is A's
// exact LU (pc::multigrid's direct coarse solve), whose fill stays within
// A's band. The two triangular solves: Kokkos Kernels' SpTRSV level schedule
// (parallel over each wavefront of rows: ILU(0) of a grid has long ones), or
// on one host thread a row loop of kfuse's own, as PETSc's MatSolve runs it:
// the factors without their diagonals, by rows, and D^-1 kept, each row's
// sum in a register, the backward row times D^-1 (no division, no test on an
// entry). Kokkos Kernels' sequential trsv updates x in memory once per entry
// by rows, or copies its right-hand side into x first by columns: 20-25%
// slower (docs/benchmarks-log.md, 2026-12-05).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spiluk.hpp>
#include <KokkosSparse_sptrsv.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/core/error.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/core/spaces.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::detail {

/// A square matrix on the host in CSR form, columns ascending in each row.
template <class T>
struct HostCsr {
  using size_type = typename CsrMatrix<T>::offset_type;
  using ordinal_type = typename CsrMatrix<T>::ordinal_type;
  std::vector<size_type> rows{0};
  std::vector<ordinal_type> cols;
  std::vector<T> values;

  index_t size() const { return index_t(rows.size()) - 1; }
  /// The rows whose diagonal entry is missing or zero.
  index_t rows_without_diagonal() const {
    index_t missing = 0;
    for (index_t i = 0; i < size(); ++i) {
      bool found = false;
      for (auto k = rows[i]; k < rows[i + 1]; ++k)
        found = found || (cols[k] == i && values[k] != T(0));
      missing += found ? 0 : 1;
    }
    return missing;
  }
  /// The widest distance of an entry from the diagonal (the fill of an exact
  /// LU stays within it).
  index_t bandwidth() const {
    index_t width = 0;
    for (index_t i = 0; i < size(); ++i)
      for (auto k = rows[i]; k < rows[i + 1]; ++k)
        width = std::max(width, index_t(std::abs(index_t(cols[k]) - i)));
    return width;
  }
};

/// How SparseLu applies its triangular factors.
enum class TriangularSolve { level_scheduled, sequential };

/// SpTRSV's level schedule pays where its levels run in parallel; on one
/// host thread it only adds a launch per level (thousands per solve on a
/// grid's ILU), and the sequential row loops are several times faster.
inline TriangularSolve default_triangular_solve() {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible)
    if (ExecSpace().concurrency() == 1) return TriangularSolve::sequential;
  return TriangularSolve::level_scheduled;
}

/// `Space`: where the factors live and the solves run (sequential solves
/// need a host space).
template <class T, class Space = ExecSpace>
class SparseLu {
 public:
  using size_type = typename CsrMatrix<T>::offset_type;
  using ordinal_type = typename CsrMatrix<T>::ordinal_type;
  using memory_space = typename Space::memory_space;
  using ValuesView = Kokkos::View<T*, memory_space>;
  /// Fill level that drops nothing: the exact LU.
  static constexpr int exact = -1;

  /// Factorises A (a nonzero diagonal in every row; rows_without_diagonal()
  /// is the caller's check). `fill_level`: 0 for ILU(0), `exact` for LU.
  SparseLu(const std::string& label, const HostCsr<T>& A, int fill_level, TriangularSolve how)
      : n_(A.size()), how_(how) {
    if (how == TriangularSolve::sequential &&
        !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible)
      throw Error("kfuse::detail::SparseLu: sequential solves need a host space");
    const auto nnz = static_cast<size_type>(A.cols.size());
    // Capacities SpILUK may fill (it throws beyond them): A's pattern for
    // ILU(0), the band for the exact LU.
    const auto band = static_cast<size_type>(A.bandwidth());
    const size_type capacity = fill_level == exact ? static_cast<size_type>(n_) * (band + 1) : nnz;
    const int level = fill_level == exact ? static_cast<int>(std::max<index_t>(n_, 1)) : fill_level;
    const auto a_rows = to_device<Kokkos::View<size_type*, memory_space>>(label + ".rows", A.rows);
    const auto a_cols =
        to_device<Kokkos::View<ordinal_type*, memory_space>>(label + ".cols", A.cols);
    const auto a_values = to_device<ValuesView>(label + ".values", A.values);

    Handle ilu;
    ilu.create_spiluk_handle(KokkosSparse::Experimental::SPILUKAlgorithm::SEQLVLSCHD_TP1, n_,
                             capacity, capacity);
    for (Triangle* t : {&lower_, &upper_}) {
      t->row_map = RowMapView(label + (t == &lower_ ? ".L.rows" : ".U.rows"), n_ + 1);
      t->entries = EntriesView(label + (t == &lower_ ? ".L.cols" : ".U.cols"), capacity);
    }
    kk_factorization::spiluk_symbolic(&ilu, level, a_rows, a_cols, lower_.row_map, lower_.entries,
                                      upper_.row_map, upper_.entries);
    Kokkos::resize(lower_.entries, ilu.get_spiluk_handle()->get_nnzL());
    Kokkos::resize(upper_.entries, ilu.get_spiluk_handle()->get_nnzU());
    lower_.values = ValuesView(label + ".L.values", lower_.entries.extent(0));
    upper_.values = ValuesView(label + ".U.values", upper_.entries.extent(0));
    kk_factorization::spiluk_numeric(&ilu, level, a_rows, a_cols, a_values, lower_.row_map,
                                     lower_.entries, lower_.values, upper_.row_map, upper_.entries,
                                     upper_.values);
    ilu.destroy_spiluk_handle();

    factor_entries_ = index_t(lower_.entries.extent(0) + upper_.entries.extent(0));
    bad_pivots_ = count_bad_pivots();
    if (how_ == TriangularSolve::level_scheduled) {
      for (Triangle* t : {&lower_, &upper_}) {
        t->handle.create_sptrsv_handle(KokkosSparse::Experimental::SPTRSVAlgorithm::SEQLVLSCHD_TP1,
                                       n_, t == &lower_);
        kk_factorization::sptrsv_symbolic(&t->handle, t->row_map, t->entries);
      }
    } else {
      to_rows_without_diagonals(label);
    }
    scratch_ = ValuesView(label + ".scratch", static_cast<std::size_t>(n_));
  }
  SparseLu(const SparseLu&) = delete;
  SparseLu& operator=(const SparseLu&) = delete;

  index_t size() const { return n_; }
  /// Entries of L and U, diagonals included.
  index_t factor_entries() const { return factor_entries_; }
  /// Rows whose pivot is not finite. (SpILUK replaces an exact zero pivot by
  /// 1e6 and goes on; an input of inf or NaN shows here.)
  index_t bad_pivots() const { return bad_pivots_; }

  /// out = U^-1 L^-1 rhs (n entries each; out may be rhs).
  void solve(const ValuesView& rhs, const ValuesView& out) {
    if (how_ == TriangularSolve::sequential) {
      if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible)
        solve_by_rows(rhs.data(), scratch_.data(), out.data());
      return;
    }
    kk_factorization::sptrsv_solve(&lower_.handle, lower_.row_map, lower_.entries, lower_.values,
                                   rhs, scratch_);
    kk_factorization::sptrsv_solve(&upper_.handle, upper_.row_map, upper_.entries, upper_.values,
                                   scratch_, out);
  }

 private:
  using Handle = KokkosKernels::Experimental::KokkosKernelsHandle<size_type, ordinal_type, T, Space,
                                                                  memory_space, memory_space>;
  using RowMapView = Kokkos::View<size_type*, memory_space>;
  using EntriesView = Kokkos::View<ordinal_type*, memory_space>;
  struct Triangle {
    RowMapView row_map;
    EntriesView entries;
    ValuesView values;
    Handle handle;
  };
  /// Rows of U whose diagonal (leading its row) is not finite.
  index_t count_bad_pivots() const {
    const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), upper_.row_map);
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), upper_.values);
    index_t bad = 0;
    for (index_t i = 0; i < n_; ++i) bad += std::isfinite(double(values(rows(i)))) ? 0 : 1;
    return bad;
  }

  /// The sequential solves' form (host memory): L and U without their
  /// diagonals, by rows (L's diagonal is 1), and D^-1.
  void to_rows_without_diagonals(const std::string& label) {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
      inverse_diagonal_ = ValuesView(label + ".inverse_diagonal", static_cast<std::size_t>(n_));
      for (index_t i = 0; i < n_; ++i)  // U's diagonal leads its row
        inverse_diagonal_(i) = T(1) / upper_.values(upper_.row_map(i));
      for (Triangle* t : {&lower_, &upper_}) {
        const std::string name = label + (t == &upper_ ? ".U" : ".L");
        RowMapView rows(name + ".off_diagonal.rows", n_ + 1);
        for (index_t i = 0; i < n_; ++i) {
          rows(i + 1) = rows(i);
          for (size_type k = t->row_map(i); k < t->row_map(i + 1); ++k)
            if (index_t(t->entries(k)) != i) ++rows(i + 1);
        }
        EntriesView cols(name + ".off_diagonal.cols", rows(n_));
        ValuesView values(name + ".off_diagonal.values", rows(n_));
        for (index_t i = 0; i < n_; ++i) {
          size_type next = rows(i);
          for (size_type k = t->row_map(i); k < t->row_map(i + 1); ++k)
            if (index_t(t->entries(k)) != i) {
              cols(next) = t->entries(k);
              values(next++) = t->values(k);
            }
        }
        t->row_map = rows, t->entries = cols, t->values = values;
      }
    }
  }

  /// y = L^-1 b, then x = U^-1 y by rows from the last: x_i = D^-1_i (y_i - sum U_ij x_j).
  /// x may be b.
  void solve_by_rows(const T* b, T* y, T* x) const {
    const size_type* l_rows = lower_.row_map.data();
    const ordinal_type* l_cols = lower_.entries.data();
    const T* l_values = lower_.values.data();
    for (index_t i = 0; i < n_; ++i) {
      T sum = b[i];
      for (size_type k = l_rows[i]; k < l_rows[i + 1]; ++k) sum -= l_values[k] * y[l_cols[k]];
      y[i] = sum;
    }
    const size_type* u_rows = upper_.row_map.data();
    const ordinal_type* u_cols = upper_.entries.data();
    const T* u_values = upper_.values.data();
    const T* inverse_diagonal = inverse_diagonal_.data();
    for (index_t i = n_ - 1; i >= 0; --i) {
      T sum = y[i];
      for (size_type k = u_rows[i]; k < u_rows[i + 1]; ++k) sum -= u_values[k] * x[u_cols[k]];
      x[i] = sum * inverse_diagonal[i];
    }
  }

  index_t n_;
  TriangularSolve how_;
  Triangle lower_, upper_;
  index_t factor_entries_ = 0, bad_pivots_ = 0;
  ValuesView inverse_diagonal_;  // the sequential solves' D^-1
  ValuesView scratch_;  // L^-1 rhs
};

}  // namespace kfuse::detail
