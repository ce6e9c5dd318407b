// Model matrices on structured grids, for tests, examples and benchmarks:
// the 2-D and 3-D Dirichlet Laplacians (5- and 7-point, SPD) and a
// nonsymmetric 2-D convection-diffusion operator. Each rank generates only its
// own rows. Grid point (i, j) is row i * ny + j, (i, j, k) is row
// (i * ny + j) * nz + k: row-major, like Grid and Array. Unit grid spacing (no
// 1/h^2 factor); neighbours outside the grid are dropped (Dirichlet).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/dist/row_map.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::detail {

/// Collective: the rows of a D-dimensional stencil operator. `center`, and per
/// dimension the coefficients of the low (index - 1) and high (index + 1)
/// neighbours. `api` names the caller in errors.
template <class T, std::size_t D>
CsrMatrix<T> stencil_matrix(const Comm& comm, const char* api, const std::array<index_t, D>& n,
                            T center, const std::array<T, D>& low, const std::array<T, D>& high,
                            std::string label) {
  for (std::size_t d = 0; d < D; ++d)
    comm.check_same(n[d], api, "grid extents (dimension " + std::to_string(d) + ")");
  std::string error;
  index_t points = 1;
  for (std::size_t d = 0; d < D && error.empty(); ++d) {
    if (n[d] < 0)
      error = error_message(api, ": grid extent ", n[d], " (dimension ", d, ") is negative");
    else if (n[d] > 0 && points > std::numeric_limits<index_t>::max() / n[d])
      error = error_message(api, ": the grid has more than 2^63 points");
    else
      points *= n[d];
  }
  comm.agree_or_throw(error);

  RowMap rows(comm, points);
  std::array<index_t, D> stride{};
  stride[D - 1] = 1;
  for (std::size_t d = D - 1; d > 0; --d) stride[d - 1] = stride[d] * n[d];
  const std::size_t most = static_cast<std::size_t>(rows.local_size()) * (2 * D + 1);
  check_assembly_memory<T>(comm, label, rows.local_size(), rows.local_size(), most);
  std::vector<Triplet<T>> entries;
  entries.reserve(most);
  // Each row's columns ascending (stride[0] > stride[1] > ...), so that assembly finds the
  // entries sorted and skips its sort: seconds a matrix at 10^7 rows.
  for (index_t row = rows.local_begin(); row < rows.local_begin() + rows.local_size(); ++row) {
    std::array<index_t, D> at{};  // the row's grid point
    for (std::size_t d = 0; d < D; ++d) at[d] = row / stride[d] % n[d];
    for (std::size_t d = 0; d < D; ++d)
      if (at[d] > 0) entries.push_back({row, row - stride[d], low[d]});
    entries.push_back({row, row, center});
    for (std::size_t d = D; d-- > 0;)
      if (at[d] + 1 < n[d]) entries.push_back({row, row + stride[d], high[d]});
  }
  return assemble_csr(rows, rows, std::move(entries), std::move(label));
}

/// Collective: every rank passed the same floating-point argument (bitwise).
inline void check_same_real(const Comm& comm, double value, const char* api, const char* what) {
  std::int64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  comm.check_same(bits, api, what);
}

}  // namespace kfuse::detail

namespace kfuse {

/// Collective. The 5-point Laplacian on an nx x ny grid: 4 on the diagonal,
/// -1 for each neighbour (i +- 1, j), (i, j +- 1). SPD; row i * ny + j.
template <class T>
CsrMatrix<T> poisson2d(const Comm& comm, index_t nx, index_t ny, std::string label = "poisson2d") {
  return detail::stencil_matrix<T, 2>(comm, "kfuse::poisson2d", {nx, ny}, T(4), {T(-1), T(-1)},
                                      {T(-1), T(-1)}, std::move(label));
}

/// Collective. The 7-point Laplacian on an nx x ny x nz grid: 6 on the
/// diagonal, -1 per neighbour. SPD; row (i * ny + j) * nz + k.
template <class T>
CsrMatrix<T> poisson3d(const Comm& comm, index_t nx, index_t ny, index_t nz,
                       std::string label = "poisson3d") {
  return detail::stencil_matrix<T, 3>(comm, "kfuse::poisson3d", {nx, ny, nz}, T(6),
                                      {T(-1), T(-1), T(-1)}, {T(-1), T(-1), T(-1)},
                                      std::move(label));
}

/// Collective. -laplace(u) + b . grad(u) on an nx x ny grid (row i * ny + j),
/// the 5-point Laplacian plus first-order upwind convection, with bx along i
/// and by along j given per cell (the cell Peclet numbers |b| h / diffusion).
/// For bx > 0 row (i, j) gains bx * (u(i,j) - u(i-1,j)), for bx < 0
/// |bx| * (u(i,j) - u(i+1,j)); likewise by. Nonsymmetric unless bx = by = 0;
/// upwinding keeps it an M-matrix (diagonally dominant) for any b.
template <class T>
CsrMatrix<T> convection_diffusion2d(const Comm& comm, index_t nx, index_t ny, T bx, T by,
                                    std::string label = "convection_diffusion2d") {
  constexpr const char* api = "kfuse::convection_diffusion2d";
  detail::check_same_real(comm, static_cast<double>(bx), api, "convection bx (bit patterns)");
  detail::check_same_real(comm, static_cast<double>(by), api, "convection by (bit patterns)");
  const T zero = T(0);
  const T west = T(-1) - (bx > zero ? bx : zero), east = T(-1) - (bx < zero ? -bx : zero);
  const T south = T(-1) - (by > zero ? by : zero), north = T(-1) - (by < zero ? -by : zero);
  const T center = T(4) + (bx < zero ? -bx : bx) + (by < zero ? -by : by);
  return detail::stencil_matrix<T, 2>(comm, api, {nx, ny}, center, {west, south}, {east, north},
                                      std::move(label));
}

}  // namespace kfuse
