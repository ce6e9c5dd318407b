// HaloExchange<N>: refreshes the halos of several arrays on one grid in one
// round of messages: each rank trades one message with each of its up to
// 3^N - 1 neighbours (faces, edges and corners, so 9- and 27-point stencils
// see correct corners). A neighbour that is this rank (periodic, one rank
// along a dimension) is a local copy. Zero-gradient boundaries are mirrored
// last. Used by eager assignments and fused programs (exec/).
//
// start() packs and posts the messages; finish() waits and unpacks, so a
// caller can compute interior points in between (overlap). Messages a rank
// sends to itself (periodic with one rank along a dimension) are unpacked by
// start(): those faces, like fixed boundaries, are ready before finish()
// (ready_after_start()), and overlapped kernels need no margin from them.
//
// Data path: every message of the round is a segment of one send buffer and
// one receive buffer in the arrays' memory space; each array is packed by one
// kernel ("kfuse:halo-pack") covering all directions, and unpacked by one per
// pass ("kfuse:halo-unpack": the messages to itself, then the others). The
// buffers are fenced before MPI sees them. MPI gets the device buffers
// themselves when it can read them (host memory, or a CUDA-aware MPI, see
// mpi_takes_device_buffers()); otherwise the round is staged through host
// mirrors (pinned memory under CUDA), one copy each way. Buffers come from a
// pool and go back to it after finish(), so repeated exchanges of the same
// arrays allocate nothing.
#pragma once

#include <array>
#include <climits>
#include <cstddef>
#include <functional>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/dist/grid.hpp"
#include "kfuse/dist/mpi_buffers.hpp"

namespace kfuse::detail {

/// The buffers of one exchange round: send and receive buffers in MemSpace
/// and, when staged, their host copies (empty views otherwise).
struct HaloBuffers {
  Kokkos::View<char*, MemSpace> send, recv;
  Kokkos::View<char*, StagingSpace> host_send, host_recv;

  bool fits(std::size_t send_bytes, std::size_t recv_bytes, bool staged) const {
    return send.extent(0) == send_bytes && recv.extent(0) == recv_bytes &&
           (host_send.extent(0) == send_bytes) == staged;
  }
};

/// Exchange buffers kept between rounds, matched by exact size (the same
/// arrays on the same grid ask for the same sizes every time). At most
/// `capacity` idle sets are kept, most recently used first; all are released
/// when Kokkos is finalized.
class HaloBufferPool {
 public:
  static HaloBufferPool& instance() {
    static HaloBufferPool pool;
    return pool;
  }

  HaloBuffers take(std::size_t send_bytes, std::size_t recv_bytes, bool staged) {
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
      if (it->fits(send_bytes, recv_bytes, staged)) {
        HaloBuffers found = *it;
        idle_.erase(std::next(it).base());
        return found;
      }
    }
    HaloBuffers b;
    const auto no_init = [](const char* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    b.send = decltype(b.send)(no_init("kfuse:halo-send"), send_bytes);
    b.recv = decltype(b.recv)(no_init("kfuse:halo-recv"), recv_bytes);
    if (staged) {
      b.host_send = decltype(b.host_send)(no_init("kfuse:halo-send-host"), send_bytes);
      b.host_recv = decltype(b.host_recv)(no_init("kfuse:halo-recv-host"), recv_bytes);
    }
    return b;
  }

  void give_back(HaloBuffers b) {
    if (!finalize_hook_set_) {
      // Views must not outlive Kokkos: drop the idle buffers at finalize.
      Kokkos::push_finalize_hook([this] {
        idle_.clear();
        finalize_hook_set_ = false;
      });
      finalize_hook_set_ = true;
    }
    idle_.push_back(std::move(b));
    if (idle_.size() > capacity) idle_.erase(idle_.begin());
  }

  std::size_t idle() const { return idle_.size(); }

