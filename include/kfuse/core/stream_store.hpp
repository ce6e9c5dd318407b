// Non-temporal (streaming) stores on host CPUs: a cache line written whole, straight to
// memory.
//
// An ordinary store to a line that is not in the cache reads the line first (write
// allocate): a loop that writes an array it does not read moves its bytes over the memory
// bus twice. A 5-point Jacobi sweep `v = stencil(u)` moves 24 bytes a point for the 16 it
// needs, and with every line of v written whole from registers a streaming store moves 16:
// the sweep ran 1.3x faster on an AMD EPYC host (docs/benchmarks.md, "Streaming stores").
// Streamed lines bypass the caches, so only loops whose data exceed the cache stream
// (exec/kernel.hpp, InnerLoop); data that a later kernel reads from the cache would come
// back from memory instead. KFUSE_HOST_STREAM_STORES=0 (core/config.hpp) compiles them out.
#pragma once

#include <cstdint>

#include "kfuse/core/config.hpp"

#if KFUSE_HOST_STREAM_STORES && defined(__x86_64__) && defined(__SSE2__) && \
    !defined(__CUDACC__) && !defined(__HIPCC__)
#include <immintrin.h>
#define KFUSE_STREAM_STORES_X86 1
#else
#define KFUSE_STREAM_STORES_X86 0
#endif

namespace kfuse::detail {

/// Whether this build has streaming stores (x86-64 host code).
inline constexpr bool stream_stores_available = KFUSE_STREAM_STORES_X86;

/// Doubles a streamed line holds.
inline constexpr int stream_line_doubles = 8;

/// Where `address` sits in its 64-byte cache line, in doubles (0-7).
inline int line_position(const double* address) {
  return int((reinterpret_cast<std::uintptr_t>(address) / sizeof(double)) % stream_line_doubles);
}

/// The first point of [begin, end) where each of the `count` rows (their first elements)
/// starts a cache line, all of them alike; `end` where they are not alike.
inline std::int64_t first_whole_line(const double* const* rows, int count, std::int64_t begin,
                                     std::int64_t end) {
  const int place = line_position(rows[0] + begin);
  for (int r = 1; r < count; ++r)
    if (line_position(rows[r] + begin) != place) return end;
  return begin + (stream_line_doubles - place) % stream_line_doubles;
}

/// Writes the 8 doubles of `values` (64-byte aligned) to the line at `line` (64-byte
/// aligned) without reading it: one AVX-512 store, two AVX or four SSE2 stores.
inline void stream_line([[maybe_unused]] double* line, [[maybe_unused]] const double* values) {
#if KFUSE_STREAM_STORES_X86 && defined(__AVX512F__)
  _mm512_stream_pd(line, _mm512_load_pd(values));
#elif KFUSE_STREAM_STORES_X86 && defined(__AVX__)
  _mm256_stream_pd(line, _mm256_load_pd(values));
  _mm256_stream_pd(line + 4, _mm256_load_pd(values + 4));
#elif KFUSE_STREAM_STORES_X86
  for (int half = 0; half < stream_line_doubles; half += 2)
    _mm_stream_pd(line + half, _mm_load_pd(values + half));
#endif
}

/// Orders this thread's streaming stores before its later stores (and so before the end of
/// the parallel loop that other threads and ranks wait for): they are weakly ordered.
inline void stream_fence() {
#if KFUSE_STREAM_STORES_X86
  _mm_sfence();
#endif
}

}  // namespace kfuse::detail
