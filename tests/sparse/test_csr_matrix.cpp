// CsrMatrix: assembly from triplets passed by any rank (duplicates summed),
// the local block and its ghosts, the ghost import, and the eager SpMV, which
// must equal a host loop over the gathered matrix and Kokkos Kernels' SpMV of
// the same matrix on one rank, at any rank count.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "sparse_support.hpp"

using kfuse_test::allgather;
using kfuse_test::to_device;
using kfuse_test::to_host;

namespace {

/// A deterministic pseudo-random sequence (the same on every rank).
struct Lcg {
  std::uint64_t state;
  std::uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  std::int64_t below(std::int64_t n) {
    return static_cast<std::int64_t>(next() % std::uint64_t(n));
  }
};

struct Entries {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  void add(std::int64_t r, std::int64_t c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    vals.push_back(v);
  }
};

/// A random rows x cols matrix (same on every rank), some rows empty.
Entries random_entries(std::int64_t rows, std::int64_t cols, int count, std::uint64_t seed) {
  Lcg rng{seed};
  Entries e;
  for (int k = 0; k < count; ++k) {
    const std::int64_t r = rng.below(rows);
    if (r % 5 == 3) continue;  // leave some rows empty
    e.add(r, rng.below(cols), double(rng.below(1000)) / 64.0 - 7.0);
  }
  return e;
}

/// y = A x through kfuse::detail::spmv, gathered; x is given globally.
template <class T>
std::vector<T> distributed_product(const kfuse::CsrMatrix<T>& A, const std::vector<T>& x) {
  const auto x_owned = to_device(kfuse_test::owned_part(A.domain(), x));
  kfuse_test::DeviceVector<T> y("y", static_cast<std::size_t>(A.local_rows()));
  kfuse::detail::spmv(A, x_owned, y);
  return allgather(A.range().comm(), to_host(y));
}

/// y = A x by Kokkos Kernels on the one-rank copy of A's entries.
template <class T>
std::vector<T> one_rank_product(const kfuse::CsrMatrix<T>& A, const std::vector<T>& x) {
  const auto all = kfuse::detail::gather_triplets(A);
  std::vector<std::int64_t> rows, cols;
  std::vector<T> vals;
  for (const auto& e : all) rows.push_back(e.row), cols.push_back(e.col), vals.push_back(e.value);
  const auto B = kfuse::CsrMatrix<T>::from_triplets(kfuse_test::self_comm(), A.global_rows(),
                                                    A.global_cols(), rows, cols, vals, "B");
  CHECK(B.num_ghosts() == 0);
  CHECK(B.local_matrix().numCols() == A.global_cols());
  const auto xd = to_device(x);
  kfuse_test::DeviceVector<T> y("y", static_cast<std::size_t>(A.global_rows()));
  KokkosSparse::spmv(KokkosSparse::NoTranspose, T(1), B.local_matrix(), xd, T(0), y);
  return to_host(y);
}

template <class T>
void check_products(const kfuse::CsrMatrix<T>& A, double rtol) {
  std::vector<T> x(static_cast<std::size_t>(A.global_cols()));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = T(std::sin(0.37 * double(i)) + 0.1 * double(i % 7));
  const auto got = distributed_product(A, x);
  kfuse_test::check_product(got, kfuse::detail::gather_triplets(A), x, rtol);
  kfuse_test::check_product(one_rank_product(A, x), kfuse::detail::gather_triplets(A), x, rtol);
}

/// Structure checks that hold for every matrix: columns sorted and in range,
/// interior/boundary rows a partition, ghosts ascending and off-rank.
template <class T>
void check_local_block(const kfuse::CsrMatrix<T>& A) {
  const auto row_ptr = to_host(A.row_ptr());
  const auto col_idx = to_host(A.col_idx());
  const auto n_owned = A.domain().local_size();
  REQUIRE(row_ptr.size() == std::size_t(A.local_rows() + 1));
  CHECK(row_ptr.back() == A.local_nnz());
  std::set<int> interior, boundary;
  for (int r : to_host(A.interior_rows())) interior.insert(r);
  for (int r : to_host(A.boundary_rows())) boundary.insert(r);
  CHECK(interior.size() + boundary.size() == std::size_t(A.local_rows()));
  // The range form exactly when the interior rows are consecutive.
  const bool consecutive = !interior.empty() && *interior.rbegin() - *interior.begin() + 1 ==
                                                    static_cast<int>(interior.size());
  REQUIRE(A.interior_range().has_value() == consecutive);
  if (consecutive) {
    CHECK(A.interior_range()->first == *interior.begin());
    CHECK(A.interior_range()->second == *interior.rbegin() + 1);
  }
  for (int r = 0; r < A.local_rows(); ++r) {
    bool ghost = false;
    for (auto k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      CHECK(col_idx[k] >= 0);
      CHECK(col_idx[k] < n_owned + A.num_ghosts());
      if (k > row_ptr[r]) CHECK(col_idx[k] > col_idx[k - 1]);  // sorted, no duplicates
      ghost = ghost || col_idx[k] >= n_owned;
    }
    CHECK((ghost ? boundary : interior).count(r) == 1);
  }
  const auto& ghosts = A.ghost_global_columns();
  for (std::size_t g = 0; g < ghosts.size(); ++g) {
    CHECK(!A.domain().owns(ghosts[g]));
    if (g > 0) CHECK(ghosts[g] > ghosts[g - 1]);
  }
  CHECK(A.ghost_values().extent(0) == ghosts.size());
  CHECK(A.local_matrix().numRows() == A.local_rows());
  CHECK(A.local_matrix().numCols() == n_owned + A.num_ghosts());
}

}  // namespace

