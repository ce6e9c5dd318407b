// Compile-cost sample (benchmarks/CMakeLists.txt): what a user writes for a 2-D Gray-Scott
// reaction-diffusion time stepper: one fused program a step (both species and the
// change between steps), ping-pong between two pairs of arrays. Compiled, never run.
#include <cstdio>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const std::int64_t n = 256;
  const double Du = 0.16, Dv = 0.08, feed = 0.035, kill = 0.065, dt = 1.0;

  kfuse::GridOptions<2> periodic;
  periodic.periodic = {true, true};
  kfuse::Grid<2> grid(env.comm(), {n, n}, periodic);
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), u2(grid, "u'"), v2(grid, "v'");
  u.fill(1.0);
  v.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return i > n / 2 - 8 && i < n / 2 + 8 && j > n / 2 - 8 && j < n / 2 + 8 ? 0.25 : 0.0;
  });
  kfuse::Scalar<double> change("change");

  auto step =
      kfuse::fuse(u, v, u2, v2, change, [=](auto u, auto v, auto u_new, auto v_new, auto change) {
        using kfuse::shift;
        auto laplacian = [](auto f) {
          return shift<-1, 0>(f) + shift<1, 0>(f) + shift<0, -1>(f) + shift<0, 1>(f) - 4.0 * f;
        };
        auto uvv = u * v * v;
        return kfuse::seq(
            kfuse::assign(u_new, u + dt * (Du * laplacian(u) - uvv + feed * (1.0 - u))),
            kfuse::assign(v_new, v + dt * (Dv * laplacian(v) + uvv - (feed + kill) * v)),
            kfuse::reduce(change, kfuse::norm2(u_new - u)));
      });
  static_assert(decltype(step)::kernel_count == 1, "both species and the change: one kernel");

  for (int it = 0; it < 1000; ++it) {
    if (it % 2 == 0)
      step(u, v, u2, v2, change);
    else
      step(u2, v2, u, v, change);
    if (env.comm().rank() == 0 && it % 100 == 0)
      std::printf("step %4d  |u' - u| = %.6e\n", it, change.value());
  }
  const double mass = kfuse::eval(kfuse::sum(v));
  if (env.comm().rank() == 0) std::printf("sum v = %.6f\n%s", mass, step.explain().c_str());
  return 0;
}
