// Helpers shared by tests: host reference loops over a global row-major
// array, and comparisons with a tolerance.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <doctest/doctest.h>

namespace kfuse_test {

/// Row-major global values f(i, j, k) for extents {n0, n1, n2} (unused = 1).
template <class T, class F>
std::vector<T> make_reference(std::int64_t n0, std::int64_t n1, std::int64_t n2, F f) {
  std::vector<T> out;
  for (std::int64_t i = 0; i < n0; ++i)
    for (std::int64_t j = 0; j < n1; ++j)
      for (std::int64_t k = 0; k < n2; ++k) out.push_back(f(i, j, k));
  return out;
}

template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double rtol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t n = 0; n < got.size(); ++n) {
    const double scale = std::max(1.0, std::abs(double(want[n])));
    INFO("at flat index " << n << ": got " << got[n] << ", want " << want[n]);
    CHECK(std::abs(double(got[n]) - double(want[n])) <= rtol * scale);
  }
}

/// Whether the halo face on `side` (0: low, 1: high) of dimension d is ready
/// once a HaloExchange has started, from the grid's topology: periodic with
/// one rank along d (a message to itself), or a fixed boundary at this
/// rank's edge (held values).
template <class Grid>
bool face_ready_after_start(const Grid& grid, int d, int side) {
  if (grid.periodic(d)) return grid.ranks(d) == 1;
  const bool at_edge = side == 0 ? grid.coord(d) == 0 : grid.coord(d) == grid.ranks(d) - 1;
  return at_edge && grid.boundary(d) == decltype(grid.boundary(d))::fixed;
}

}  // namespace kfuse_test
