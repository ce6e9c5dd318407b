// kfuse::pc::chebyshev: a Chebyshev polynomial in D^-1 A as a preconditioner
// (PETSc's KSPCHEBYSHEV with PCJACOBI run for a fixed number of iterations
// from z = 0, as PCKSP or a multigrid smoother runs it). With bounds
// [emin, emax] of the spectrum of D^-1 A, degree k gives z = q(A) r where
// the residual polynomial 1 - t q(t) is the Chebyshev polynomial of degree k
// scaled to [emin, emax]: k iterations, k - 1 products with A.
//
// The bounds are PETSc's: the largest eigenvalue e of D^-1 A estimated by 10
// iterations of Jacobi-preconditioned CG (Lanczos) on PETSc's "noisy"
// right-hand side, then [0.1 e, 1.1 e] (-ksp_chebyshev_esteig 0,0.1,0,1.1):
// the upper part of the spectrum, as a smoother wants. Or given directly.
//
// One apply is `degree` kernels and no allreduce: iteration j (PETSc's
// three-term recurrence, x_0 = 0)
//   x_1     = s D^-1 r                                    (kernel 1)
//   x_{j+1} = (1 - w_j) x_{j-1} + w_j x_j + w_j s D^-1 (r - A x_j)
// is one fused kernel (the product's ghost import overlapped), three vectors
// in rotation so that x_k lands in z.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/program/fuse.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::pc {

/// How pc::chebyshev bounds its polynomial (PETSc's KSPChebyshev options).
struct ChebyshevOptions {
  /// Bounds of the spectrum of D^-1 A (-ksp_chebyshev_eigenvalues emin,emax);
  /// both 0: estimated.
  double emin = 0, emax = 0;
  /// From an estimate e of the largest eigenvalue, the bounds are
  /// [lower * e, upper * e] (-ksp_chebyshev_esteig 0,lower,0,upper).
  double lower = 0.1, upper = 1.1;
  /// CG iterations of the estimate (-ksp_chebyshev_esteig_steps).
  int estimate_steps = 10;
};

}  // namespace kfuse::pc

namespace kfuse::detail {

/// PETSc's noisy vector (KSPSetNoisy_Private): entry i a hash of the global
/// index i in [-1.07, 1.07], the same on any number of ranks. A functor: nvcc
/// takes no extended lambda in a function that a constructor calls.
template <class T>
struct NoisyEntry {
  KOKKOS_INLINE_FUNCTION T operator()(index_t i) const {
    auto x = static_cast<std::uint32_t>(i);
    x = ((x >> 16) ^ x) * 0x45d9f3bU;
    x = ((x >> 16) ^ x) * 0x45d9f3bU;
    x = (x >> 16) ^ x;
    return T((std::int64_t(x) - 2147483648LL) * 5e-10);
  }
};

/// The largest eigenvalue of the symmetric tridiagonal matrix with diagonal
/// d and off-diagonal e (e[i] couples i - 1 and i; e[0] unused), by
/// bisection on Sturm counts: to rounding, like PETSc's tql1.
inline double largest_tridiagonal_eigenvalue(const std::vector<double>& d,
                                             const std::vector<double>& e) {
  const std::size_t n = d.size();
  auto off = [&](std::size_t i) { return i > 0 && i < n ? std::abs(e[i]) : 0.0; };
  double lo = d[0], hi = d[0];  // Gershgorin
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, d[i] - off(i) - off(i + 1));
    hi = std::max(hi, d[i] + off(i) + off(i + 1));
  }
  // How many eigenvalues are below x: the negative pivots of T - x I = L D L^T.
  auto below = [&](double x) {
    std::size_t count = 0;
    double q = 1;
    for (std::size_t i = 0; i < n; ++i) {
      q = d[i] - x - (i > 0 ? e[i] * e[i] / q : 0.0);
      if (q == 0) q = std::numeric_limits<double>::min();
      if (q < 0) ++count;
    }
    return count;
  };
  for (int it = 0; it < 200 && hi - lo > 4 * std::numeric_limits<double>::epsilon() *
                                             std::max(std::abs(lo), std::abs(hi));
       ++it) {
    const double mid = 0.5 * (lo + hi);
    (below(mid) < n ? lo : hi) = mid;
  }
  return hi;
}

