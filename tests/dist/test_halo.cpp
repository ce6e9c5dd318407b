// Halo exchange: periodic wrap (one rank and across ranks), corners for
// 9-point and 27-point stencils, fixed and zero-gradient boundaries, halo
// width 2. Gathered results must equal the host reference at any rank count.
#include <doctest/doctest.h>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

double g2(std::int64_t i, std::int64_t j) { return double(i * 100 + j); }

}  // namespace

TEST_CASE("9-point stencil, periodic in x, fixed in y, corners included") {
  const std::int64_t nx = 10, ny = 7;
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny}, kfuse::GridOptions<2>{1, {true, false}});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return double(i * 100 + j); });
  u.mark_halo_stale();
  v = kfuse::shift<-1, -1>(u) + kfuse::shift<-1, 1>(u) + kfuse::shift<1, -1>(u) +
      kfuse::shift<1, 1>(u) + 2.0 * kfuse::shift<0, 1>(u) + 3.0 * kfuse::shift<-1, 0>(u);
  auto U = [&](std::int64_t i, std::int64_t j) { return g2((i + nx) % nx, j); };  // fixed y: f(i, -1)
  const auto want = kfuse_test::make_reference<double>(nx, ny, 1, [&](auto i, auto j, auto) {
    return U(i - 1, j - 1) + U(i - 1, j + 1) + U(i + 1, j - 1) + U(i + 1, j + 1) +
           2.0 * U(i, j + 1) + 3.0 * U(i - 1, j);
  });
  kfuse_test::check_close(v.gather(), want, 1e-15);
}

TEST_CASE("27-point stencil, fully periodic, halo width 2") {
  const std::int64_t n0 = 6, n1 = 5, n2 = 7;
  kfuse::Grid<3> grid(kfuse::Comm(), {n0, n1, n2}, kfuse::GridOptions<3>{2, {true, true, true}});
  kfuse::Array<double, 3> u(grid, "u"), v(grid, "v");
  u = kfuse::cast<double>(kfuse::index<0>() * 49 + kfuse::index<1>() * 7 + kfuse::index<2>());
  v = kfuse::shift<-2, 1, 1>(u) + kfuse::shift<1, -1, -2>(u) + kfuse::shift<0, 0, 2>(u);
  auto U = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    i = (i + n0) % n0, j = (j + n1) % n1, k = (k + n2) % n2;
    return double(i * 49 + j * 7 + k);
  };
  const auto want = kfuse_test::make_reference<double>(n0, n1, n2, [&](auto i, auto j, auto k) {
    return U(i - 2, j + 1, k + 1) + U(i + 1, j - 1, k - 2) + U(i, j, k + 2);
  });
  kfuse_test::check_close(v.gather(), want, 0);
}

TEST_CASE("zero-gradient boundary mirrors owned cells into the halo") {
  const std::int64_t n = 12;
  kfuse::GridOptions<1> options{1, {false}};
  options.boundary = {kfuse::Boundary::zero_gradient};
  kfuse::Grid<1> grid(kfuse::Comm(), {n}, options);
  kfuse::Array<double, 1> u(grid, "u"), v(grid, "v");
  u = kfuse::cast<double>(kfuse::index<0>() * kfuse::index<0>());
  v = kfuse::shift<-1>(u) - kfuse::shift<1>(u);
  const auto want = kfuse_test::make_reference<double>(n, 1, 1, [&](auto i, auto, auto) {
    auto U = [&](std::int64_t k) { k = k < 0 ? -1 - k : k >= n ? 2 * n - 1 - k : k; return double(k * k); };
    return U(i - 1) - U(i + 1);
  });
  kfuse_test::check_close(v.gather(), want, 0);
}

