// gmg: CG preconditioned by a geometric multigrid V-cycle on the 2-D 5-point
// Poisson matrix (Diffuse's GMG, legate.sparse's examples/gmg.py), a fixed
// iteration count from x = 0 (solvers.hpp). Every variant runs the same
// operators: kfuse::pc::multigrid's hierarchy of 2 levels (full weighting,
// bilinear interpolation, Galerkin R A P) with one weighted-Jacobi sweep
// before and after the correction and one on the coarse grid (w_l = 4/3 /
// lambda_max(D_l^-1 A_l)), built once outside the timing.
#pragma once

#include <string>

#include "solvers.hpp"

namespace kfuse::bench::solvers {

inline pc::MultigridOptions gmg_options() {
  pc::MultigridOptions o;
  o.levels = 2;
  o.restriction = pc::Restriction::full_weighting;
  o.smoother = pc::Smoother::jacobi;
  o.sweeps = 1;
  o.coarse_sweeps = 1;
  return o;
}

inline std::vector<index_t> gmg_shape(const Setup& s) { return {s.size, s.size}; }

/// The V-cycle's sparse products (each with a ghost import): per level but the
/// coarsest, sweeps - 1 before, the residual, the restriction, the
/// interpolation and sweeps after; coarse_sweeps - 1 on the coarsest.
inline int gmg_cycle_products(const pc::MultigridOptions& o) {
  return (o.levels - 1) * (2 * o.sweeps + 2) + o.coarse_sweeps - 1;
}

/// Compulsory traffic per CG iteration, all ranks, for gmg_options(): the
/// operators as often as they are applied (A three times: CG's product, the
/// residual, the post-sweep; R and P once; 12 bytes an entry, 4 a row) and
/// the fine vectors x, r, p, z and D^-1 once (8 bytes). A: 5 entries a row;
/// R: 9 per coarse row (n / 4 rows); P: the same entries on n rows.
inline double gmg_min_bytes(const Setup& s) {
  const double n = double(s.size) * double(s.size);
  const double A = 12.0 * 5.0 * n + 4.0 * n;
  const double R = 12.0 * 9.0 * n / 4.0 + 4.0 * n / 4.0;
  const double P = 12.0 * 9.0 * n / 4.0 + 4.0 * n;
  return 3.0 * A + R + P + 5.0 * 8.0 * n;
}

}  // namespace kfuse::bench::solvers
