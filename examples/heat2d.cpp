// Explicit 2-D heat equation: one fused program does the stencil update and
// the residual in a single kernel; ping-pong between two arrays. Ends with
// VTK output (heat2d/u.pvti) and a checkpoint (heat2d.ckpt) that --restart
// continues from.
//   mpirun -np 4 ./heat2d [n] [steps] [--restart heat2d.ckpt]
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const bool root = env.comm().rank() == 0;
  CLI::App app{"kfuse example: 2-D heat equation, stencil and residual in one kernel"};
  std::int64_t n = 128;
  int steps = 200;
  std::string restart;
  app.add_option("n", n, "grid points per dimension")->check(CLI::PositiveNumber);
  app.add_option("steps", steps, "time steps")->check(CLI::NonNegativeNumber);
  app.add_option("--restart", restart, "continue from this checkpoint");
  CLI11_PARSE(app, argc, argv);
  const double alpha = 0.2;  // dt * kappa / h^2, stable below 0.25

  try {
    kfuse::Grid<2> grid(env.comm(), {n, n});
    kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
    // A hot square in a cold plate; the boundary halo holds 0 (Dirichlet).
    // A restart sets up the same way: the checkpoint holds owned cells only.
    u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
      const bool hot = i > n / 4 && i < 3 * n / 4 && j > n / 4 && j < 3 * n / 4;
      return hot && i >= 0 && j >= 0 && i < n && j < n ? 1.0 : 0.0;
    });
    v.fill(0.0);
    if (!restart.empty()) {
      kfuse::load_checkpoint(restart, u);
      if (root) std::printf("restarted from %s\n", restart.c_str());
    }
    kfuse::Scalar<double> change("change");

    auto step = kfuse::fuse(u, v, change, [alpha](auto u, auto v, auto change) {
      using kfuse::shift;
      return kfuse::seq(kfuse::assign(v, u + alpha * (shift<-1, 0>(u) + shift<1, 0>(u) +
                                                      shift<0, -1>(u) + shift<0, 1>(u) - 4.0 * u)),
                        kfuse::reduce(change, kfuse::norm2(v - u)));
    });
    static_assert(decltype(step)::kernel_count == 1, "stencil + residual fuse into one kernel");

    for (int it = 0; it < steps; ++it) {
      if (it % 2 == 0)
        step(u, v, change);
      else
        step(v, u, change);
      if (root && (it % 50 == 0 || it == steps - 1))
        std::printf("step %4d  |u_new - u| = %.6e\n", it, change.value());
    }
    if (steps % 2) u = v;  // the result in u, whatever the step count
    const double heat = kfuse::eval(kfuse::sum(u));
    if (root) std::printf("total heat %.6f\n%s", heat, step.explain().c_str());

    kfuse::write_vtk("heat2d/u", u);
    kfuse::save_checkpoint("heat2d.ckpt", u);
    if (root) std::printf("wrote heat2d/u.pvti and heat2d.ckpt\n");
  } catch (const kfuse::Error& e) {
    if (root) std::fprintf(stderr, "heat2d: %s\n", e.what());
    return 1;
  }
  return 0;
}
