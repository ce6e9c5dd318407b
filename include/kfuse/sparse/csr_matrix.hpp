// CsrMatrix<T>: a sparse matrix distributed by rows. Rank r owns the rows of
// range() block r; its local block is stored in CSR on the device with 32-bit
// local column indices: first the columns this rank owns in domain(), then its
// ghosts (off-rank columns, ascending); within a row, owned columns come
// first, then ghosts, each ascending. The SpMV kernels import the ghosts of x
// through import_plan() and run the interior rows (no ghost column) while the
// messages are in flight. A handle, like Array: copies share storage.
//
// Built from triplets (any rank may pass any entry; they are routed to their
// owners and duplicates summed), by the generators or by the Matrix Market
// reader, all through one assembly of each rank's own rows.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/dist/ghost_import.hpp"
#include "kfuse/dist/row_map.hpp"

namespace kfuse {

template <class T>
class CsrMatrix;

namespace detail {

/// One entry (global indices) on its way into a matrix.
template <class T>
struct Triplet {
  index_t row;
  index_t col;
  T value;
  friend bool operator<(const Triplet& a, const Triplet& b) {
    return a.row < b.row || (a.row == b.row && a.col < b.col);
  }
};

/// Collective: builds the matrix from entries of this rank's own rows of
/// `range` (any order, duplicates summed). What every constructor ends in.
template <class T>
CsrMatrix<T> assemble_csr(const RowMap& range, const RowMap& domain,
                          std::vector<Triplet<T>> entries, std::string label);

template <class T>
CsrMatrix<T> assemble_routed(const RowMap& range, const RowMap& domain,
                             const std::vector<Triplet<T>>& entries, std::string label);

}  // namespace detail

template <class T>
class CsrMatrix {
  static_assert(std::is_arithmetic_v<T>,
                "kfuse::CsrMatrix<T>: T must be an arithmetic type (double, float, ...)");

 public:
  using value_type = T;
  /// Row offsets, 32-bit like the column indices and PETSc's default build:
  /// 4 bytes a row less to stream per product than size_t. A rank's block
  /// holds at most INT_MAX entries (kfuse::Error otherwise). Kokkos Kernels
  /// instantiates int offsets (ETI) as it does size_t ones.
  using offset_type = int;
  using ordinal_type = int;
  using device_type = Kokkos::Device<detail::ExecSpace, detail::MemSpace>;
  using local_matrix_type =
      KokkosSparse::CrsMatrix<T, ordinal_type, device_type, void, offset_type>;
  using vector_view = Kokkos::View<T*, Kokkos::LayoutRight, detail::MemSpace>;
  using const_vector_view = Kokkos::View<const T*, Kokkos::LayoutRight, detail::MemSpace>;
  using offset_view = Kokkos::View<const offset_type*, Kokkos::LayoutRight, detail::MemSpace>;
  using index_view = Kokkos::View<const int*, Kokkos::LayoutRight, detail::MemSpace>;

  /// Collective. Entry k is (rows[k], cols[k]) = vals[k], global indices; any
  /// rank may pass any entries (they go to the rank owning the row) and
  /// duplicates are summed. Rows are split as RowMap(comm, n_rows) splits
  /// them, columns (the domain) as RowMap(comm, n_cols).
  static CsrMatrix from_triplets(const Comm& comm, index_t n_rows, index_t n_cols,
                                 const std::vector<index_t>& rows, const std::vector<index_t>& cols,
                                 const std::vector<T>& vals, std::string label = "A");

  const RowMap& range() const { return state_->range; }
  const RowMap& domain() const { return state_->domain; }
  index_t global_rows() const { return range().global_size(); }
  index_t global_cols() const { return domain().global_size(); }
  index_t global_nnz() const { return state_->global_nnz; }
  index_t local_rows() const { return range().local_size(); }
  index_t local_nnz() const { return static_cast<index_t>(state_->local.nnz()); }
  index_t num_ghosts() const { return static_cast<index_t>(state_->ghost_columns.size()); }
  const std::string& label() const { return state_->label; }
  const void* storage_id() const { return state_.get(); }
  /// Shares the matrix's lifetime (vectors key their ghost buffers by it).
  std::shared_ptr<const void> storage() const { return state_; }

