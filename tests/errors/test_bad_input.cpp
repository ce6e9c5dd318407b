// Bad input found by probing kfuse as a careless user and as someone feeding it
// bad files would: each case ends in a kfuse::Error on every rank, within
// seconds, naming the input and the fix, with the target arrays and files as
// they were. Run at 1, 2 and 3 ranks; where one rank can be the only one
// wrong, the last rank is (at one rank, that rank is every rank).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <kfuse/kfuse.hpp>
#include <kfuse/solvers/extern.hpp>  // the solvers' bodies: tests/solvers/solver_instances.cpp

#include "../io/io_test_support.hpp"
#include "error_support.hpp"

using kfuse_test::check_error_everywhere;
using kfuse_test::odd_one_out;

namespace {

KOKKOS_INLINE_FUNCTION double value_of(std::int64_t i, std::int64_t j) {
  return 1.0 / double(3 + i) + 0.1 / double(7 + j);
}

/// Rank 0 writes `text` to `path` while the others wait.
void write_file(const kfuse::Comm& comm, const std::string& path, const std::string& text) {
  kfuse_test::on_root(comm, [&] { kfuse_test::write_bytes(path, text); });
}

}  // namespace

// ---- 1. rebinding with an argument of another grid -------------------------

TEST_CASE("one rank rebinds a program whose first argument lives on another grid") {
  const kfuse::Comm comm;
  kfuse::Grid<2> g1(comm, {8, 8}), g2(comm, {8, 9});
  kfuse::Array<double, 2> u(g1, "u"), v(g1, "v"), x(g2, "x");
  kfuse::Scalar<double> s("s");
  u.fill(1.0);
  auto p = kfuse::fuse(u, v, s, [](auto u, auto v, auto s) {
    return kfuse::seq(kfuse::assign(v, kfuse::shift<1, 0>(u)), kfuse::reduce(s, kfuse::sum(v)));
  });
  check_error_everywhere(
      [&] {
        if (odd_one_out()) p(x, v, s);
        else p(u, v, s);
      },
      "are used in one kernel but live on different grids");
  CHECK(v.gather() == std::vector<double>(64, 0.0));  // nothing ran
  p();  // the binding (u, v, s) stayed, on every rank
  CHECK(s.value() == 64.0);
}

TEST_CASE("one rank assigns eagerly to an array of another grid") {
  const kfuse::Comm comm;
  kfuse::Grid<2> g1(comm, {8, 8}), g2(comm, {8, 9});
  kfuse::Array<double, 2> u(g1, "u"), v(g1, "v"), x(g2, "x");
  u.fill(1.0);
  u.mark_halo_stale();
  check_error_everywhere([&] { (odd_one_out() ? x : v) = kfuse::shift<1, 0>(u) + 1.0; },
                         "kfuse::Array::operator=: 'u' lives on grid 8x8");
  CHECK(v.gather() == std::vector<double>(64, 0.0));
  CHECK(x.gather() == std::vector<double>(72, 0.0));
}

TEST_CASE("one rank writes output whose first array lives on another grid") {
  const kfuse::Comm comm;
  kfuse::Grid<2> g1(comm, {8, 8}), g2(comm, {8, 9});
  kfuse::Array<double, 2> u(g1, "u"), v(g1, "v"), x(g2, "v");
  u.fill(2.0);
  check_error_everywhere([&] { kfuse::write_vtk("vtk/first", odd_one_out() ? x : v, u); },
                         comm.size() > 1 ? "but rank 0 passed 8x8 (halo 1, periodic nn); every "
                                           "rank must pass the same grid"
                                         : "kfuse::write_vtk: array 'u' lives on grid 8x8");
  if (comm.size() > 1) {  // one rank disagrees with the others
    check_error_everywhere([&] { kfuse::save_checkpoint("first.ckpt", odd_one_out() ? x : v, u); },
                           "but rank 0 passed 'v' float64 8x8");
    CHECK_FALSE(std::filesystem::exists("first.ckpt"));
  }
}

