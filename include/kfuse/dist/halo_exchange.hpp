// HaloExchange<N>: refreshes the halos of several arrays on one grid in one
// round of messages: each rank trades one buffer with each of its up to
// 3^N - 1 neighbours (faces, edges and corners, so 9- and 27-point stencils
// see correct corners), packed and unpacked by Kokkos kernels labelled
// "kfuse:halo...". A neighbour that is this rank (periodic, one rank along a
// dimension) is a local copy. Zero-gradient boundaries are mirrored last.
//
// start() packs and posts the messages; finish() waits and unpacks, so a
// caller can compute interior points in between (overlap).
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/array/array.hpp"
#include "kfuse/dist/grid.hpp"

namespace kfuse::detail {

/// Copies between a box of a view and a contiguous buffer (row-major).
template <class T, int N, bool Unpack>
struct BoxCopy {
  view_t<T, N> view;
  T* buffer;
  std::int64_t lo[N];
  std::int64_t extent[N];

  KOKKOS_INLINE_FUNCTION void move(T& cell, std::int64_t at) const {
    if (Unpack)
      cell = buffer[at];
    else
      buffer[at] = cell;
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { move(view(i), i - lo[0]); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    move(view(i, j), (i - lo[0]) * extent[1] + (j - lo[1]));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    move(view(i, j, k), ((i - lo[0]) * extent[1] + (j - lo[1])) * extent[2] + (k - lo[2]));
  }
};

/// Mirrors owned layers into the halo across one face: halo[-1-k] = owned[k].
template <class T, int N>
struct MirrorFace {
  view_t<T, N> view;
  int dim;
  std::int64_t first_owned, last_owned;  // view coordinates along dim
  bool low;                              // the face at the low end of dim

  KOKKOS_INLINE_FUNCTION std::int64_t source(std::int64_t halo_index) const {
    return low ? 2 * first_owned - 1 - halo_index : 2 * last_owned + 1 - halo_index;
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { view(i) = view(source(i)); }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    if (dim == 0)
      view(i, j) = view(source(i), j);
    else
      view(i, j) = view(i, source(j));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    if (dim == 0)
      view(i, j, k) = view(source(i), j, k);
    else if (dim == 1)
      view(i, j, k) = view(i, source(j), k);
    else
      view(i, j, k) = view(i, j, source(k));
  }
};

}  // namespace kfuse::detail

namespace kfuse {

template <int N>
class HaloExchange {
 public:
  explicit HaloExchange(const Grid<N>& grid) : grid_(grid) {
    Direction<N> dir{};
    for (int index = 0; index < directions; ++index) {
      int rest = index;
      for (int d = N - 1; d >= 0; --d, rest /= 3) dir[d] = rest % 3 - 1;
      Link& link = links_[index];
      link.dir = dir;
      link.rank = is_self(dir) ? -1 : grid.neighbor(dir);
    }
  }

  /// Adds an array (on this exchange's grid) to the round.
  template <class T>
  void add(const Array<T, N>& array) {
    arrays_.push_back(make_entry(array));
  }
  bool empty() const { return arrays_.empty(); }

  /// Packs and posts every message.
  void start() {
    for (Link& link : links_) {
      if (link.rank < 0) continue;
      std::size_t bytes = 0;
      for (const Entry& e : arrays_) bytes += e.bytes(box(link.dir, false));
      link.send = buffer_t("kfuse:halo-send", bytes);
      link.recv = buffer_t("kfuse:halo-recv", bytes);
      std::size_t offset = 0;
      for (const Entry& e : arrays_) {
        const detail::Box<N> b = box(link.dir, false);
        e.copy(b, link.send.data() + offset, false);
        offset += e.bytes(b);
      }
    }
    Kokkos::fence();  // buffers complete before MPI or the local copy reads them
    const int me = grid_.comm().rank();
    for (Link& link : links_) {
      if (link.rank < 0) continue;
      if (link.rank == me) continue;  // local copy in finish()
#if KFUSE_ENABLE_MPI
      link.host_send = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), link.send);
      link.host_recv = Kokkos::create_mirror_view(Kokkos::HostSpace(), link.recv);
      const int size = static_cast<int>(link.send.extent(0));
      // The neighbour at `dir` sends toward -dir, tagged with that direction.
      const int recv_tag = Grid<N>::direction_index(opposite(link.dir));
      const int send_tag = Grid<N>::direction_index(link.dir);
      requests_.emplace_back();
      MPI_Irecv(link.host_recv.data(), size, MPI_BYTE, link.rank, recv_tag, grid_.comm().native(),
                &requests_.back());
      requests_.emplace_back();
      MPI_Isend(link.host_send.data(), size, MPI_BYTE, link.rank, send_tag, grid_.comm().native(),
                &requests_.back());
#endif
    }
  }