  // The local block (CSR, device memory). Column c < domain().local_size() is
  // owned column domain().local_begin() + c; above, ghost c - local_size().
  offset_view row_ptr() const { return state_->local.graph.row_map; }
  index_view col_idx() const { return state_->local.graph.entries; }
  vector_view values() const { return state_->local.values; }
  /// Rows whose columns are all owned: computable before the ghosts arrive.
  index_view interior_rows() const { return state_->interior_rows; }
  /// The interior rows as one range [first, second) when they are consecutive
  /// (a banded matrix split by rows): kernels then need no row list.
  const std::optional<std::pair<index_t, index_t>>& interior_range() const {
    return state_->interior_range;
  }
  /// Rows with at least one ghost column.
  index_view boundary_rows() const { return state_->boundary_rows; }
  /// The matrix's ghost buffer (num_ghosts() values, ordered as the columns).
  vector_view ghost_values() const { return state_->ghost_values; }
  /// Global column of each ghost, ascending.
  const std::vector<index_t>& ghost_global_columns() const { return state_->ghost_columns; }
  GhostImport<T>& import_plan() const { return state_->import; }
  /// x over every local column: owned values, then ghost_values() (which is
  /// its tail). Scratch of the eager product, for kernels that want one array.
  vector_view column_buffer() const { return state_->columns; }
  /// The local block for Kokkos Kernels (numCols = owned columns + ghosts).
  const local_matrix_type& local_matrix() const { return state_->local; }

 private:
  struct State {
    RowMap range, domain;
    std::string label;
    index_t global_nnz = 0;
    local_matrix_type local;
    Kokkos::View<int*, Kokkos::LayoutRight, detail::MemSpace> interior_rows, boundary_rows;
    std::optional<std::pair<index_t, index_t>> interior_range;
    std::vector<index_t> ghost_columns;
    GhostImport<T> import;
    vector_view columns, ghost_values;
    State(const RowMap& r, const RowMap& d, std::string l, std::vector<index_t> ghosts)
        : range(r),
          domain(d),
          label(std::move(l)),
          ghost_columns(std::move(ghosts)),
          import(d, ghost_columns) {}
  };
  explicit CsrMatrix(std::shared_ptr<State> state) : state_(std::move(state)) {}
  friend CsrMatrix detail::assemble_csr<T>(const RowMap&, const RowMap&,
                                           std::vector<detail::Triplet<T>>, std::string);

  std::shared_ptr<State> state_;
};

namespace detail {

/// A copy of a host vector as a View of type View, in its memory space
/// (device_copy: one instantiation per value type and space, converted to the
/// layout View asks for).
template <class View>
View to_device(const std::string& label,
               const std::vector<typename View::non_const_value_type>& host) {
  return device_copy<typename View::non_const_value_type, typename View::memory_space>(label, host);
}

/// Collective: a kfuse::Error on every rank unless the ranks of each node
/// have the memory to assemble their blocks: rows and columns may be declared
/// far beyond the entries given (a Matrix Market header, from_triplets'
/// sizes), and the block needs memory for each of them, host and device.
template <class T>
void check_assembly_memory(const Comm& comm, const std::string& label, index_t rows,
                           index_t columns, std::size_t nnz) {
  using Offset = typename CsrMatrix<T>::offset_type;
  // Per row: offsets (host, device), the ghost flag, the interior or boundary
  // list (host, device); per column: the column buffer; per entry: the
  // triplet, the local pair, then the column and value (host, device).
  const double per_row = 2.0 * sizeof(Offset) + 1 + 2.0 * sizeof(int);
  const double per_entry =
      sizeof(Triplet<T>) + sizeof(std::pair<int, T>) + 2.0 * (sizeof(int) + sizeof(T));
  const double mine = per_row * double(rows) + double(sizeof(T)) * double(columns) +
                      per_entry * double(nnz);
  const double needed = comm.node_allreduce(mine, ReduceOp::sum);
  const double available =
      comm.node_allreduce(static_cast<double>(available_host_bytes()), ReduceOp::min);
  std::string error;
  if (needed > available)
    error = error_message("kfuse::CsrMatrix '", label, "': ", rows, " rows and ", columns,
                          " columns on rank ", comm.rank(), " (", nnz, " entries) need ",
                          describe_bytes(needed), " with the other ranks of its node, but ",
                          describe_bytes(available),
                          " is available; check the declared sizes (a Matrix Market size line, "
                          "from_triplets' n_rows and n_cols) or use more nodes");
  comm.agree_or_throw(error);
}

template <class T>
CsrMatrix<T> assemble_csr(const RowMap& range, const RowMap& domain,
                          std::vector<Triplet<T>> entries, std::string label) {
  if (!std::is_sorted(entries.begin(), entries.end())) std::sort(entries.begin(), entries.end());
  std::size_t nnz = 0;  // sum duplicates in place
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (nnz > 0 && entries[nnz - 1].row == entries[k].row && entries[nnz - 1].col == entries[k].col)
      entries[nnz - 1].value += entries[k].value;
    else
      entries[nnz++] = entries[k];
  }
  entries.resize(nnz);

