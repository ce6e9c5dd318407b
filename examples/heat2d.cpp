// Explicit 2-D heat equation: one fused program does the stencil update and
// the residual in a single kernel; ping-pong between two arrays.
//   mpirun -np 4 ./heat2d [n] [steps]
#include <cstdio>
#include <cstdlib>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 128;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const double alpha = 0.2;  // dt * kappa / h^2, stable below 0.25

  kfuse::Grid<2> grid(env.comm(), {n, n});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  // A hot square in a cold plate; the boundary halo holds 0 (Dirichlet).
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    const bool hot = i > n / 4 && i < 3 * n / 4 && j > n / 4 && j < 3 * n / 4;
    return hot && i >= 0 && j >= 0 && i < n && j < n ? 1.0 : 0.0;
  });
  v.fill(0.0);
  kfuse::Scalar<double> change("change");

  auto step = kfuse::fuse(u, v, change, [alpha](auto u, auto v, auto change) {
    using kfuse::shift;
    return kfuse::seq(
        kfuse::assign(v, u + alpha * (shift<-1, 0>(u) + shift<1, 0>(u) + shift<0, -1>(u) +
                                      shift<0, 1>(u) - 4.0 * u)),
        kfuse::reduce(change, kfuse::norm2(v - u)));
  });
  static_assert(decltype(step)::kernel_count == 1, "stencil + residual fuse into one kernel");

  for (int it = 0; it < steps; ++it) {
    if (it % 2 == 0)
      step(u, v, change);
    else
      step(v, u, change);
    if (env.comm().rank() == 0 && (it % 50 == 0 || it == steps - 1))
      std::printf("step %4d  |u_new - u| = %.6e\n", it, change.value());
  }
  const double heat = kfuse::eval(kfuse::sum(steps % 2 ? v : u));
  if (env.comm().rank() == 0) std::printf("total heat %.6f\n%s", heat, step.explain().c_str());
  return 0;
}
