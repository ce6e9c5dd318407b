// Software prefetch of a stencil kernel's rows on host CPUs.
//
// A host call runs a kernel along one row (exec/kernel.hpp, InnerLoop). A stencil kernel
// reads its arrays' neighbouring rows there, which earlier calls left in the caches, and
// one row of each array from memory: its leading row, the one at the largest offset.
// Among the reads of cached rows the hardware prefetchers keep too few of memory's lines
// in flight: a 5-point Jacobi sweep (two ranks' 1504 x 3008 blocks, AMD EPYC) ran at 60-68%
// of the STREAM triad, and at 80-85% with the leading rows and the stored rows prefetched
// 8 KiB ahead. Prefetching the cached rows as well lost that gain, and prefetching a
// triad's streams made it 5% slower (docs/benchmarks.md, "2026-12-07 (evening)"):
// only kernels that read along another row than the point's prefetch, only the rows that
// come from memory, and only in launches whose data exceed the cache (streams_from_memory).
// The rows read go into the second-level cache (PrefetchFor::read_far, core/prefetch.hpp).
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/core/prefetch.hpp"
#include "kfuse/core/view.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/walk.hpp"

namespace kfuse::detail {

/// Whether a lowered node reads a view along another row than the point's.
template <class E, class = void>
struct reads_other_row : std::false_type {};
template <class E>
struct reads_other_row<E, std::enable_if_t<E::other_row>> : std::true_type {};

/// Whether a lowered statement stores to a view of rank 2 or 3 (specialised next to each
/// statement that stores, exec/statements.hpp).
template <class S>
struct stores_rows : std::false_type {};

/// Whether a lowered node reads a captured view of rank 2 or 3.
template <class E>
struct reads_captured_rows : std::false_type {};
template <class T, int N, class Offsets>
struct reads_captured_rows<ViewRead<T, N, Offsets>> : std::bool_constant<(N > 1)> {};

/// The array parameters (ParamRead's K) of rank 2 or 3 that a tree reads, in an
/// integer_sequence.
template <class E, class Found>
struct collect_row_params : fold_children<collect_row_params, children_t<E>, Found> {};
template <int K, class T, int N, class Offsets, int... Ks>
struct collect_row_params<ParamRead<K, T, N, Offsets>, std::integer_sequence<int, Ks...>> {
  using type = std::conditional_t<(N < 2 || ((K == Ks) || ...)), std::integer_sequence<int, Ks...>,
                                  std::integer_sequence<int, Ks..., K>>;
};

/// One prefetched row: its array, its offset from the point's row, its byte strides.
struct PrefetchRow {
  const char* data = nullptr;
  index_t offset[2] = {0, 0};  // in the outer dimensions
  index_t stride[2] = {0, 0};  // bytes per step in the outer dimensions
  index_t element = 0;         // bytes per point along the row

  template <class View>
  static PrefetchRow of(const View& view, const int* offset) {
    using T = typename View::value_type;
    PrefetchRow row;
    row.data = reinterpret_cast<const char*>(view.data());
    for (int d = 0; d + 1 < int(View::rank); ++d) {
      row.offset[d] = offset[d];
      row.stride[d] = index_t(view.stride(d)) * index_t(sizeof(T));
    }
    row.element = index_t(sizeof(T));
    return row;
  }
  /// Whether this row comes later in memory order than `other` (the same array's).
  bool leads(const PrefetchRow& other) const {
    return offset[0] > other.offset[0] ||
           (offset[0] == other.offset[0] && offset[1] > other.offset[1]);
  }
};

/// The rows a stencil kernel's host calls prefetch: for each array it reads, its leading
/// row (the largest offset in the outer dimensions, in memory order), and each array it
/// stores; Reads and Writes are their counts at compile time (distinct array parameters,
/// captured views and stores, at most `most` of each), so that a call's prefetches are
/// straight code. A slot the run time leaves empty (two parameters bound to one array)
/// repeats a filled one.
template <int Reads, int Writes>
struct PrefetchRows {
  static constexpr int reads = Reads, writes = Writes;
  PrefetchRow read[Reads > 0 ? Reads : 1], written[Writes > 0 ? Writes : 1];
  int read_count = 0, written_count = 0;