TEST_CASE("start() already fills the faces a rank sends itself; fixed faces stay held") {
  // One dimension periodic (a message to itself with one rank along it), the
  // other fixed or zero-gradient (mirrored by finish(), never ready early).
  const std::int64_t n0 = 8, n1 = 6;
  using B = kfuse::Boundary;
  const kfuse::GridOptions<2> cases[] = {{1, {true, false}, {B::fixed, B::fixed}},
                                         {1, {true, false}, {B::fixed, B::zero_gradient}},
                                         {1, {false, true}, {B::fixed, B::fixed}}};
  for (const auto& options : cases) {
    CAPTURE(options.periodic[0]);
    CAPTURE(int(options.boundary[1]));
    kfuse::Grid<2> grid(kfuse::Comm(), {n0, n1}, options);
    kfuse::Array<double, 2> u(grid, "u");
    u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return double(i * 100 + j); });
    u = u + 1.0;  // owned cells change, the halo still holds the old values
    kfuse::HaloExchange<2> exchange(grid);
    exchange.add(u);
    exchange.start();
    const auto early = Kokkos::create_mirror(Kokkos::HostSpace(), u.view());  // a copy, always
    Kokkos::deep_copy(early, u.view());
    exchange.finish();
    const std::int64_t h = grid.halo();
    for (int d = 0; d < 2; ++d) {
      for (int side = 0; side < 2; ++side) {
        CAPTURE(d);
        CAPTURE(side);
        const bool ready = kfuse_test::face_ready_after_start(grid, d, side);
        CHECK(exchange.ready_after_start(d, side) == ready);
        if (!ready) continue;
        // The face's halo cells next to owned ones, in view coordinates.
        const std::int64_t face = side == 0 ? 0 : h + grid.local_extent(d);
        const int e = 1 - d;
        for (std::int64_t k = h; k < h + grid.local_extent(e); ++k) {
          const std::int64_t vi = d == 0 ? face : k, vj = d == 0 ? k : face;
          std::int64_t gi = grid.local_begin(0) + vi - h, gj = grid.local_begin(1) + vj - h;
          // A periodic face wraps to the owned value (old + 1); a fixed one holds f.
          if (grid.periodic(d)) {
            gi = (gi + n0) % n0, gj = (gj + n1) % n1;
            CHECK(early(vi, vj) == double(gi * 100 + gj) + 1.0);
          } else {
            CHECK(early(vi, vj) == double(gi * 100 + gj));
          }
        }
      }
    }
  }
}

TEST_CASE("HaloExchange::add(view, on_fresh): a plain view's halo, periodic both ways") {
  const std::int64_t n0 = 7, n1 = 9;
  kfuse::Grid<2> grid(kfuse::Comm(), {n0, n1}, kfuse::GridOptions<2>{1, {true, true}});
  kfuse::Array<double, 2> u(grid, "u");  // only to size and fill a view like it
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return double(i * 100 + j); });
  kfuse::detail::view_t<double, 2> view("plain", u.view().extent(0), u.view().extent(1));
  Kokkos::deep_copy(view, u.view());  // owned cells; the halo is whatever u's holds
  int fresh = 0;
  kfuse::HaloExchange<2> exchange(grid);
  exchange.add(view, [&fresh] { ++fresh; });
  exchange.start();
  CHECK(fresh == 0);
  exchange.finish();
  CHECK(fresh == 1);
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  const std::int64_t h = grid.halo();
  for (std::int64_t vi = 0; vi < std::int64_t(host.extent(0)); ++vi)
    for (std::int64_t vj = 0; vj < std::int64_t(host.extent(1)); ++vj) {
      const std::int64_t gi = (grid.local_begin(0) + vi - h + n0) % n0;
      const std::int64_t gj = (grid.local_begin(1) + vj - h + n1) % n1;
      CAPTURE(vi);
      CAPTURE(vj);
      CHECK(host(vi, vj) == g2(gi, gj));  // every cell, halo and corners included
    }
  // A view of another size is refused before anything is added.
  kfuse::detail::view_t<double, 2> small("small", view.extent(0), view.extent(1) - 1);
  CHECK_THROWS_WITH_AS(exchange.add(small, {}), doctest::Contains("along dimension 1; this rank's block"),
                       kfuse::Error);
  CHECK(exchange.empty() == false);  // the first view only
}

TEST_CASE("gather(root) and reductions over ranks") {
  kfuse::Grid<2> grid(kfuse::Comm(), {9, 5});
  kfuse::Array<float, 2> u(grid, "u");
  u = kfuse::cast<float>(kfuse::index<0>() + kfuse::index<1>());
  const auto all = u.gather(0);
  if (grid.comm().rank() == 0) {
    CHECK(all.size() == 45u);
    CHECK(all[5 * 3 + 2] == 5.0f);
  } else {
    CHECK(all.empty());
  }
  CHECK(kfuse::eval(kfuse::sum(u)) == doctest::Approx(9 * 5 * (4 + 2)));
  CHECK(kfuse::eval(kfuse::reduce_max(u)) == 12.0f);
}
