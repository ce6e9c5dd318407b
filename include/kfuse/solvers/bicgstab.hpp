// kfuse::bicgstab: van der Vorst's BiCGSTAB as PETSc's KSPBCGS runs it
// (r_hat = r_0, the same recurrences and breakdown tests; an exact-zero
// breakdown restarts once instead of stopping), written with kfuse::fuse. A
// solve (or a restart) starts with one kernel and one allreduce
// (bicgstab_start: r = b - A x, r_hat = r, p = v = 0, r.r, b.b); one
// iteration is one program of 5 kernels and 3 allreduces:
//   host:     beta = (rho / rho_old) (alpha / omega)
//   kernel 1: p = r + beta (p - omega v)
//   kernel 2: v = A p, d = v.r_hat                      (import overlapped)
//   host:     alpha = rho / d (0 on a breakdown), rho_old = rho
//   kernel 3: s = r - alpha v
//   kernel 4: t = A s, ts = t.s, tt = t.t              (import overlapped)
//   host:     omega = ts / tt (0 when t = 0: PETSc's "try x + alpha p";
//             0 on a breakdown, which so leaves x and r as they were)
//   kernel 5: x += alpha p + omega s, r = s - omega t, rho = r.r_hat, rr = r.r
// Each kernel boundary is forced by a fusion rule: p, s are read through
// A * (rule 2), and every host scalar depends on a reduction (rule 4).
// Preconditioned (right, as PETSc's KSPBCGS with PC_RIGHT): A p and A s become
// A p^ and A s^ with p^ = M p, s^ = M s, and x += alpha p^ + omega s^. Jacobi
// computes p^ and s^ in kernels 1 and 3 (still 5 kernels and 3 allreduces);
// any other M runs between three programs, after kernels 1 and 3.
#pragma once

#include <cmath>

