// Generators: every entry of poisson2d, poisson3d and convection_diffusion2d
// equals a host reference written from the formulas (at any rank count), the
// nnz counts are the closed forms, and bad arguments throw on every rank.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "sparse_support.hpp"

namespace {

using Entries = std::vector<kfuse::detail::Triplet<double>>;

/// The 2-D operator as a host reference: row i * ny + j, diagonal c, and the
/// four neighbours' coefficients (i-1, i+1, j-1, j+1), Dirichlet.
Entries reference_2d(std::int64_t nx, std::int64_t ny, double c, double im, double ip, double jm,
                     double jp) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  auto add = [&](std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t l, double v) {
    if (k < 0 || k >= nx || l < 0 || l >= ny) return;
    rows.push_back(i * ny + j), cols.push_back(k * ny + l), vals.push_back(v);
  };
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j) {
      add(i, j, i, j, c);
      add(i, j, i - 1, j, im);
      add(i, j, i + 1, j, ip);
      add(i, j, i, j - 1, jm);
      add(i, j, i, j + 1, jp);
    }
  return kfuse_test::canonical(rows, cols, vals);
}

}  // namespace

TEST_CASE("poisson2d: the 5-point Laplacian, row i * ny + j") {
  const kfuse::Comm comm;
  const std::int64_t nx = 7, ny = 4;
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);
  CHECK(A.label() == "poisson2d");
  CHECK(A.global_rows() == nx * ny);
  CHECK(A.global_cols() == nx * ny);
  CHECK(A.global_nnz() == 5 * nx * ny - 2 * nx - 2 * ny);
  kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A),
                                 reference_2d(nx, ny, 4, -1, -1, -1, -1));
}

TEST_CASE("poisson3d: the 7-point Laplacian, row (i * ny + j) * nz + k") {
  const kfuse::Comm comm;
  const std::int64_t nx = 4, ny = 3, nz = 5;
  const auto A = kfuse::poisson3d<double>(comm, nx, ny, nz);
  CHECK(A.global_nnz() == 7 * nx * ny * nz - 2 * (ny * nz + nx * nz + nx * ny));
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t k = 0; k < nz; ++k) {
        const std::int64_t row = (i * ny + j) * nz + k;
        auto add = [&](std::int64_t a, std::int64_t b, std::int64_t c, double v) {
          if (a < 0 || a >= nx || b < 0 || b >= ny || c < 0 || c >= nz) return;
          rows.push_back(row), cols.push_back((a * ny + b) * nz + c), vals.push_back(v);
        };
        add(i, j, k, 6.0);
        add(i - 1, j, k, -1.0), add(i + 1, j, k, -1.0);
        add(i, j - 1, k, -1.0), add(i, j + 1, k, -1.0);
        add(i, j, k - 1, -1.0), add(i, j, k + 1, -1.0);
      }
  kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A),
                                 kfuse_test::canonical(rows, cols, vals));
}

TEST_CASE("convection_diffusion2d: Laplacian plus first-order upwind convection") {
  const kfuse::Comm comm;
  const std::int64_t nx = 6, ny = 5;
  SUBCASE("bx > 0, by < 0") {
    const double bx = 0.75, by = -2.0;
    const auto A = kfuse::convection_diffusion2d<double>(comm, nx, ny, bx, by);
    // Upwind: the neighbour the flow comes from gets -|b|; (i-1) for bx > 0, (j+1) for by < 0.
    kfuse_test::check_same_entries(
        kfuse::detail::gather_triplets(A),
        reference_2d(nx, ny, 4 + 0.75 + 2.0, -1 - 0.75, -1, -1, -1 - 2.0));
    // Nonsymmetric, and rows away from the boundary sum to zero (constants are in the kernel).
    const auto all = kfuse::detail::gather_triplets(A);
    std::vector<double> row_sum(std::size_t(nx * ny), 0.0);
    for (const auto& e : all) row_sum[e.row] += e.value;
    CHECK(row_sum[std::size_t(2 * ny + 2)] == doctest::Approx(0.0));
    CHECK(A.global_nnz() == 5 * nx * ny - 2 * nx - 2 * ny);
  }
  SUBCASE("no convection is poisson2d") {
    const auto A = kfuse::convection_diffusion2d<double>(comm, nx, ny, 0.0, 0.0);
    kfuse_test::check_same_entries(
        kfuse::detail::gather_triplets(A),
        kfuse::detail::gather_triplets(kfuse::poisson2d<double>(comm, nx, ny)));
  }
}

TEST_CASE("generators: each rank builds its own rows; empty and degenerate grids") {
  const kfuse::Comm comm;
  const auto line = kfuse::poisson2d<double>(comm, 1, 5);  // a 1-D Laplacian
  CHECK(line.global_nnz() == 13);
  const auto empty = kfuse::poisson3d<double>(comm, 0, 4, 4);
  CHECK(empty.global_rows() == 0);
  CHECK(empty.global_nnz() == 0);
  const auto A = kfuse::poisson2d<double>(comm, 8, 8);
  CHECK(A.range().local_begin() == kfuse::RowMap(comm, 64).local_begin());
  CHECK(A.local_rows() == kfuse::RowMap(comm, 64).local_size());
}

TEST_CASE("generators: bad arguments throw on every rank") {
  const kfuse::Comm comm;
  CHECK_THROWS_WITH_AS(
      kfuse::poisson2d<double>(comm, -3, 4),
      doctest::Contains("kfuse::poisson2d: grid extent -3 (dimension 0) is negative"),
      kfuse::Error);
  CHECK_THROWS_WITH_AS(kfuse::poisson3d<double>(comm, 1 << 30, 1 << 30, 1 << 30),
                       doctest::Contains("kfuse::poisson3d: the grid has more than 2^63 points"),
                       kfuse::Error);
  if (comm.size() > 1) {
    CHECK_THROWS_WITH_AS(kfuse::poisson2d<double>(comm, 4, 4 + comm.rank()),
                         doctest::Contains("kfuse::poisson2d: ranks passed different grid extents"),
                         kfuse::Error);
    CHECK_THROWS_WITH_AS(
        kfuse::convection_diffusion2d<double>(comm, 4, 4, 1.0 + comm.rank(), 0.0),
        doctest::Contains("kfuse::convection_diffusion2d: ranks passed different convection bx"),
        kfuse::Error);
  }
}
