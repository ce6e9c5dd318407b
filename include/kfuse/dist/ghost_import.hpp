// GhostImport<T>: the import plan of a row-distributed sparse matrix. Each rank
// needs some entries of x that other ranks own (its ghosts, the off-rank
// columns of its rows); the plan lists, per neighbour, which owned entries go
// there (send list, local indices) and how many ghosts come back. Ghosts are
// ordered by owner rank, then global column, so each neighbour's ghosts are one
// contiguous block and arrive in place.
//
// start() packs the send values (kernel "kfuse:ghost-pack") and posts the
// messages; finish() waits and leaves the ghosts in the caller's buffer, so a
// caller can compute the interior rows in between (overlap). Buffers belong to
// the plan and are allocated once. MPI gets device buffers or host staging
// buffers as dist/mpi_buffers.hpp decides, like the halo exchange. Used by
// CsrMatrix and the SpMV kernels.
#pragma once

#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/dist/mpi_buffers.hpp"
#include "kfuse/dist/row_map.hpp"

namespace kfuse::detail {

/// Collective personalised exchange: `send` holds the items for rank 0, then
/// rank 1, ... (send_counts[r] for rank r); returns what each rank sent here,
/// in rank order, with the counts in recv_counts. Totals must fit an int.
template <class V>
std::vector<V> all_to_all(const Comm& comm, const std::vector<V>& send,
                          const std::vector<int>& send_counts, std::vector<int>& recv_counts) {
#if KFUSE_ENABLE_MPI
  const int p = comm.size();
  recv_counts.assign(static_cast<std::size_t>(p), 0);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm.native());
  std::vector<int> send_displs(static_cast<std::size_t>(p), 0), recv_displs(send_displs);
  for (int r = 1; r < p; ++r) {
    send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
    recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
  }
  std::vector<V> recv(static_cast<std::size_t>(recv_displs[p - 1] + recv_counts[p - 1]));
  const MPI_Datatype type = Comm::mpi_type<V>();
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), type, recv.data(),
                recv_counts.data(), recv_displs.data(), type, comm.native());
  return recv;
#else
  (void)comm;
  recv_counts = send_counts;
  return send;
#endif
}

template <class T>
struct GhostPack {
  Kokkos::View<const T*, Kokkos::LayoutRight, MemSpace> x;
  Kokkos::View<const int*, Kokkos::LayoutRight, MemSpace> indices;
  Kokkos::View<T*, Kokkos::LayoutRight, MemSpace> buffer;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const { buffer(i) = x(indices(i)); }
};

}  // namespace kfuse::detail

namespace kfuse {

template <class T>
class GhostImport {
 public:
  using view_type = Kokkos::View<T*, Kokkos::LayoutRight, detail::MemSpace>;
  using const_view_type = Kokkos::View<const T*, Kokkos::LayoutRight, detail::MemSpace>;
  using index_view = Kokkos::View<const int*, Kokkos::LayoutRight, detail::MemSpace>;

  /// One message of an import: `count` values to or from `rank`, at `offset`
  /// in the send buffer or the ghost buffer.
  struct Message {
    int rank;
    int offset;
    int count;
  };

  /// Collective over domain.comm(). `ghost_columns`: the global indices of the
  /// entries of `domain` this rank needs, ascending, none owned here.
  GhostImport(const RowMap& domain, const std::vector<index_t>& ghost_columns)
      : comm_(domain.comm()), num_owned_(domain.local_size()) {
    const int p = comm_.size();
    std::vector<int> request_counts(static_cast<std::size_t>(p), 0);
    for (index_t column : ghost_columns) ++request_counts[domain.owner(column)];
    for (int r = 0, offset = 0; r < p; offset += request_counts[r++])
      if (request_counts[r] > 0) receives_.push_back({r, offset, request_counts[r]});
    num_ghosts_ = static_cast<int>(ghost_columns.size());

    // What the others ask of this rank is its send list.
    std::vector<int> send_counts;
    const std::vector<index_t> asked =
        detail::all_to_all(comm_, ghost_columns, request_counts, send_counts);
    for (int r = 0, offset = 0; r < p; offset += send_counts[r++])
      if (send_counts[r] > 0) sends_.push_back({r, offset, send_counts[r]});

    std::vector<int> local(asked.size());
    for (std::size_t k = 0; k < asked.size(); ++k)
      local[k] = static_cast<int>(asked[k] - domain.local_begin());
    send_indices_ = detail::device_copy("kfuse:ghost-send-indices", local);
    send_buffer_ = view_type("kfuse:ghost-send", asked.size());
#if KFUSE_ENABLE_MPI
    staged_ = !detail::mpi_takes_device_buffers();
    if (staged_) {
      host_send_ = staging_view("kfuse:ghost-send-host", asked.size());
      host_recv_ = staging_view("kfuse:ghost-recv-host", num_ghosts_);
    }
#endif
  }