  /// A view (a view_t of rank 2 or 3) read at outer offsets `offset`.
  template <class View>
  void add_read(const View& view, const int* offset) {
    if constexpr (View::rank > 1) add(read, Reads, read_count, PrefetchRow::of(view, offset));
  }
  template <class View>
  void add_store(const View& view) {
    constexpr int zero[2] = {};
    if constexpr (View::rank > 1) add(written, Writes, written_count, PrefetchRow::of(view, zero));
  }
  /// Bytes a point of the prefetched rows holds (each array once).
  index_t bytes_per_point() const {
    index_t bytes = 0;
    for (int r = 0; r < read_count; ++r) bytes += read[r].element;
    for (int w = 0; w < written_count; ++w) bytes += written[w].element;
    return bytes;
  }
  /// Whether the kernel reads an array it stores, at any offset, or may (an array left out:
  /// more than `most` of a kind). Its stores then go through the cache (exec/kernel.hpp:
  /// they hold the lines already, and a later read at the point must see them).
  bool reads_stored = false;

  /// After the walk: drops the read rows that are stored rows (an update in place,
  /// `r -= alpha * A(p)`), which the written rows prefetch already, and fills empty slots.
  void finish() {
    int kept = 0;
    for (int r = 0; r < read_count; ++r) {
      bool stored = false;
      for (int w = 0; w < written_count; ++w) {
        reads_stored = reads_stored || written[w].data == read[r].data;
        stored = stored || (written[w].data == read[r].data && read[r].offset[0] == 0 &&
                            read[r].offset[1] == 0);
      }
      if (!stored) read[kept++] = read[r];
    }
    read_count = kept;
    fill(read, Reads, read_count, written[0]);
    fill(written, Writes, written_count, read[0]);
  }

 private:
  /// Adds `row`, or moves its array's row to it where it leads.
  void add(PrefetchRow* rows, int slots, int& count, const PrefetchRow& row) {
    for (int r = 0; r < count; ++r)
      if (rows[r].data == row.data) {
        if (row.leads(rows[r])) rows[r] = row;
        return;
      }
    if (count < slots)
      rows[count++] = row;
    else
      reads_stored = true;  // an array left out (more than `most`): it may be a stored one
  }
  static void fill(PrefetchRow* rows, int slots, int count, const PrefetchRow& other) {
    for (int r = count; r < slots; ++r) rows[r] = count > 0 ? rows[0] : other;
  }
};

/// The walk that fills PrefetchRows from a kernel's lowered body and its view file.
template <class Rows, class Views>
struct CollectPrefetchRows {
  Rows& rows;
  const Views& views;

  template <int K, class T, int N, class Offsets>
  void operator()(const ParamRead<K, T, N, Offsets>&) const {
    rows.add_read(view_of<K>(views), ParamRead<K, T, N, Offsets>::offset);
  }
  template <class T, int N, class Offsets>
  void operator()(const ViewRead<T, N, Offsets>& read) const {
    rows.add_read(read.view, ViewRead<T, N, Offsets>::offset);
  }
  template <class Node>
  void operator()(const Node& node) const {
    if constexpr (stores_rows<Node>::value) rows.add_store(node.view);
  }
};

/// The PrefetchRows of a kernel body: at most `most` rows of each kind.
template <class Body, int most = 8>
using prefetch_rows_t = PrefetchRows<
    std::min(most,
             int(typename collect_row_params<Body, std::integer_sequence<int>>::type{}.size()) +
                 count_nodes<reads_captured_rows, Body>()),
    std::min(most, count_nodes<stores_rows, Body>())>;

/// The rows a kernel of lowered `body` over the arrays of `views` prefetches.
template <class Body, class Views>
prefetch_rows_t<Body> prefetch_rows_of(const Body& body, const Views& views) {
  prefetch_rows_t<Body> rows;
  for_each_node(body, CollectPrefetchRows<prefetch_rows_t<Body>, Views>{rows, views});
  rows.finish();
  return rows;
}

/// Points of a loop without reductions between two rounds of prefetches (exec/kernel.hpp).
inline constexpr index_t prefetch_block = 64;

/// Where one host call (one row) prefetches: each row of a PrefetchRows at the call's
/// outer coordinates, the distance ahead.
template <int Reads, int Writes>
class PrefetchCursor {
 public:
  /// How far ahead of a call's point the rows are prefetched, in bytes: 4-8 KiB measured
  /// best on the sweep above, 2 KiB gained half as much.
  static constexpr index_t distance = 8192;