#include "kfuse/exec/space.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/program/fuse.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/solvers/workspace.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse {
namespace detail {

/// The scalars of a BiCGSTAB iteration.
template <class T>
struct BicgstabScalars {
  Scalar<T> rho{"rho"}, rho_old{"rho_old"}, alpha{"alpha"}, omega{"omega"}, beta{"beta"}, d{"d"},
      ts{"ts"}, tt{"tt"}, rr{"rr"};
};

/// The start (or a restart) of a BiCGSTAB solve as one program of one kernel
/// and one allreduce, as an expert writes it: r = b - A x, r_hat = r, p = v =
/// 0 (work vectors may hold a previous solve's values; with them 0 the first
/// p is r), rr = r.r and bb = b.b; then the scalars' first values. Returns
/// ||b||.
template <class Apply, class V, class T>
double bicgstab_start(const Apply& apply, const V& x, const V& b, const V& r, const V& r_hat,
                      const V& p, const V& v, const BicgstabScalars<T>& c) {
  Scalar<T> bb("b.b");
  auto start = fuse(x, b, r, r_hat, p, v, c.rr, bb,
                    [apply](auto x, auto b, auto r, auto r_hat, auto p, auto v, auto rr, auto bb) {
                      return seq(assign(r, b - apply(x)), assign(r_hat, r), assign(p, T(0)),
                                 assign(v, T(0)), reduce(rr, dot(r, r)), reduce(bb, dot(b, b)));
                    });
  static_assert(decltype(start)::kernel_count == 1 && decltype(start)::allreduce_count == 1,
                "kfuse::bicgstab: a solve's start must fuse into one kernel and one allreduce");
  start();
  BicgstabScalars<T> s = c;  // handles: share the values
  s.rho = s.rr.value();      // r.r_hat, the same sum
  s.rho_old = T(1), s.alpha = T(1), s.omega = T(1);
  return std::sqrt(double(bb.value()));
}

/// BiCGSTAB's alpha = rho / d, or 0 on a breakdown: d = v.r_hat exactly 0
/// (PETSc's test; a relative one would stop BiCGSTAB's transient growth on
/// nonsymmetric matrices, which it recovers from) or NaN (d == d fails).
template <class Rho, class D>
auto bicgstab_alpha(const Rho& rho, const D& d) {
  using T = typename expr_traits<D>::value_type;
  return where(d != T(0) && d == d, rho / d, T(0));
}

/// One BiCGSTAB iteration as a program (t = A s a work vector, not a
/// temporary, so that a SolverWorkspace keeps it). Also what the benchmarks
/// run under every policy.
template <class Policy = Fused, class Apply, class V, class T>
auto bicgstab_iteration(const Apply& apply, const V& x, const V& r, const V& r_hat, const V& p,
                        const V& v, const V& s, const V& t, const BicgstabScalars<T>& c) {
  return fuse<Policy>(
      x, r, r_hat, p, v, s, t, c.rho, c.rho_old, c.alpha, c.omega, c.beta, c.d, c.ts, c.tt, c.rr,
      [apply](auto x, auto r, auto r_hat, auto p, auto v, auto s, auto t, auto rho, auto rho_old,
              auto alpha, auto omega, auto beta, auto d, auto ts, auto tt, auto rr) {
        return seq(assign(beta, (rho / rho_old) * (alpha / omega)),
                   assign(p, r + beta * (p - omega * v)),
                   assign(v, apply(p)),
                   reduce(d, dot(v, r_hat)),
                   assign(alpha, bicgstab_alpha(rho, d)),
                   assign(rho_old, rho),
                   assign(s, r - alpha * v),
                   assign(t, apply(s)),
                   reduce(ts, dot(t, s)),
                   reduce(tt, dot(t, t)),
                   assign(omega, where(tt > T(0) && alpha != T(0), ts / tt, T(0))),
                   assign(x, x + alpha * p + omega * s),
                   assign(r, s - omega * t),
                   reduce(rho, dot(r, r_hat)),
                   reduce(rr, dot(r, r)));
      });
}

/// One Jacobi-preconditioned BiCGSTAB iteration (p^ = D^-1 p and s^ = D^-1 s
/// are stored: they are the operands of A *).
template <class Apply, class V, class T>
auto bicgstab_jacobi_iteration(const Apply& apply, const V& x, const V& r, const V& r_hat,
                               const V& p, const V& v, const V& s, const V& t, const V& dinv,
                               const V& p_hat, const V& s_hat, const BicgstabScalars<T>& c) {
  return fuse(
      x, r, r_hat, p, v, s, t, dinv, p_hat, s_hat, c.rho, c.rho_old, c.alpha, c.omega, c.beta, c.d,
      c.ts, c.tt, c.rr,
      [apply](auto x, auto r, auto r_hat, auto p, auto v, auto s, auto t, auto dinv, auto p_hat,
              auto s_hat, auto rho, auto rho_old, auto alpha, auto omega, auto beta, auto d,
              auto ts, auto tt, auto rr) {
        return seq(assign(beta, (rho / rho_old) * (alpha / omega)),
                   assign(p, r + beta * (p - omega * v)),  // kernel 1
                   assign(p_hat, dinv * p),
                   assign(v, apply(p_hat)),  // kernel 2
                   reduce(d, dot(v, r_hat)),
                   assign(alpha, bicgstab_alpha(rho, d)),
                   assign(rho_old, rho),
                   assign(s, r - alpha * v),  // kernel 3
                   assign(s_hat, dinv * s),
                   assign(t, apply(s_hat)),  // kernel 4
                   reduce(ts, dot(t, s)),
                   reduce(tt, dot(t, t)),
                   assign(omega, where(tt > T(0) && alpha != T(0), ts / tt, T(0))),
                   assign(x, x + alpha * p_hat + omega * s_hat),  // kernel 5
                   assign(r, s - omega * t),
                   reduce(rho, dot(r, r_hat)),
                   reduce(rr, dot(r, r)));
      });
}

/// The reason a BiCGSTAB iteration stopped without converging, from its
/// scalars (PETSc: KSP_DIVERGED_BREAKDOWN for each; kfuse names the rule).
template <class T>
const char* bicgstab_breakdown(T d, T rho, T omega) {
  if (!std::isfinite(double(d))) return "not finite";
  if (d == T(0)) return "breakdown (r_hat.v = 0)";
  if (omega == T(0)) return "breakdown (omega = 0)";
  if (rho == T(0)) return "breakdown (rho = 0)";
  return nullptr;
}

/// BiCGSTAB on x; `m` is pc::None, a DiagonalScaling (fused) or an operator.
template <class Apply, class V, class M>
SolveResult stabilized_bicg(const char* api, const Apply& apply, V& x, const V& b,
                            const SolverOptions& options, const M& m) {
  using T = typename V::value_type;
  const auto& space = space_of(x);
  WorkVectors work(options.workspace);
  const auto held = work.vectors<V>(space, {"bicgstab.r", "bicgstab.r_hat", "bicgstab.p",
                                            "bicgstab.v", "bicgstab.s", "bicgstab.t"});
  V r = held[0], r_hat = held[1], p = held[2], v = held[3], s = held[4], t = held[5];  // handles
  BicgstabScalars<T> c;  // handles: the copies below share their values
  Scalar<T> rho = c.rho, alpha = c.alpha, omega = c.omega, d = c.d, rr = c.rr;

  const double b_norm = bicgstab_start(apply, x, b, r, r_hat, p, v, c);
  Convergence convergence(api, space.base_comm(), options, b_norm);
  SolveResult result;
  if (convergence.done(0, std::sqrt(double(rr.value())), result))
    return convergence.finish(result);

  // An exact 0 in r_hat.v, t.s or r.r_hat (d, omega or rho) of a finite
  // iterate restarts BiCGSTAB from this x: r = b - A x, r_hat = r, p = v = 0.
  // Once r has lost its bi-orthogonality to r_hat these sums are rounding
  // noise (|rho| ~ eps ||r|| ||r_hat||), and an exact 0 is chance; PETSc stops
  // there (KSP_DIVERGED_BREAKDOWN). A breakdown right after a restart (the
  // start is one) stops.
  int restarted_at = 0;
  auto restart = [&](int it) {
    bicgstab_start(apply, x, b, r, r_hat, p, v, c);
    restarted_at = it;
  };
  auto iterate = [&](auto&& iteration) {
    for (int it = 1;; ++it) {
      iteration();
      const bool kept = alpha.value() == T(0);  // a breakdown: alpha = omega = 0 kept x and r
      if (!kept && convergence.done(it, std::sqrt(double(rr.value())), result))
        return convergence.finish(result);
      // The next beta = (rho / rho_old) (alpha / omega) is undefined: restart,
      // or stop with this iterate (x + alpha p + omega s, finite).
      const char* reason = kept ? bicgstab_breakdown(d.value(), T(1), T(1))
                                : bicgstab_breakdown(d.value(), rho.value(), omega.value());
      if (kept && !reason) reason = "breakdown";
      if (!reason) continue;
      if (std::isfinite(double(d.value())) && restarted_at != it - 1) {
        restart(it);
        if (kept && convergence.done(it, std::sqrt(double(rr.value())), result))
          return convergence.finish(result);
        continue;
      }
      result.iterations = kept ? it - 1 : it;  // PETSc counts no iteration that kept x
      Convergence::stop(result, false, reason);
      return convergence.finish(result);
    }
  };

  if constexpr (is_no_preconditioner<M>::value) {
    auto iteration = bicgstab_iteration(apply, x, r, r_hat, p, v, s, t, c);
    static_assert(decltype(iteration)::kernel_count <= 5 && decltype(iteration)::allreduce_count <= 3,
                  "kfuse::bicgstab: an iteration must fuse into at most 5 kernels and 3 allreduces");
    return iterate(iteration);
  } else {
    const auto hats = work.vectors<V>(space, {"bicgstab.p_hat", "bicgstab.s_hat"});
    V p_hat = hats[0], s_hat = hats[1];
    if constexpr (std::is_same_v<M, DiagonalScaling<V>>) {
      auto iteration =
          bicgstab_jacobi_iteration(apply, x, r, r_hat, p, v, s, t, m.inverse, p_hat, s_hat, c);
      static_assert(decltype(iteration)::kernel_count <= 5 &&
                        decltype(iteration)::allreduce_count <= 3,
                    "kfuse::bicgstab: a Jacobi-preconditioned iteration must fuse into at most 5 "
                    "kernels and 3 allreduces");
      return iterate(iteration);
    } else {
      // The iteration above cut where M runs: after p's update and after s's.
      auto direction = fuse(r, p, v, c.rho, c.rho_old, c.alpha, c.omega, c.beta,
                            [](auto r, auto p, auto v, auto rho, auto rho_old, auto alpha,
                               auto omega, auto beta) {
                              return seq(assign(beta, (rho / rho_old) * (alpha / omega)),
                                         assign(p, r + beta * (p - omega * v)));  // kernel 1
                            });
      auto half_step = fuse(r, r_hat, v, s, p_hat, c.rho, c.rho_old, c.alpha, c.d,
                            [apply](auto r, auto r_hat, auto v, auto s, auto p_hat, auto rho,
                                    auto rho_old, auto alpha, auto d) {
                              return seq(assign(v, apply(p_hat)),  // kernel 2
                                         reduce(d, dot(v, r_hat)),
                                         assign(alpha, bicgstab_alpha(rho, d)),
                                         assign(rho_old, rho),
                                         assign(s, r - alpha * v));  // kernel 3
                            });
      auto step = fuse(
          x, r, r_hat, s, t, p_hat, s_hat, c.rho, c.alpha, c.omega, c.ts, c.tt, c.rr,
          [apply](auto x, auto r, auto r_hat, auto s, auto t, auto p_hat, auto s_hat, auto rho,
                  auto alpha, auto omega, auto ts, auto tt, auto rr) {
            // M may return inf or NaN (a user's M, a huge ILU pivot): then d or
            // t.t is NaN, alpha or omega 0, and x must not take 0 * NaN.
            return seq(assign(t, apply(s_hat)),  // kernel 4
                       reduce(ts, dot(t, s)), reduce(tt, dot(t, t)),
                       assign(omega, where(tt > T(0) && alpha != T(0), ts / tt, T(0))),
                       assign(x, x + where(alpha != T(0), alpha * p_hat, T(0)) +  // kernel 5
                                     where(omega != T(0), omega * s_hat, T(0))),
                       assign(r, s - omega * t), reduce(rho, dot(r, r_hat)), reduce(rr, dot(r, r)));
          });
      return iterate([&] {
        direction();
        apply_preconditioner(api, m, p, p_hat);
        half_step();
        apply_preconditioner(api, m, s, s_hat);
        step();
      });
    }
  }
}

}  // namespace detail

/// Solves A x = b by BiCGSTAB (A square, possibly nonsymmetric); x holds the
/// initial guess on entry. M: a preconditioner (pc::none, the default;
/// pc::jacobi(A), pc::bjacobi_ilu0(A), or a callable
/// void(const Vector<T>& r, Vector<T>& z)) applied on the right, as PETSc's
/// KSPBCGS with PC_RIGHT: the residual it tests is b - A x. Collective.
template <class T, class M = pc::None>
SolveResult bicgstab(const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
                     const SolverOptions& options = {}, const M& m = {}) {
  static_assert(detail::is_preconditioner_for<M, T>,
                "kfuse::bicgstab(A, x, b, options, M): M must be kfuse::pc::none, a kfuse::pc "
                "preconditioner, or callable as M(const kfuse::Vector<T>& r, "
                "kfuse::Vector<T>& z)");
  constexpr const char* api = "kfuse::bicgstab";
  detail::agree_on_matrix_solve<M>(api, A, x, b, options);
  const detail::MatrixOperator<T> apply{A};
  return detail::with_preconditioner(A, options, m, [&](const auto& preconditioner) {
    return detail::stabilized_bicg(api, apply, x, b, options, preconditioner);
  });
}

}  // namespace kfuse