/// PETSc's estimate of the largest eigenvalue of D^-1 A for KSPChebyshev:
/// Jacobi-preconditioned CG from x = 0 on the noisy right-hand side, `steps`
/// iterations at most (fewer if ||D^-1 r|| falls below 1e-12 of its start),
/// and the largest eigenvalue of the Lanczos tridiagonal matrix its
/// coefficients make. Collective. Where PETSc's CG would stop on an
/// indefinite matrix or preconditioner (p.Ap or r.z zero, not finite, or
/// changing sign) and use what it has, this throws a kfuse::Error (on every
/// rank: the values are reduced), ending with `remedy`.
template <class T>
double chebyshev_estimate(const char* api, const CsrMatrix<T>& A, const Vector<T>& dinv, int steps,
                          const char* remedy) {
  Vector<T> r(A.range(), "chebyshev.estimate.r"), z(A.range(), "chebyshev.estimate.z"),
      p(A.range(), "chebyshev.estimate.p"), w(A.range(), "chebyshev.estimate.w");
  r.fill_with(NoisyEntry<T>{});
  z = dinv * r;
  const double z0 = std::sqrt(double(eval(dot(z, z))));
  double rz = double(eval(dot(r, z)));
  auto indefinite = [&](const char* what, double value) {
    return Error(error_message(api, ": estimating the largest eigenvalue of D^-1 A for '",
                               A.label(), "', CG found ", what, " = ", value,
                               ": A or its diagonal is not definite; ", remedy));
  };
  std::vector<double> d, e;
  double a_old = 0, rz_old = 0, pw_old = 0;
  for (int i = 0; i < steps && rz != 0; ++i) {
    if (!std::isfinite(rz) || (i > 0 && (rz < 0) != (rz_old < 0))) throw indefinite("r.z", rz);
    const double b = i == 0 ? 0.0 : rz / rz_old;
    if (i == 0)
      p = z;
    else
      p = z + T(b) * p;
    w = A * p;
    const double pw = double(eval(dot(p, w)));
    if (pw == 0 || !std::isfinite(pw) || (i > 0 && (pw < 0) != (pw_old < 0)))
      throw indefinite("p.Ap", pw);
    const double a = rz / pw;
    e.push_back(i == 0 ? 0.0 : std::sqrt(std::abs(b)) / a_old);
    d.push_back(1 / a + (i == 0 ? 0.0 : b / a_old));
    r = r - T(a) * w;
    z = dinv * r;
    if (std::sqrt(double(eval(dot(z, z)))) <= 1e-12 * z0) break;
    a_old = a;
    rz_old = rz;
    pw_old = pw;
    rz = double(eval(dot(r, z)));
  }
  const double estimate = d.empty() ? 0.0 : largest_tridiagonal_eigenvalue(d, e);
  if (!(estimate > 0 && std::isfinite(estimate)))
    throw indefinite("the largest eigenvalue", estimate);
  return estimate;
}

/// The scalars of a Chebyshev iteration: x_{j+1} = previous x_{j-1} +
/// current x_j + residual D^-1 (r - A x_j).
template <class T>
struct ChebyshevScalars {
  Scalar<T> previous{"chebyshev.previous"}, current{"chebyshev.current"},
      residual{"chebyshev.residual"};
};

/// The coefficients of each iteration j = 0, 1, ... of degree iterations on
/// [emin, emax]: PETSc's KSPSolve_Chebyshev (Gamma = 1): x_1 = scale D^-1 r,
/// then c_{j+1} = 2 mu c_j - c_{j-1}, omega_j = (2 / alpha) c_j / c_{j+1}.
template <class T>
struct ChebyshevCoefficients {
  std::vector<T> previous, current, residual;
  void set(ChebyshevScalars<T>& c, int j) const {
    const auto k = static_cast<std::size_t>(j);
    c.previous = previous[k];
    c.current = current[k];
    c.residual = residual[k];
  }
};

template <class T>
ChebyshevCoefficients<T> chebyshev_coefficients(double emin, double emax, int degree) {
  const double scale = 2 / (emax + emin);
  const double alpha = 1 - scale * emin;
  const double mu = 1 / alpha;
  double c_before = 1, c = mu;
  ChebyshevCoefficients<T> out{{T(0)}, {T(0)}, {T(scale)}};
  for (int j = 1; j < degree; ++j) {
    const double c_next = 2 * mu * c - c_before;
    const double omega = (2 / alpha) * c / c_next;
    out.previous.push_back(T(1 - omega));
    out.current.push_back(T(omega));
    out.residual.push_back(T(omega * scale));
    c_before = c;
    c = c_next;
  }
  return out;
}

/// x_1 = residual D^-1 r.
template <class T>
auto chebyshev_first_step(const Vector<T>& x1, const Vector<T>& dinv, const Vector<T>& r,
                          const ChebyshevScalars<T>& c) {
  return fuse(x1, dinv, r, c.residual,
              [](auto x1, auto dinv, auto r, auto s) { return seq(assign(x1, s * (dinv * r))); });
}

