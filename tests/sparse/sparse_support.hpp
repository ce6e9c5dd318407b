// Helpers of the sparse tests: vectors between host and device, gathering over
// ranks, and checks against host references over a gathered (global) matrix.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <kfuse/kfuse.hpp>

namespace kfuse_test {

template <class T>
using DeviceVector = Kokkos::View<T*, Kokkos::LayoutRight, kfuse::detail::MemSpace>;

template <class T>
DeviceVector<T> to_device(const std::vector<T>& host) {
  DeviceVector<T> view("test vector", host.size());
  auto mirror = Kokkos::create_mirror_view(view);
  for (std::size_t k = 0; k < host.size(); ++k) mirror(k) = host[k];
  Kokkos::deep_copy(view, mirror);
  return view;
}

template <class View>
std::vector<typename View::non_const_value_type> to_host(const View& view) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  return {mirror.data(), mirror.data() + mirror.extent(0)};
}

/// Every rank's `mine`, concatenated in rank order, on every rank.
template <class T>
std::vector<T> allgather(const kfuse::Comm& comm, const std::vector<T>& mine) {
  std::vector<int> counts(static_cast<std::size_t>(comm.size()), static_cast<int>(mine.size()));
  std::vector<int> received;
  std::vector<T> send;
  for (int r = 0; r < comm.size(); ++r) send.insert(send.end(), mine.begin(), mine.end());
  return kfuse::detail::all_to_all(comm, send, counts, received);
}

/// The owned block of a global vector.
template <class T>
std::vector<T> owned_part(const kfuse::RowMap& map, const std::vector<T>& global) {
  const auto first = global.begin() + map.local_begin();
  return {first, first + map.local_size()};
}

/// got == A x up to rounding: |got_i - (A x)_i| <= rtol * sum_j |a_ij x_j| (the
/// scale of row i's sum, which cancellation can make much larger than the result).
template <class T>
void check_product(const std::vector<T>& got, const std::vector<kfuse::detail::Triplet<T>>& entries,
                   const std::vector<T>& x, double rtol) {
  std::vector<double> want(got.size(), 0.0), scale(got.size(), 0.0);
  for (const auto& e : entries) {
    REQUIRE(std::size_t(e.row) < got.size());
    want[e.row] += double(e.value) * double(x[e.col]);
    scale[e.row] += std::abs(double(e.value) * double(x[e.col]));
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("row " << i << ": got " << got[i] << ", want " << want[i] << " (scale " << scale[i]
                << ")");
    CHECK(std::abs(double(got[i]) - want[i]) <= rtol * scale[i]);
  }
}

/// Sorted entries with duplicates summed: the canonical form to compare with.
template <class T>
std::vector<kfuse::detail::Triplet<T>> canonical(const std::vector<std::int64_t>& rows,
                                                 const std::vector<std::int64_t>& cols,
                                                 const std::vector<T>& vals) {
  std::map<std::pair<std::int64_t, std::int64_t>, T> sum;
  for (std::size_t k = 0; k < rows.size(); ++k) sum[{rows[k], cols[k]}] += vals[k];
  std::vector<kfuse::detail::Triplet<T>> out;
  for (const auto& [at, value] : sum) out.push_back({at.first, at.second, value});
  return out;
}

template <class T>
void check_same_entries(const std::vector<kfuse::detail::Triplet<T>>& got,
                        const std::vector<kfuse::detail::Triplet<T>>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("entry " << k << ": got (" << got[k].row << ", " << got[k].col << ") = " << got[k].value
                  << ", want (" << want[k].row << ", " << want[k].col << ") = " << want[k].value);
    REQUIRE(got[k].row == want[k].row);
    REQUIRE(got[k].col == want[k].col);
    CHECK(got[k].value == want[k].value);
  }
}

/// A Comm of this rank alone (the one-rank reference matrices).
inline kfuse::Comm self_comm() {
#if KFUSE_ENABLE_MPI
  return kfuse::Comm(MPI_COMM_SELF);
#else
  return kfuse::Comm();
#endif
}

}  // namespace kfuse_test
