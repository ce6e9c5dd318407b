// Checkpoint and restart: save_checkpoint(path, arrays...) writes the owned
// cells of any number of arrays (float or double, rank 1 to 3, any grids of
// one communicator, distinct labels) into one file; load_checkpoint(path,
// arrays...) reads them back at any rank count, bit for bit. Both are
// collective.
//
// The file is independent of the decomposition (format version 2; integers
// in the writer's byte order, which the byte-order mark lets a reader check):
//
//   offset 0   char[8]  "KFUSECKP"
//          8   u32      format version (2; version 1 files, without
//                       checksums, still load)
//         12   u32      byte-order mark 0x01020304
//         16   u64      header size H: the first array's data starts at H
//         24   u32      array count
//         28   per array: u32 label length, label; u32 type length, type
//              ("float32" or "float64"); u32 rank N; N x i64 global extents;
//              u64 checksum of its data (version 2)
//          H   per array, in order: its global owned cells, row-major, no padding
//
// The checksum of an array is the sum, modulo 2^64, of mix(bits + mix(index))
// over its cells (index: the global row-major position, bits: the value's,
// mix: splitmix64's finaliser). A sum, so every rank adds its own block and
// one allreduce combines them, whatever the decomposition; a changed value
// changes it except with probability 2^-64. A load checks it before any array
// changes.
//
// With MPI every rank writes and reads its own block through an MPI-IO
// subarray view; without MPI the one rank uses a std::fstream.
// A save writes to `<path>.tmp` (replacing what a killed save left there),
// syncs it, and rank 0 renames it to `path` only once every rank has written,
// then syncs the directory: a crash never leaves a torn checkpoint.
//
// Only owned cells are saved. A load marks the halos stale (periodic and
// zero-gradient halos are refreshed by the next stencil read) and leaves
// halo cells beyond fixed boundaries as they are: set those up as on a fresh
// start (fill / fill_with) before load_checkpoint.
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kfuse/array/array.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/files.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/io/common.hpp"

namespace kfuse {
namespace detail {

inline constexpr char checkpoint_magic[8] = {'K', 'F', 'U', 'S', 'E', 'C', 'K', 'P'};
inline constexpr std::uint32_t checkpoint_version = 2;  // written; 1 and 2 are read
inline constexpr std::uint32_t checkpoint_byte_order = 0x01020304;
inline constexpr std::size_t checkpoint_prefix_size = 28;  // magic .. array count

template <class A>
struct is_checkpoint_array : std::false_type {};
template <class A>
struct is_checkpoint_array<const A> : is_checkpoint_array<A> {};
template <class T, int N>
struct is_checkpoint_array<Array<T, N>>
    : std::bool_constant<std::is_same_v<T, float> || std::is_same_v<T, double>> {};

template <class T>
const char* checkpoint_type_name() {
  return std::is_same_v<T, float> ? "float32" : "float64";
}

/// splitmix64's finaliser: a bijection of 64-bit words that scatters every
/// input bit over the whole output.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// This rank's part of an array's checksum (see the file comment): `block`
/// holds its owned cells as owned_block gives them.
template <class T, int N>
std::uint64_t block_checksum(const Grid<N>& grid, const std::vector<T>& block) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static_assert(sizeof(Bits) == sizeof(T));
  index_t begin[3] = {0, 0, 0}, extent[3] = {1, 1, 1}, global[3] = {1, 1, 1};
  for (int d = 0; d < N; ++d) {
    begin[d] = grid.local_begin(d);
    extent[d] = grid.local_extent(d);
    global[d] = grid.global_extent(d);
  }
  std::uint64_t sum = 0;
  std::size_t n = 0;
  for (index_t i = 0; i < extent[0]; ++i)
    for (index_t j = 0; j < extent[1]; ++j) {
      const auto row = static_cast<std::uint64_t>(((begin[0] + i) * global[1] + begin[1] + j) *
                                                  global[2] + begin[2]);
      for (index_t k = 0; k < extent[2]; ++k, ++n) {
        Bits bits;
        std::memcpy(&bits, &block[n], sizeof bits);
        sum += mix64(std::uint64_t{bits} + mix64(row + static_cast<std::uint64_t>(k)));
      }
    }
  return sum;
}

/// What a checkpoint says about one array.
struct CheckpointEntry {
  std::string label, type;
  std::vector<index_t> extents;
  std::uint64_t checksum = 0;  // version 2

