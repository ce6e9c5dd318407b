// kfuse::cg and kfuse::cg_matfree: the conjugate gradient method, written
// with kfuse::fuse as a user would. A solve starts with one kernel and one
// allreduce (cg_start: r = b - A x, p = r, r.r, b.b; with Jacobi p = D^-1 r
// and r.p instead of p = r, with pc::multigrid the V-cycle's first sweep
// u = w D^-1 r, as kernel 2 below computes them); one iteration is one
// program of 3 kernels and 2 allreduces (static_assert below):
//   kernel 1: Ap = A p, pAp = p.Ap                      (ghost import / halo overlapped)
//   host:     alpha = rr / pAp (0 on a breakdown: x and r stay as they were)
//   kernel 2: r -= alpha Ap, rr' = r.r
//   host:     beta = rr' / rr, pp = rr' + beta^2 pp, rr = rr'
//   kernel 3: x += alpha p, p = r + beta p
// pp = p.p (for the breakdown test) follows from CG's identities: the new p
// is r + beta p with r orthogonal to the old p.
// x is updated in kernel 3, which reads p anyway (before overwriting it), not
// in kernel 2: 8 bytes a row less per iteration than PETSc's order.
// Without a preconditioner or with Jacobi, the product of an operator that
// reads no array but its argument (a constant-coefficient stencil,
// reads_only_its_argument_v) is not stored: kernel 1 reduces p.(A p), kernel
// 2 applies the operator again (r -= alpha A p), one vector pass less, as an
// expert writes a stencil CG (cg_iteration without Ap). One that reads
// coefficients or a matrix would read them twice.
// With the Jacobi preconditioner, z = D^-1 r is never stored: kernel 2 also
// reduces r.z and kernel 3 computes p = D^-1 r + beta p. Any other
// preconditioner M runs between two programs, as PETSc's KSPCG runs it:
//   kernel 1: Ap = A p, pAp, pp = p.p;  host: alpha;  kernel 2: x += alpha p, r -= alpha Ap, rr
//   z = M r;  kernel 3: rz' = r.z;  host: beta;  kernel 4: p = z + beta p
// pc::multigrid's ends fuse into CG, as an expert writes CG around a known
// V-cycle: kernel 2 also computes the cycle's first sweep u = w D^-1 r (pointwise
// in r), the cycle's last kernel (which writes z) also reduces r.z, and kernel 3
// goes: 3 kernels of CG's own and the cycle's but its first.
//
// SolverOptions::cg_single_reduction (no preconditioner) runs Chronopoulos
// and Gear's form, PETSc's KSPCG with -ksp_cg_single_reduction: with s = A p
// and w = A r kept as vectors, p.Ap and p.p follow from recurrences, so one
// allreduce serves an iteration: 2 kernels and 1 allreduce.
//   host:     pp = rr + beta^2 pp, pAp = r.w - beta^2 pAp, alpha = rr / pAp
//   kernel 1: p = r + beta p, s = w + beta s, x += alpha p, r -= alpha s
//   kernel 2: w = A r, rr' = r.r, r.w                  (ghost import / halo overlapped)
//   host:     beta = rr' / rr, rr = rr'
// cg_matfree with a stencil on Arrays of rank 2 or 3 on Kokkos::Serial runs the
// same iteration as one sweep, s and w not kept (cg_sweep.hpp).
//
// cg solves with a CsrMatrix; cg_matfree with any operator given as a
// function from a vector expression leaf to an expression (e.g. a stencil on
// Arrays: [](auto u) { return 4.0 * u - kfuse::shift<-1, 0>(u) - ...; }).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "kfuse/exec/space.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/program/fuse.hpp"
#include "kfuse/solvers/cg_sweep.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/solvers/workspace.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse {
namespace detail {

/// The largest Rayleigh quotient pAp / pp seen so far: an estimate of ||A||
/// from below (pp = p.p: a recurrence without a preconditioner, else one
/// more product in the kernel of A p, which reads p anyway).
template <class M, class P, class Q>
auto largest_rayleigh_quotient(const M& rq_max, const P& pAp, const Q& pp) {
  return where(pAp > rq_max * pp, pAp / pp, rq_max);
}

/// p.p of the new direction p = r + beta p_old, without a sum: r is
/// orthogonal to p_old (CG's identity), so p.p = r.r + beta^2 (p.p)_old.
template <class R, class B, class Q>
auto next_direction_norm2(const R& rr, const B& beta, const Q& pp) {
  return rr + beta * beta * pp;
}

/// CG's step length rr / pAp, or 0 on a breakdown: pAp not positive (an
/// indefinite matrix), NaN, or indistinguishable from 0 at T's precision (p
/// in the numerical null space of a singular matrix: pAp / pp below
/// epsilon ||A||, where rr / pAp would send x towards inf). The iteration
/// then leaves x and r as they were, and the solver stops.
template <class R, class P, class Q, class M>
auto step_length(const R& rr, const P& pAp, const Q& pp, const M& rq_max) {
  using T = typename expr_traits<P>::value_type;
  constexpr T epsilon = std::numeric_limits<T>::epsilon();
  return where(pAp > epsilon * rq_max * pp, rr / pAp, T(0));
}

/// The scalars of a CG iteration.
template <class T>
struct CgScalars {
  Scalar<T> rr{"rr"}, pAp{"pAp"}, pp{"pp"}, rq_max{"rq_max"}, alpha{"alpha"}, rr_new{"rr'"},
      beta{"beta"};
};

/// The start of a CG solve as one program of one kernel and one allreduce,
/// as an expert writes it: r = b - A x, what the first preconditioning needs
/// of r (`first(with, r, leaves...)` passes its statements to `with`), rr =
/// r.r and bb = b.b (for the tolerance's ||b||); then pp = rr and no Rayleigh
/// quotient yet. Returns ||b||. Each form costs a solver file about a second
/// of compile time: the forms below are all there are.
template <class Apply, class V, class T, class First, class... Leaves>
double cg_start_program(const Apply& apply, const V& x, const V& b, const V& r,
                        const CgScalars<T>& c, const First& first, const Leaves&... leaves) {
  Scalar<T> bb("b.b");
  auto start = fuse(x, b, r, c.rr, bb, leaves...,
                    [apply, first](auto x, auto b, auto r, auto rr, auto bb, auto... leaves) {
                      auto with = [&](const auto&... s) {
                        return seq(assign(r, b - apply(x)), s..., reduce(rr, dot(r, r)),
                                   reduce(bb, dot(b, b)));
                      };
                      return first(with, r, leaves...);
                    });
  static_assert(decltype(start)::kernel_count == 1 && decltype(start)::allreduce_count == 1,
                "kfuse::cg: a solve's start must fuse into one kernel and one allreduce");
  start();
  Scalar<T> rr = c.rr, pp = c.pp, rq_max = c.rq_max;  // handles: share the values
  pp = rr.value();
  rq_max = T(0);
  return std::sqrt(double(bb.value()));
}

/// cg_start_program with p = r: the first direction without a preconditioner;
/// with an operator M (one form for all: p = z overwrites it) as well.
template <class Apply, class V, class T>
double cg_start(const Apply& apply, const V& x, const V& b, const V& r, const V& p,
                const CgScalars<T>& c) {
  return cg_start_program(
      apply, x, b, r, c, [](const auto& with, auto r, auto p) { return with(assign(p, r)); }, p);
}

/// ... with Jacobi: the first direction p = D^-1 r and rz = r.p.
template <class Apply, class V, class T>
double cg_start_jacobi(const Apply& apply, const V& x, const V& b, const V& r, const V& p,
                       const V& dinv, const Scalar<T>& rz, const CgScalars<T>& c) {
  return cg_start_program(
      apply, x, b, r, c,
      [](const auto& with, auto r, auto p, auto dinv, auto rz) {
        return with(assign(p, dinv * r), reduce(rz, dot(r, p)));
      },
      p, dinv, rz);
}

/// ... with a V-cycle whose ends CG fuses (Multigrid::Ends): its first sweep
/// u = w D^-1 r, as kernel 2 of an iteration computes it.
template <class Apply, class V, class T>
double cg_start_first_sweep(const Apply& apply, const V& x, const V& b, const V& r,
                            const CgScalars<T>& c, const V& u, const V& dinv, const Scalar<T>& w) {
  return cg_start_program(
      apply, x, b, r, c,
      [](const auto& with, auto r, auto u, auto dinv, auto w) {
        return with(assign_first_sweep(r, u, dinv, w));
      },
      u, dinv, w);
}

/// One CG iteration as a program (x, r, p, the scalars and a stored A p
/// bound). Given Ap (a work vector, not a temporary, so that a
/// SolverWorkspace keeps it), kernel 1 stores A p and kernel 2 reads it
/// back; without it kernel 2 applies the operator again: 72 bytes a row
/// instead of 80 and one vector less, for an operator that costs less to
/// apply than to store (a stencil: cg_matfree). Also what the benchmarks
/// run under every policy.
template <class Policy = Fused, class Apply, class V, class T, class... StoredAp>
auto cg_iteration(const Apply& apply, const V& x, const V& r, const V& p, const CgScalars<T>& c,
                  const StoredAp&... Ap) {
  static_assert(sizeof...(StoredAp) <= 1, "cg_iteration: at most one vector Ap stores A p");
  return fuse<Policy>(x, r, p, c.rr, c.pAp, c.pp, c.rq_max, c.alpha, c.rr_new, c.beta, Ap...,
                      [apply](auto x, auto r, auto p, auto rr, auto pAp, auto pp, auto rq_max,
                              auto alpha, auto rr_new, auto beta, auto... Ap) {
                        const auto product = stored_or(apply(p), Ap...);
                        return seq(
                            assign(Ap, apply(p))...,                                     // kernel 1
                            reduce(pAp, dot(p, product)),                                //
                            assign(rq_max, largest_rayleigh_quotient(rq_max, pAp, pp)),  // host
                            assign(alpha, step_length(rr, pAp, pp, rq_max)),             //
                            assign(r, r - alpha * product),                              // kernel 2
                            reduce(rr_new, dot(r, r)),                                   //
                            assign(beta, rr_new / rr),                                   // host
                            assign(pp, next_direction_norm2(rr_new, beta, pp)),          //
                            assign(rr, rr_new),                                          //
                            assign(x, x + alpha * p),  // kernel 3 (the old p)
                            assign(p, r + beta * p));  //
                      });
}

/// One Jacobi-preconditioned CG iteration as a program (x, r, p, D^-1, the
/// scalars and a stored A p bound): z = D^-1 r is never stored; kernel 2
/// reduces r.z and kernel 3 computes p = D^-1 r + beta p. Without Ap the
/// operator is applied again, as in cg_iteration.
template <class Policy = Fused, class Apply, class V, class T, class... StoredAp>
auto jacobi_cg_iteration(const Apply& apply, const V& x, const V& r, const V& p, const V& dinv,
                         const Scalar<T>& rz, const Scalar<T>& rz_new, const CgScalars<T>& c,
                         const StoredAp&... Ap) {
  static_assert(sizeof...(StoredAp) <= 1, "jacobi_cg_iteration: at most one vector Ap stores A p");
  return fuse<Policy>(
      x, r, p, dinv, c.rr, rz, c.pAp, c.pp, c.rq_max, c.alpha, rz_new, c.beta, Ap...,
      [apply](auto x, auto r, auto p, auto dinv, auto rr, auto rz, auto pAp, auto pp, auto rq_max,
              auto alpha, auto rz_new, auto beta, auto... Ap) {
        const auto product = stored_or(apply(p), Ap...);
        return seq(assign(Ap, apply(p))...,                                     // kernel 1
                   reduce(pAp, dot(p, product)),                                //
                   reduce(pp, dot(p, p)),                                       //
                   assign(rq_max, largest_rayleigh_quotient(rq_max, pAp, pp)),  // host
                   assign(alpha, step_length(rz, pAp, pp, rq_max)),             //
                   assign(r, r - alpha * product),                              // kernel 2
                   reduce(rz_new, dot(r, dinv * r)),                            //
                   reduce(rr, dot(r, r)),                                       //
                   assign(beta, rz_new / rz),                                   // host
                   assign(rz, rz_new),                                          //
                   assign(x, x + alpha * p),                                    // kernel 3
                   assign(p, dinv * r + beta * p));                             //
      });
}

/// One single-reduction CG iteration as a program (x, r, p, s = A p, w = A r,
/// r.w and the scalars bound): p.p = r.r + beta^2 p.p and p.Ap = r.w -
/// beta^2 p.Ap, because r is orthogonal to the previous p (CG's own
/// identities). Also what the benchmarks run under every policy.
template <class Policy = Fused, class Apply, class V, class T>
auto cg_single_reduction_iteration(const Apply& apply, const V& x, const V& r, const V& p,
                                   const V& s, const V& w, const Scalar<T>& rw,
                                   const CgScalars<T>& c) {
  return fuse<Policy>(x, r, p, s, w, c.rr, rw, c.pAp, c.pp, c.rq_max, c.alpha, c.rr_new, c.beta,
                      [apply](auto x, auto r, auto p, auto s, auto w, auto rr, auto rw, auto pAp,
                              auto pp, auto rq_max, auto alpha, auto rr_new, auto beta) {
                        return seq(assign(pp, next_direction_norm2(rr, beta, pp)),  // host
                                   assign(pAp, rw - beta * beta * pAp),             //
                                   assign(rq_max, largest_rayleigh_quotient(rq_max, pAp, pp)),  //
                                   assign(alpha, step_length(rr, pAp, pp, rq_max)),             //
                                   assign(p, r + beta * p),    // kernel 1
                                   assign(s, w + beta * s),    //
                                   assign(x, x + alpha * p),   //
                                   assign(r, r - alpha * s),   //
                                   assign(w, apply(r)),        // kernel 2
                                   reduce(rr_new, dot(r, r)),  //
                                   reduce(rw, dot(r, w)),      //
                                   assign(beta, rr_new / rr),  // host
                                   assign(rr, rr_new));        //
                      });
}

/// The start of a single-reduction solve after cg_start: r.w with w = A r (one kernel,
/// one allreduce; w stored where given, with s); p = s = 0 and beta = 0, so that the
/// first iteration takes p = r, s = w, p.p = r.r and p.Ap = r.w.
template <class Apply, class V, class T, class... SW>
void cg_single_reduction_start(const Apply& apply, const V& r, V& p, const Scalar<T>& rw,
                               const CgScalars<T>& c, SW&... s_w) {
  Scalar<T> rw_value = rw, pp = c.pp, pAp = c.pAp, beta = c.beta;  // handles
  if constexpr (sizeof...(SW) == 2) {
    auto [s, w] = std::tie(s_w...);
    w = apply(r);
    rw_value = eval(dot(r, w));
    s.fill(T(0));
  } else {
    rw_value = eval(dot(r, apply(r)));
  }
  p.fill(T(0));
  pp = T(0);
  pAp = T(0);
  beta = T(0);
}

/// The single-reduction iteration as one sweep (cg_sweep.hpp, where cg_sweeps_v holds):
/// cg_single_reduction_iteration's host scalars, then the sweep and its allreduce.
template <class Apply, class T, int N>
auto cg_single_reduction_sweep(const Apply& apply, const Array<T, N>& x, const Array<T, N>& r,
                               const Array<T, N>& p, const Scalar<T>& rw, const CgScalars<T>& c) {
  return [=]() mutable {  // handles: the copies share the arrays and values
    Scalar<T> rr = c.rr, pAp = c.pAp, pp = c.pp, rq_max = c.rq_max, alpha = c.alpha,
              rr_new = c.rr_new, beta = c.beta, rw_value = rw;
    pp = eval(next_direction_norm2(rr, beta, pp));
    pAp = eval(rw_value - beta * beta * pAp);
    rq_max = eval(largest_rayleigh_quotient(rq_max, pAp, pp));
    alpha = eval(step_length(rr, pAp, pp, rq_max));
    T sums[2];
    cg_sweep(apply, x, r, p, alpha.value(), beta.value(), sums);
    rr_new = sums[0];
    rw_value = sums[1];
    beta = eval(rr_new / rr);
    rr = rr_new.value();
  };
}

/// Preconditioned CG with an operator M, the step to the new x and r (p,
/// Ap, rz and the CgScalars bound): 2 kernels. Given M's first sweep (u,
/// D^-1, w: Multigrid::Ends), kernel 2 also computes u = w D^-1 r.
template <class Policy = Fused, class Apply, class V, class T, class... FirstSweep>
auto pcg_step(const Apply& apply, const V& x, const V& r, const V& p, const V& Ap,
              const Scalar<T>& rz, const CgScalars<T>& c, const FirstSweep&... first_sweep) {
  return fuse<Policy>(x, r, p, Ap, c.rr, rz, c.pAp, c.pp, c.rq_max, c.alpha, first_sweep...,
                      [apply](auto x, auto r, auto p, auto Ap, auto rr, auto rz, auto pAp, auto pp,
                              auto rq_max, auto alpha, auto... first_sweep) {
                        auto step = [&](const auto&... more) {
                          return seq(assign(Ap, apply(p)),  // kernel 1
                                     reduce(pAp, dot(p, Ap)), reduce(pp, dot(p, p)),
                                     assign(rq_max, largest_rayleigh_quotient(rq_max, pAp, pp)),
                                     assign(alpha, step_length(rz, pAp, pp, rq_max)),
                                     assign(x, x + alpha * p),  // kernel 2
                                     assign(r, r - alpha * Ap), reduce(rr, dot(r, r)), more...);
                        };
                        if constexpr (sizeof...(first_sweep) == 0)
                          return step();
                        else
                          return step(assign_first_sweep(r, first_sweep...));
                      });
}

/// ... and, once z = M r, the new direction: 2 kernels; 1 without r, when
/// M's last kernel reduced rz_new = r.z (Multigrid::Ends).
template <class Policy = Fused, class V, class T, class... R>
auto pcg_direction(const V& z, const V& p, const Scalar<T>& rz, const Scalar<T>& rz_new,
                   const Scalar<T>& beta, const R&... r) {
  return fuse<Policy>(
      z, p, rz, rz_new, beta, r..., [](auto z, auto p, auto rz, auto rz_new, auto beta, auto... r) {
        return seq(reduce(rz_new, dot(r, z))...,  // kernel 3 (with r)
                   assign(beta, rz_new / rz), assign(rz, rz_new), assign(p, z + beta * p));
      });
}

/// The preconditioned CG's stop on r.z (PETSc's KSPCG): NaN ("not finite"),
/// exactly 0 while r is not ("breakdown": M r is orthogonal to r), or of
/// the other sign than the previous r.z ("indefinite preconditioner",
/// KSP_DIVERGED_INDEFINITE_PC: M is not definite). A consistently negative
/// r.z is fine: M negative definite gives the same iterates as -M.
template <class T>
const char* preconditioner_breakdown(T rz, T previous) {
  if (rz != rz) return "not finite";
  if (rz == T(0)) return "breakdown";
  if ((rz < T(0)) != (previous < T(0))) return "indefinite preconditioner";
  return nullptr;
}

/// make(Ap...) with the work vector that stores A p (held[2]), or with none
/// where the operator is applied twice instead.
template <bool applies_twice, class Held, class Make>
auto with_stored_Ap(const Held& held, const Make& make) {
  if constexpr (applies_twice)
    return make();
  else
    return make(held[2]);
}

/// CG on x (initial guess in, solution out). `apply(v)` gives the operator's
/// expression for a vector leaf v; `m` is pc::None, a DiagonalScaling or an
/// operator z = M r (see apply_preconditioner).
template <class Apply, class V, class M>
SolveResult conjugate_gradient(const char* api, const Apply& apply, V& x, const V& b,
                               const SolverOptions& options, const M& m) {
  using T = typename V::value_type;
  if (options.cg_single_reduction && !is_no_preconditioner<M>::value)
    // Every rank throws: options are agreed equal, and M's type is the same.
    throw Error(error_message(api,
                              ": SolverOptions::cg_single_reduction takes no "
                              "preconditioner (SolverOptions::preconditioner = none and no M)"));
  const auto& space = space_of(x);
  WorkVectors work(options.workspace);
  // One agreement for the work vectors (handles): then A p (and z with an
  // operator M), or the single-reduction form's s = A p and w = A r; without M
  // or with Jacobi, an operator that reads nothing but its argument is applied
  // again instead of storing A p (M between two programs reads A p there).
  constexpr bool jacobi = std::is_same_v<M, DiagonalScaling<V>>;
  constexpr bool applies_twice =
      (is_no_preconditioner<M>::value || jacobi) && reads_only_its_argument_v<Apply, V>;
  constexpr bool operator_m = !is_no_preconditioner<M>::value && !jacobi;  // z = M r
  // The single-reduction form in one sweep (cg_sweep.hpp) keeps neither s nor w.
  constexpr bool sweeps = is_no_preconditioner<M>::value && cg_sweeps_v<Apply, V>;
  const auto held = options.cg_single_reduction && !sweeps
                        ? work.vectors<V>(space, {"cg.r", "cg.p", "cg.s", "cg.w"})
                    : applies_twice ? work.vectors<V>(space, {"cg.r", "cg.p"})
                    : operator_m    ? work.vectors<V>(space, {"cg.r", "cg.p", "cg.Ap", "cg.z"})
                                    : work.vectors<V>(space, {"cg.r", "cg.p", "cg.Ap"});
  V r = held[0], p = held[1];
  CgScalars<T> c;  // handles: the copies below share their values
  Scalar<T> rr = c.rr, pAp = c.pAp, pp = c.pp, rq_max = c.rq_max, alpha = c.alpha, beta = c.beta,
            rz("rz"), rz_new("rz'");

  // The start's kernel also computes what M's first application needs of r.
  const double b_norm = [&] {
    if constexpr (jacobi) {
      return cg_start_jacobi(apply, x, b, r, p, m.inverse, rz, c);
    } else if constexpr (fuses_cycle_ends<M>::value) {
      const auto ends = m.ends(r, held[3]);
      return cg_start_first_sweep(apply, x, b, r, c, ends.u, ends.inverse_diagonal, ends.w);
    } else {
      return cg_start(apply, x, b, r, p, c);
    }
  }();
  Convergence convergence(api, space.base_comm(), options, b_norm);
  SolveResult result;
  if (convergence.done(0, std::sqrt(double(rr.value())), result)) return convergence.finish(result);

  // One iteration is `iteration()`, then (with an operator M) `precondition()`;
  // with M, r.z is checked against the previous one.
  auto iterate = [&](auto& iteration, auto&& precondition) {
    for (int it = 1;; ++it) {
      const T rz_before = rz.value();
      iteration();
      if (alpha.value() == T(0)) {  // a breakdown: x and r are those of iteration it - 1
        const double curvature = double(pAp.value());
        result.iterations = it;
        Convergence::stop(result, false,
                          !std::isfinite(curvature) ? "not finite"
                          : curvature <= 0          ? "indefinite matrix"
                                                    : "breakdown");
        return convergence.finish(result);
      }
      if (convergence.done(it, std::sqrt(double(rr.value())), result))
        return convergence.finish(result);
      if (const char* reason = precondition(rz_before)) {
        Convergence::stop(result, false, reason);
        return convergence.finish(result);
      }
    }
  };
  auto nothing = [](T) -> const char* { return nullptr; };
  auto first_rz = [&]() -> const char* { return preconditioner_breakdown(rz.value(), rz.value()); };

  if constexpr (is_no_preconditioner<M>::value) {
    if (options.cg_single_reduction) {
      Scalar<T> rw("r.w");
      if constexpr (sweeps) {
        cg_single_reduction_start(apply, r, p, rw, c);
        auto iteration = cg_single_reduction_sweep(apply, x, r, p, rw, c);
        return iterate(iteration, nothing);
      } else {
        V s = held[2], w = held[3];
        cg_single_reduction_start(apply, r, p, rw, c, s, w);
        auto iteration = cg_single_reduction_iteration(apply, x, r, p, s, w, rw, c);
        static_assert(
            decltype(iteration)::kernel_count == 2 && decltype(iteration)::allreduce_count == 1,
            "kfuse::cg: a single-reduction iteration must fuse into 2 kernels and 1 "
            "allreduce");
        return iterate(iteration, nothing);
      }
    }
    auto iteration = with_stored_Ap<applies_twice>(
        held, [&](const auto&... Ap) { return cg_iteration(apply, x, r, p, c, Ap...); });
    static_assert(
        decltype(iteration)::kernel_count <= 3 && decltype(iteration)::allreduce_count <= 2,
        "kfuse::cg, kfuse::cg_matfree: an iteration must fuse into at most 3 kernels and 2 "
        "allreduces");
    return iterate(iteration, nothing);
  } else if constexpr (jacobi) {
    const V& dinv = m.inverse;  // the start computed p = D^-1 r and rz = r.p
    auto iteration = with_stored_Ap<applies_twice>(held, [&](const auto&... Ap) {
      return jacobi_cg_iteration(apply, x, r, p, dinv, rz, rz_new, c, Ap...);
    });
    static_assert(
        decltype(iteration)::kernel_count <= 3 && decltype(iteration)::allreduce_count <= 2,
        "kfuse::cg: a Jacobi-preconditioned iteration must fuse into at most 3 kernels "
        "and 2 allreduces");
    if (const char* reason = first_rz()) {
      Convergence::stop(result, false, reason);
      return convergence.finish(result);
    }
    return iterate(iteration,
                   [&](T before) { return preconditioner_breakdown(rz.value(), before); });
  } else {
    V z = held[3];
    const V& Ap = held[2];
    if constexpr (fuses_cycle_ends<M>::value) {  // the start's kernel ran M's first
      m.apply_from_first_sweep(r, z);
      rz = m.ends(r, z).rz.value();
    } else {
      apply_preconditioner(api, m, r, z);
      rz = eval(dot(r, z));
    }
    if (const char* reason = first_rz()) {
      Convergence::stop(result, false, reason);
      return convergence.finish(result);
    }
    p = z;
    if constexpr (fuses_cycle_ends<M>::value) {
      // M's first kernel runs in kernel 2, and its last reduces r.z.
      const auto ends = m.ends(r, z);
      auto step = pcg_step(apply, x, r, p, Ap, rz, c, ends.u, ends.inverse_diagonal, ends.w);
      auto direction = pcg_direction(z, p, rz, ends.rz, beta);
      static_assert(decltype(step)::kernel_count == 2 && decltype(direction)::kernel_count == 1,
                    "kfuse::cg: an iteration around a V-cycle must fuse into 3 kernels");
      return iterate(step, [&](T before) {
        m.apply_from_first_sweep(r, z);
        direction();
        return preconditioner_breakdown(rz.value(), before);
      });
    } else {
      auto step = pcg_step(apply, x, r, p, Ap, rz, c);
      auto direction = pcg_direction(z, p, rz, rz_new, beta, r);
      static_assert(decltype(step)::kernel_count == 2 && decltype(direction)::kernel_count == 2,
                    "kfuse::cg: a preconditioned iteration must fuse into 4 kernels");
      return iterate(step, [&](T before) {
        apply_preconditioner(api, m, r, z);
        direction();
        return preconditioner_breakdown(rz.value(), before);
      });
    }
  }
}

}  // namespace detail

