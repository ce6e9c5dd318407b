// VTK output parsed back: the .pvti's whole extent and one piece per rank,
// each .vti's extent and raw appended values, reassembled into the global
// array and compared bit for bit with gather(); errors on every rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "io_test_support.hpp"

using kfuse_test::contains;

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Every opening tag `<element ...>` of xml, whole (plain searches: GCC 12 warns
/// inside <regex> at -O1, a false -Wmaybe-uninitialized in std::function).
std::vector<std::string> elements(const std::string& xml, const std::string& element) {
  std::vector<std::string> out;
  const std::string open = "<" + element;
  for (auto at = xml.find(open); at != std::string::npos; at = xml.find(open, at + 1)) {
    const auto after = at + open.size();
    if (after < xml.size() && is_word_char(xml[after])) continue;  // a longer name
    const auto end = xml.find('>', after);
    if (end == std::string::npos) break;
    out.push_back(xml.substr(at, end + 1 - at));
  }
  return out;
}

/// The value of attribute `name` in the first element matching `element`.
std::string attribute(const std::string& xml, const std::string& element, const std::string& name) {
  const std::string key = name + "=\"";
  for (const std::string& tag : elements(xml, element))
    for (auto at = tag.find(key); at != std::string::npos; at = tag.find(key, at + 1)) {
      if (at > 0 && is_word_char(tag[at - 1])) continue;  // the end of a longer name
      const auto begin = at + key.size(), end = tag.find('"', begin);
      if (end != std::string::npos) return tag.substr(begin, end - begin);
    }
  return "<missing>";
}

std::vector<std::int64_t> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::int64_t> out;
  for (std::int64_t x; in >> x;) out.push_back(x);
  return out;
}

std::string extent_of(const std::vector<std::int64_t>& global) {
  std::string s;
  for (int d = 0; d < 3; ++d)
    s += (d ? " 0 " : "0 ") + std::to_string(d < int(global.size()) ? global[d] : 0);
  return s;
}

/// Reads array `name` (element type T) of the pieces that `base`.pvti lists
/// back into a global row-major array; checks the files' structure on the way.
template <class T>
std::vector<T> read_vtk(const std::string& base, const std::string& name, const std::string& type,
                        const std::vector<std::int64_t>& global, int pieces) {
  const std::string summary = kfuse_test::read_bytes(base + ".pvti");
  CHECK(attribute(summary, "VTKFile", "type") == "PImageData");
  CHECK(attribute(summary, "PImageData", "WholeExtent") == extent_of(global));
  CHECK(contains(summary, "<PDataArray type=\"" + type + "\" Name=\"" + name + "\"/>"));
  const auto listed = elements(summary, "Piece");
  CHECK(int(listed.size()) == pieces);

  std::int64_t n[3] = {1, 1, 1};
  for (std::size_t d = 0; d < global.size(); ++d) n[d] = global[d];
  std::vector<T> out(std::size_t(n[0] * n[1] * n[2]));
  std::vector<int> covered(out.size(), 0);
  const std::string dir = std::filesystem::path(base).parent_path().string();
  for (const std::string& piece : listed) {
    const std::string source = attribute(piece, "Piece", "Source");
    const std::string bytes =
        kfuse_test::read_bytes((std::filesystem::path(dir) / source).string());
    const std::size_t data = bytes.find("<AppendedData encoding=\"raw\">");
    REQUIRE(data != std::string::npos);
    const std::string xml = bytes.substr(0, data);
    CHECK(attribute(xml, "VTKFile", "type") == "ImageData");
    CHECK(attribute(xml, "ImageData", "WholeExtent") == extent_of(global));
    const std::string extent = attribute(xml, "Piece", "Extent");
    CHECK(extent == attribute(piece, "Piece", "Extent"));  // the summary agrees with the piece

    // The named array: its offset into the raw section, after the '_'.
    std::string array;
    for (const std::string& e : elements(xml, "DataArray"))
      if (attribute(e, "DataArray", "Name") == name) array = e;
    REQUIRE(!array.empty());
    CHECK(attribute(array, "DataArray", "type") == type);
    CHECK(attribute(array, "DataArray", "format") == "appended");
    const std::size_t base_at = bytes.find('_', data) + 1;
    const std::size_t at =
        base_at + std::size_t(numbers(attribute(array, "DataArray", "offset"))[0]);

    const auto e = numbers(extent);  // x0 x1 y0 y1 z0 z1, cells [x0, x1)
    std::int64_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      lo[d] = e[2 * d];
      hi[d] = d < int(global.size()) ? e[2 * d + 1] : lo[d] + 1;
    }
    const std::uint64_t count = std::uint64_t((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
    std::uint64_t size = 0;
    REQUIRE(at + 8 <= bytes.size());
    std::memcpy(&size, bytes.data() + at, 8);
    REQUIRE(size == count * sizeof(T));
    REQUIRE(at + 8 + size <= bytes.size());
    const char* value = bytes.data() + at + 8;
    for (std::int64_t k = lo[2]; k < hi[2]; ++k)  // VTK order: x fastest
      for (std::int64_t j = lo[1]; j < hi[1]; ++j)
        for (std::int64_t i = lo[0]; i < hi[0]; ++i, value += sizeof(T)) {
          const std::size_t flat = std::size_t((i * n[1] + j) * n[2] + k);
          std::memcpy(&out[flat], value, sizeof(T));
          ++covered[flat];
        }
  }
  CHECK(std::count(covered.begin(), covered.end(), 1) == std::int64_t(covered.size()));
  return out;
}

}  // namespace

