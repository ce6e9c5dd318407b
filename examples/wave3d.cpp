// 3-D wave equation u_tt = c^2 lap(u) on a periodic box, leapfrog in time:
//   u_next = 2 u - u_prev + C^2 lap_h(u),   C = c dt / h,  7-point lap_h.
// One fused program per step computes u_next and the discrete energy of the
// previous half step, which leapfrog conserves exactly (a check on the run):
//   E = |u - u_prev|^2 + C^2 <D u, D u_prev>   (times dt^2 / 2)
// Three arrays rotate by rebinding the program; the run ends with VTK output
// (wave3d/u.pvti) and a checkpoint (wave3d.ckpt) that --restart continues from.
//
//   mpirun -np 4 ./wave3d [-n 48] [--steps 90] [--restart wave3d.ckpt]
#include <cmath>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const bool root = env.comm().rank() == 0;
  CLI::App app{"kfuse example: 3-D wave equation, leapfrog, one fused kernel per step"};
  std::int64_t n = 32;
  int steps = 60;
  std::string restart;
  app.add_option("-n,--size", n, "grid points per dimension")->check(CLI::PositiveNumber);
  app.add_option("-s,--steps", steps, "time steps (rounded up to a multiple of 3)")
      ->check(CLI::PositiveNumber);
  app.add_option("--restart", restart, "continue from this checkpoint");
  CLI11_PARSE(app, argc, argv);
  const double courant2 = 0.25;  // C^2; leapfrog with the 7-point Laplacian is stable below 1/3

  try {
    kfuse::Grid<3> grid(env.comm(), {n, n, n}, kfuse::GridOptions<3>{1, {true, true, true}});
    kfuse::Array<double, 3> a(grid, "u_prev"), b(grid, "u"), c(grid, "u_next");
    if (restart.empty()) {
      // A Gaussian pulse at rest; u_prev from a Taylor step back (u_t = 0).
      using kfuse::cast;
      using kfuse::index;
      const double mid = 0.5 * double(n - 1), width = 0.1 * double(n);
      auto x = cast<double>(index<0>()) - mid;
      auto y = cast<double>(index<1>()) - mid;
      auto z = cast<double>(index<2>()) - mid;
      b = kfuse::exp(-(x * x + y * y + z * z) / (width * width));
      using kfuse::shift;
      a = b + 0.5 * courant2 *
                  (shift<-1, 0, 0>(b) + shift<1, 0, 0>(b) + shift<0, -1, 0>(b) + shift<0, 1, 0>(b) +
                   shift<0, 0, -1>(b) + shift<0, 0, 1>(b) - 6.0 * b);
    } else {
      kfuse::load_checkpoint(restart, a, b);
      if (root) std::printf("restarted from %s\n", restart.c_str());
    }

    kfuse::Scalar<double> kinetic("kinetic"), potential("potential");
    auto step = kfuse::fuse(
        a, b, c, kinetic, potential,
        [courant2](auto u_prev, auto u, auto u_next, auto kinetic, auto potential) {
          using kfuse::shift;
          auto lap = shift<-1, 0, 0>(u) + shift<1, 0, 0>(u) + shift<0, -1, 0>(u) +
                     shift<0, 1, 0>(u) + shift<0, 0, -1>(u) + shift<0, 0, 1>(u) - 6.0 * u;
          auto grad_dot = (shift<1, 0, 0>(u) - u) * (shift<1, 0, 0>(u_prev) - u_prev) +
                          (shift<0, 1, 0>(u) - u) * (shift<0, 1, 0>(u_prev) - u_prev) +
                          (shift<0, 0, 1>(u) - u) * (shift<0, 0, 1>(u_prev) - u_prev);
          return kfuse::seq(kfuse::assign(u_next, 2.0 * u - u_prev + courant2 * lap),
                            kfuse::reduce(kinetic, kfuse::sum(kfuse::pow(u - u_prev, 2))),
                            kfuse::reduce(potential, kfuse::sum(grad_dot)));
        });
    static_assert(decltype(step)::kernel_count == 1, "update and energy fuse into one kernel");

    // Each round rotates the roles once around, so (u_prev, u) is (a, b) again
    // after it: the checkpoint's arrays and labels do not depend on the step count.
    const int rounds = (steps + 2) / 3;
    double first = 0, energy = 0;
    auto report = [&](int it) {
      energy = kinetic.value() + courant2 * potential.value();
      if (it == 0) first = energy;
      if (root && it % 15 == 0) std::printf("step %4d  energy %.15e\n", it, energy);
    };
    for (int round = 0; round < rounds; ++round) {
      step(a, b, c, kinetic, potential);
      report(3 * round);
      step(b, c, a, kinetic, potential);
      report(3 * round + 1);
      step(c, a, b, kinetic, potential);
      report(3 * round + 2);
    }
    if (root)
      std::printf("relative energy drift %.2e over %d steps\n", std::abs(energy - first) / first,
                  3 * rounds);

    kfuse::write_vtk("wave3d/u", b);
    kfuse::save_checkpoint("wave3d.ckpt", a, b);
    if (root) std::printf("wrote wave3d/u.pvti and wave3d.ckpt\n");
  } catch (const kfuse::Error& e) {
    if (root) std::fprintf(stderr, "wave3d: %s\n", e.what());
    return 1;
  }
  return 0;
}