  std::uint64_t bytes() const {
    std::uint64_t n = type == "float32" ? 4 : 8;
    for (index_t e : extents) n *= static_cast<std::uint64_t>(e);
    return n;
  }
  template <class T, int N>
  static CheckpointEntry of(const Array<T, N>& a) {
    CheckpointEntry e{a.label(), checkpoint_type_name<T>(), {}};
    for (int d = 0; d < N; ++d) e.extents.push_back(a.grid().global_extent(d));
    return e;
  }
  /// "float64 10x12"
  std::string describe() const {
    std::string s = type + " ";
    for (std::size_t d = 0; d < extents.size(); ++d)
      s += (d ? "x" : "") + std::to_string(extents[d]);
    return s;
  }
};

/// The header (everything before the data), encoded and decoded.
struct CheckpointHeader {
  std::vector<CheckpointEntry> arrays;
  std::uint32_t version = checkpoint_version;  // of a decoded file; encode() writes the current

  std::string encode() const {
    auto put = [](std::string& out, const auto& value) {
      out.append(reinterpret_cast<const char*>(&value), sizeof value);
    };
    std::string entries;
    for (const CheckpointEntry& e : arrays) {
      for (const std::string* s : {&e.label, &e.type}) {
        put(entries, static_cast<std::uint32_t>(s->size()));
        entries += *s;
      }
      put(entries, static_cast<std::uint32_t>(e.extents.size()));
      for (index_t x : e.extents) put(entries, static_cast<std::int64_t>(x));
      put(entries, e.checksum);
    }
    std::string out(checkpoint_magic, sizeof checkpoint_magic);
    put(out, checkpoint_version);
    put(out, checkpoint_byte_order);
    put(out, static_cast<std::uint64_t>(checkpoint_prefix_size + entries.size()));
    put(out, static_cast<std::uint32_t>(arrays.size()));
    return out + entries;
  }

  /// Bytes of the header as encode() writes it (the current version).
  std::uint64_t size() const { return encode().size(); }
  /// Bytes of all arrays' data.
  std::uint64_t data_size() const {
    std::uint64_t n = 0;
    for (const CheckpointEntry& e : arrays) n += e.bytes();
    return n;
  }

  /// Checks the fixed prefix: "" or what is wrong; `header_size` is H.
  static std::string check_prefix(const std::string& name, const std::string& bytes,
                                  std::uint64_t& header_size) {
    if (bytes.size() < checkpoint_prefix_size)
      return error_message("'", name, "' is truncated: ", bytes.size(),
                           " bytes, shorter than a checkpoint header");
    if (std::memcmp(bytes.data(), checkpoint_magic, sizeof checkpoint_magic) != 0)
      return error_message("'", name, "' is not a kfuse checkpoint (bad magic)");
    std::uint32_t version = 0, order = 0;
    std::memcpy(&version, bytes.data() + 8, 4);
    std::memcpy(&order, bytes.data() + 12, 4);
    std::memcpy(&header_size, bytes.data() + 16, 8);
    if (order != checkpoint_byte_order)
      return error_message("'", name, "' was written with another byte order");
    if (version < 1 || version > checkpoint_version)
      return error_message("'", name, "' has format version ", version,
                           "; this kfuse reads versions 1 to ", checkpoint_version);
    return {};
  }

