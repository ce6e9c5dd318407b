// gmg: CG preconditioned by a geometric multigrid V-cycle on the 2-D 5-point
// Poisson matrix (Diffuse's GMG, legate.sparse's examples/gmg.py), a fixed
// iteration count from x = 0 (solvers.hpp). Every variant runs the same
// operators: kfuse::pc::multigrid's hierarchy of 2 levels (full weighting,
// bilinear interpolation, Galerkin R A P) with one weighted-Jacobi sweep
// before and after the correction and one on the coarse grid (w_l = 4/3 /
// lambda_max(D_l^-1 A_l)), built once outside the timing.
//
// gmg_solve: the same system and V-cycle, solved from x = 0 until
// ||b - A x|| <= gmg_rtol ||b|| (kfuse::cg's test, PETSc's with
// KSP_NORM_UNPRECONDITIONED): time to solution, one solve a repetition; kfuse's
// stronger cycle (gmg_chebyshev_options) and PETSc's GAMG with its defaults, a
// user's default choice, beside them.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "../solvers/solvers.hpp"

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

/// gmg_options()'s hierarchy on cg_matrix(s), built once for every variant that takes it
/// (a handle: copies share it).
inline pc::Multigrid<double> gmg_hierarchy(const Setup& s) {
  return s.shared<pc::Multigrid<double>>(
      "gmg_hierarchy", [&] { return pc::multigrid(cg_matrix(s), gmg_shape(s), gmg_options()); });
}

/// The V-cycle's sparse products (each with a ghost import): per level but the
/// coarsest, sweeps - 1 before, the residual, the restriction, the
/// interpolation and sweeps after; coarse_sweeps - 1 on the coarsest.
inline int gmg_cycle_products(const pc::MultigridOptions& o) {
  return (o.levels - 1) * (2 * o.sweeps + 2) + o.coarse_sweeps - 1;
}

/// Bytes of gmg_options()'s operators on an n x n fine grid (12 bytes an
/// entry, 4 a row). A: 5 entries a row; R: 9 per coarse row (n / 4 rows); P:
/// the same entries on n rows.
struct GmgOperatorBytes {
  double fine_points, A, R, P;
  explicit GmgOperatorBytes(const Setup& s)
      : fine_points(double(s.size) * double(s.size)),
        A(12.0 * 5.0 * fine_points + 4.0 * fine_points),
        R(12.0 * 9.0 * fine_points / 4.0 + 4.0 * fine_points / 4.0),
        P(12.0 * 9.0 * fine_points / 4.0 + 4.0 * fine_points) {}
};

/// Compulsory traffic per CG iteration, all ranks: the operators as often as
/// they are applied (A three times: CG's product, the residual, the
/// post-sweep; R and P once), the fine vectors x, r, p, z each read and
/// written (16 bytes) and D^-1 read (8 bytes).
inline double gmg_min_bytes(const Setup& s) {
  const GmgOperatorBytes b(s);
  return 3.0 * b.A + b.R + b.P + 72.0 * b.fine_points;
}

/// Distinct bytes of a CG iteration: A, R and P once, the fine vectors x, r,
/// p, Ap, z, the cycle's u and t, D^-1, and about 3 coarse vectors.
inline double gmg_working_set(const Setup& s) {
  const GmgOperatorBytes b(s);
  return b.A + b.R + b.P + 64.0 * b.fine_points + 3.0 * 8.0 * b.fine_points / 4.0;
}

/// gmg_solve's `fused_chebyshev`: kfuse's stronger cycle, for time to
/// solution beside GAMG: levels down to a coarsest grid of at most 64 points a
/// side, two Chebyshev iterations per smoothing (PETSc PCMG's default) and an
/// exact LU on the coarsest grid.
inline pc::MultigridOptions gmg_chebyshev_options(const Setup& s) {
  pc::MultigridOptions o;
  o.levels = 2;
  for (index_t e = (s.size - 1) / 2; e > 64; e = (e - 1) / 2) ++o.levels;
  o.restriction = pc::Restriction::full_weighting;
  o.smoother = pc::Smoother::chebyshev;
  o.sweeps = 2;
  o.coarse = pc::CoarseSolve::direct;
  return o;
}

/// gmg_solve's relative tolerance, and the iteration limit of every variant.
inline constexpr double gmg_rtol = 1e-8;
inline constexpr int gmg_max_it = 10000;

inline SolverOptions gmg_solve_options() {
  SolverOptions o;
  o.rtol = gmg_rtol;
  o.atol = 0;
  o.max_it = gmg_max_it;
  return o;
}

/// A solve's fields (solution_fields: x and ||b - A x||) as gmg_solve compares
/// them: x, and the residual as 1 when it is within twice the tolerance (each
/// variant stops at its own residual below rtol ||b||), else its multiple of rtol ||b||.
inline Fields solved_fields(Fields fields, double b_norm) {
  for (Field& f : fields)
    if (f.name == "residual") {
      const double ratio = f.values.at(0) / (gmg_rtol * b_norm);
      f = Field{"residual / (rtol ||b||), 1 if <= 2", {ratio <= 2 ? 1.0 : ratio}};
    }
  return fields;
}

/// Prints, on rank 0, how many iterations a gmg_solve variant took.
inline void report_iterations(const Comm& comm, const std::string& variant, int iterations) {
  if (comm.rank() == 0)
    std::fprintf(stderr, "[kfuse-bench] gmg_solve: %s converged in %d iterations\n",
                 variant.c_str(), iterations);
}

}  // namespace kfuse::bench::solvers
