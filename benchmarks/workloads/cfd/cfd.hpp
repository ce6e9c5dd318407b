// Lid-driven cavity flow, "CFD Python" step 11 (Barba's 12 steps to
// Navier-Stokes): per time step, build b from u and v, `nit` Jacobi sweeps of
// the pressure Poisson equation, then update u and v. The problem shared by
// cfd.cpp (kfuse) and cfd_kokkos.cpp (by hand).
//
// The grid's owned cells are the interior nodes (n x n) of the (n+2) x (n+2)
// nodes on [0, 2]^2; its halo holds the boundary nodes. Boundary conditions:
// u = 1 on the lid (i = n), u = v = 0 on the other walls (fixed halo values);
// p = 0 on the lid (halo); dp/dn = 0 on the other three walls, written into
// the stencil: a neighbour across such a wall is the point itself (as CFD
// Python's p[0, :] = p[1, :] and friends make it).
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

#include "../../framework/bench.hpp"

namespace kfuse::bench::cfd {

struct Constants {
  std::int64_t n;
  double dx, dy, dt, rho = 1.0, nu = 0.1;
  double dx2, dy2;
  explicit Constants(std::int64_t size)
      : n(size), dx(2.0 / double(size + 1)), dy(2.0 / double(size + 1)) {
    dx2 = dx * dx;
    dy2 = dy * dy;
    dt = 0.2 * dx2 / nu;  // explicit diffusion: nu dt / dx^2 = 0.2
  }
};

inline Grid<2> make_grid(const Setup& s) { return Grid<2>(s.comm, {s.size, s.size}); }

/// u: 1 on the lid (the halo row above the top), 0 elsewhere. (Functors, not lambdas, in
/// headers: docs/backends.md, "Lambdas in headers".)
struct LidVelocity {
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t) const {
    return i >= n ? 1.0 : 0.0;
  }
};
inline void initialise_u(Array<double, 2>& u, std::int64_t n) { u.fill_with(LidVelocity{n}); }

/// Compulsory traffic of one step: b (u, v in, b out), nit sweeps (p, b in, p out), update
/// (u, v, p in, u, v out).
inline double min_bytes(const Setup& s) {
  const double points = double(s.size) * double(s.size);
  return 8.0 * points * (3.0 + 3.0 * s.nit + 5.0);
}

}  // namespace kfuse::bench::cfd
