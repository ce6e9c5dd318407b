// The umbrella header alone, in one program that reaches every layer from a
// kernel: fill_with with a user lambda, eager stencils and reductions, a fused
// program with a register temporary and a reduction, Scalar arithmetic,
// where/shift/math nodes, gather from device memory, Vector on a row map.
// Built by every backend; the nvcc stage compiles and links it for sm_90
// (device-clean headers), the others run it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <kfuse/kfuse.hpp>

TEST_CASE("every layer through kfuse/kfuse.hpp") {
  const kfuse::Comm world;
  const std::int64_t nx = 12, ny = 9;
  kfuse::Grid<2> grid(world, {nx, ny}, kfuse::GridOptions<2>{1, {true, false}});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return double(i + 2 * j); });

  // Eager: a periodic-in-x stencil (exchange + pack/unpack kernels), then reductions.
  v = 0.5 * (kfuse::shift<-1, 0>(u) + kfuse::shift<1, 0>(u));
  const std::vector<double> got = v.gather();
  REQUIRE(got.size() == std::size_t(nx * ny));
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j) {
      const double left = double((i + nx - 1) % nx + 2 * j), right = double((i + 1) % nx + 2 * j);
      CHECK(got[std::size_t(i * ny + j)] == 0.5 * (left + right));
    }
  CHECK(kfuse::eval(kfuse::sum(u)) ==
        doctest::Approx(double(ny * nx * (nx - 1) / 2 + nx * ny * (ny - 1))));
  CHECK(kfuse::eval(kfuse::reduce_max(u)) == double(nx - 1 + 2 * (ny - 1)));

  // Fused: a temporary in a register, a where, math, and a reduction in one kernel.
  kfuse::Scalar<double> total("total"), scale("scale");
  scale = 2.0;
  auto program =
      kfuse::fuse(u, v, scale, total, kfuse::temporary<double>,
                  [](auto u, auto v, auto scale, auto total, auto t) {
                    return kfuse::seq(kfuse::assign(t, kfuse::sqrt(kfuse::abs(u)) * scale),
                                      kfuse::assign(v, kfuse::where(u > 3.0, t, -t)),
                                      kfuse::reduce(total, kfuse::sum(kfuse::pow(v, 2))));
                  });
  static_assert(decltype(program)::kernel_count == 1, "one kernel");
  program();
  const std::vector<double> all = u.gather();
  double want = 0;
  for (double x : all) want += 4.0 * std::abs(x);
  CHECK(total.value() == doctest::Approx(want));
  CHECK(!program.explain().empty());

  // A Vector on a row map (1-D, no halo).
  kfuse::RowMap rows(world, 17);
  kfuse::Vector<float> x(rows, "x"), y(rows, "y");
  x.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return float(i); });
  y = 2.0f * x + 1.0f;
  const std::vector<float> ys = y.gather();
  REQUIRE(ys.size() == 17u);
  CHECK(ys[16] == 33.0f);
  CHECK(kfuse::eval(kfuse::dot(x, y)) == doctest::Approx(double(2 * 1496 + 136)));
}