  template <class... Outer>
  KOKKOS_INLINE_FUNCTION PrefetchCursor(const PrefetchRows<Reads, Writes>& rows, Outer... outer) {
    for (int r = 0; r < Reads; ++r) place(rows.read[r], r, outer...);
    for (int w = 0; w < Writes; ++w) place(rows.written[w], Reads + w, outer...);
  }
  /// Prefetches every row at point k of the call (a line: the points from k on that one
  /// vector of a reduction's step holds).
  KOKKOS_FORCEINLINE_FUNCTION void at(index_t k) const {
    for (int r = 0; r < Reads; ++r)
      prefetch_line<PrefetchFor::read_far>(ahead_[r] + k * element_[r]);
    for (int w = Reads; w < Reads + Writes; ++w)
      prefetch_line<PrefetchFor::write>(ahead_[w] + k * element_[w]);
  }
  /// Prefetches the rows read at point k only: a loop that streams its stores
  /// (exec/kernel.hpp) does not fetch the lines it writes.
  KOKKOS_FORCEINLINE_FUNCTION void reads_at(index_t k) const {
    for (int r = 0; r < Reads; ++r)
      prefetch_line<PrefetchFor::read_far>(ahead_[r] + k * element_[r]);
  }
  /// Prefetches every row's lines of points k to k + prefetch_block (of 8-byte elements;
  /// narrower ones are prefetched twice).
  KOKKOS_FORCEINLINE_FUNCTION void block(index_t k) const {
    for (index_t step = 0; step < prefetch_block; step += 8) at(k + step);
  }

 private:
  template <class... Outer>
  KOKKOS_INLINE_FUNCTION void place(const PrefetchRow& row, int r, Outer... outer) {
    const index_t coordinate[] = {outer..., 0};
    index_t bytes = distance;
    for (int d = 0; d < int(sizeof...(Outer)); ++d)
      bytes += (coordinate[d] + row.offset[d]) * row.stride[d];
    ahead_[r] = row.data + bytes;
    element_[r] = row.element;
  }

  const char* ahead_[Reads + Writes > 0 ? Reads + Writes : 1];
  index_t element_[Reads + Writes > 0 ? Reads + Writes : 1];
};

/// The rows a kernel's stores write, one per store in statement order (a store that
/// streams, exec/kernel.hpp's StreamedStore, numbers its line W the same way): their first
/// elements at a host call's outer coordinates.
template <int Stores>
struct StoredRows {
  PrefetchRow row[Stores > 0 ? Stores : 1];
  int count = 0;

  template <class Node>
  void operator()(const Node& node) {
    if constexpr (stores_rows<Node>::value) {
      constexpr int zero[2] = {};
      if (count < Stores) row[count++] = PrefetchRow::of(node.view, zero);
    }
  }
  /// Row w's first element at outer coordinates `outer...`.
  template <class T, class... Outer>
  KOKKOS_INLINE_FUNCTION T* at(int w, Outer... outer) const {
    const index_t coordinate[] = {outer..., 0};
    const char* data = row[w].data;
    for (int d = 0; d < int(sizeof...(Outer)); ++d) data += coordinate[d] * row[w].stride[d];
    return reinterpret_cast<T*>(const_cast<char*>(data));
  }
};

/// The rows the stores of a kernel of lowered `body` write.
template <int Stores, class Body>
StoredRows<Stores> stored_rows_of(const Body& body) {
  StoredRows<Stores> rows;
  for_each_node(body, rows);
  return rows;
}

/// What an InnerLoop of a kernel that does not prefetch holds instead of PrefetchRows.
struct NoPrefetch {};

}  // namespace kfuse::detail