  // Ghosts ascending: RowMap blocks are in rank order, so this is by owner,
  // then column, and each neighbour's ghosts are contiguous.
  std::vector<index_t> ghosts;
  for (const Triplet<T>& e : entries)
    if (!domain.owns(e.col)) ghosts.push_back(e.col);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());

  const index_t n_rows = range.local_size(), n_owned = domain.local_size();
  const index_t n_columns = n_owned + static_cast<index_t>(ghosts.size());
  std::string error;
  if (n_rows > INT_MAX || n_columns > INT_MAX || nnz > std::size_t(INT_MAX))
    error = detail::error_message(
        "kfuse::CsrMatrix '", label, "': the local block of rank ", range.comm().rank(), " has ",
        n_rows, " rows, ", n_columns, " columns (", n_owned, " owned + ", ghosts.size(),
        " ghosts) and ", nnz, " entries; local indices are 32-bit (at most ", INT_MAX,
        " rows, columns and entries a rank): use more ranks");
  range.comm().agree_or_throw(error);
  check_assembly_memory<T>(range.comm(), label, n_rows, n_columns, nnz);

  const index_t first_row = range.local_begin(), first_col = domain.local_begin();
  using Offset = typename CsrMatrix<T>::offset_type;
  std::vector<Offset> row_ptr(static_cast<std::size_t>(n_rows) + 1, 0);
  std::vector<std::pair<int, T>> local(nnz);  // (local column, value)
  for (std::size_t k = 0; k < nnz; ++k) {
    const Triplet<T>& e = entries[k];
    ++row_ptr[static_cast<std::size_t>(e.row - first_row) + 1];
    const index_t c =
        domain.owns(e.col)
            ? e.col - first_col
            : n_owned + (std::lower_bound(ghosts.begin(), ghosts.end(), e.col) - ghosts.begin());
    local[k] = {static_cast<int>(c), e.value};
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(n_rows); ++r) row_ptr[r + 1] += row_ptr[r];
  // Within a row: owned columns, then ghosts (each ascending in global column).
  std::vector<int> col_idx(nnz);
  std::vector<T> values(nnz);
  std::vector<char> has_ghost(static_cast<std::size_t>(n_rows), 0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(n_rows); ++r) {
    std::sort(local.begin() + row_ptr[r], local.begin() + row_ptr[r + 1],
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (Offset k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      col_idx[k] = local[k].first;
      values[k] = local[k].second;
      has_ghost[r] = has_ghost[r] || local[k].first >= n_owned;
    }
  }
  const auto n_boundary = static_cast<std::size_t>(std::count(has_ghost.begin(), has_ghost.end(), 1));
  std::vector<int> interior, boundary;  // reserved: what check_assembly_memory counted
  interior.reserve(static_cast<std::size_t>(n_rows) - n_boundary);
  boundary.reserve(n_boundary);
  for (int r = 0; r < static_cast<int>(n_rows); ++r)
    (has_ghost[r] ? boundary : interior).push_back(r);

  using Matrix = CsrMatrix<T>;
  auto state = std::make_shared<typename Matrix::State>(range, domain, label, std::move(ghosts));
  state->global_nnz = range.comm().allreduce(static_cast<index_t>(nnz), ReduceOp::sum);
  using Local = typename Matrix::local_matrix_type;
  state->local =
      Local(label, static_cast<int>(n_rows), static_cast<int>(n_columns), static_cast<Offset>(nnz),
            to_device<typename Local::values_type>(label + ":values", values),
            to_device<typename Local::row_map_type>(label + ":row_ptr", row_ptr),
            to_device<typename Local::index_type>(label + ":col_idx", col_idx));
  using Rows = Kokkos::View<int*, Kokkos::LayoutRight, MemSpace>;
  state->interior_rows = to_device<Rows>(label + ":interior_rows", interior);
  state->boundary_rows = to_device<Rows>(label + ":boundary_rows", boundary);
  if (!interior.empty() && interior.back() - interior.front() + 1 == int(interior.size()))
    state->interior_range.emplace(interior.front(), interior.back() + 1);
  state->columns = typename Matrix::vector_view(label + ":columns", n_columns);
  state->ghost_values = Kokkos::subview(state->columns, Kokkos::make_pair(n_owned, n_columns));
  return Matrix(std::move(state));
}

}  // namespace detail