  /// Decodes a whole header (prefix already checked): "" or what is wrong.
  static std::string decode(const std::string& name, const std::string& bytes,
                            CheckpointHeader& out) {
    std::memcpy(&out.version, bytes.data() + 8, 4);
    std::size_t at = 16 + 8;
    bool short_read = false;
    auto get = [&](auto& value) {
      if (at + sizeof value > bytes.size()) return void(short_read = true);
      std::memcpy(&value, bytes.data() + at, sizeof value);
      at += sizeof value;
    };
    auto get_string = [&](std::string& s) {
      std::uint32_t n = 0;
      get(n);
      if (short_read || n > bytes.size() - at) return void(short_read = true);
      s.assign(bytes.data() + at, n);
      at += n;
    };
    std::uint32_t count = 0;
    get(count);
    out.arrays.clear();
    for (std::uint32_t i = 0; i < count && !short_read; ++i) {
      CheckpointEntry e;
      std::uint32_t rank = 0;
      get_string(e.label);
      get_string(e.type);
      get(rank);
      if (short_read) break;
      if ((e.type != "float32" && e.type != "float64") || rank < 1 || rank > 3)
        return error_message("'", name, "' has a corrupt header (array ", i, ": type '", e.type,
                             "', rank ", rank, ")");
      for (std::uint32_t d = 0; d < rank; ++d) {
        std::int64_t x = 0;
        get(x);
        if (x < 1 && !short_read)
          return error_message("'", name, "' has a corrupt header (array ", i, ": extent ", x, ")");
        e.extents.push_back(x);
      }
      if (out.version >= 2) get(e.checksum);
      out.arrays.push_back(std::move(e));
    }
    if (short_read || at != bytes.size())
      return error_message("'", name,
                           "' has a corrupt header (its size does not match its content)");
    return {};
  }
};

/// Rank 0: reads the header bytes of `path` and the file's size; "" or what is wrong.
inline std::string read_checkpoint_header(const std::string& path, std::string& bytes,
                                          std::uint64_t& file_size) {
  if (std::string error = not_regular_file(path, false); !error.empty()) return error;
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_message("cannot open '", path, "' for reading: ", std::strerror(errno));
  in.seekg(0, std::ios::end);
  file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  bytes.assign(static_cast<std::size_t>(std::min<std::uint64_t>(file_size, checkpoint_prefix_size)),
               '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::uint64_t header_size = 0;
  std::string error = CheckpointHeader::check_prefix(path, bytes, header_size);
  if (!error.empty()) return error;
  if (header_size < checkpoint_prefix_size || header_size > file_size)
    return error_message("'", path, "' is truncated or corrupt: ", file_size,
                         " bytes, but its header claims ", header_size);
  bytes.resize(static_cast<std::size_t>(header_size));
  in.read(bytes.data() + checkpoint_prefix_size,
          static_cast<std::streamsize>(header_size - checkpoint_prefix_size));
  if (!in) return error_message("cannot read the header of '", path, "'");
  CheckpointHeader header;
  return CheckpointHeader::decode(path, bytes, header);
}

/// One file opened by every rank of a Comm: rank 0 writes the header at a byte
/// offset; for each array every rank moves its owned block of the global
/// row-major array. Operations record the first local error and go
/// on, so that every rank makes the same collective calls; whether the file
/// opened is agreed on, so a failed open skips the rest on every rank alike.
class CheckpointFile {
 public:
  CheckpointFile(const Comm& comm, const std::string& path, bool write)
      : path_(path), write_(write) {
    const char* what = write ? "create" : "open";
#if KFUSE_ENABLE_MPI
    // Every rank first opens the file with the C++ library (rank 0 creating
    // it), and MPI_File_open follows only where all could: Open MPI's OMPIO
    // waits forever in a collective open that fails on some ranks only.
    if (write && comm.rank() == 0 && !std::ofstream(path, std::ios::binary | std::ios::trunc))
      fail(what);
    if (everywhere(comm) &&
        !std::fstream(path, write ? std::ios::in | std::ios::out | std::ios::binary
                                  : std::ios::in | std::ios::binary))
      fail(what);
    if (everywhere(comm)) {
      const int mode = write ? MPI_MODE_WRONLY : MPI_MODE_RDONLY;
      const int rc = MPI_File_open(comm.native(), path.c_str(), mode, MPI_INFO_NULL, &file_);
      if (rc != MPI_SUCCESS) {
        file_ = MPI_FILE_NULL;
        fail(rc, what);
      }
    }
#else
    stream_.open(path, write ? std::ios::out | std::ios::binary | std::ios::trunc
                             : std::ios::in | std::ios::binary);
    if (!stream_) fail(what);
#endif
    // Where another rank failed, the operations below do nothing and that
    // rank's error is the one the caller agrees on. A handle open on some
    // ranks only stays open: closing is collective.
    ok_ = everywhere(comm);
  }
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;
  ~CheckpointFile() { close(); }

  const std::string& error() const { return error_; }

  /// Independent: one rank writes `bytes` at `offset`.
  void write_at(std::uint64_t offset, const std::string& bytes) {
    if (!ok_) return;
#if KFUSE_ENABLE_MPI
    MPI_Status status;
    const int rc = MPI_File_write_at(file_, static_cast<MPI_Offset>(offset), bytes.data(),
                                     static_cast<int>(bytes.size()), MPI_BYTE, &status);
    if (rc != MPI_SUCCESS) fail(rc, "write");
#else
    stream_.seekp(static_cast<std::streamoff>(offset));
    stream_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!stream_) fail("write");
#endif
  }

  /// Collective: this rank's owned block of an array on `grid` (whose global
  /// row-major data starts at `offset`), written or read.
  template <class T, int N>
  void transfer(std::uint64_t offset, const Grid<N>& grid, T* block, bool write) {
    if (!ok_) return;
#if KFUSE_ENABLE_MPI
    const MPI_Datatype type = Comm::mpi_type<T>();
    const int count = static_cast<int>(grid.local_size());
    int sizes[N], subsizes[N], starts[N];
    for (int d = 0; d < N; ++d) {
      sizes[d] = static_cast<int>(grid.global_extent(d));
      subsizes[d] = static_cast<int>(grid.local_extent(d));
      starts[d] = static_cast<int>(grid.local_begin(d));
    }
    // A rank without cells still takes part, through a plain view.
    MPI_Datatype view = type;
    if (count > 0) {
      MPI_Type_create_subarray(N, sizes, subsizes, starts, MPI_ORDER_C, type, &view);
      MPI_Type_commit(&view);
    }
    int rc = MPI_File_set_view(file_, static_cast<MPI_Offset>(offset), type, view, "native",
                               MPI_INFO_NULL);
    // Independent transfers through the (collectively set) view: Open MPI
    // 4.1.4's default collective component, fcoll/vulcan, intermittently wrote
    // garbage for such subarray views (open-mpi/ompi#12718).
    MPI_Status status;
    if (rc == MPI_SUCCESS)
      rc = write ? MPI_File_write_at(file_, 0, block, count, type, &status)
                 : MPI_File_read_at(file_, 0, block, count, type, &status);
    if (count > 0) MPI_Type_free(&view);
    // Back to plain bytes from offset 0, for write_at (the header goes last).
    const int reset = MPI_File_set_view(file_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (rc == MPI_SUCCESS) rc = reset;
    int moved = 0;
    if (rc == MPI_SUCCESS) MPI_Get_count(&status, type, &moved);
    if (rc != MPI_SUCCESS)
      fail(rc, write ? "write" : "read");
    else if (moved != count)
      record(error_message(write ? "short write to '" : "short read from '", path_, "' (", moved,
                           " of ", count, " values)"));
#else
    const auto bytes = static_cast<std::streamsize>(grid.local_size() * sizeof(T));
    if (write) {
      stream_.seekp(static_cast<std::streamoff>(offset));
      stream_.write(reinterpret_cast<const char*>(block), bytes);
    } else {
      stream_.seekg(static_cast<std::streamoff>(offset));
      stream_.read(reinterpret_cast<char*>(block), bytes);
    }
    if (!stream_) fail(write ? "write" : "read");
#endif
  }

  /// Collective; what was written reaches the storage device (MPI_File_sync,
  /// fsync) before the file closes.
  void close() {
    if (!ok_) return;
    ok_ = false;
#if KFUSE_ENABLE_MPI
    if (write_) {
      const int rc = MPI_File_sync(file_);
      if (rc != MPI_SUCCESS) fail(rc, "sync");
    }
    const int rc = MPI_File_close(&file_);
    if (rc != MPI_SUCCESS) fail(rc, "close");
#else
    stream_.close();
    if (!stream_) fail("close");
    if (write_) record(sync_file(path_));
#endif
  }

 private:
  /// Collective: whether no rank has recorded an error so far.
  bool everywhere(const Comm& comm) const {
    return comm.allreduce(error_.empty() ? 1 : 0, ReduceOp::min) == 1;
  }
  void record(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  void fail(const char* what) {
    record(error_message("cannot ", what, " '", path_, "': ", std::strerror(errno)));
  }
#if KFUSE_ENABLE_MPI
  void fail(int rc, const char* what) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    record(error_message("cannot ", what, " '", path_, "': ", std::string(text, length)));
  }
  MPI_File file_ = MPI_FILE_NULL;
#else
  std::fstream stream_;
#endif
  std::string path_;
  bool write_;
  std::string error_;
  bool ok_ = false;
};

/// Collective checks shared by save and load: one path, arrays of one
/// communicator with distinct labels, the same arrays on every rank, and (with
/// MPI) extents that MPI-IO's int counts can describe. Returns the
/// communicator the arrays' grids were made on, which the call then uses:
/// unlike a grid's own Cartesian communicator, it is the same on a rank that
/// passed an array of another grid.
template <class First, class... Rest>
const Comm& check_checkpoint_arguments(const char* api, const std::string& path,
                                       const First& first, const Rest&... rest) {
  const Comm& comm = first.grid().base_comm();
  check_same_path(comm, api, path);
  std::string error, arrays;
  std::set<std::string> labels;
  auto check = [&](const auto& a) {
    const CheckpointEntry entry = CheckpointEntry::of(a);
    arrays += (arrays.empty() ? "'" : ", '") + entry.label + "' " + entry.describe();
    if (!error.empty()) return;
    if (a.grid().base_comm() != comm)
      error = error_message("array '", a.label(), "' lives on another communicator than '",
                            first.label(), "'; checkpoint arrays of one communicator together");
    else if (!labels.insert(a.label()).second)
      error = error_message("two arrays are labelled '", a.label(),
                            "'; a checkpoint tells arrays apart by label: give each its own");
#if KFUSE_ENABLE_MPI
    constexpr index_t most = std::numeric_limits<int>::max();
    for (int d = 0; d < std::decay_t<decltype(a)>::rank; ++d)
      if (a.grid().global_extent(d) > most && error.empty())
        error = error_message("array '", a.label(), "' has extent ", a.grid().global_extent(d),
                              " in dimension ", d, "; MPI-IO takes at most ", most);
    if (a.grid().local_size() > most && error.empty())
      error = error_message("array '", a.label(), "' has ", a.grid().local_size(),
                            " cells on this rank; MPI-IO takes at most ", most);
#endif
  };
  check(first);
  (check(rest), ...);
  comm.agree_or_throw(with_api(api, error));
  check_same_as_root(comm, api, "arrays", arrays);
  return comm;
}

/// "u, v" for messages.
inline std::string label_list(const std::vector<CheckpointEntry>& entries) {
  std::string s;
  for (const CheckpointEntry& e : entries) s += (s.empty() ? "'" : ", '") + e.label + "'";
  return s;
}

/// "" when the file's header describes exactly the given arrays, else what differs.
inline std::string compare_checkpoint(const std::string& path, const CheckpointHeader& file,
                                      const CheckpointHeader& given) {
  if (file.arrays.size() != given.arrays.size())
    return error_message("'", path, "' holds ", file.arrays.size(), " arrays (",
                         label_list(file.arrays), "); the call passed ", given.arrays.size(), " (",
                         label_list(given.arrays), ")");
  for (std::size_t i = 0; i < file.arrays.size(); ++i) {
    const CheckpointEntry &f = file.arrays[i], &g = given.arrays[i];
    if (f.label != g.label)
      return error_message("array ", i, " of '", path, "' is '", f.label,
                           "' but the array given is '", g.label, "'");
    if (f.type != g.type || f.extents != g.extents)
      return error_message("array ", i, " ('", f.label, "') of '", path, "' is ", f.describe(),
                           " but the array given is ", g.describe());
  }
  return {};
}

/// Where a save writes before the rename. One name per path: a save killed
/// mid-write leaves at most this file, and the next save replaces it.
inline std::string temporary_name(const std::string& path) { return path + ".tmp"; }

}  // namespace detail

/// Collective: writes the owned cells of `arrays` (Array<float or double, N>,
/// distinct labels) to `path`, replacing an older file only once the new one
/// is complete and synced.
template <class... A>
void save_checkpoint(const std::string& path, const A&... arrays) {
  static_assert(sizeof...(A) >= 1,
                "kfuse::save_checkpoint(path, arrays...): pass at least one array");
  static_assert((detail::is_checkpoint_array<A>::value && ...),
                "kfuse::save_checkpoint(path, arrays...): arrays must be kfuse::Array<float, N> "
                "or kfuse::Array<double, N>");
  constexpr const char* api = "kfuse::save_checkpoint";
  const Comm& comm = detail::check_checkpoint_arguments(api, path, arrays...);
  const std::string temporary = detail::temporary_name(path);
  std::string error;
  if (comm.rank() == 0) {
    // A directory or a FIFO in the way fails now, not after the whole write.
    error = detail::not_regular_file(path, false);
    if (error.empty()) error = detail::not_regular_file(temporary, false);
    if (error.empty()) std::remove(temporary.c_str());  // what a killed save left
  }
  comm.agree_or_throw(detail::with_api(api, error));

  detail::CheckpointHeader header{{detail::CheckpointEntry::of(arrays)...}};
  {
    detail::CheckpointFile file(comm, temporary, true);
    // The data first: the header carries their checksums.
    std::uint64_t offset = header.size();
    std::array<std::uint64_t, sizeof...(A)> checksums{};
    std::size_t i = 0;
    auto write = [&](const auto& a) {
      auto block = detail::owned_block(a);
      checksums[i] = detail::block_checksum(a.grid(), block);
      file.transfer(offset, a.grid(), block.data(), true);
      offset += header.arrays[i++].bytes();
    };
    (write(arrays), ...);
    comm.allreduce(checksums.data(), int(checksums.size()), ReduceOp::sum);
    for (std::size_t k = 0; k < checksums.size(); ++k) header.arrays[k].checksum = checksums[k];
    if (comm.rank() == 0) file.write_at(0, header.encode());
    file.close();
    error = file.error();
  }
  // Every rank has written, synced and closed (the allreduce orders it):
  // publish, or leave the directory as it was.
  const bool failed = comm.allreduce(error.empty() ? 0 : 1, ReduceOp::max) == 1;
  if (comm.rank() == 0 && !failed) {
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
      error = detail::error_message("cannot rename '", temporary, "' to '", path,
                                    "': ", std::strerror(errno));
    else if (const std::string sync = detail::sync_directory_of(path); !sync.empty())
      error = detail::error_message("'", path, "' is written, but ", sync);
  }
  if (comm.rank() == 0 && (failed || !error.empty())) std::remove(temporary.c_str());
  comm.agree_or_throw(detail::with_api(api, error));
}

/// Collective: reads `arrays` back from a file save_checkpoint wrote, at any
/// rank count. Throws kfuse::Error on every rank, before any array changes,
/// when the file is missing, not a regular file, damaged (header, size or
/// data checksum) or holds other arrays (count, labels, element types, ranks,
/// extents) than the ones given.
template <class... A>
void load_checkpoint(const std::string& path, A&... arrays) {
  static_assert(sizeof...(A) >= 1,
                "kfuse::load_checkpoint(path, arrays...): pass at least one array");
  static_assert((detail::is_checkpoint_array<A>::value && ...),
                "kfuse::load_checkpoint(path, arrays...): arrays must be kfuse::Array<float, N> "
                "or kfuse::Array<double, N>");
  constexpr const char* api = "kfuse::load_checkpoint";
  const Comm& comm = detail::check_checkpoint_arguments(api, path, arrays...);

  // Rank 0 reads and checks the header; every rank gets its bytes.
  std::string bytes, error;
  std::uint64_t file_size = 0;
  if (comm.rank() == 0) error = detail::read_checkpoint_header(path, bytes, file_size);
  comm.agree_or_throw(detail::with_api(api, error));
  detail::broadcast_from_root(comm, bytes);
  file_size = comm.allreduce(comm.rank() == 0 ? file_size : 0, ReduceOp::max);
  detail::CheckpointHeader file;
  detail::CheckpointHeader::decode(path, bytes, file);

  const std::uint64_t described = bytes.size() + file.data_size();
  error = file_size == described
              ? detail::compare_checkpoint(path, file, {{detail::CheckpointEntry::of(arrays)...}})
              : detail::error_message("'", path, "' has ", file_size,
                                      " bytes but its header describes ", described,
                                      file_size < described ? " (truncated)" : "");
  comm.agree_or_throw(detail::with_api(api, error));

  // Everything is read and checked before anything is stored: a failed read
  // or a damaged array changes nothing.
  std::tuple<std::vector<typename std::remove_const_t<A>::value_type>...> blocks{
      std::vector<typename std::remove_const_t<A>::value_type>(
          static_cast<std::size_t>(arrays.grid().local_size()))...};
  std::array<std::uint64_t, sizeof...(A)> checksums{};
  {
    detail::CheckpointFile in(comm, path, false);
    std::uint64_t offset = bytes.size();
    std::apply(
        [&](auto&... block) {
          std::size_t i = 0;
          auto read = [&](const auto& a, auto& values) {
            in.transfer(offset, a.grid(), values.data(), false);
            checksums[i] = detail::block_checksum(a.grid(), values);
            offset += file.arrays[i++].bytes();
          };
          (read(arrays, block), ...);
        },
        blocks);
    in.close();
    error = in.error();
  }
  comm.agree_or_throw(detail::with_api(api, error));
  comm.allreduce(checksums.data(), int(checksums.size()), ReduceOp::sum);
  for (std::size_t i = 0; i < checksums.size() && error.empty() && file.version >= 2; ++i)
    if (checksums[i] != file.arrays[i].checksum)
      error = detail::error_message("'", path, "' is damaged: the data of array '",
                                    file.arrays[i].label, "' do not match its checksum; no array "
                                    "was changed (load an older checkpoint)");
  comm.agree_or_throw(detail::with_api(api, error));
  std::apply([&](const auto&... block) { (detail::store_owned_block(arrays, block), ...); },
             blocks);
}

}  // namespace kfuse