TEST_CASE("2-D arrays: two arrays in one set of files") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {11, 7});
  kfuse::Array<double, 2> u(grid, "u");
  kfuse::Array<int, 2> count(grid, "count");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return 1.0 / double(2 + i) - 0.3 * double(j);
  });
  count = kfuse::cast<int>(kfuse::index<0>() * 100 + kfuse::index<1>());
  kfuse::write_vtk("vtk2d/fields", u, count);
  const auto all_u = u.gather();
  const auto all_count = count.gather();
  if (comm.rank() == 0) {
    CHECK(kfuse_test::bitwise_equal(
        read_vtk<double>("vtk2d/fields", "u", "Float64", {11, 7}, comm.size()), all_u));
    CHECK(read_vtk<int>("vtk2d/fields", "count", "Int32", {11, 7}, comm.size()) == all_count);
    CHECK(attribute(kfuse_test::read_bytes("vtk2d/fields.pvti"), "PCellData", "Scalars") == "u");
  }
  comm.barrier();
}

TEST_CASE("3-D array, periodic, halo width 2") {
  const kfuse::Comm comm;
  kfuse::Grid<3> grid(comm, {6, 5, 4}, kfuse::GridOptions<3>{2, {true, true, true}});
  kfuse::Array<float, 3> w(grid, "w");
  w.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
    return float(i) + float(j) / 10.0f + float(k) / 300.0f;
  });
  kfuse::write_vtk("out/deeper/w", w);
  const auto all = w.gather();
  if (comm.rank() == 0)
    CHECK(kfuse_test::bitwise_equal(
        read_vtk<float>("out/deeper/w", "w", "Float32", {6, 5, 4}, comm.size()), all));
  comm.barrier();
}

TEST_CASE("a base name without a directory writes into the working directory") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {4, 6});
  kfuse::Array<double, 2> u(grid, "u");
  u = kfuse::cast<double>(kfuse::index<1>());
  kfuse::write_vtk("plain", u);
  const auto all = u.gather();
  if (comm.rank() == 0) {
    CHECK(std::filesystem::exists("plain_0.vti"));
    CHECK(kfuse_test::bitwise_equal(read_vtk<double>("plain", "u", "Float64", {4, 6}, comm.size()),
                                    all));
  }
  comm.barrier();
}

TEST_CASE("write_vtk errors on every rank") {
  const kfuse::Comm comm;
  kfuse::Grid<2> grid(comm, {8, 8}), other(comm, {8, 9});
  kfuse::Array<double, 2> u(grid, "u"), v(other, "v"), u2(grid, "u");
  std::string e = kfuse_test::error_of([&] { kfuse::write_vtk("bad/uv", u, v); });
  CHECK(contains(e, "kfuse::write_vtk: array 'v' lives on grid 8x9"));
  e = kfuse_test::error_of([&] { kfuse::write_vtk("bad/uu", u, u2); });
  CHECK(contains(e, "kfuse::write_vtk: two arrays are labelled 'u'"));
  e = kfuse_test::error_of([&] { kfuse::write_vtk("bad/", u); });
  CHECK(contains(e, "kfuse::write_vtk: 'bad/' names a directory"));
  kfuse_test::on_root(comm, [] { kfuse_test::write_bytes("file", "not a directory"); });
  e = kfuse_test::error_of([&] { kfuse::write_vtk("file/u", u); });
  CHECK(contains(e, "kfuse::write_vtk: cannot create directory 'file'"));
  CHECK_FALSE(std::filesystem::exists("bad"));
}