/// x_2 = current x_1 + residual D^-1 (r - A x_1) (x_0 = 0).
template <class Policy = Fused, class T>
auto chebyshev_second_step(const CsrMatrix<T>& A, const Vector<T>& x2, const Vector<T>& x1,
                           const Vector<T>& dinv, const Vector<T>& r,
                           const ChebyshevScalars<T>& c) {
  return fuse<Policy>(x2, x1, dinv, r, c.current, c.residual,
                      [A](auto x2, auto x1, auto dinv, auto r, auto current, auto s) {
                        return seq(assign(x2, current * x1 + s * (dinv * (r - A * x1))));
                      });
}

/// x_next = previous x_prev + current x + residual D^-1 (r - A x); given rz,
/// also rz = r.x_next (pc::multigrid's last kernel reducing a solver's r.z).
template <class Policy = Fused, class T, class... Dot>
auto chebyshev_step(const CsrMatrix<T>& A, const Vector<T>& next, const Vector<T>& x,
                    const Vector<T>& prev, const Vector<T>& dinv, const Vector<T>& r,
                    const ChebyshevScalars<T>& c, const Dot&... rz) {
  return fuse<Policy>(next, x, prev, dinv, r, c.previous, c.current, c.residual, rz...,
                      [A](auto next, auto x, auto prev, auto dinv, auto r, auto previous,
                          auto current, auto s, auto... rz) {
                        return seq(
                            assign(next, previous * prev + current * x + s * (dinv * (r - A * x))),
                            reduce(rz, dot(r, next))...);
                      });
}

/// The programs of one apply, bound to one (r, z): iterate j lies in slot
/// (j - degree) mod 3, slot 0 being z, so that the last lands in z.
template <class T>
struct ChebyshevSteps {
  using First = decltype(chebyshev_first_step(
      std::declval<const Vector<T>&>(), std::declval<const Vector<T>&>(),
      std::declval<const Vector<T>&>(), std::declval<const ChebyshevScalars<T>&>()));
  using Second = decltype(chebyshev_second_step(
      std::declval<const CsrMatrix<T>&>(), std::declval<const Vector<T>&>(),
      std::declval<const Vector<T>&>(), std::declval<const Vector<T>&>(),
      std::declval<const Vector<T>&>(), std::declval<const ChebyshevScalars<T>&>()));
  using Step =
      decltype(chebyshev_step(std::declval<const CsrMatrix<T>&>(), std::declval<const Vector<T>&>(),
                              std::declval<const Vector<T>&>(), std::declval<const Vector<T>&>(),
                              std::declval<const Vector<T>&>(), std::declval<const Vector<T>&>(),
                              std::declval<const ChebyshevScalars<T>&>()));

  static_assert(First::kernel_count == 1 && Second::kernel_count == 1 && Step::kernel_count == 1,
                "kfuse::pc::chebyshev: each Chebyshev iteration must fuse into one kernel");

  std::optional<First> first;
  std::optional<Second> second;
  std::array<std::optional<Step>, 3> step;  // by (j + 1 - degree) mod 3: the slot written
};

}  // namespace kfuse::detail

namespace kfuse::pc {

/// Chebyshev polynomial preconditioner in D^-1 A (see the file comment).
/// A handle: copies share the bounds, work vectors and programs.
template <class T>
class Chebyshev {
 public:
  /// Collective: a kfuse::Error on every rank when the degree or options are
  /// out of range or differ between ranks, A's diagonal has a zero, or the
  /// estimate finds A not positive definite.
  Chebyshev(const CsrMatrix<T>& A, int degree, const ChebyshevOptions& options = {});

  int degree() const { return state_->degree; }
  /// The bounds the polynomial is built on.
  double emin() const { return state_->emin; }
  double emax() const { return state_->emax; }
  /// The estimated largest eigenvalue of D^-1 A (0 when the bounds were given).
  double estimate() const { return state_->estimate; }

  /// z = q(A) r. Collective: r and z must lie on A's rows and be different
  /// vectors (one allreduce besides the apply's own work).
  void operator()(const Vector<T>& r, Vector<T>& z) const;
  /// The same without the checks (what the solvers call): `degree` kernels.
  void apply(const Vector<T>& r, Vector<T>& z) const;