TEST_CASE("from_triplets: entries passed by random ranks, duplicates split, equal poisson2d") {
  const kfuse::Comm comm;
  const std::int64_t nx = 7, ny = 9;
  const auto P = kfuse::poisson2d<double>(comm, nx, ny);
  const auto all = kfuse::detail::gather_triplets(P);
  // Every rank walks the same global list; each entry is passed by one rank
  // chosen at random, or split in halves (exact in binary) over two ranks.
  Lcg rng{42};
  Entries mine;
  for (const auto& e : all) {
    const int first = int(rng.below(comm.size())), second = (first + 1) % comm.size();
    if (rng.below(3) == 0) {
      if (comm.rank() == first) mine.add(e.row, e.col, e.value / 2);
      if (comm.rank() == second) mine.add(e.row, e.col, e.value / 2);
    } else if (comm.rank() == first) {
      mine.add(e.row, e.col, e.value);
    }
  }
  const auto A = kfuse::CsrMatrix<double>::from_triplets(comm, nx * ny, nx * ny, mine.rows,
                                                         mine.cols, mine.vals, "scattered");
  CHECK(A.label() == "scattered");
  CHECK(A.global_rows() == nx * ny);
  CHECK(A.global_cols() == nx * ny);
  CHECK(A.global_nnz() == P.global_nnz());
  CHECK(A.local_nnz() == P.local_nnz());
  CHECK(A.range() == P.range());
  CHECK(A.domain() == P.domain());
  CHECK(to_host(A.row_ptr()) == to_host(P.row_ptr()));
  CHECK(to_host(A.col_idx()) == to_host(P.col_idx()));
  CHECK(to_host(A.values()) == to_host(P.values()));
  CHECK(A.ghost_global_columns() == P.ghost_global_columns());
  kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A), all);
}