 private:
  static constexpr std::size_t capacity = 16;
  std::vector<HaloBuffers> idle_;
  bool finalize_hook_set_ = false;
};

/// Where one array's cells of every message of a round lie: box b (view
/// coordinates lo, extent) holds lines [first[b], first[b + 1]) and cells
/// [first_cell[b], first_cell[b + 1]) of the launch, a line being the box's
/// cells along the last dimension (contiguous in the view and in the buffer),
/// stored row-major from data[b].
template <int N>
struct HaloBoxes {
  static constexpr int max_boxes = 27;
  int count = 0;
  Kokkos::Array<std::int64_t, max_boxes + 1> first{}, first_cell{};
  Kokkos::Array<char*, max_boxes> data{};
  Kokkos::Array<Kokkos::Array<std::int64_t, N>, max_boxes> lo{}, extent{};

  std::int64_t lines() const { return first[count]; }
  std::int64_t cells() const { return first_cell[count]; }

  /// The box holding item i of a launch, `starts` being `first` (lines) or `first_cell`.
  KOKKOS_INLINE_FUNCTION int box_of(const Kokkos::Array<std::int64_t, max_boxes + 1>& starts,
                                    std::int64_t i) const {
    int b = 0;
    while (i >= starts[b + 1]) ++b;
    return b;
  }
  /// The view's cell that is cell `k` (row-major) of box b.
  template <class View>
  KOKKOS_INLINE_FUNCTION auto* view_cell(const View& view, int b, std::int64_t k) const {
    std::int64_t at[N];
    for (int d = N - 1; d > 0; --d) {
      at[d] = lo[b][d] + k % extent[b][d];
      k /= extent[b][d];
    }
    at[0] = lo[b][0] + k;
    if constexpr (N == 1)
      return &view(at[0]);
    else if constexpr (N == 2)
      return &view(at[0], at[1]);
    else
      return &view(at[0], at[1], at[2]);
  }
};

/// Copies one array's cells between the view and the buffers, every box of a
/// round in one launch: pack (view to buffers) or unpack (buffers to view).
/// Host CPUs (HostSchedule): a team per line: the box and the line's start
/// are found once per line (not per cell), and the team's threads copy its
/// consecutive cells.
template <class T, int N, bool Unpack>
struct HaloCopy {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;

  view_t<T, N> view;
  HaloBoxes<N> boxes;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Policy::member_type& team) const {
    const std::int64_t line = team.league_rank();
    const int b = boxes.box_of(boxes.first, line);
    const std::int64_t length = boxes.extent[b][N - 1];
    const std::int64_t start = (line - boxes.first[b]) * length;  // the line's first cell
    T* const slot = reinterpret_cast<T*>(boxes.data[b]) + start;
    T* const cell = boxes.view_cell(view, b, start);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, length), [&](std::int64_t k) {
      if constexpr (Unpack)
        cell[k] = slot[k];
      else
        slot[k] = cell[k];
    });
  }
};

/// The same on GPUs (DeviceSchedule): a thread per cell, consecutive threads
/// along a line (coalesced), each finding its box among at most 26. A team
/// per line left most of a GPU team idle on a column face, whose lines are a
/// cell long: 10246 teams to pack a 5120² grid's periodic faces, 52 us a
/// launch on an H100 (docs/benchmarks-log.md, the sixth GPU session).
template <class T, int N, bool Unpack>
struct HaloCellCopy {
  view_t<T, N> view;
  HaloBoxes<N> boxes;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t cell) const {
    const int b = boxes.box_of(boxes.first_cell, cell);
    const std::int64_t k = cell - boxes.first_cell[b];
    T* const slot = reinterpret_cast<T*>(boxes.data[b]) + k;
    T* const in_view = boxes.view_cell(view, b, k);
    if constexpr (Unpack)
      *in_view = *slot;
    else
      *slot = *in_view;
  }
};