 private:
  struct State {
    State(const CsrMatrix<T>& a, Vector<T> d, int k) : A(a), dinv(std::move(d)), degree(k) {}
    CsrMatrix<T> A;
    Vector<T> dinv;
    int degree;
    double emin = 0, emax = 0, estimate = 0;
    detail::ChebyshevCoefficients<T> coefficients;
    detail::ChebyshevScalars<T> scalars;
    std::vector<Vector<T>> work;  // slots 1 and 2 (degree >= 2)
    detail::PairBindings<detail::ChebyshevSteps<T>> steps;
  };
  void bind(const Vector<T>& r, const Vector<T>& z) const;
  std::shared_ptr<State> state_;
};

template <class T>
Chebyshev<T> chebyshev(const CsrMatrix<T>& A, int degree, const ChebyshevOptions& options = {}) {
  return Chebyshev<T>(A, degree, options);
}

template <class T>
Chebyshev<T>::Chebyshev(const CsrMatrix<T>& A, int degree, const ChebyshevOptions& o) {
  constexpr const char* api = "kfuse::pc::chebyshev";
  const Comm& comm = A.range().comm();
  const bool given = o.emin != 0 || o.emax != 0;
  std::string error;
  if (degree < 1)
    error = detail::error_message(api, ": degree ", degree, "; it must be >= 1");
  else if (given && !(o.emin > 0 && o.emin < o.emax && std::isfinite(o.emax)))
    error = detail::error_message(api, ": ChebyshevOptions::emin ", o.emin, " and emax ", o.emax,
                                  " must satisfy 0 < emin < emax (both 0: estimated)");
  else if (!given && !(o.lower > 0 && o.lower < o.upper && std::isfinite(o.upper)))
    error = detail::error_message(api, ": ChebyshevOptions::lower ", o.lower, " and upper ",
                                  o.upper, " must satisfy 0 < lower < upper");
  else if (!given && o.estimate_steps < 1)
    error = detail::error_message(api, ": ChebyshevOptions::estimate_steps ", o.estimate_steps,
                                  "; it must be >= 1");
  comm.agree_or_throw(error);
  detail::check_same_values(api, comm,
                            {degree, detail::bits_of(o.emin), detail::bits_of(o.emax),
                             detail::bits_of(o.lower), detail::bits_of(o.upper), o.estimate_steps},
                            "degrees or ChebyshevOptions");
  detail::check_square_blocks(api, A);

  auto s = std::make_shared<State>(A, detail::inverse_diagonal(api, A), degree);
  if (given) {
    s->emin = o.emin;
    s->emax = o.emax;
  } else {
    s->estimate = detail::chebyshev_estimate(api, A, s->dinv, o.estimate_steps,
                                             "give the bounds (ChebyshevOptions::emin, emax)");
    s->emin = o.lower * s->estimate;
    s->emax = o.upper * s->estimate;
  }

  s->coefficients = detail::chebyshev_coefficients<T>(s->emin, s->emax, degree);
  if (degree >= 2)
    for (const char* name : {".chebyshev.x1", ".chebyshev.x2"})
      s->work.emplace_back(A.range(), A.label() + name);
  state_ = std::move(s);
}

template <class T>
void Chebyshev<T>::bind(const Vector<T>& r, const Vector<T>& z) const {
  State& s = *state_;
  const int k = s.degree;
  auto slot = [&](int j) -> const Vector<T>& {
    const int i = ((j - k) % 3 + 3) % 3;
    return i == 0 ? z : s.work[static_cast<std::size_t>(i - 1)];
  };
  detail::ChebyshevSteps<T>& p = s.steps.replace();
  p.first.emplace(detail::chebyshev_first_step(slot(1), s.dinv, r, s.scalars));
  if (k >= 2)
    p.second.emplace(detail::chebyshev_second_step(s.A, slot(2), slot(1), s.dinv, r, s.scalars));
  for (int j = 2; j < std::min(k, 5); ++j)  // the three rotations of slots
    p.step[static_cast<std::size_t>(((j + 1 - k) % 3 + 3) % 3)].emplace(
        detail::chebyshev_step(s.A, slot(j + 1), slot(j), slot(j - 1), s.dinv, r, s.scalars));
  s.steps.bound(r.storage_id(), z.storage_id());
}

template <class T>
void Chebyshev<T>::operator()(const Vector<T>& r, Vector<T>& z) const {
  if (detail::check_apply_vectors("kfuse::pc::chebyshev", state_->A.range(), r, z,
                                  state_->steps.holds(r.storage_id(), z.storage_id())))
    bind(r, z);
  apply(r, z);
}

template <class T>
void Chebyshev<T>::apply(const Vector<T>& r, Vector<T>& z) const {
  State& s = *state_;
  if (!s.steps.activate(r.storage_id(), z.storage_id())) bind(r, z);
  detail::ChebyshevScalars<T>& c = s.scalars;
  for (int j = 0; j < s.degree; ++j) {  // iteration j computes x_{j+1}
    s.coefficients.set(c, j);
    if (j == 0)
      (*s.steps.active().first)();
    else if (j == 1)
      (*s.steps.active().second)();
    else
      (*s.steps.active().step[static_cast<std::size_t>(((j + 1 - s.degree) % 3 + 3) % 3)])();
  }
}

}  // namespace kfuse::pc

namespace kfuse::detail {
template <class T>
struct is_builtin_preconditioner<pc::Chebyshev<T>> : std::true_type {};
}  // namespace kfuse::detail