TEST_CASE("ghosts of a 5-point matrix and the import plan") {
  const kfuse::Comm comm;
  const std::int64_t nx = 6, ny = 5;  // rows split in blocks; neighbours are +-ny rows away
  const auto A = kfuse::poisson2d<double>(comm, nx, ny);
  check_local_block(A);

  // Expected ghosts: columns of my rows that another rank owns.
  std::set<std::int64_t> want;
  for (const auto& e : kfuse::detail::local_triplets(A))
    if (!A.domain().owns(e.col)) want.insert(e.col);
  CHECK(A.ghost_global_columns() == std::vector<std::int64_t>(want.begin(), want.end()));
  if (comm.size() == 1) CHECK(A.num_ghosts() == 0);
  if (comm.size() > 1) CHECK(A.num_ghosts() > 0);

  // The plan: one message per owner, blocks in rank order covering the ghosts.
  auto& plan = A.import_plan();
  CHECK(plan.num_ghosts() == A.num_ghosts());
  int offset = 0;
  for (const auto& m : plan.receives()) {
    CHECK(m.offset == offset);
    CHECK(m.rank != comm.rank());
    for (int g = m.offset; g < m.offset + m.count; ++g)
      CHECK(A.domain().owner(A.ghost_global_columns()[g]) == m.rank);
    offset += m.count;
  }
  CHECK(offset == A.num_ghosts());
  // Whatever is received somewhere was sent from somewhere.
  CHECK(comm.allreduce(std::int64_t(plan.num_sends()), kfuse::ReduceOp::sum) ==
        comm.allreduce(std::int64_t(plan.num_ghosts()), kfuse::ReduceOp::sum));

  // x(i) = 10 i + 1: every ghost receives the value of its global column.
  std::vector<double> x(std::size_t(nx * ny));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 10.0 * double(i) + 1.0;
  const auto x_owned = to_device(kfuse_test::owned_part(A.domain(), x));
  kfuse::KernelCounter counter;
  plan.start(x_owned, A.ghost_values());
  CHECK(plan.in_flight());
  plan.finish();
  CHECK(counter.counts().compute == 0);  // pack kernels count as exchange
  CHECK(counter.counts().exchange == (plan.num_sends() > 0 ? 1 : 0));
  const auto ghosts = to_host(A.ghost_values());
  for (std::size_t g = 0; g < ghosts.size(); ++g)
    CHECK(ghosts[g] == 10.0 * double(A.ghost_global_columns()[g]) + 1.0);
  // The plan reuses its buffers: a second import with other values.
  for (double& v : x) v = -v;
  plan.run(to_device(kfuse_test::owned_part(A.domain(), x)), A.ghost_values());
  const auto again = to_host(A.ghost_values());
  for (std::size_t g = 0; g < again.size(); ++g)
    CHECK(again[g] == -(10.0 * double(A.ghost_global_columns()[g]) + 1.0));
  CHECK_THROWS_WITH_AS(plan.finish(), "kfuse::GhostImport::finish: no import was started",
                       kfuse::Error);
}

TEST_CASE("spmv equals the host reference and Kokkos Kernels on one rank") {
  const kfuse::Comm comm;
  SUBCASE("poisson2d") { check_products(kfuse::poisson2d<double>(comm, 11, 8), 1e-14); }
  SUBCASE("poisson3d") { check_products(kfuse::poisson3d<double>(comm, 5, 4, 6), 1e-14); }
  SUBCASE("convection-diffusion") {
    check_products(kfuse::convection_diffusion2d<double>(comm, 9, 7, 0.8, -1.5), 1e-14);
  }
  SUBCASE("random rectangular, more columns than rows, empty rows") {
    const auto e = random_entries(23, 41, 200, 7);
    const auto A = kfuse::CsrMatrix<double>::from_triplets(comm, 23, 41, e.rows, e.cols, e.vals);
    check_local_block(A);
    check_products(A, 1e-14);
    // Every rank passed the same entries: each counts p times.
    kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A), [&] {
      auto c = kfuse_test::canonical(e.rows, e.cols, e.vals);
      for (auto& t : c) t.value *= comm.size();
      return c;
    }());
  }
  SUBCASE("random rectangular, more rows than columns, entries on rank 0 only") {
    Entries e = random_entries(37, 13, 300, 99);
    if (comm.rank() != 0) e = Entries{};
    const auto A = kfuse::CsrMatrix<double>::from_triplets(comm, 37, 13, e.rows, e.cols, e.vals);
    check_local_block(A);
    check_products(A, 1e-14);
  }
  SUBCASE("lower bidiagonal: a rank without ghosts still sends") {
    Entries e;
    for (std::int64_t i = 0; i < 17; ++i) {
      e.add(i, i, 2.0);
      if (i > 0) e.add(i, i - 1, -1.0);  // rank 0's columns are all its own
    }
    if (comm.rank() != 0) e = Entries{};
    const auto A = kfuse::CsrMatrix<double>::from_triplets(comm, 17, 17, e.rows, e.cols, e.vals);
    if (comm.rank() == 0) CHECK(A.num_ghosts() == 0);
    if (comm.rank() == 0 && comm.size() > 1) CHECK(A.import_plan().num_sends() == 1);
    check_products(A, 1e-14);
  }
  SUBCASE("fewer rows than ranks") {
    const auto A = kfuse::CsrMatrix<double>::from_triplets(comm, 3, 3, {0, 1, 2, 0}, {2, 1, 0, 0},
                                                           {1.0, 2.0, 3.0, 4.0});
    check_local_block(A);
    check_products(A, 1e-14);
  }
  SUBCASE("float") {
    check_products(kfuse::convection_diffusion2d<float>(comm, 6, 5, 1.f, 0.5f), 1e-6);
  }
}

