// kfuse::bicgstab: van der Vorst's BiCGSTAB as PETSc's KSPBCGS runs it
// (r_hat = r_0, the same recurrences and breakdown rules), written with
// kfuse::fuse. One iteration is one program of 5 kernels and 3 allreduces:
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
#pragma once

#include <cmath>

#include "kfuse/exec/eager.hpp"
#include "kfuse/exec/program.hpp"
#include "kfuse/solvers/cg.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse {
namespace detail {

/// The scalars of a BiCGSTAB iteration.
template <class T>
struct BicgstabScalars {
  Scalar<T> rho{"rho"}, rho_old{"rho_old"}, alpha{"alpha"}, omega{"omega"}, beta{"beta"}, d{"d"},
      ts{"ts"}, tt{"tt"}, rr{"rr"};
};

/// The start of a BiCGSTAB solve: r = b - A x, r_hat = r, the scalars'
/// first values (with p = v = 0, the first p is r).
template <class Apply, class V, class T>
void bicgstab_start(const Apply& apply, const V& x, const V& b, V& r, V& r_hat,
                    const BicgstabScalars<T>& c) {
  r = b - apply(x);
  r_hat = r;
  BicgstabScalars<T> s = c;  // handles: share the values
  s.rr = eval(dot(r, r));
  s.rho = s.rr.value();  // r.r_hat, the same sum
  s.rho_old = T(1), s.alpha = T(1), s.omega = T(1);
}

/// BiCGSTAB's alpha = rho / d, or 0 on a breakdown: d = v.r_hat exactly 0
/// (PETSc's test; a relative one would stop BiCGSTAB's transient growth on
/// nonsymmetric matrices, which it recovers from) or NaN (d == d fails).
template <class Rho, class D>
auto bicgstab_alpha(const Rho& rho, const D& d) {
  using T = typename expr_traits<D>::value_type;
  return where(d != T(0) && d == d, rho / d, T(0));
}

/// One BiCGSTAB iteration as a program (t is its temporary). Also what the
/// benchmarks run under every policy.
template <class Policy = Fused, class Apply, class V, class T>
auto bicgstab_iteration(const Apply& apply, const V& x, const V& r, const V& r_hat, const V& p,
                        const V& v, const V& s, const BicgstabScalars<T>& c) {
  return fuse<Policy>(
      x, r, r_hat, p, v, s, c.rho, c.rho_old, c.alpha, c.omega, c.beta, c.d, c.ts, c.tt, c.rr,
      temporary<T>,
      [apply](auto x, auto r, auto r_hat, auto p, auto v, auto s, auto rho, auto rho_old,
              auto alpha, auto omega, auto beta, auto d, auto ts, auto tt, auto rr, auto t) {
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

template <class Apply, class V>
SolveResult stabilized_bicg(const char* api, const Apply& apply, V& x, const V& b,
                            const SolverOptions& options) {
  using T = typename V::value_type;
  const auto& space = space_of(x);
  V r(space, "bicgstab.r"), r_hat(space, "bicgstab.r_hat"), p(space, "bicgstab.p"),
      v(space, "bicgstab.v"), s(space, "bicgstab.s");
  BicgstabScalars<T> c;  // handles: the copies below share their values
  Scalar<T> rho = c.rho, alpha = c.alpha, omega = c.omega, d = c.d, rr = c.rr;

  bicgstab_start(apply, x, b, r, r_hat, c);
  Convergence convergence(api, space.base_comm(), options, double(eval(norm2(b))));
  SolveResult result;
  if (convergence.done(0, std::sqrt(double(rr.value())), result))
    return convergence.finish(result);

  auto iteration = bicgstab_iteration(apply, x, r, r_hat, p, v, s, c);
  static_assert(decltype(iteration)::kernel_count <= 5 && decltype(iteration)::allreduce_count <= 3,
                "kfuse::bicgstab: an iteration must fuse into at most 5 kernels and 3 allreduces");

  for (int it = 1;; ++it) {
    iteration();
    if (alpha.value() == T(0)) {  // a breakdown: alpha = omega = 0 kept x and r
      result.iterations = it;
      Convergence::stop(result, false, std::isfinite(double(d.value())) ? "breakdown" : "not finite");
      return convergence.finish(result);
    }
    if (convergence.done(it, std::sqrt(double(rr.value())), result))
      return convergence.finish(result);
    // The next beta = (rho / rho_old) (alpha / omega) is undefined: stop with
    // this iterate (x + alpha p + omega s, finite) rather than make it inf.
    if (rho.value() == T(0) || omega.value() == T(0)) {
      Convergence::stop(result, false, "breakdown");
      return convergence.finish(result);
    }
  }
}

}  // namespace detail

/// Solves A x = b by BiCGSTAB (A square, possibly nonsymmetric); x holds the
/// initial guess on entry. Collective.
template <class T>
SolveResult bicgstab(const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
                     const SolverOptions& options = {}) {
  constexpr const char* api = "kfuse::bicgstab";
  detail::check_system(api, A, x, b);
  std::string error;
  if (options.preconditioner != Preconditioner::none)
    error = "kfuse::bicgstab: only Preconditioner::none is implemented";
  A.range().comm().agree_or_throw(error);
  detail::check_solver_options(api, A.range().comm(), options);
  return detail::stabilized_bicg(api, [A](const auto& v) { return A * v; }, x, b, options);
}

}  // namespace kfuse