  int num_ghosts() const { return num_ghosts_; }
  /// Owned entries sent per import, over all neighbours.
  int num_sends() const { return static_cast<int>(send_indices_.extent(0)); }
  /// Ranks this rank receives ghosts from, and the block of ghosts of each.
  const std::vector<Message>& receives() const { return receives_; }
  /// Ranks this rank sends owned entries to, and the block of the send list of each.
  const std::vector<Message>& sends() const { return sends_; }
  /// Local (owned) indices of the values sent, grouped as sends() says.
  index_view send_indices() const { return send_indices_; }
  bool in_flight() const { return in_flight_; }

  /// Packs the owned values the neighbours need and posts the messages.
  /// `x_owned`: this rank's owned entries; `ghosts`: num_ghosts() values, which
  /// finish() fills. Neither may change until finish() returns.
  void start(const const_view_type& x_owned, const view_type& ghosts) {
    std::string error;
    if (in_flight_)
      error = "kfuse::GhostImport::start: the previous import has not finished";
    else if (static_cast<index_t>(x_owned.extent(0)) != num_owned_)
      error = detail::error_message("kfuse::GhostImport::start: x has ", x_owned.extent(0),
                                    " entries on this rank, the plan's domain ", num_owned_);
    else if (static_cast<index_t>(ghosts.extent(0)) != num_ghosts_)
      error = detail::error_message("kfuse::GhostImport::start: the ghost buffer has ",
                                    ghosts.extent(0), " entries, the plan imports ", num_ghosts_);
    if (!error.empty()) throw Error(error);  // a caller's bug: nothing is posted yet

    in_flight_ = true;
    ghosts_ = ghosts;
#if KFUSE_ENABLE_MPI
    // MPI writes device memory outside Kokkos' stream order: kernels still
    // reading the ghost buffer (the previous import's values) finish first.
    if (!staged_ && !receives_.empty()) Kokkos::fence();
    // Receives first: a neighbour's message can land as soon as it is sent.
    T* recv = staged_ ? host_recv_.data() : ghosts.data();
    for (const Message& m : receives_) {
      requests_.emplace_back();
      MPI_Irecv(recv + m.offset, m.count, Comm::mpi_type<T>(), m.rank, tag, comm_.native(),
                &requests_.back());
    }
#endif
    if (num_sends() == 0) return;
    Kokkos::parallel_for(
        "kfuse:ghost-pack",
        Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<int>>(0, num_sends()),
        detail::GhostPack<T>{x_owned, send_indices_, send_buffer_});
    Kokkos::fence();  // the buffer is complete before MPI reads it
#if KFUSE_ENABLE_MPI
    if (staged_) detail::copy_values("copy [ghost staging]", host_send_, send_buffer_);
    const T* send = staged_ ? host_send_.data() : send_buffer_.data();
    for (const Message& m : sends_) {
      requests_.emplace_back();
      MPI_Isend(send + m.offset, m.count, Comm::mpi_type<T>(), m.rank, tag, comm_.native(),
                &requests_.back());
    }
#endif
  }

  /// Waits for the messages of start(); the ghosts are then in its buffer.
  void finish() {
    if (!in_flight_) throw Error("kfuse::GhostImport::finish: no import was started");
#if KFUSE_ENABLE_MPI
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
    if (staged_ && num_ghosts_ > 0)
      detail::copy_values("copy [ghost staging]", ghosts_, host_recv_);
#endif
    ghosts_ = view_type();
    in_flight_ = false;
  }

  void run(const const_view_type& x_owned, const view_type& ghosts) {
    start(x_owned, ghosts);
    finish();
  }

 private:
  // Apart from the halo exchange's direction tags (0..26) on the same communicator.
  static constexpr int tag = 0x6b66;
  using staging_view_type = Kokkos::View<T*, Kokkos::LayoutRight, detail::StagingSpace>;
  static staging_view_type staging_view(const char* label, std::size_t size) {
    return staging_view_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                             size);
  }

  Comm comm_;
  index_t num_owned_ = 0;
  int num_ghosts_ = 0;
  std::vector<Message> receives_, sends_;
  index_view send_indices_;
  view_type send_buffer_;
  view_type ghosts_;  // the caller's buffer while an import is in flight
  bool in_flight_ = false;
#if KFUSE_ENABLE_MPI
  bool staged_ = false;  // MPI gets host_send_ and host_recv_, not the device buffers
  staging_view_type host_send_, host_recv_;
  std::vector<MPI_Request> requests_;
#endif
};

}  // namespace kfuse