TEST_CASE("a copy shares storage: values set through it are what spmv uses") {
  const kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 4, 6);
  kfuse::CsrMatrix<double> B = A;
  CHECK(B.storage_id() == A.storage_id());
  Kokkos::deep_copy(B.values(), 2.0);
  std::vector<double> entries_per_row(24, 0.0);
  for (const auto& e : kfuse::detail::gather_triplets(A)) entries_per_row[e.row] += 1.0;
  const auto y = distributed_product(A, std::vector<double>(24, 1.0));
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == 2.0 * entries_per_row[i]);
}

TEST_CASE("from_triplets errors are thrown on every rank") {
  const kfuse::Comm comm;
  const int last = comm.size() - 1;
  SUBCASE("different sizes on different ranks") {
    if (comm.size() > 1)
      CHECK_THROWS_WITH_AS(
          kfuse::CsrMatrix<double>::from_triplets(comm, 10 + comm.rank(), 10, {}, {}, {}),
          doctest::Contains("kfuse::CsrMatrix::from_triplets: ranks passed different row counts"),
          kfuse::Error);
  }
  SUBCASE("lengths differ (on the last rank)") {
    std::vector<double> vals{1.0};
    if (comm.rank() == last) vals.push_back(2.0);
    CHECK_THROWS_WITH_AS(
        kfuse::CsrMatrix<double>::from_triplets(comm, 4, 4, {0}, {0}, vals),
        doctest::Contains("kfuse::CsrMatrix::from_triplets: rows, cols and vals have different "
                          "lengths (1, 1, 2)"),
        kfuse::Error);
  }
  SUBCASE("index out of range (on the last rank)") {
    const std::int64_t col = comm.rank() == last ? 4 : 3;
    CHECK_THROWS_WITH_AS(
        kfuse::CsrMatrix<double>::from_triplets(comm, 4, 4, {1, 2}, {0, col}, {1.0, 1.0}),
        doctest::Contains("entry 1 is (2, 4), outside the 4 x 4 matrix"), kfuse::Error);
    CHECK_THROWS_AS(kfuse::CsrMatrix<double>::from_triplets(comm, 4, 4, {-1}, {0}, {1.0}),
                    kfuse::Error);
  }
  SUBCASE("local columns beyond 32 bits") {
    const std::int64_t n_cols = 10'000'000'000;  // > 2^31 columns per rank up to 4 ranks
    CHECK_THROWS_WITH_AS(kfuse::CsrMatrix<double>::from_triplets(comm, 4, n_cols, {0}, {0}, {1.0}),
                         doctest::Contains("local indices are 32-bit"), kfuse::Error);
  }
}

TEST_CASE("spmv checks the extents of x and y on every rank") {
  const kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 5, 5);
  const std::size_t n = std::size_t(A.domain().local_size());
  kfuse_test::DeviceVector<double> x("x", n + (comm.rank() == 0 ? 1 : 0)), y("y", n);
  // Rank 0's message, on every rank.
  const std::string want = "kfuse::spmv (y = A * x): x has " +
                           std::to_string(A.domain().size_of(0) + 1) +
                           " entries on this rank, but the columns of 'poisson2d' are 25 rows over";
  CHECK_THROWS_WITH_AS(kfuse::detail::spmv(A, x, y), doctest::Contains(want.c_str()), kfuse::Error);
  kfuse_test::DeviceVector<double> x_ok("x", n), y_bad("y", n + 2);
  CHECK_THROWS_WITH_AS(kfuse::detail::spmv(A, x_ok, y_bad), doctest::Contains("y has"),
                       kfuse::Error);
}
