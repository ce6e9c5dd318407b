// Matrix Market: the real matrices of shared/matrices equal a plain serial
// reading (entries, nnz, products) at any rank count; symmetric, pattern,
// integer and skew-symmetric storage; a write/read round trip; and every
// malformed file throws kfuse::Error on every rank, naming the file and line.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "sparse_support.hpp"

namespace {

using Entries = std::vector<kfuse::detail::Triplet<double>>;

/// Writes a file on rank 0, seen by every rank afterwards.
void write_file(const kfuse::Comm& comm, const std::string& path, const std::string& text) {
  if (comm.rank() == 0) std::ofstream(path, std::ios::binary) << text;
  comm.barrier();
}

#ifdef KFUSE_MATRICES_DIR
/// y = A x through kfuse::detail::spmv, gathered.
std::vector<double> product(const kfuse::CsrMatrix<double>& A, const std::vector<double>& x) {
  const auto x_owned = kfuse_test::to_device(kfuse_test::owned_part(A.domain(), x));
  kfuse_test::DeviceVector<double> y("y", std::size_t(A.local_rows()));
  kfuse::detail::spmv(A, x_owned, y);
  return kfuse_test::allgather(A.range().comm(), kfuse_test::to_host(y));
}

/// A plain reading of a (well-formed) file, independent of the library's parser.
struct Reference {
  std::int64_t rows = 0, cols = 0;
  Entries entries;
};

Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::string banner;
  std::getline(in, banner);
  const bool symmetric = banner.find("symmetric") != std::string::npos;
  const bool pattern = banner.find("pattern") != std::string::npos;
  std::string line;
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  Reference ref;
  std::int64_t count = 0;
  std::istringstream(line) >> ref.rows >> ref.cols >> count;
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    in >> i >> j;
    if (!pattern) in >> v;
    rows.push_back(i - 1), cols.push_back(j - 1), vals.push_back(v);
    if (symmetric && i != j) rows.push_back(j - 1), cols.push_back(i - 1), vals.push_back(v);
  }
  REQUIRE(in);
  ref.entries = kfuse_test::canonical(rows, cols, vals);
  return ref;
}
#endif

}  // namespace

#ifdef KFUSE_MATRICES_DIR
TEST_CASE("the real matrices of shared/matrices") {
  const kfuse::Comm comm;
  struct Case {
    const char* file;
    std::int64_t rows, nnz;  // as the README lists them
  };
  const Case cases[] = {
      {"spd/1138_bus.mtx", 1138, 4054},      {"spd/Laplace3D10.mtx", 1000, 6400},
      {"spd/wathen_30_30.mtx", 2821, 42781}, {"spd/bcsstk13.mtx", 2003, 83883},
      {"spd/bcsstk25.mtx", 15439, 252241},   {"nonsym/BentPipe2D100.mtx", 10000, 49600},
      {"nonsym/orsirr_1.mtx", 1030, 6858}};
  for (const Case& c : cases) {
    const std::string path = std::string(KFUSE_MATRICES_DIR) + "/" + c.file;
    INFO(path);
    const auto A = kfuse::read_matrix_market<double>(comm, path);
    const Reference ref = read_reference(path);
    CHECK(A.label() == path);
    CHECK(A.global_rows() == c.rows);
    CHECK(A.global_cols() == c.rows);
    CHECK(A.global_nnz() == c.nnz);
    CHECK(ref.rows == c.rows);
    CHECK(ref.entries.size() == std::size_t(c.nnz));
    kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A), ref.entries);
    // Products: A 1 (row sums) and A x for a varying x.
    std::vector<double> x(std::size_t(c.rows), 1.0);
    kfuse_test::check_product(product(A, x), ref.entries, x, 1e-14);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.01 * double(i));
    kfuse_test::check_product(product(A, x), ref.entries, x, 1e-14);
  }
}
#endif

