// Which memory MPI gets from kfuse's exchanges (halo exchange, ghost import):
// the device buffers themselves when the MPI library can read them (host
// memory, or a CUDA-aware MPI), otherwise host staging buffers (pinned under
// CUDA) with one copy each way. One policy for every exchange.
#pragma once

#include <cstdlib>
#include <string>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/spaces.hpp"

#if KFUSE_ENABLE_MPI
#include <mpi.h>
#endif
#if KFUSE_ENABLE_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_Query_cuda_support()
#endif
#endif

namespace kfuse::detail {

/// Whether the MPI library in use accepts CUDA device pointers, asked at run
/// time: the library found at run time may differ from the headers compiled
/// against (Open MPI's MPIX_CUDA_AWARE_SUPPORT only describes the latter).
inline bool mpi_cuda_aware() {
#if KFUSE_ENABLE_MPI && defined(KOKKOS_ENABLE_CUDA) && defined(OMPI_HAVE_MPI_EXT_CUDA) && \
    OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Whether MPI may be handed pointers into MemSpace (the arrays' memory):
/// always for host-accessible memory (Serial, OpenMP); for CUDA memory when
/// the MPI library is CUDA-aware. The environment variable
/// KFUSE_MPI_DEVICE_BUFFERS=1 or 0 overrides the answer (for an MPI that is
/// GPU-aware without saying so, or to test the staged path on a host build).
/// Asked once per process, after MPI_Init.
inline bool mpi_takes_device_buffers() {
  static const bool answer = [] {
    const char* force = std::getenv("KFUSE_MPI_DEVICE_BUFFERS");
    if (force != nullptr && *force != '\0') return std::string(force) != "0";
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible || mpi_cuda_aware();
  }();
  return answer;
}

/// Host memory for staging device buffers: pinned under CUDA (faster copies).
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

}  // namespace kfuse::detail
