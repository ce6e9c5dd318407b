// kfuse configuration: build switches and the index type shared by every layer.
#pragma once

#include <cstdint>

// KFUSE_ENABLE_MPI is set by the kfuse::kfuse CMake target (1 or 0); a
// non-CMake build gets the distributed (MPI) configuration.
#ifndef KFUSE_ENABLE_MPI
#define KFUSE_ENABLE_MPI 1
#endif

namespace kfuse {

/// Global and local point indices (grid extents may exceed 2^31 points).
using index_t = std::int64_t;

}  // namespace kfuse
