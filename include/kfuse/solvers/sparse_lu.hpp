// detail::SparseLu: L U = A for a sparse matrix held whole by one rank, made
// by Kokkos Kernels' SpILUK. Natural ordering, no pivoting (as PETSc's ILU
// and its sequential LU on these matrices). Fill level 0 keeps A's pattern
// (ILU(0): pc::bjacobi_ilu0); a level of n drops no fill, so L U is A's
// exact LU (pc::multigrid's direct coarse solve), whose fill stays within
// A's band. The two triangular solves are Kokkos Kernels' too: SpTRSV's
// level schedule (parallel over each wavefront of rows: ILU(0) of a grid
// has long ones), or its sequential trsv on the host (an exact LU of a band
// has one row per wavefront: a level schedule would launch a kernel a row).
// For the sequential solves the factors are kept in unit-diagonal form, as
// PETSc keeps its ILU's inverse diagonal: L without its diagonal, D^-1 and
// D^-1 U without its diagonal, so that trsv's unit-diagonal loops run, with
// no test on each entry and no division a row; and by columns (trsv of the
// transpose), whose loops update a different entry of x at each step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spiluk.hpp>
#include <KokkosSparse_sptrsv.hpp>
#include <KokkosSparse_trsv.hpp>
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
/// grid's ILU), and the sequential trsv is several times faster.
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
      to_unit_diagonal(label);
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
      if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
        // trsv takes a matrix of one column: y = L^-1 rhs, y = D^-1 y,
        // out = (D^-1 U)^-1 y, both with the unit diagonals implied. LayoutRight:
        // Kokkos Kernels' library holds trsv compiled for LayoutLeft columns
        // (Debian: -O2, any x86-64), so this layout compiles it here, with the
        // caller's flags (docs/benchmarks.md: 8% faster with -march=native).
        using Column = Kokkos::View<T**, Kokkos::LayoutRight, memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
        const Column b(rhs.data(), rhs.extent(0), 1), y(scratch_.data(), scratch_.extent(0), 1),
            x(out.data(), out.extent(0), 1);
        // The factors are stored transposed: L^T is upper, (D^-1 U)^T lower.
        KokkosSparse::trsv("U", "T", "U", lower_matrix_, b, y);
        for (index_t i = 0; i < n_; ++i) scratch_(i) *= inverse_diagonal_(i);
        KokkosSparse::trsv("L", "T", "U", upper_matrix_, y, x);
      }
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
  using Matrix = KokkosSparse::CrsMatrix<T, ordinal_type, Space, void, size_type>;
  struct Triangle {
    RowMapView row_map;
    EntriesView entries;
    ValuesView values;
    Handle handle;
    Matrix matrix(index_t n) const {
      return Matrix("kfuse:triangle", ordinal_type(n), ordinal_type(n), size_type(values.extent(0)),
                    values, row_map, entries);
    }
  };
  /// Rows of U whose diagonal (leading its row) is not finite.
  index_t count_bad_pivots() const {
    const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), upper_.row_map);
    const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), upper_.values);
    index_t bad = 0;
    for (index_t i = 0; i < n_; ++i) bad += std::isfinite(double(values(rows(i)))) ? 0 : 1;
    return bad;
  }

  /// The sequential solves' form (host memory): L and U lose their
  /// diagonals, U's rows are scaled by D^-1, and D^-1 is kept. Both are kept
  /// transposed (by columns), for trsv's column loops: a column's entries
  /// update distinct rows, where a row's loop would update one entry of x in
  /// memory once per entry, each update waiting for the one before.
  void to_unit_diagonal(const std::string& label) {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
      inverse_diagonal_ = ValuesView(label + ".inverse_diagonal", static_cast<std::size_t>(n_));
      for (index_t i = 0; i < n_; ++i)  // U's diagonal leads its row
        inverse_diagonal_(i) = T(1) / upper_.values(upper_.row_map(i));
      for (Triangle* t : {&lower_, &upper_}) {
        const bool upper = t == &upper_;
        const std::string name = label + (upper ? ".U" : ".L");
        // Columns of the off-diagonal part: count, then fill in row order (each column's
        // rows ascending).
        RowMapView columns(name + ".columns", n_ + 1);
        for (index_t i = 0; i < n_; ++i)
          for (size_type k = t->row_map(i); k < t->row_map(i + 1); ++k)
            if (index_t(t->entries(k)) != i) ++columns(t->entries(k) + 1);
        for (index_t j = 0; j < n_; ++j) columns(j + 1) += columns(j);
        EntriesView rows(name + ".rows", columns(n_));
        ValuesView values(name + ".values", columns(n_));
        std::vector<size_type> next(columns.data(), columns.data() + n_);
        for (index_t i = 0; i < n_; ++i)
          for (size_type k = t->row_map(i); k < t->row_map(i + 1); ++k) {
            const index_t j = t->entries(k);
            if (j == i) continue;
            rows(next[j]) = ordinal_type(i);
            values(next[j]++) = upper ? t->values(k) * inverse_diagonal_(i) : t->values(k);
          }
        t->row_map = columns, t->entries = rows, t->values = values;
      }
      lower_matrix_ = lower_.matrix(n_);
      upper_matrix_ = upper_.matrix(n_);
    }
  }

  index_t n_;
  TriangularSolve how_;
  Triangle lower_, upper_;
  index_t factor_entries_ = 0, bad_pivots_ = 0;
  // The sequential solves' factors as Kokkos Kernels matrices, and D^-1.
  Matrix lower_matrix_, upper_matrix_;
  ValuesView inverse_diagonal_;
  ValuesView scratch_;  // L^-1 rhs
};

}  // namespace kfuse::detail
