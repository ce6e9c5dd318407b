// VTK output for ParaView: write_vtk("out/u", u, v, ...) writes arrays of one
// grid (rank 1 to 3) as VTK XML image data, collectively: one piece per rank,
// `out/u_<rank>.vti`, and `out/u.pvti` (rank 0) that stitches them together.
//
// Each value is written as the data of a cell centred on its global index
// (origin -0.5, spacing 1): the pieces' point extents then share their
// boundary planes while their cells are exactly the owned ones, so ParaView
// joins the pieces without gaps or duplicates and no halo value is needed.
// (Point data would need every piece to repeat its neighbour's first plane,
// i.e. a halo exchange, and fails for halo width 0.) For smooth contours
// apply ParaView's "Cell Data to Point Data" filter.
//
// Values are raw binary in the file's appended section, in the machine's
// byte order (declared in the header) with 64-bit size headers; VTK orders
// values with x fastest, so dimension 0 of the array is x (then y, z).
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "kfuse/array/array.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/files.hpp"
#include "kfuse/dist/grid.hpp"
#include "kfuse/io/common.hpp"

namespace kfuse {
namespace detail {

template <class T>
std::string vtk_type_name() {
  if constexpr (std::is_floating_point_v<T>)
    return sizeof(T) == 4 ? "Float32" : "Float64";
  else
    return (std::is_signed_v<T> ? "Int" : "UInt") + std::to_string(8 * sizeof(T));
}

inline const char* vtk_byte_order() {
  const std::uint16_t one = 1;
  char first = 0;
  std::memcpy(&first, &one, 1);
  return first ? "LittleEndian" : "BigEndian";
}

/// Escapes a label for an XML attribute value.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

/// The point extent "x0 x1 y0 y1 z0 z1" of `rank`'s block, or of the whole
/// grid for rank -1; unused dimensions are "0 0".
template <int N>
std::string vtk_extent(const Grid<N>& grid, int rank) {
  const auto coords = grid.coords_of(rank < 0 ? 0 : rank);
  std::string s;
  for (int d = 0; d < 3; ++d) {
    index_t lo = 0, hi = 0;
    if (d < N) {
      lo = rank < 0 ? 0 : grid.block_begin(d, coords[d]);
      hi = rank < 0 ? grid.global_extent(d) : lo + grid.block_extent(d, coords[d]);
    }
    s += (d ? " " : "") + std::to_string(lo) + " " + std::to_string(hi);
  }
  return s;
}

template <int N>
std::string vtk_geometry() {
  std::string origin;
  for (int d = 0; d < 3; ++d) origin += (d ? " " : "") + std::string(d < N ? "-0.5" : "0");
  return "Origin=\"" + origin + "\" Spacing=\"1 1 1\"";
}

inline std::string vtk_file_start(const char* type) {
  return std::string("<?xml version=\"1.0\"?>\n<VTKFile type=\"") + type +
         "\" version=\"1.0\" byte_order=\"" + vtk_byte_order() + "\" header_type=\"UInt64\">\n";
}

/// This rank's owned values of `a` in VTK order (x = dimension 0 fastest), as bytes.
template <class T, int N>
std::string vtk_values(const Array<T, N>& a) {
  const std::vector<T> block = owned_block(a);  // row-major: the last dimension fastest
  const Grid<N>& g = a.grid();
  index_t e[3] = {1, 1, 1};
  for (int d = 0; d < N; ++d) e[d] = g.local_extent(d);
  std::string bytes;
  bytes.reserve(block.size() * sizeof(T));
  for (index_t k = 0; k < e[2]; ++k)
    for (index_t j = 0; j < e[1]; ++j)
      for (index_t i = 0; i < e[0]; ++i) {
        const T& v = block[static_cast<std::size_t>((i * e[1] + j) * e[2] + k)];
        bytes.append(reinterpret_cast<const char*>(&v), sizeof(T));
      }
  return bytes;
}

/// Writes `text` to `path` (a regular file or none: a FIFO would block); ""
/// or what went wrong.
inline std::string write_file(const std::string& path, const std::string& text) {
  if (std::string error = not_regular_file(path, false); !error.empty()) return error;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  return out ? std::string() : error_message("cannot write '", path, "': ", std::strerror(errno));
}

}  // namespace detail

/// Collective: writes `first` and `more` (arrays of one grid, distinct labels)
/// to `<base>.pvti` and `<base>_<rank>.vti`, creating `base`'s directory.
template <class T, int N, class... More>
void write_vtk(const std::string& base, const Array<T, N>& first, const More&... more) {
  static_assert((std::is_same_v<More, Array<typename More::value_type, N>> && ...),
                "kfuse::write_vtk(base, arrays...): every array must be a kfuse::Array of the "
                "first one's rank");
  constexpr const char* api = "kfuse::write_vtk";
  const Grid<N>& grid = first.grid();
  // The communicator the grid was made on: the same on a rank that passed an
  // array of another grid, whose own (Cartesian) communicator differs.
  const Comm& comm = grid.base_comm();
  detail::check_same_path(comm, api, base);
  detail::check_same_as_root(comm, api, "grid", grid.describe());

  std::string error;
  std::set<std::string> labels;
  auto check = [&](const auto& a) {
    if (!error.empty()) return;
    if (a.grid() != grid)
      error = detail::error_message("array '", a.label(), "' lives on grid ", a.grid().describe(),
                                    " but '", first.label(), "' on grid ", grid.describe(),
                                    "; write arrays of one grid together");
    else if (!labels.insert(a.label()).second)
      error = detail::error_message("two arrays are labelled '", a.label(),
                                    "'; ParaView needs distinct names");
  };
  check(first);
  (check(more), ...);
  comm.agree_or_throw(detail::with_api(api, error));

  const std::filesystem::path path(base);
  const std::string stem = path.filename().string();
  if (stem.empty())
    error = "'" + base + "' names a directory; pass a base name such as 'out/u'";
  else if (comm.rank() == 0 && path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      error = detail::error_message("cannot create directory '", path.parent_path().string(),
                                    "': ", ec.message());
  }
  comm.agree_or_throw(detail::with_api(api, error));

  // The arrays' declarations, as the piece and the summary file list them.
  std::string arrays, declarations;
  std::uint64_t offset = 0;
  auto declare = [&](const auto& a) {
    using V = typename std::decay_t<decltype(a)>::value_type;
    const std::string attributes = "type=\"" + detail::vtk_type_name<V>() + "\" Name=\"" +
                                   detail::xml_escape(a.label()) + "\"";
    arrays += "        <DataArray " + attributes + " format=\"appended\" offset=\"" +
              std::to_string(offset) + "\"/>\n";
    declarations += "      <PDataArray " + attributes + "/>\n";
    offset += sizeof(std::uint64_t) + static_cast<std::uint64_t>(grid.local_size()) * sizeof(V);
  };
  declare(first);
  (declare(more), ...);
  const std::string scalars = "Scalars=\"" + detail::xml_escape(first.label()) + "\"";

  // This rank's piece.
  std::string piece = detail::vtk_file_start("ImageData");
  piece += "  <ImageData WholeExtent=\"" + detail::vtk_extent(grid, -1) + "\" " +
           detail::vtk_geometry<N>() + ">\n";
  piece += "    <Piece Extent=\"" + detail::vtk_extent(grid, comm.rank()) +
           "\">\n      <CellData " + scalars + ">\n" + arrays + "      </CellData>\n    </Piece>\n";
  piece += "  </ImageData>\n  <AppendedData encoding=\"raw\">\n_";
  auto append = [&](const auto& a) {
    const std::string values = detail::vtk_values(a);
    const std::uint64_t size = values.size();
    piece.append(reinterpret_cast<const char*>(&size), sizeof size);
    piece += values;
  };
  append(first);
  (append(more), ...);
  piece += "\n  </AppendedData>\n</VTKFile>\n";
  const std::string piece_name = stem + "_" + std::to_string(comm.rank()) + ".vti";
  error = detail::write_file((path.parent_path() / piece_name).string(), piece);
  comm.agree_or_throw(detail::with_api(api, error));

  // The summary, written once every piece it names exists.
  if (comm.rank() == 0) {
    std::string summary = detail::vtk_file_start("PImageData");
    summary += "  <PImageData WholeExtent=\"" + detail::vtk_extent(grid, -1) +
               "\" GhostLevel=\"0\" " + detail::vtk_geometry<N>() + ">\n    <PCellData " + scalars +
               ">\n" + declarations + "    </PCellData>\n";
    for (int r = 0; r < comm.size(); ++r)
      summary += "    <Piece Extent=\"" + detail::vtk_extent(grid, r) + "\" Source=\"" +
                 detail::xml_escape(stem) + "_" + std::to_string(r) + ".vti\"/>\n";
    summary += "  </PImageData>\n</VTKFile>\n";
    error = detail::write_file(base + ".pvti", summary);
  }
  comm.agree_or_throw(detail::with_api(api, error));
}

}  // namespace kfuse
