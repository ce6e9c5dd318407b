// Matrix Market I/O for CsrMatrix (collective). Rank 0 reads and parses the
// file (sparse/matrix_market_parser.hpp) and hands every entry to
// CsrMatrix::from_triplets, which routes them to their owners: simple, and
// fine for matrices that fit one rank's memory. Writing gathers to rank 0.
// Errors (missing file, malformed content) are thrown on every rank.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/files.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/sparse/csr_matrix.hpp"
#include "kfuse/sparse/matrix_market_parser.hpp"

namespace kfuse::detail {

/// Collective: every rank passed the same path (compared by FNV-1a hash).
inline void check_same_path(const Comm& comm, const std::string& path, const char* api) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : path) hash = (hash ^ c) * 1099511628211ull;
  std::vector<std::int64_t> lowest{static_cast<std::int64_t>(hash >> 1)};
  std::string error;
  if (comm.reduce_extremes(lowest) != lowest)  // the message names this rank's path: agreed
    error = error_message(api, ": ranks passed different paths ('", path,
                          "' here); every rank must pass the same");
  comm.agree_or_throw(error);
}

}  // namespace kfuse::detail

namespace kfuse {

/// Collective: reads a Matrix Market file (coordinate; real, integer or
/// pattern; general, symmetric or skew-symmetric, expanded). Rows and columns
/// are split as from_triplets splits them. The label defaults to the path.
template <class T>
CsrMatrix<T> read_matrix_market(const Comm& comm, const std::string& path, std::string label = {}) {
  constexpr const char* api = "kfuse::read_matrix_market";
  detail::check_same_path(comm, path, api);
  detail::MatrixMarketData<T> data;
  std::string error;
  if (comm.rank() == 0) {
    error = detail::not_regular_file(path, false);  // a FIFO would block the open
    std::ifstream in;
    if (error.empty()) in.open(path);
    if (!error.empty()) {
      error = detail::error_message(api, ": ", error);
    } else if (!in) {
      error = detail::error_message(api, ": cannot open '", path, "': ", std::strerror(errno));
    } else {
      try {
        data = detail::parse_matrix_market<T>(in, path);
      } catch (const Error& e) {
        error = e.what();
      } catch (const std::bad_alloc&) {
        error = detail::error_message(api, ": ", path, ": out of memory");
      }
    }
  }
  comm.agree_or_throw(error);
  index_t size[2] = {data.rows, data.cols};  // known on rank 0 only
  comm.allreduce(size, 2, ReduceOp::max);
  return CsrMatrix<T>::from_triplets(comm, size[0], size[1], data.row, data.col, data.value,
                                     label.empty() ? path : std::move(label));
}

/// Collective: writes A as a general coordinate file (rank 0 writes; values
/// with enough digits to read back exactly).
template <class T>
void write_matrix_market(const std::string& path, const CsrMatrix<T>& A) {
  constexpr const char* api = "kfuse::write_matrix_market";
  const Comm& comm = A.range().comm();
  detail::check_same_path(comm, path, api);
  const auto entries = detail::gather_triplets(A, 0);
  std::string error;
  if (comm.rank() == 0) {  // a FIFO would block the write
    if (const std::string kind = detail::not_regular_file(path, false); !kind.empty())
      error = detail::error_message(api, ": ", kind);
  }
  if (comm.rank() == 0 && error.empty()) {
    std::ofstream out(path);
    out << "%%MatrixMarket matrix coordinate " << (std::is_integral_v<T> ? "integer" : "real")
        << " general\n% written by kfuse: " << A.label() << '\n'
        << A.global_rows() << ' ' << A.global_cols() << ' ' << entries.size() << '\n'
        << std::setprecision(std::numeric_limits<T>::max_digits10);
    for (const auto& e : entries) out << e.row + 1 << ' ' << e.col + 1 << ' ' << e.value << '\n';
    out.close();
    if (!out) error = detail::error_message(api, ": cannot write '", path, "'");
  }
  comm.agree_or_throw(error);
}

}  // namespace kfuse