/// One pack or unpack launch of every box of `boxes`, on ExecSpace's schedule.
template <bool Unpack, class T, int N>
void copy_halo_boxes(const view_t<T, N>& view, const HaloBoxes<N>& boxes) {
  const std::string label = Unpack ? "kfuse:halo-unpack" : "kfuse:halo-pack";
  if constexpr (std::is_same_v<default_schedule, DeviceSchedule>) {
    using Copy = HaloCellCopy<T, N, Unpack>;
    Kokkos::parallel_for(label, range_for<Copy>(0, boxes.cells()), Copy{view, boxes});
  } else {
    using Copy = HaloCopy<T, N, Unpack>;
    Kokkos::parallel_for(label, typename Copy::Policy(boxes.lines(), Kokkos::AUTO),
                         Copy{view, boxes});
  }
}

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
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  /// A round left unfinished (an exception between start() and finish())
  /// still completes its messages before the buffers can be reused.
  ~HaloExchange() {
    if (!in_flight_) return;
#if KFUSE_ENABLE_MPI
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
#endif
    Kokkos::fence();
    detail::HaloBufferPool::instance().give_back(std::move(buffers_));
  }

  /// Adds an array (a kfuse::Array on this exchange's grid) to the round; its halo is
  /// marked fresh after finish().
  template <class A, class = decltype(std::declval<const A&>().mark_halo_fresh())>
  void add(const A& array) {
    add(array.view(), [array] { array.mark_halo_fresh(); });
  }
  /// Adds a rank-N view of this grid's local block (owned cells and halo, LayoutRight, as
  /// Array::view()) to the round; `on_fresh` runs after finish() has filled its halo. A
  /// view of another size is a caller's bug: a kfuse::Error on this rank, nothing added.
  template <class D, class... P>
  void add(const Kokkos::View<D, P...>& view, std::function<void()> on_fresh) {
    using View = Kokkos::View<D, P...>;
    static_assert(int(View::rank) == N,
                  "kfuse::HaloExchange<N>::add(view, on_fresh): the view's rank must be N");
    for (int d = 0; d < N; ++d)
      if (static_cast<std::int64_t>(view.extent(d)) != grid_.local_extent(d) + 2 * grid_.halo())
        throw Error(detail::error_message(
            "kfuse::HaloExchange::add: view '", view.label(), "' has ", view.extent(d),
            " entries along dimension ", d, "; this rank's block of the grid has ",
            grid_.local_extent(d), " and a halo of ", grid_.halo(), " on each side"));
    using T = typename View::non_const_value_type;
    arrays_.push_back(make_entry<T>(detail::view_t<T, N>(view), std::move(on_fresh)));
  }
  bool empty() const { return arrays_.empty(); }

  /// Packs and posts every message.
  void start() {
    if (arrays_.empty()) return;
    const int me = grid_.comm().rank();
    const bool staged = !detail::mpi_takes_device_buffers();

    // Layout: one segment per message, each array's cells at 16-byte-aligned
    // offsets in it. Both ends compute the same layout (same arrays, same
    // order, boxes of equal size), so messages need no header.
    std::size_t send_bytes = 0, recv_bytes = 0;
    bool remote = false;
    for (Link& link : links_) {
      if (link.rank < 0) continue;
      link.cells = box(link.dir, false).size();
      link.bytes = 0;
      for (const Entry& e : arrays_) link.bytes += padded(link.cells, e.element_size);
      if (link.bytes > static_cast<std::size_t>(INT_MAX))
        throw Error(detail::error_message("kfuse::HaloExchange: a halo message of ", link.bytes,
                                          " bytes exceeds MPI's int count; use fewer arrays "
                                          "per exchange or more ranks"));
      link.send_offset = send_bytes;
      send_bytes += link.bytes;
      if (link.rank != me) {
        remote = true;
        link.recv_offset = recv_bytes;
        recv_bytes += link.bytes;
      }
    }
    buffers_ = detail::HaloBufferPool::instance().take(send_bytes, recv_bytes, staged);
    in_flight_ = true;

    for (std::size_t a = 0; a < arrays_.size(); ++a) arrays_[a].copy(boxes(Pass::pack, a), false);
    Kokkos::fence();  // the buffers are complete before MPI or the local copies read them
    // Messages to this rank need nothing from others: their halo faces are
    // ready as soon as start() returns (ready_after_start()).
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      arrays_[a].copy(boxes(Pass::unpack_self, a), true);
    if (!remote) return;
    if (staged) detail::copy_values("copy [halo staging]", buffers_.host_send, buffers_.send);

#if KFUSE_ENABLE_MPI
    char* send = staged ? buffers_.host_send.data() : buffers_.send.data();
    char* recv = staged ? buffers_.host_recv.data() : buffers_.recv.data();
    for (Link& link : links_) {
      if (link.rank < 0 || link.rank == me) continue;
      const int size = static_cast<int>(link.bytes);
      // The neighbour at `dir` sends toward -dir, tagged with that direction.
      const int recv_tag = Grid<N>::direction_index(opposite(link.dir));
      const int send_tag = Grid<N>::direction_index(link.dir);
      requests_.emplace_back();
      MPI_Irecv(recv + link.recv_offset, size, MPI_BYTE, link.rank, recv_tag, grid_.comm().native(),
                &requests_.back());
      requests_.emplace_back();
      MPI_Isend(send + link.send_offset, size, MPI_BYTE, link.rank, send_tag, grid_.comm().native(),
                &requests_.back());
    }
#endif
  }

  /// Waits, unpacks, mirrors zero-gradient faces, marks the halos fresh.
  void finish() {
    if (arrays_.empty()) return;
#if KFUSE_ENABLE_MPI
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
#endif
    if (buffers_.host_recv.extent(0) > 0)
      detail::copy_values("copy [halo staging]", buffers_.recv, buffers_.host_recv);
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      arrays_[a].copy(boxes(Pass::unpack_remote, a), true);
    for (const Entry& e : arrays_) e.mirror();
    for (const Entry& e : arrays_)
      if (e.mark_fresh) e.mark_fresh();
    Kokkos::fence();
    in_flight_ = false;
    detail::HaloBufferPool::instance().give_back(std::move(buffers_));
    buffers_ = {};
  }

  void run() {
    start();
    finish();
  }

  /// Whether the halo face on side `side` (0: low, 1: high) of dimension d
  /// is fresh once start() returns, before finish(): its cells come from
  /// this rank (periodic with one rank along d; start() copies them) or are
  /// held (a fixed boundary). Overlapped kernels need no margin from it.
  bool ready_after_start(int d, int side) const {
    Direction<N> dir{};
    dir[d] = side == 0 ? -1 : 1;
    const int rank = links_[Grid<N>::direction_index(dir)].rank;
    if (rank >= 0) return rank == grid_.comm().rank();
    return grid_.boundary(d) == Boundary::fixed;  // zero-gradient faces are mirrored by finish()
  }

 private:
  static constexpr int directions = N == 1 ? 3 : N == 2 ? 9 : 27;

  struct Link {
    Direction<N> dir{};
    int rank = -1;  // -1: no message (self direction, or beyond a fixed boundary)
    // Set by start():
    std::int64_t cells = 0;       // per array
    std::size_t bytes = 0;        // of the message (all arrays)
    std::size_t send_offset = 0;  // of the message in the send buffer
    std::size_t recv_offset = 0;  // in the receive buffer (messages from other ranks)
  };

  struct Entry {
    std::size_t element_size;
    std::function<void(const detail::HaloBoxes<N>&, bool)> copy;  // one kernel, all boxes
    std::function<void()> mirror;
    std::function<void()> mark_fresh;
  };

  /// Bytes of `cells` elements, rounded up so the next array starts aligned.
  static std::size_t padded(std::int64_t cells, std::size_t element_size) {
    constexpr std::size_t align = 16;
    const std::size_t bytes = static_cast<std::size_t>(cells) * element_size;
    return (bytes + align - 1) / align * align;
  }

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

  /// Which boxes a copy kernel covers: every message's owned cells (pack),
  /// or the halo cells of the messages from this rank itself (unpacked in
  /// start()) or from other ranks (in finish()).
  enum class Pass { pack, unpack_self, unpack_remote };

  /// The boxes of array `a` in `pass`: the owned cells it sends (pack), or
  /// the halo cells it receives (unpack) with where each box's values are:
  /// the receive buffer, or for a message to itself, the send buffer's
  /// segment for the opposite direction.
  detail::HaloBoxes<N> boxes(Pass pass, std::size_t a) const {
    const int me = grid_.comm().rank();
    const bool unpack = pass != Pass::pack;
    detail::HaloBoxes<N> result;
    for (const Link& link : links_) {
      if (link.rank < 0) continue;
      if (unpack && (link.rank == me) != (pass == Pass::unpack_self)) continue;
      std::size_t at = 0;  // of array a in the message
      for (std::size_t k = 0; k < a; ++k) at += padded(link.cells, arrays_[k].element_size);
      char* base;
      if (!unpack) {
        base = buffers_.send.data() + link.send_offset;
      } else if (link.rank != me) {
        base = buffers_.recv.data() + link.recv_offset;
      } else {
        // Periodic onto this rank: what arrives from `dir` is what we send toward -dir.
        base =
            buffers_.send.data() + links_[Grid<N>::direction_index(opposite(link.dir))].send_offset;
      }
      const detail::Box<N> b = box(link.dir, unpack);
      const int k = result.count++;
      result.data[k] = base + at;
      for (int d = 0; d < N; ++d) {
        result.lo[k][d] = b.lo[d];
        result.extent[k][d] = b.hi[d] - b.lo[d];
      }
      result.first[k + 1] = result.first[k] + b.size() / result.extent[k][N - 1];
      result.first_cell[k + 1] = result.first_cell[k] + b.size();
    }
    return result;
  }

  template <class T>
  Entry make_entry(const detail::view_t<T, N>& view, std::function<void()> on_fresh) const {
    Entry e;
    e.element_size = sizeof(T);
    e.copy = [view](const detail::HaloBoxes<N>& boxes, bool unpack) {
      if (boxes.lines() == 0) return;
      if (unpack)
        detail::copy_halo_boxes<true, T, N>(view, boxes);
      else
        detail::copy_halo_boxes<false, T, N>(view, boxes);
    };
    e.mirror = [view, grid = grid_]() {
      const std::int64_t h = grid.halo();
      for (int d = 0; d < N; ++d) {
        if (grid.periodic(d) || grid.boundary(d) != Boundary::zero_gradient) continue;
        for (int side = 0; side < 2; ++side) {
          const bool low = side == 0;
          if (low ? grid.coord(d) != 0 : grid.coord(d) != grid.ranks(d) - 1) continue;
          detail::Box<N> box;
          for (int k = 0; k < N; ++k) {
            box.lo[k] = 0;
            box.hi[k] = static_cast<std::int64_t>(view.extent(k));
          }
          box.lo[d] = low ? 0 : h + grid.local_extent(d);
          box.hi[d] = box.lo[d] + h;
          detail::MirrorFace<T, N> f{view, d, h, h + grid.local_extent(d) - 1, low};
          detail::for_box<N>("kfuse:halo-mirror", box, f);
        }
      }
    };
    e.mark_fresh = std::move(on_fresh);
    return e;
  }

  Grid<N> grid_;
  std::array<Link, directions> links_;
  std::vector<Entry> arrays_;
  detail::HaloBuffers buffers_;  // of the round in flight
  bool in_flight_ = false;
#if KFUSE_ENABLE_MPI
  std::vector<MPI_Request> requests_;
#endif
};

}  // namespace kfuse
