// Index spaces a kernel iterates, by expression domain: a Grid<N> for grid
// arrays (domain::grid(N)), a RowMap for vectors (domain::row_map). Programs
// and eager statements reach spaces only through these helpers, so grid
// and vector kernels share one code path.
#pragma once

#include <string>
#include <type_traits>

#include "kfuse/array/array.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/dist/row_map.hpp"
#include "kfuse/expr/node.hpp"

namespace kfuse::detail {

template <int D>
struct space_traits {
  static_assert(domain::is_grid(D), "kfuse: internal: no index space for this domain");
  using type = Grid<domain::rank_of(D)>;
  template <class T>
  using container = Array<T, domain::rank_of(D)>;
  static constexpr int kernel_rank = domain::rank_of(D);  ///< rank of the kernel's iteration points
};
template <>
struct space_traits<domain::row_map> {
  using type = RowMap;
  template <class T>
  using container = Vector<T>;
  static constexpr int kernel_rank = 1;
};

/// Domains that have an index space (kernel groups).
constexpr bool has_space(int d) { return domain::is_grid(d) || d == domain::row_map; }

template <int D>
using space_t = typename space_traits<D>::type;
template <int D>
inline constexpr int kernel_rank = space_traits<D>::kernel_rank;

/// The domain code of an Array or Vector type.
template <class A>
struct domain_of;
template <class T, int N>
struct domain_of<Array<T, N>> {
  static constexpr int value = domain::grid(N);
};
template <class T>
struct domain_of<Vector<T>> {
  static constexpr int value = domain::row_map;
};

/// Arrays and Vectors: handles that live on an index space.
template <class A>
struct is_space_handle : std::false_type {};
template <class T, int N>
struct is_space_handle<Array<T, N>> : std::true_type {};
template <class T>
struct is_space_handle<Vector<T>> : std::true_type {};

template <class T, int N>
const Grid<N>& space_of(const Array<T, N>& a) {
  return a.grid();
}
template <class T>
const RowMap& space_of(const Vector<T>& v) {
  return v.row_map();
}

/// The owned points, in view coordinates.
inline Box<1> owned_box(const RowMap& map) { return Box<1>{{0}, {map.local_size()}}; }

/// Global index of view coordinate 0 along d (kfuse::index<d>()).
template <int N>
index_t index_offset(const Grid<N>& grid, int d) {
  return grid.local_begin(d) - grid.halo();
}
inline index_t index_offset(const RowMap& map, int) { return map.local_begin(); }

/// "the 2-D grid 8 x 8 ..." / "the row map 100 rows ...", for messages.
template <int N>
std::string describe_space(const Grid<N>& grid) {
  return "grid " + grid.describe();
}
inline std::string describe_space(const RowMap& map) { return "row map " + map.describe(); }

}  // namespace kfuse::detail
