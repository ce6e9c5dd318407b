// 2-D shallow-water equations (h, hu, hv), finite-volume Lax-Friedrichs on a
// periodic n x n grid of [0, 1]^2, plus the total mass sum(h) per step as a
// conservation check. The problem shared by swe.cpp (kfuse) and
// swe_kokkos.cpp (by hand). x runs along dimension 1 (j), y along 0 (i).
#pragma once

#include <cmath>
#include <cstdint>

#include <kfuse/kfuse.hpp>

#include "../../framework/bench.hpp"

namespace kfuse::bench::swe {

struct Constants {
  std::int64_t n;
  double g = 9.81, half_g = 0.5 * 9.81, dx, dy, dt, cx, cy;
  static constexpr double u0 = 0.1, v0 = -0.05;  // initial velocities
  explicit Constants(std::int64_t size) : n(size), dx(1.0 / double(size)), dy(1.0 / double(size)) {
    dt = 0.4 * dx / (std::abs(u0) + std::sqrt(g * 1.1));  // CFL 0.4 (h <= 1.1)
    cx = dt / (2 * dx);
    cy = dt / (2 * dy);
  }
};

inline Grid<2> make_grid(const Setup& s) {
  return Grid<2>(s.comm, {s.size, s.size}, GridOptions<2>{1, {true, true}});
}

/// scale * h(i, j), where h is a Gaussian bump of water on an n x n grid. (Functors, not
/// lambdas, in headers: docs/backends.md, "Lambdas in headers".)
struct Bump {
  double d;  // 1 / n
  double scale;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t j) const {
    const double x = (double(j) + 0.5) * d - 0.5, y = (double(i) + 0.5) * d - 0.3;
    return scale * (1.0 + 0.1 * kfuse::detail::math::exp(-(x * x + y * y) / 0.005));
  }
};

/// The bump moving with (u0, v0).
inline void initialise(Array<double, 2>& h, Array<double, 2>& hu, Array<double, 2>& hv,
                       std::int64_t n) {
  const double d = 1.0 / double(n);
  h.fill_with(Bump{d, 1.0});
  hu.fill_with(Bump{d, Constants::u0});
  hv.fill_with(Bump{d, Constants::v0});
}

inline double min_bytes(const Setup& s) { return 48.0 * double(s.size) * double(s.size); }

}  // namespace kfuse::bench::swe