  /// Waits, unpacks, mirrors zero-gradient faces, marks the halos fresh.
  void finish() {
    const int me = grid_.comm().rank();
#if KFUSE_ENABLE_MPI
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
#endif
    for (Link& link : links_) {
      if (link.rank < 0) continue;
      if (link.rank == me) {
        // Periodic onto this rank: what arrives from `dir` is what we send toward -dir.
        Kokkos::deep_copy(link.recv, links_[Grid<N>::direction_index(opposite(link.dir))].send);
      } else {
#if KFUSE_ENABLE_MPI
        Kokkos::deep_copy(link.recv, link.host_recv);
#endif
      }
      std::size_t offset = 0;
      for (const Entry& e : arrays_) {
        const detail::Box<N> b = box(link.dir, true);
        e.copy(b, link.recv.data() + offset, true);
        offset += e.bytes(b);
      }
    }
    for (const Entry& e : arrays_) e.mirror();
    for (const Entry& e : arrays_) e.mark_fresh();
    Kokkos::fence();
  }

  void run() {
    start();
    finish();
  }

 private:
  static constexpr int directions = N == 1 ? 3 : N == 2 ? 9 : 27;
  using buffer_t = Kokkos::View<char*, detail::MemSpace>;
  using host_buffer_t = typename buffer_t::HostMirror;

  struct Link {
    Direction<N> dir{};
    int rank = -1;  // -1: no message (self direction, or beyond a fixed boundary)
    buffer_t send, recv;
    host_buffer_t host_send, host_recv;
  };

  struct Entry {
    std::function<std::size_t(const detail::Box<N>&)> bytes;
    std::function<void(const detail::Box<N>&, char*, bool)> copy;
    std::function<void()> mirror;
    std::function<void()> mark_fresh;
  };

  static bool is_self(const Direction<N>& dir) {
    for (int d = 0; d < N; ++d)
      if (dir[d] != 0) return false;
    return true;
  }
  static Direction<N> opposite(Direction<N> dir) {
    for (int& o : dir) o = -o;
    return dir;
  }

  /// Cells sent toward `dir` (owned) or received from `dir` (halo).
  detail::Box<N> box(const Direction<N>& dir, bool halo_side) const {
    const std::int64_t h = grid_.halo();
    detail::Box<N> b;
    for (int d = 0; d < N; ++d) {
      const std::int64_t n = grid_.local_extent(d);
      if (dir[d] == 0) {
        b.lo[d] = h;
        b.hi[d] = h + n;
      } else if (dir[d] < 0) {
        b.lo[d] = halo_side ? 0 : h;
        b.hi[d] = b.lo[d] + h;
      } else {
        b.lo[d] = halo_side ? h + n : n;
        b.hi[d] = b.lo[d] + h;
      }
    }
    return b;
  }

  template <class T>
  Entry make_entry(const Array<T, N>& array) const {
    Entry e;
    e.bytes = [](const detail::Box<N>& b) { return static_cast<std::size_t>(b.size()) * sizeof(T); };
    e.copy = [view = array.view()](const detail::Box<N>& b, char* buffer, bool unpack) {
      Kokkos::Array<std::int64_t, N> lo, hi;
      std::int64_t extent[N];
      for (int d = 0; d < N; ++d) {
        lo[d] = b.lo[d];
        hi[d] = b.hi[d];
        extent[d] = b.hi[d] - b.lo[d];
      }
      T* typed = reinterpret_cast<T*>(buffer);
      if (unpack) {
        detail::BoxCopy<T, N, true> f{view, typed, {}, {}};
        for (int d = 0; d < N; ++d) f.lo[d] = lo[d], f.extent[d] = extent[d];
        detail::for_box<N>("kfuse:halo-unpack", lo, hi, f);
      } else {
        detail::BoxCopy<T, N, false> f{view, typed, {}, {}};
        for (int d = 0; d < N; ++d) f.lo[d] = lo[d], f.extent[d] = extent[d];
        detail::for_box<N>("kfuse:halo-pack", lo, hi, f);
      }
    };
    e.mirror = [array, grid = grid_]() {
      const std::int64_t h = grid.halo();
      for (int d = 0; d < N; ++d) {
        if (grid.periodic(d) || grid.boundary(d) != Boundary::zero_gradient) continue;
        for (int side = 0; side < 2; ++side) {
          const bool low = side == 0;
          if (low ? grid.coord(d) != 0 : grid.coord(d) != grid.ranks(d) - 1) continue;
          Kokkos::Array<std::int64_t, N> lo, hi;
          for (int k = 0; k < N; ++k) {
            lo[k] = 0;
            hi[k] = static_cast<std::int64_t>(array.view().extent(k));
          }
          lo[d] = low ? 0 : h + grid.local_extent(d);
          hi[d] = lo[d] + h;
          detail::MirrorFace<T, N> f{array.view(), d, h, h + grid.local_extent(d) - 1, low};
          detail::for_box<N>("kfuse:halo-mirror", lo, hi, f);
        }
      }
    };
    e.mark_fresh = [array]() { array.mark_halo_fresh(); };
    return e;
  }

  Grid<N> grid_;
  std::array<Link, directions> links_;
  std::vector<Entry> arrays_;
#if KFUSE_ENABLE_MPI
  std::vector<MPI_Request> requests_;
#endif
};

}  // namespace kfuse
