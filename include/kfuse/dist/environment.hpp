// Environment: RAII start-up of MPI (MPI_THREAD_FUNNELED) and Kokkos, each
// only if the application has not done it already; the destructor finalizes
// only what this object initialized, in reverse order. With a GPU backend each
// rank takes device (node-local rank mod device count).
#pragma once

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/dist/comm.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace kfuse {

namespace detail {

/// Rank within the node, used to spread ranks over a node's devices.
inline int node_local_rank() {
#if KFUSE_ENABLE_MPI
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
#else
  return 0;
#endif
}

/// Device for this rank, or -1 when the backend has no devices to choose.
inline int device_for_rank() {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  return node_local_rank() % count;
#else
  return -1;
#endif
}

}  // namespace detail

class Environment {
 public:
  Environment(int& argc, char**& argv) {
#if KFUSE_ENABLE_MPI
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
      if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        throw Error("kfuse::Environment: the MPI library does not provide MPI_THREAD_FUNNELED");
      }
      owns_mpi_ = true;
    }
#endif
    if (!Kokkos::is_initialized()) {
      detail::initialize_kokkos(argc, argv, detail::device_for_rank());
      owns_kokkos_ = true;
    }
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  ~Environment() {
    if (owns_kokkos_) Kokkos::finalize();
#if KFUSE_ENABLE_MPI
    if (owns_mpi_) MPI_Finalize();
#endif
  }

  Comm comm() const { return Comm(); }

 private:
  bool owns_mpi_ = false;
  bool owns_kokkos_ = false;
};

}  // namespace kfuse