// ---- 2. GridOptions::ranks that MPI_Dims_create cannot satisfy -------------

TEST_CASE("GridOptions::ranks that the communicator cannot satisfy") {
  const kfuse::Comm comm;
  kfuse::GridOptions<2> all_fixed;
  all_fixed.ranks = {comm.size() == 1 ? 2 : 1, 1};  // {1, 1} at 2 and 3 ranks
  check_error_everywhere([&] { kfuse::Grid<2> g(comm, {8, 8}, all_fixed); },
                         "kfuse::Grid: GridOptions::ranks ");
  kfuse::GridOptions<2> negative;
  negative.ranks = {-1, 0};
  check_error_everywhere([&] { kfuse::Grid<2> g(comm, {8, 8}, negative); },
                         "kfuse::Grid: GridOptions::ranks[0] is -1");
  kfuse::GridOptions<2> fits;  // the same count as the communicator: fine
  fits.ranks = {comm.size(), 1};
  kfuse::Grid<2> g(comm, {8, 8}, fits);
  CHECK(g.ranks(0) == comm.size());
}

// ---- 3. extents whose product overflows, arrays that do not fit ------------

TEST_CASE("extents whose product overflows, and arrays larger than memory") {
  const kfuse::Comm comm;
  check_error_everywhere(
      [&] { kfuse::Grid<2> g(comm, {std::int64_t(1) << 32, std::int64_t(1) << 32},
                             kfuse::GridOptions<2>{0}); },
      "kfuse::Grid: the extents 4294967296x4294967296 have more than");
  // 2^62 cells fit a 64-bit count, but not in bytes: an error, not a wrapped size.
  kfuse::Grid<2> huge(comm, {std::int64_t(1) << 31, std::int64_t(1) << 31},
                      kfuse::GridOptions<2>{0});
  check_error_everywhere([&] { kfuse::Array<double, 2> a(huge, "a"); },
                         "kfuse::Array 'a': ");
  // 2^40 cells: a size that computes, memory that no rank has.
  kfuse::Grid<2> large(comm, {std::int64_t(1) << 20, std::int64_t(1) << 20});
  check_error_everywhere([&] { kfuse::Array<double, 2> a(large, "a"); },
                         "kfuse::Array 'a': cannot allocate");
  check_error_everywhere(
      [&] { kfuse::Vector<double> w(kfuse::RowMap(comm, std::int64_t(1) << 42), "w"); },
      "kfuse::Vector 'w': cannot allocate");
}

// ---- 4. declared sizes far beyond the entries ------------------------------

// 2e9 rows and columns (the probe's sizes) need 50 GB to assemble; on a
// machine with more memory than that, sizes that exceed it. Either the memory
// check fails or (a rank's block past 2^31 rows) the 32-bit one: before any
// allocation, with the same start of message.
TEST_CASE("a matrix declared far larger than memory fails before allocating") {
  const kfuse::Comm comm;
  // The same n on every rank (the ranks read their free memory at different moments, and a
  // difference is another error: "ranks passed different row counts").
  const std::int64_t n = comm.allreduce(
      std::max<std::int64_t>(2000000000, std::int64_t(kfuse::detail::available_host_bytes() / 8)),
      kfuse::ReduceOp::max);
  check_error_everywhere(
      [&] { kfuse::CsrMatrix<double>::from_triplets(comm, n, n, {}, {}, {}, "big"); },
      "kfuse::CsrMatrix 'big': ");
  write_file(comm, "huge.mtx", "%%MatrixMarket matrix coordinate real general\n" +
                                   std::to_string(n) + " " + std::to_string(n) + " 0\n");
  check_error_everywhere([&] { kfuse::read_matrix_market<double>(comm, "huge.mtx"); },
                         "kfuse::CsrMatrix 'huge.mtx': ");
  check_error_everywhere([&] { kfuse::poisson2d<double>(comm, n / 4, 4); },
                         "kfuse::CsrMatrix 'poisson2d': ");
}

// ---- 5. damaged checkpoint data --------------------------------------------