/// Solves A x = b by conjugate gradients (A symmetric positive definite);
/// x holds the initial guess on entry. M: a preconditioner (pc::none, the
/// default; pc::jacobi(A), pc::bjacobi_ilu0(A), or a callable
/// void(const Vector<T>& r, Vector<T>& z)), symmetric positive definite;
/// PETSc's KSPCG with left preconditioning, convergence on ||r||. Collective.
template <class T, class M = pc::None>
SolveResult cg(const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
               const SolverOptions& options = {}, const M& m = {}) {
  static_assert(detail::is_preconditioner_for<M, T>,
                "kfuse::cg(A, x, b, options, M): M must be kfuse::pc::none, a kfuse::pc "
                "preconditioner, or callable as M(const kfuse::Vector<T>& r, "
                "kfuse::Vector<T>& z)");
  constexpr const char* api = "kfuse::cg";
  detail::agree_on_matrix_solve<M>(api, A, x, b, options);
  const detail::MatrixOperator<T> apply{A};
  return detail::with_preconditioner(A, options, m, [&](const auto& preconditioner) {
    return detail::conjugate_gradient(api, apply, x, b, options, preconditioner);
  });
}

namespace detail {

/// cg_matfree's checks (collective): x, b and the inverse diagonal (may be
/// null) on one space, and Jacobi only with the inverse diagonal.
template <class V>
void check_matfree(const V& x, const V& b, const SolverOptions& options,
                   const V* inverse_diagonal) {
  constexpr const char* api = "kfuse::cg_matfree";
  auto apart = [&](const char* name_u, const V& u, const char* name_v, const V& v) {
    return error_message(api, ": ", name_u, " ('", u.label(), "', ", describe_space(space_of(u)),
                         ") and ", name_v, " ('", v.label(), "', ", describe_space(space_of(v)),
                         ") live on different index spaces");
  };
  std::string error;
  if (space_of(x) != space_of(b))
    error = apart("x", x, "b", b);
  else if (inverse_diagonal != nullptr && space_of(*inverse_diagonal) != space_of(x))
    error = apart("the inverse diagonal", *inverse_diagonal, "x", x);
  else if (options.preconditioner == Preconditioner::jacobi && inverse_diagonal == nullptr)
    error = error_message(api,
                          ": Preconditioner::jacobi needs the operator's inverse diagonal "
                          "(the inverse_diagonal argument)");
  agree_on_solve(api, space_of(x).base_comm(), std::move(error), options);
}

}  // namespace detail