template <class T>
CsrMatrix<T> CsrMatrix<T>::from_triplets(const Comm& comm, index_t n_rows, index_t n_cols,
                                         const std::vector<index_t>& rows,
                                         const std::vector<index_t>& cols,
                                         const std::vector<T>& vals, std::string label) {
  constexpr const char* api = "kfuse::CsrMatrix::from_triplets";
  comm.check_same(n_rows, api, "row counts");
  comm.check_same(n_cols, api, "column counts");
  std::string error;
  if (n_rows < 0 || n_cols < 0) {
    error = detail::error_message(api, ": negative size ", n_rows, " x ", n_cols);
  } else if (rows.size() != cols.size() || rows.size() != vals.size()) {
    error = detail::error_message(api, ": rows, cols and vals have different lengths (",
                                  rows.size(), ", ", cols.size(), ", ", vals.size(), ")");
  } else if (rows.size() > INT_MAX / 2) {
    error = detail::error_message(api, ": ", rows.size(), " entries on one rank; at most ",
                                  INT_MAX / 2, " per call and rank");
  } else {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (rows[k] < 0 || rows[k] >= n_rows || cols[k] < 0 || cols[k] >= n_cols) {
        error = detail::error_message(api, ": entry ", k, " is (", rows[k], ", ", cols[k],
                                      "), outside the ", n_rows, " x ", n_cols, " matrix");
        break;
      }
    }
  }
  comm.agree_or_throw(error);

  std::vector<detail::Triplet<T>> entries(rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) entries[k] = {rows[k], cols[k], vals[k]};
  return detail::assemble_routed(RowMap(comm, n_rows), RowMap(comm, n_cols), entries,
                                 std::move(label));
}