TEST_CASE("a checkpoint whose data were damaged does not load") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {40, 30});
  kfuse::Array<double, 2> u(grid, "u"), target(grid, "u");
  kfuse::Array<float, 2> f(grid, "f"), f_target(grid, "f");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return value_of(i, j); });
  f.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return float(value_of(j, i)); });
  kfuse::save_checkpoint("good.ckpt", u, f);
  target.fill(-1.0);
  f_target.fill(-1.0f);
  const auto before = target.gather();
  const auto f_before = f_target.gather();
  const std::string good = comm.rank() == 0 ? kfuse_test::read_bytes("good.ckpt") : "";
  std::uint64_t header = 0;
  if (comm.rank() == 0) std::memcpy(&header, good.data() + 16, 8);

  // Rank 0 writes a copy of good.ckpt with one change at byte `at` of the data.
  auto damaged = [&](const std::string& name, std::uint64_t at, auto change) {
    kfuse_test::on_root(comm, [&] {
      std::string bytes = good;
      change(bytes, header + at);
      kfuse_test::write_bytes(name, bytes);
    });
    return name;
  };
  auto flip = [](int bit) {
    return [bit](std::string& s, std::uint64_t at) { s[at + bit / 8] ^= char(1 << (bit % 8)); };
  };
  const std::uint64_t value = 8 * 437;  // the 438th double of u
  const std::string cases[] = {
      damaged("mantissa.ckpt", value, flip(0)),   // the lowest mantissa bit
      damaged("exponent.ckpt", value, flip(55)),  // an exponent bit
      damaged("sign.ckpt", value, flip(63)),
      damaged("float.ckpt", 8 * 1200 + 4 * 17, flip(3)),  // in f, after u's 1200 doubles
      damaged("zeros.ckpt", 4096, [](std::string& s, std::uint64_t at) {
        std::memset(&s[at], 0, 4096);  // a page of zeros inside u
      }),
  };
  for (const std::string& path : cases) {
    CAPTURE(path);
    check_error_everywhere([&] { kfuse::load_checkpoint(path, target, f_target); },
                           "kfuse::load_checkpoint: '" + path + "' is damaged: the data of array");
    CHECK(kfuse_test::bitwise_equal(target.gather(), before));
    CHECK(kfuse_test::bitwise_equal(f_target.gather(), f_before));
  }
  kfuse::load_checkpoint("good.ckpt", target, f_target);
  CHECK(kfuse_test::bitwise_equal(target.gather(), u.gather()));
  CHECK(kfuse_test::bitwise_equal(f_target.gather(), f.gather()));
}

TEST_CASE("a checkpoint of format version 1 (no checksums) still loads") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {12, 7});
  kfuse::Array<double, 2> u(grid, "u"), target(grid, "u");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return value_of(i, j); });
  kfuse::save_checkpoint("v2.ckpt", u);
  // Version 1 is version 2 without the checksum after each array's extents.
  kfuse_test::on_root(comm, [] {
    std::string bytes = kfuse_test::read_bytes("v2.ckpt");
    std::uint64_t header = 0;
    std::memcpy(&header, bytes.data() + 16, 8);
    bytes.erase(header - 8, 8);  // one array: its checksum ends the header
    const std::uint32_t version = 1;
    header -= 8;
    std::memcpy(&bytes[8], &version, 4);
    std::memcpy(&bytes[16], &header, 8);
    kfuse_test::write_bytes("v1.ckpt", bytes);
  });
  kfuse::load_checkpoint("v1.ckpt", target);
  CHECK(kfuse_test::bitwise_equal(target.gather(), u.gather()));
}

// ---- 6. solvers that break down --------------------------------------------