/// Conjugate gradients with a matrix-free operator: `apply(v)` returns the
/// expression of A v for a leaf v (an Array or Vector, or a program
/// placeholder), e.g. a stencil. x and b: Arrays or Vectors of one space.
/// Without a preconditioner: this overload compiles no Jacobi iteration.
template <class Apply, class V>
SolveResult cg_matfree(const Apply& apply, V& x, const V& b, const SolverOptions& options = {}) {
  detail::check_matfree<V>(x, b, options, nullptr);
  return detail::conjugate_gradient("kfuse::cg_matfree", apply, x, b, options, pc::none);
}

/// ... and with Jacobi when options.preconditioner says so: it needs the
/// operator's inverse diagonal (a vector like x; nullptr: none).
template <class Apply, class V>
SolveResult cg_matfree(const Apply& apply, V& x, const V& b, const SolverOptions& options,
                       const V* inverse_diagonal) {
  detail::check_matfree(x, b, options, inverse_diagonal);
  if (options.preconditioner == Preconditioner::jacobi)
    return detail::conjugate_gradient("kfuse::cg_matfree", apply, x, b, options,
                                      detail::DiagonalScaling<V>{*inverse_diagonal});
  return detail::conjugate_gradient("kfuse::cg_matfree", apply, x, b, options, pc::none);
}

}  // namespace kfuse
