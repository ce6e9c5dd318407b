// Where kfuse runs: Kokkos' default execution space and its memory space
// (CUDA device memory under CUDA; host memory under Serial and OpenMP).
#pragma once

#include <Kokkos_Core.hpp>

namespace kfuse::detail {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

}  // namespace kfuse::detail
