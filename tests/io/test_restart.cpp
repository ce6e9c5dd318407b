// Restart at another rank count, bit for bit: a run evolves two fields a few
// steps and saves them; a run at another rank count evolves the same fields
// itself, loads the checkpoint, finds the same bits, and both go on in step.
//
// ctest runs the writer at 4 ranks (KFUSE_RESTART_ROLE=write) and readers at
// 2 and 1 (KFUSE_RESTART_ROLE=read) on one file, KFUSE_RESTART_FILE; run by
// hand without a role, the program writes and reads its own file.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <kfuse/kfuse.hpp>

#include "io_test_support.hpp"

namespace {

std::string environment(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

/// A periodic 3-D field and a 2-D field with fixed boundaries, set up as on a
/// fresh start, and a diffusion step for each (ping-pong through a scratch array).
struct Simulation {
  kfuse::Grid<3> g3{kfuse::Comm(), {9, 8, 7}, kfuse::GridOptions<3>{1, {true, true, true}}};
  kfuse::Grid<2> g2{kfuse::Comm(), {17, 11}};
  kfuse::Array<double, 3> u{g3, "u"}, u_next{g3, "u_next"};
  kfuse::Array<float, 2> w{g2, "w"}, w_next{g2, "w_next"};

  Simulation() { start(); }
  // Not in the constructor: nvcc forbids extended lambdas there.
  void start() {
    u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
      return 1.0 / double(1 + i + 2 * j) + double(k * k) / 7.0;
    });
    w.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
      return float(i >= 0 && i < 17 && j >= 0 && j < 11 ? 1.0 / double(3 + i * j) : 0.5);
    });
  }

  void step() {
    using kfuse::shift;
    u_next = u + 0.1 * (shift<-1, 0, 0>(u) + shift<1, 0, 0>(u) + shift<0, -1, 0>(u) +
                        shift<0, 1, 0>(u) + shift<0, 0, -1>(u) + shift<0, 0, 1>(u) - 6.0 * u);
    u = u_next;
    w_next =
        w + 0.2f * (shift<-1, 0>(w) + shift<1, 0>(w) + shift<0, -1>(w) + shift<0, 1>(w) - 4.0f * w);
    w = w_next;
  }
};

constexpr int steps_before = 3, steps_after = 2;

}  // namespace

TEST_CASE("restart at another rank count, bit for bit") {
  const std::string role = environment("KFUSE_RESTART_ROLE", "both");
  const std::string file = environment("KFUSE_RESTART_FILE", "restart.ckpt");

  Simulation reference;  // evolved here, at this rank count
  for (int s = 0; s < steps_before; ++s) reference.step();
  if (role == "write" || role == "both") kfuse::save_checkpoint(file, reference.u, reference.w);

  if (role == "read" || role == "both") {
    Simulation restarted;
    kfuse::load_checkpoint(file, restarted.u, restarted.w);
    CHECK(kfuse_test::bitwise_equal(restarted.u.gather(), reference.u.gather()));
    CHECK(kfuse_test::bitwise_equal(restarted.w.gather(), reference.w.gather()));
    for (int s = 0; s < steps_after; ++s) {
      reference.step();
      restarted.step();
    }
    CHECK(kfuse_test::bitwise_equal(restarted.u.gather(), reference.u.gather()));
    CHECK(kfuse_test::bitwise_equal(restarted.w.gather(), reference.w.gather()));
  }
}