TEST_CASE("storage kinds: symmetric, skew-symmetric, pattern, integer; comments and blank lines") {
  const kfuse::Comm comm;
  SUBCASE("symmetric real, with comments, blank lines and CRLF") {
    write_file(comm, "sym.mtx",
               "%%MatrixMarket matrix coordinate real symmetric\r\n% a comment\r\n\r\n"
               "3 3 4\r\n1 1 2.5\r\n\r\n2 1 -1e0\r\n% between entries\r\n3 2 +0.25\r\n3 3 4\r\n");
    const auto A = kfuse::read_matrix_market<double>(comm, "sym.mtx", "S");
    CHECK(A.label() == "S");
    kfuse_test::check_same_entries(
        kfuse::detail::gather_triplets(A),
        Entries{{0, 0, 2.5}, {0, 1, -1.0}, {1, 0, -1.0}, {1, 2, 0.25}, {2, 1, 0.25}, {2, 2, 4.0}});
  }
  SUBCASE("skew-symmetric integer") {
    write_file(comm, "skew.mtx",
               "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 7\n");
    kfuse_test::check_same_entries(
        kfuse::detail::gather_triplets(kfuse::read_matrix_market<double>(comm, "skew.mtx")),
        Entries{{0, 1, -7.0}, {1, 0, 7.0}});
  }
  SUBCASE("pattern general, rectangular, duplicates summed") {
    write_file(comm, "pattern.mtx",
               "%%MatrixMarket matrix coordinate pattern general\n2 5 4\n1 5\n2 1\n1 5\n2 3\n");
    const auto A = kfuse::read_matrix_market<double>(comm, "pattern.mtx");
    CHECK(A.global_cols() == 5);
    kfuse_test::check_same_entries(kfuse::detail::gather_triplets(A),
                                   Entries{{0, 4, 2.0}, {1, 0, 1.0}, {1, 2, 1.0}});
  }
  SUBCASE("empty matrix") {
    write_file(comm, "empty.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 0\n");
    const auto A = kfuse::read_matrix_market<double>(comm, "empty.mtx");
    CHECK(A.global_rows() == 4);
    CHECK(A.global_nnz() == 0);
  }
}

TEST_CASE("write_matrix_market then read_matrix_market gives the same matrix") {
  const kfuse::Comm comm;
  const auto A = kfuse::convection_diffusion2d<double>(comm, 6, 5, 0.3, -1.0 / 3.0);
  kfuse::write_matrix_market("written.mtx", A);
  const auto B = kfuse::read_matrix_market<double>(comm, "written.mtx");
  kfuse_test::check_same_entries(kfuse::detail::gather_triplets(B),
                                 kfuse::detail::gather_triplets(A));  // exact: max_digits10
  CHECK_THROWS_WITH_AS(
      kfuse::write_matrix_market("no/such/dir/x.mtx", A),
      doctest::Contains("kfuse::write_matrix_market: cannot write 'no/such/dir/x.mtx'"),
      kfuse::Error);
}

TEST_CASE("malformed files throw on every rank, naming the file and the line") {
  const kfuse::Comm comm;
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    const char* name;
    std::string text;
    const char* message;  // after "kfuse::read_matrix_market: <name>.mtx:"
  };
  const Case cases[] = {
      {"empty", "", "1: empty file"},
      {"no_banner", "3 3 1\n1 1 1\n", "1: expected the banner"},
      {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
       "1: dense 'array' files are not supported"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
       "1: complex matrices are not supported"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
       "1: hermitian matrices are not supported"},
      {"vector", "%%MatrixMarket vector coordinate real general\n", "1: object 'vector'"},
      {"short_banner", "%%MatrixMarket matrix coordinate real\n", "1: malformed banner"},
      {"no_size_line", banner + "% only a comment\n", "3: the file ends before the size line"},
      {"size_two_fields", banner + "% c\n3 3\n1 1 1\n", "3: malformed size line '3 3'"},
      {"size_not_a_number", banner + "3 x 1\n", "2: malformed size line '3 x 1'"},
      {"size_negative", banner + "3 -3 1\n", "2: malformed size line"},
      {"fewer_entries", banner + "3 3 3\n1 1 1\n\n2 2 1\n",
       "6: the file ends after 2 of the 3 declared entries"},
      {"more_entries", banner + "3 3 1\n1 1 1\n2 2 1\n",
       "4: more entries than the 1 the size line declares"},
      {"row_out_of_range", banner + "3 3 2\n1 1 1\n4 1 1\n", "4: row index 4 is outside [1, 3]"},
      {"column_zero", banner + "3 3 1\n1 0 1\n", "3: column index 0 is outside [1, 3]"},
      {"bad_index", banner + "3 3 1\n1.5 1 1\n", "3: cannot read the row index '1.5'"},
      {"nan", banner + "3 3 1\n1 1 nan\n", "3: value 'nan' is not a finite number"},
      {"inf", banner + "3 3 2\n1 1 1\n2 2 -inf\n", "4: value '-inf' is not a finite number"},
      {"garbage_value", banner + "3 3 1\n1 1 1.2.3\n", "3: cannot read the value '1.2.3'"},
      {"overflow", banner + "3 3 1\n1 1 1e999\n", "3: value '1e999' is out of the range"},
      {"integer_field_real_value",
       "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n",
       "3: cannot read the integer value '2.5'"},
      {"truncated_line", banner + "3 3 2\n1 1 1\n2 2",
       "4: expected 'row column value', found '2 2'"},
      {"extra_field", banner + "3 3 1\n1 1 1 1\n", "3: expected 'row column value'"},
      {"symmetric_not_square", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
       "2: a symmetric matrix must be square, not 2 x 3"},
  };
  for (const Case& c : cases) {
    const std::string file = std::string(c.name) + ".mtx";
    INFO(file);
    write_file(comm, file, c.text);
    const std::string want = "kfuse::read_matrix_market: " + file + ":" + c.message;
    CHECK_THROWS_WITH_AS(kfuse::read_matrix_market<double>(comm, file),
                         doctest::Contains(want.c_str()), kfuse::Error);
  }
  CHECK_THROWS_WITH_AS(kfuse::read_matrix_market<double>(comm, "missing.mtx"),
                       doctest::Contains("kfuse::read_matrix_market: cannot open 'missing.mtx'"),
                       kfuse::Error);
  if (comm.size() > 1)
    CHECK_THROWS_WITH_AS(
        kfuse::read_matrix_market<double>(comm, comm.rank() == 0 ? "a.mtx" : "b.mtx"),
        doctest::Contains("kfuse::read_matrix_market: ranks passed different paths ('a.mtx' here)"),
        kfuse::Error);
}

