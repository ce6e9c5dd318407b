// The halo exchange's data path (dist/halo_exchange.hpp): arrays of different
// element types in one round (each array's cells at aligned offsets of each
// message), every direction packed by one kernel per array, buffers taken
// from the pool and reused by the next round, and the staged path (ctest runs
// this program again with KFUSE_MPI_DEVICE_BUFFERS=0). Checks every halo cell,
// corners included, against the cell it images. Built by the nvcc stage too.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <kfuse/kfuse.hpp>

namespace {

/// Global index along d of view index i, wrapped where the grid is periodic;
/// `inside` is false beyond a non-periodic boundary.
template <int N>
std::int64_t global_of(const kfuse::Grid<N>& g, int d, std::int64_t i, bool& inside) {
  std::int64_t x = g.local_begin(d) + i - g.halo();
  const std::int64_t n = g.global_extent(d);
  if (g.periodic(d)) {
    x = ((x % n) + n) % n;
  } else if (x < 0 || x >= n) {
    inside = false;
  }
  return x;
}

/// Every cell of u's view (owned and halo): the image's value where the
/// cell has one, `unset` beyond fixed boundaries.
template <class T>
void check_halo_2d(const kfuse::Array<T, 2>& u, T unset) {
  const auto& g = u.grid();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u.view());
  int wrong = 0;
  for (std::int64_t i = 0; i < std::int64_t(host.extent(0)); ++i)
    for (std::int64_t j = 0; j < std::int64_t(host.extent(1)); ++j) {
      bool inside = true;
      const std::int64_t x = global_of(g, 0, i, inside), y = global_of(g, 1, j, inside);
      const T want = inside ? T(x * 1000 + y) : unset;
      if (host(i, j) != want) ++wrong;
    }
  INFO(u.label() << " on rank " << g.comm().rank());
  CHECK(wrong == 0);
}

template <class T>
void check_halo_3d(const kfuse::Array<T, 3>& u) {
  const auto& g = u.grid();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u.view());
  int wrong = 0;
  for (std::int64_t i = 0; i < std::int64_t(host.extent(0)); ++i)
    for (std::int64_t j = 0; j < std::int64_t(host.extent(1)); ++j)
      for (std::int64_t k = 0; k < std::int64_t(host.extent(2)); ++k) {
        bool inside = true;
        const std::int64_t x = global_of(g, 0, i, inside), y = global_of(g, 1, j, inside),
                           z = global_of(g, 2, k, inside);
        if (host(i, j, k) != T((x * 100 + y) * 100 + z)) ++wrong;
      }
  INFO(u.label() << " on rank " << g.comm().rank());
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("float, double and int arrays share one round; halos match their images") {
  // Odd extents: a float array's share of a message is not a multiple of 16 bytes,
  // so the arrays after it start at padded offsets.
  kfuse::Grid<2> grid(kfuse::Comm(), {13, 7}, kfuse::GridOptions<2>{1, {true, false}});
  kfuse::Array<float, 2> f(grid, "f");
  kfuse::Array<double, 2> d(grid, "d");
  kfuse::Array<int, 2> n(grid, "n");
  f.fill(-1.0f), d.fill(-1.0), n.fill(-1);
  f = kfuse::cast<float>(kfuse::index<0>() * 1000 + kfuse::index<1>());
  d = kfuse::cast<double>(kfuse::index<0>() * 1000 + kfuse::index<1>());
  n = kfuse::cast<int>(kfuse::index<0>() * 1000 + kfuse::index<1>());

  kfuse::HaloExchange<2> exchange(grid);
  exchange.add(f), exchange.add(d), exchange.add(n);
  exchange.run();
  CHECK(!f.halo_stale());
  check_halo_2d(f, -1.0f);
  check_halo_2d(d, -1.0);
  check_halo_2d(n, -1);
}

TEST_CASE("27 directions, halo width 2, fully periodic") {
  kfuse::Grid<3> grid(kfuse::Comm(), {6, 5, 7}, kfuse::GridOptions<3>{2, {true, true, true}});
  kfuse::Array<double, 3> u(grid, "u");
  kfuse::Array<float, 3> v(grid, "v");
  u.fill(-1.0), v.fill(-1.0f);
  const auto value = (kfuse::index<0>() * 100 + kfuse::index<1>()) * 100 + kfuse::index<2>();
  u = kfuse::cast<double>(value);
  v = kfuse::cast<float>(value);
  kfuse::HaloExchange<3> exchange(grid);
  exchange.add(v), exchange.add(u);
  exchange.start();
  exchange.finish();
  check_halo_3d(u);
  check_halo_3d(v);
}

TEST_CASE("a second round of the same arrays reuses the first round's buffers") {
  kfuse::Grid<2> grid(kfuse::Comm(), {24, 18}, kfuse::GridOptions<2>{1, {true, true}});
  kfuse::Array<double, 2> u(grid, "u");
  u = kfuse::cast<double>(kfuse::index<0>() * 1000 + kfuse::index<1>());
  auto& pool = kfuse::detail::HaloBufferPool::instance();
  auto round = [&] {
    kfuse::HaloExchange<2> exchange(grid);
    exchange.add(u);
    exchange.run();
  };
  round();
  const std::size_t idle = pool.idle();
  CHECK(idle >= 1);
  for (int k = 0; k < 3; ++k) round();
  CHECK(pool.idle() == idle);
  check_halo_2d(u, -1.0);
}

TEST_CASE("an exchange with nothing to send does nothing") {
  kfuse::Grid<1> grid(kfuse::Comm(), {5});
  kfuse::HaloExchange<1> exchange(grid);
  CHECK(exchange.empty());
  exchange.run();
}