TEST_CASE("a breakdown leaves x as it was, never inf or NaN") {
  const kfuse::Comm comm;
  const std::int64_t n = 12;
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  const auto zero = kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "zero");
  if (comm.rank() == 0)
    for (std::int64_t i = 0; i + 1 < n; ++i) rows.push_back(i), cols.push_back(i), vals.push_back(1);
  const auto singular =
      kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "singular");
  kfuse::Vector<double> x(zero.domain(), "x"), b(zero.range(), "b");
  b.fill(1.0);
  auto finite = [](const std::vector<double>& v) {
    for (double e : v)
      if (!std::isfinite(e)) return false;
    return true;
  };

  x.fill(0.5);
  auto result = kfuse::cg(zero, x, b);
  CHECK(result.reason == "indefinite matrix");
  CHECK(x.gather() == std::vector<double>(n, 0.5));

  x.fill(0.5);
  result = kfuse::bicgstab(zero, x, b);
  CHECK(result.reason == "breakdown (r_hat.v = 0)");
  CHECK(x.gather() == std::vector<double>(n, 0.5));

  x.fill(0.0);
  result = kfuse::cg(singular, x, b);
  INFO("cg on diag(1, ..., 1, 0): " << result.reason << " after " << result.iterations
                                     << " iterations, x[0] = " << x.gather()[0]);
  CHECK_FALSE(result.converged);
  // The second direction lies in the null space (p.Ap = 0 while p.p > 0).
  CHECK(result.reason == "breakdown");
  CHECK(result.iterations == 2);
  CHECK(finite(x.gather()));

  x.fill(0.5);
  kfuse::SolverOptions strict;
  strict.error_if_not_converged = true;
  check_error_everywhere([&] { kfuse::cg(zero, x, b, strict); },
                         "kfuse::cg: not converged (indefinite matrix) after 1 iteration(s)");
  CHECK(x.gather() == std::vector<double>(n, 0.5));
}

TEST_CASE("solver options out of range, or different on one rank") {
  const kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 6, 5);
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b");
  b.fill(1.0);
  x.fill(0.25);
  auto with = [](auto change) {
    kfuse::SolverOptions o;
    change(o);
    return o;
  };
  check_error_everywhere([&] { kfuse::cg(A, x, b, with([](auto& o) { o.rtol = std::nan(""); })); },
                         "kfuse::cg: SolverOptions::rtol is nan; it must be >= 0 and < 1");
  check_error_everywhere([&] { kfuse::bicgstab(A, x, b, with([](auto& o) { o.max_it = -1; })); },
                         "kfuse::bicgstab: SolverOptions::max_it is -1");
  check_error_everywhere([&] { kfuse::cg(A, x, b, with([](auto& o) { o.atol = -1; })); },
                         "SolverOptions::atol is -1");
  if (comm.size() > 1) {
    check_error_everywhere(
        [&] { kfuse::cg(A, x, b, with([](auto& o) { o.max_it = odd_one_out() ? 7 : 8; })); },
        "kfuse::cg: ranks passed different SolverOptions");
    // A workspace on one rank only: a preconditioner bound to the last solve's vectors
    // would rebind (collectively) on the ranks without one alone.
    kfuse::SolverWorkspace workspace;
    const auto jacobi = kfuse::pc::jacobi(A);
    auto one_rank_keeps = [&](auto& o) { o.workspace = odd_one_out() ? &workspace : nullptr; };
    check_error_everywhere([&] { kfuse::cg(A, x, b, with(one_rank_keeps), jacobi); },
                           "kfuse::cg: ranks passed different SolverOptions");
    check_error_everywhere([&] { kfuse::gmres(A, x, b, with(one_rank_keeps)); },
                           "kfuse::gmres: ranks passed different SolverOptions");
    CHECK(workspace.size() == 0);
  }
  CHECK(x.gather() == std::vector<double>(30, 0.25));
}

TEST_CASE("a monitor that throws on one rank ends the solve on every rank") {
  const kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 6, 5);
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b");
  b.fill(1.0);
  kfuse::SolverOptions options;
  int calls = 0;
  options.monitor = [&](int it, double) {
    ++calls;
    if (it == 3 && odd_one_out()) throw std::runtime_error("stop here");
  };
  check_error_everywhere([&] { kfuse::cg(A, x, b, options); },
                         "kfuse::cg: the monitor threw at iteration 3: stop here");
  CHECK(calls == 4);  // iterations 0..3, on every rank
  calls = 0;
  check_error_everywhere([&] { kfuse::bicgstab(A, x, b, options); },
                         "kfuse::bicgstab: the monitor threw at iteration 3");
  CHECK(calls == 4);
}

