// kfuse configuration: build switches and the index type shared by every layer.
#pragma once

#include <cstdint>

// KFUSE_ENABLE_MPI is set by the kfuse::kfuse CMake target (1 or 0); a
// non-CMake build gets the distributed (MPI) configuration.
#ifndef KFUSE_ENABLE_MPI
#define KFUSE_ENABLE_MPI 1
#endif

// Keeps a function out of line.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define KFUSE_NOINLINE __noinline__
#elif defined(__GNUC__)
#define KFUSE_NOINLINE __attribute__((noinline))
#else
#define KFUSE_NOINLINE
#endif

// Before a loop over the points of one kernel row: they are independent (a
// Kokkos parallel loop), which the compiler cannot prove when stores and
// loads go through different views; without it, it gives up vectorising
// once a row has too many store/load pairs to check at run time.
//
// KFUSE_INDEPENDENT_LANES: the same before the loop over the eight lanes of
// a reduction's step, which must stay a loop until GCC vectorises it: GCC
// unrolls a loop of eight first, and the mark goes with the loop (rank-1
// kernels that store a Vector then ran as scalar code, each store ordered
// before the next points' loads: 2.5x slower on cached data).
#if defined(__clang__) && !defined(__CUDACC__)
#define KFUSE_INDEPENDENT_ITERATIONS _Pragma("clang loop vectorize(assume_safety)")
#define KFUSE_INDEPENDENT_LANES KFUSE_INDEPENDENT_ITERATIONS
#elif defined(__GNUC__) && !defined(__CUDACC__) && !defined(__INTEL_COMPILER)
#define KFUSE_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#define KFUSE_INDEPENDENT_LANES _Pragma("GCC ivdep") _Pragma("GCC unroll 1")
#else
#define KFUSE_INDEPENDENT_ITERATIONS
#define KFUSE_INDEPENDENT_LANES
#endif

// Host loops of stencil kernels prefetch the rows they read from memory and the rows they
// store, and sparse products their matrix (core/prefetch.hpp); 0 compiles them without, for
// CPUs whose own prefetchers do better (docs/user-guide.md, "Software prefetch").
#ifndef KFUSE_HOST_PREFETCH
#define KFUSE_HOST_PREFETCH 1
#endif

// Host loops of stencil kernels that store arrays they do not read write them with
// non-temporal (streaming) stores where their data exceed the cache (core/stream_store.hpp);
// 0 compiles them with ordinary stores (docs/user-guide.md, "Streaming stores").
#ifndef KFUSE_HOST_STREAM_STORES
#define KFUSE_HOST_STREAM_STORES 1
#endif

namespace kfuse {

/// Global and local point indices (grid extents may exceed 2^31 points).
using index_t = std::int64_t;

}  // namespace kfuse
