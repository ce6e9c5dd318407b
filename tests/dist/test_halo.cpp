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
