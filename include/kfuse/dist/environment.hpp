// Environment: RAII start-up of MPI (MPI_THREAD_FUNNELED) and Kokkos, each
// only if the application has not done it already; the destructor finalizes
// only what this object initialized, in reverse order. With a GPU backend each
// rank takes device (node-local rank mod device count) unless the user chose
// one (--kokkos-device..., KOKKOS_DEVICE_ID, KOKKOS_NUM_DEVICES).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

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

/// Whether the user picked the device: Kokkos' command-line options
/// (--kokkos-device[-id]=, --kokkos-ndevices= / --kokkos-num-devices=) or
/// environment variables. Kokkos then decides, as it would without kfuse.
inline bool user_chose_device(int argc, char** argv) {
  for (int k = 1; k < argc && argv[k] != nullptr; ++k) {
    const std::string_view arg(argv[k]);
    for (const char* option : {"--kokkos-device", "--kokkos-ndevices", "--kokkos-num-devices"})
      if (arg.substr(0, std::string_view(option).size()) == option) return true;
  }
  for (const char* variable : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

/// Device for this rank (node-local rank modulo the node's device count), or
/// -1 when the backend has no devices to choose or the user chose one.
inline int device_for_rank(int argc, char** argv) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (user_chose_device(argc, argv)) return -1;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  return node_local_rank() % count;
#else
  (void)argc, (void)argv;
  return -1;
#endif
}

/// Kokkos::initialize(argc, argv) on `device` (-1: as Kokkos chooses). The
/// device goes in as one more command-line option, so that Kokkos still
/// parses the user's other --kokkos-* options (initializing from settings
/// would drop them); argv keeps the arguments Kokkos does not consume.
inline void initialize_kokkos_on(int& argc, char**& argv, int device) {
  if (device < 0) {
    Kokkos::initialize(argc, argv);
    return;
  }
  std::string option = "--kokkos-device-id=" + std::to_string(device);  // Kokkos 3.4 and 4.x
  std::vector<char*> args(argv, argv + argc);
  args.push_back(option.data());
  args.push_back(nullptr);
  int count = argc + 1;
  Kokkos::initialize(count, args.data());
  count = std::min(count, argc);  // (our option is consumed)
  for (int k = 0; k < count; ++k) argv[k] = args[static_cast<std::size_t>(k)];
  if (count < argc) argv[count] = nullptr;
  argc = count;
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
      detail::initialize_kokkos_on(argc, argv, detail::device_for_rank(argc, argv));
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
