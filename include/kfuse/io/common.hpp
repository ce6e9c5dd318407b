// What the io writers and readers share: collective checks of their global
// arguments, broadcasting rank 0's bytes, and an array's owned block copied
// to and from the host (row-major, this rank's cells only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/array/array.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/dist/comm.hpp"

namespace kfuse::detail {

/// "api: error", or "" when there is no error (what agree_or_throw takes).
inline std::string with_api(const char* api, const std::string& error) {
  return error.empty() ? error : api + (": " + error);
}

/// Replaces `bytes` on every rank by rank 0's (collective).
inline void broadcast_from_root(const Comm& comm, std::string& bytes) {
#if KFUSE_ENABLE_MPI
  // Counts are ints in MPI: long headers travel in chunks.
  std::uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm.native());
  bytes.resize(size);
  constexpr std::uint64_t chunk = 1u << 30;
  for (std::uint64_t at = 0; at < size; at += chunk) {
    const int count = static_cast<int>(size - at < chunk ? size - at : chunk);
    MPI_Bcast(bytes.data() + at, count, MPI_CHAR, 0, comm.native());
  }
#else
  (void)comm, (void)bytes;
#endif
}

/// Collective: every rank must pass the same `what` as rank 0 (described by
/// `text`), else a kfuse::Error on every rank naming both.
inline void check_same_as_root(const Comm& comm, const char* api, const char* what,
                               const std::string& text) {
  std::string root_text = text;
  broadcast_from_root(comm, root_text);
  std::string error;
  if (root_text != text)
    error = error_message("rank ", comm.rank(), " passed ", text, " but rank 0 passed ", root_text,
                          "; every rank must pass the same ", what);
  comm.agree_or_throw(with_api(api, error));
}

/// Collective: every rank must name the same file, or none could agree on
/// what was written (and MPI-IO's collective open would fail or hang).
inline void check_same_path(const Comm& comm, const char* api, const std::string& path) {
  check_same_as_root(comm, api, "path", "'" + path + "'");
}

/// Calls f(i, j, k) (as many indices as N) over the owned cells of a view
/// of `grid`, in row-major order.
template <int N, class F>
void for_each_owned(const Grid<N>& grid, const F& f) {
  const Box<N> b = owned_box(grid);
  if constexpr (N == 1)
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i) f(i);
  if constexpr (N == 2)
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j) f(i, j);
  if constexpr (N == 3)
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (index_t k = b.lo[2]; k < b.hi[2]; ++k) f(i, j, k);
}

/// This rank's owned cells on the host, row-major.
template <class T, int N>
std::vector<T> owned_block(const Array<T, N>& a) {
  // The whole view is contiguous, so this mirror works for every memory space
  // (and is the view itself on the host).
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
  std::vector<T> block;
  block.reserve(static_cast<std::size_t>(a.grid().local_size()));
  for_each_owned(a.grid(), [&](auto... i) { block.push_back(host(i...)); });
  return block;
}

/// Writes `block` (as owned_block returns it) into the owned cells; halo
/// cells keep their values but are marked stale.
template <class T, int N>
void store_owned_block(const Array<T, N>& a, const std::vector<T>& block) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
  std::size_t n = 0;
  for_each_owned(a.grid(), [&](auto... i) { host(i...) = block[n++]; });
  Kokkos::deep_copy(a.view(), host);
  a.mark_halo_stale();
}

}  // namespace kfuse::detail