// ---- 7. FIFOs and directories where a file is expected ---------------------

TEST_CASE("a FIFO or a directory where a file is read fails at once") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {6, 6});
  kfuse::Array<double, 2> u(grid, "u");
  u.fill(3.0);
  kfuse_test::on_root(comm, [] {
    ::mkfifo("pipe", 0600);
    std::filesystem::create_directories("folder");
  });
  check_error_everywhere([&] { kfuse::load_checkpoint("pipe", u); },
                         "kfuse::load_checkpoint: 'pipe' is a FIFO (named pipe); give the path of "
                         "a regular file");
  check_error_everywhere([&] { kfuse::load_checkpoint("folder", u); },
                         "kfuse::load_checkpoint: 'folder' is a directory");
  check_error_everywhere([&] { kfuse::read_matrix_market<double>(comm, "pipe"); },
                         "kfuse::read_matrix_market: 'pipe' is a FIFO");
  check_error_everywhere([&] { kfuse::read_matrix_market<double>(comm, "folder"); },
                         "kfuse::read_matrix_market: 'folder' is a directory");
  check_error_everywhere([&] { kfuse::save_checkpoint("pipe", u); },
                         "kfuse::save_checkpoint: 'pipe' is a FIFO");
  check_error_everywhere([&] { kfuse::write_matrix_market("pipe", kfuse::poisson2d<double>(comm, 3, 3)); },
                         "kfuse::write_matrix_market: 'pipe' is a FIFO");
  CHECK(u.gather() == std::vector<double>(36, 3.0));
}

// ---- 8. symmetric files that store both triangles --------------------------

TEST_CASE("a symmetric file with entries in both triangles names the line") {
  const kfuse::Comm comm;
  write_file(comm, "both.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n% (1,2) and (2,1) would sum\n"
             "2 2 3\n1 2 5\n2 2 1\n2 1 7\n");
  check_error_everywhere([&] { kfuse::read_matrix_market<double>(comm, "both.mtx"); },
                         "both.mtx:6: the entry (2, 1) lies below the diagonal, but line 4 has one "
                         "above it; a symmetric file stores one triangle");
  write_file(comm, "skew.mtx",
             "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 3\n1 1 4\n");
  check_error_everywhere([&] { kfuse::read_matrix_market<double>(comm, "skew.mtx"); },
                         "skew.mtx:4: a skew-symmetric matrix has a zero diagonal");
  // One triangle, the upper one as some writers store it: mirrored, not refused.
  write_file(comm, "upper.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 2 5\n1 1 2\n2 3 -1\n");
  const auto A = kfuse::read_matrix_market<double>(comm, "upper.mtx");
  CHECK(A.global_nnz() == 5);
}

// ---- 9. two arrays of one label in a checkpoint ----------------------------

TEST_CASE("a checkpoint of two arrays with one label is refused") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {7, 5});
  kfuse::Array<double, 2> a(grid, "u"), b(grid, "u"), c(grid, "c");
  a.fill(1.0);
  b.fill(2.0);
  check_error_everywhere([&] { kfuse::save_checkpoint("twins.ckpt", a, b); },
                         "kfuse::save_checkpoint: two arrays are labelled 'u'");
  CHECK_FALSE(std::filesystem::exists("twins.ckpt"));
  kfuse::Array<double, 2> u(grid, "u");
  kfuse::save_checkpoint("single.ckpt", u, c);
  check_error_everywhere([&] { kfuse::load_checkpoint("single.ckpt", b, a); },
                         "kfuse::load_checkpoint: two arrays are labelled 'u'");
  CHECK(a.gather() == std::vector<double>(35, 1.0));
  CHECK(b.gather() == std::vector<double>(35, 2.0));
}