TEST_CASE("parse_matrix_market is a pure function over a stream") {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n2 3 2\n2 3 1.5\n1 1 -2\n");
  const auto data = kfuse::detail::parse_matrix_market(in, "text");
  CHECK(data.rows == 2);
  CHECK(data.cols == 3);
  CHECK(data.row == std::vector<std::int64_t>{1, 0});
  CHECK(data.col == std::vector<std::int64_t>{2, 0});
  CHECK(data.value == std::vector<double>{1.5, -2.0});
  // Values too small for the element type round as a cast would; too large is an error.
  std::istringstream tiny(
      "%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 1e-400\n1 1 1e-50\n");
  const auto floats = kfuse::detail::parse_matrix_market<float>(tiny, "tiny");
  CHECK(floats.value == std::vector<float>{0.0f, 0.0f});
  std::istringstream large("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e39\n");
  CHECK_THROWS_WITH_AS(
      kfuse::detail::parse_matrix_market<float>(large, "large"),
      "kfuse::read_matrix_market: large:3: value '1e39' is out of the range of the "
      "matrix's element type",
      kfuse::Error);
  // A skew-symmetric entry implies its negation, which an integer type's minimum lacks.
  const std::string skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 ";
  std::istringstream int_min(skew + "-2147483648\n"), int_min_plus_one(skew + "-2147483647\n");
  CHECK_THROWS_WITH_AS(kfuse::detail::parse_matrix_market<std::int32_t>(int_min, "skew"),
                       "kfuse::read_matrix_market: skew:3: value -2147483648 has no negation in "
                       "the matrix's element type, which the mirror entry of a skew-symmetric "
                       "file needs",
                       kfuse::Error);
  const auto ints = kfuse::detail::parse_matrix_market<std::int32_t>(int_min_plus_one, "skew");
  CHECK(ints.value == std::vector<std::int32_t>{-2147483647, 2147483647});
  std::istringstream wide(skew + "-2147483648\n");
  CHECK(kfuse::detail::parse_matrix_market<std::int64_t>(wide, "skew").value ==
        std::vector<std::int64_t>{-2147483648LL, 2147483648LL});
  std::istringstream bad("%%MatrixMarket matrix coordinate real general\n2 3 1\n3 1 1\n");
  CHECK_THROWS_WITH_AS(kfuse::detail::parse_matrix_market<float>(bad, "text"),
                       "kfuse::read_matrix_market: text:3: row index 3 is outside [1, 2]",
                       kfuse::Error);
}