namespace detail {

/// Collective: sends each entry to the rank owning its row of `range`, then
/// assembles (duplicates summed). Entries must lie inside range x domain.
template <class T>
CsrMatrix<T> assemble_routed(const RowMap& range, const RowMap& domain,
                             const std::vector<Triplet<T>>& entries, std::string label) {
  const Comm& comm = range.comm();
  const int p = comm.size();
  std::vector<int> counts(static_cast<std::size_t>(p), 0), owner(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) ++counts[owner[k] = range.owner(entries[k].row)];
  std::vector<int> first(static_cast<std::size_t>(p), 0);
  for (int r = 1; r < p; ++r) first[r] = first[r - 1] + counts[r - 1];
  std::vector<index_t> indices(2 * entries.size());
  std::vector<T> values(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const int at = first[owner[k]]++;
    indices[2 * at] = entries[k].row;
    indices[2 * at + 1] = entries[k].col;
    values[at] = entries[k].value;
  }
  std::vector<int> index_counts(counts), received;
  for (int& c : index_counts) c *= 2;
  values = all_to_all(comm, values, counts, received);
  indices = all_to_all(comm, indices, index_counts, received);

  std::vector<Triplet<T>> mine(values.size());
  for (std::size_t k = 0; k < mine.size(); ++k)
    mine[k] = {indices[2 * k], indices[2 * k + 1], values[k]};
  return assemble_csr(range, domain, std::move(mine), std::move(label));
}

/// This rank's entries with global indices, by row, then column.
template <class T>
std::vector<Triplet<T>> local_triplets(const CsrMatrix<T>& A) {
  auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_ptr());
  auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.col_idx());
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values());
  const index_t n_owned = A.domain().local_size();
  std::vector<Triplet<T>> out;
  out.reserve(static_cast<std::size_t>(A.local_nnz()));
  for (index_t r = 0; r < A.local_rows(); ++r)
    for (auto k = row_ptr(r); k < row_ptr(r + 1); ++k) {
      const index_t c = col_idx(k);
      out.push_back({A.range().local_begin() + r,
                     c < n_owned ? A.domain().local_begin() + c
                                 : A.ghost_global_columns()[static_cast<std::size_t>(c - n_owned)],
                     values(k)});
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// Collective: every entry of A, by row, then column, on `root` (-1: on every
/// rank; other ranks get none). For output and tests, not for big matrices.
template <class T>
std::vector<Triplet<T>> gather_triplets(const CsrMatrix<T>& A, int root = -1) {
  const std::vector<Triplet<T>> mine = local_triplets(A);
  const Comm& comm = A.range().comm();
  const int p = comm.size();
  std::vector<int> counts(static_cast<std::size_t>(p), 0), received;
  for (int r = 0; r < p; ++r)
    if (root < 0 || r == root) counts[r] = static_cast<int>(mine.size());
  std::vector<index_t> indices;
  std::vector<T> values;
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < counts[r]; ++k) {
      indices.push_back(mine[k].row);
      indices.push_back(mine[k].col);
      values.push_back(mine[k].value);
    }
  values = all_to_all(comm, values, counts, received);
  for (int& c : counts) c *= 2;
  indices = all_to_all(comm, indices, counts, received);
  std::vector<Triplet<T>> all(values.size());
  for (std::size_t k = 0; k < all.size(); ++k)
    all[k] = {indices[2 * k], indices[2 * k + 1], values[k]};
  return all;  // rank blocks in rank order: already sorted
}

/// y = A x (collective) for callers whose x and y are known to have the
/// sizes of A's columns and rows (a solver's own vectors): no agreement on
/// them, so no allreduce. Imports the ghosts of x, then Kokkos Kernels' SpMV
/// on the local block; x and y must not alias.
template <class T>
void spmv_unchecked(const CsrMatrix<T>& A, const typename CsrMatrix<T>::const_vector_view& x,
                    const typename CsrMatrix<T>::vector_view& y) {
  const T one = T(1), zero = T(0);
  GhostImport<T>& plan = A.import_plan();
  plan.start(x, A.ghost_values());  // even without ghosts here: a neighbour may need x
  if (A.num_ghosts() == 0) {        // every column is owned: x is the column vector
    KokkosSparse::spmv(KokkosSparse::NoTranspose, one, A.local_matrix(), x, zero, y);
    plan.finish();
    return;
  }
  // Kokkos Kernels wants x as one array over all local columns: the owned part
  // is copied into the column buffer while the ghosts fly into its tail.
  const auto columns = A.column_buffer();
  copy_values("copy [spmv columns]",
              Kokkos::subview(columns, Kokkos::make_pair(std::size_t(0), x.extent(0))), x);
  plan.finish();
  KokkosSparse::spmv(KokkosSparse::NoTranspose, one, A.local_matrix(), columns, zero, y);
}

/// y = A x (collective): the sizes of x and y are checked (agreed on every
/// rank), then spmv_unchecked.
template <class T>
void spmv(const CsrMatrix<T>& A, const typename CsrMatrix<T>::const_vector_view& x,
          const typename CsrMatrix<T>::vector_view& y) {
  constexpr const char* api = "kfuse::spmv (y = A * x)";
  std::string error;
  if (static_cast<index_t>(x.extent(0)) != A.domain().local_size())
    error =
        error_message(api, ": x has ", x.extent(0), " entries on this rank, but the columns of '",
                      A.label(), "' are ", A.domain().describe());
  else if (static_cast<index_t>(y.extent(0)) != A.range().local_size())
    error = error_message(api, ": y has ", y.extent(0), " entries on this rank, but the rows of '",
                          A.label(), "' are ", A.range().describe());
  A.range().comm().agree_or_throw(error);
  spmv_unchecked(A, x, y);
}

}  // namespace detail
}  // namespace kfuse
