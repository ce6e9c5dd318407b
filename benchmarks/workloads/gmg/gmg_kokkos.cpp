// What an expert writes: CG and the V-cycle fused across their boundary (the
// expert knows the preconditioner), products overlapped, reductions in lanes.
// gmg by hand (gmg.hpp): the expert's preconditioned CG with the V-cycle
// written into it, on the local CSR blocks of the same operators (A, R, P
// and the weights of kfuse::pc::multigrid's hierarchy), every product
// overlapped with its ghost import (solver_hand.hpp). Knowing the
// preconditioner, the expert fuses across it: the V-cycle's first sweep
// into the CG update, r.z into the last sweep. 7 kernels per iteration:
//   1: Ap = A p, p.Ap
//   2: x += alpha p, r -= alpha Ap, r.r, u = w D^-1 r    (the first sweep)
//   3: t = r - A u                                       (the residual)
//   4: x_c = w_c D_c^-1 (R t)                            (restriction, coarse sweep)
//   5: u += P x_c                                        (the correction)
//   6: z = u + w D^-1 (r - A u), r.z                     (the post-sweep)
//   7: p = z + beta p
// and one allreduce after kernels 1, 2 and 6. Kernels 3 to 7 prepare the next
// iteration: the last iteration of a solve skips them, as kfuse::cg and PETSc
// do. gmg_solve's `kokkos` runs the same iterations until ||r|| <= gmg_rtol
// ||b||, kfuse::cg's test.
#include <cmath>
#include <string>

#include "gmg.hpp"
#include "../solvers/solver_hand.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace hand;

struct UpdateFirstSweep {  // x += alpha p, r -= alpha Ap, r.r, u = w D^-1 r
  View x, r, u;
  ConstView p, Ap, dinv;
  double alpha, w;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double xi = x(i) + alpha * p(i), ri = r(i) - alpha * Ap(i), ui = w * dinv(i) * ri;
    x(i) = xi;
    r(i) = ri;
    u(i) = ui;
    sums[0] += ri * ri;
  }
};

template <class RowOf>
struct Residual {  // t = r - A u
  Csr A;
  ConstView r, u;
  View t;
  RowOf row_of;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k) const {
    const std::int64_t row = row_of(k);
    t(row) = r(row) - A.row_times(row, u);
  }
};

template <class RowOf>
struct RestrictSweep {  // x_c = w_c D_c^-1 (R t)
  Csr R;
  ConstView t, dinv_c;
  View xc;
  double wc;
  RowOf row_of;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k) const {
    const std::int64_t row = row_of(k);
    xc(row) = wc * dinv_c(row) * R.row_times(row, t);
  }
};

template <class RowOf>
struct Correct {  // u += P x_c
  Csr P;
  ConstView xc;
  View u;
  RowOf row_of;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k) const {
    const std::int64_t row = row_of(k);
    u(row) += P.row_times(row, xc);
  }
};

template <class RowOf>
struct PostSweepDot {  // z = u + w D^-1 (r - A u), r.z
  Csr A;
  ConstView u, r, dinv;
  View z;
  double w;
  RowOf row_of;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, Lane sums) const {
    const std::int64_t row = row_of(k);
    const double ri = r(row), zi = u(row) + w * dinv(row) * (ri - A.row_times(row, u));
    z(row) = zi;
    sums[0] += ri * zi;
  }
};

struct Start {  // r = b - A x, u = w D^-1 r
  Csr A;
  ConstView x, b, dinv;
  View r, u;
  double w;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double ri = b(i) - A.row_times(i, x), ui = w * dinv(i) * ri;
    r(i) = ri;
    u(i) = ui;
    sums[0] += ri * ri;
  }
};

struct NewDirection {  // p = z + beta p
  View p;
  ConstView z;
  double beta;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { p(i) = z(i) + beta * p(i); }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : A_(cg_matrix(setup)),
        b_(make_rhs(A_)),
        M_(gmg_hierarchy(setup)),
        R_(M_.restriction(0)),
        P_(M_.interpolation(0)),
        n_(A_.local_rows()),
        dinv_(kfuse::detail::inverse_diagonal("gmg", A_).view()),
        dinv_c_(kfuse::detail::inverse_diagonal("gmg", M_.matrix(1)).view()),
        w_(M_.jacobi_weight(0)),
        wc_(M_.jacobi_weight(1)),
        iterations_(setup.iterations),
        x_(A_, "x"),
        p_(A_, "p"),
        u_(A_, "u"),
        t_(R_, "t"),
        xc_(P_, "x_c"),
        r_(work_vector("r", n_)),
        Ap_(work_vector("Ap", n_)),
        z_(work_vector("z", n_)) {
    const auto o = gmg_options();
    if (o.levels != 2 || o.sweeps != 1 || o.coarse_sweeps != 1 ||
        o.smoother != pc::Smoother::jacobi || o.coarse != pc::CoarseSolve::smoother)
      throw Error("gmg_kokkos: written for 2 levels and one Jacobi sweep each");
  }

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    steps_ = 0;
    started_ = false;
  }

  /// Setup::iterations steps are one solve from the current x, as the fused
  /// variant's are.
  void step() override {
    if (steps_ % iterations_ == 0) restart();
    iterate(++steps_ % iterations_ == 0, 0.0);
  }

  /// The next iterate() starts a solve from the current x.
  void restart() { started_ = false; }
  /// One CG iteration, and the V-cycle and direction for the next unless this
  /// is the `last` or ||r|| <= stop.
  void iterate(bool last, double stop) {
    const Comm& comm = A_.range().comm();
    if (!started_) {  // r = b - A x, z = M r, p = z
      started_ = true;
      x_.import(A_);
      double rr = 0;
      reduce_rows<1>(hand_label("gmg: r = b - A x, u = w D^-1 r"), n_,
                     Start{Csr(A_), x_.all, b_.view(), dinv_, r_, u_.owned_part(), w_}, &rr);
      rz_ = cycle_rest();
      Kokkos::deep_copy(p_.owned_part(), z_);
    }
    double pAp = 0;
    overlapped_rows<1>(
        hand_label("gmg: Ap = A p, p.Ap"), A_, p_,
        [&](auto row_of) {
          return SpmvPAp<decltype(row_of)>{Csr(A_), p_.all, Ap_, row_of};
        },
        &pAp);
    const double alpha = rz_ / comm.allreduce(pAp, ReduceOp::sum);
    double rr = 0;
    reduce<1>(hand_label("gmg: x += alpha p, r -= alpha Ap, r.r, u = w D^-1 r"), n_,
              UpdateFirstSweep{x_.owned_part(), r_, u_.owned_part(), p_.all, Ap_, dinv_, alpha, w_},
              &rr);
    rr_ = comm.allreduce(rr, ReduceOp::sum);  // the convergence test's ||r||
    if (last || residual_norm() <= stop) return;
    const double rz_new = cycle_rest();
    const double beta = rz_new / rz_;
    rz_ = rz_new;
    for_points(hand_label("gmg: p = z + beta p"), 0, n_, NewDirection{p_.owned_part(), z_, beta});
  }

  Fields result() const override { return solution_fields(A_, b_, x_.owned_part()); }

  /// ||r|| after the last step's update, and ||b||.
  double residual_norm() const { return std::sqrt(rr_); }
  double rhs_norm() const { return eval(norm2(b_)); }
  const Comm& comm() const { return A_.range().comm(); }

  Figures figures() const override {
    Figures f;
    f.kernels = 7;
    f.allreduces = 3;
    f.exchanges = 5;
    return f;
  }

 private:
  /// The V-cycle after its first sweep (u = w D^-1 r): kernels 3 to 6; r.z.
  double cycle_rest() {
    const Comm& comm = A_.range().comm();
    overlapped_rows_for(hand_label("gmg: t = r - A u"), A_, u_, [&](auto row_of) {
      return Residual<decltype(row_of)>{Csr(A_), r_, u_.all, t_.owned_part(), row_of};
    });
    overlapped_rows_for(hand_label("gmg: x_c = w_c D_c^-1 R t"), R_, t_, [&](auto row_of) {
      return RestrictSweep<decltype(row_of)>{Csr(R_),          t_.all, dinv_c_,
                                             xc_.owned_part(), wc_,    row_of};
    });
    overlapped_rows_for(hand_label("gmg: u += P x_c"), P_, xc_, [&](auto row_of) {
      return Correct<decltype(row_of)>{Csr(P_), xc_.all, u_.owned_part(), row_of};
    });
    double rz = 0;
    overlapped_rows<1>(
        hand_label("gmg: z = u + w D^-1 (r - A u), r.z"), A_, u_,
        [&](auto row_of) {
          return PostSweepDot<decltype(row_of)>{Csr(A_), u_.all, r_, dinv_, z_, w_, row_of};
        },
        &rz);
    return comm.allreduce(rz, ReduceOp::sum);
  }

  Matrix A_;
  Vec b_;
  pc::Multigrid<double> M_;  // the hierarchy (set-up only)
  Matrix R_, P_;
  std::int64_t n_;
  View dinv_, dinv_c_;
  double w_, wc_;
  int iterations_;  // of a fixed-length solve (gmg)
  ColumnVector x_, p_, u_, t_, xc_;
  View r_, Ap_, z_;
  double rz_ = 0, rr_ = 0;
  int steps_ = 0;
  bool started_ = false;
};

/// gmg_solve by hand: Hand's iterations until ||r|| <= gmg_rtol ||b||.
class HandSolve final : public Variant {
 public:
  explicit HandSolve(const Setup& setup) : hand_(setup), b_norm_(hand_.rhs_norm()) {}
  void reset() override { hand_.reset(); }
  void step() override {
    iterations_ = 0;
    hand_.restart();
    do {
      hand_.iterate(iterations_ + 1 == gmg_max_it, gmg_rtol * b_norm_);
      ++iterations_;
    } while (hand_.residual_norm() > gmg_rtol * b_norm_ && iterations_ < gmg_max_it);
    if (hand_.residual_norm() > gmg_rtol * b_norm_)
      throw Error("kfuse-bench: gmg_solve/kokkos: no convergence in " + std::to_string(gmg_max_it) +
                  " iterations");
  }
  Fields result() const override {
    report_iterations(hand_.comm(), "kokkos", iterations_);
    return solved_fields(hand_.result(), b_norm_);
  }
  Figures figures() const override { return {}; }  // counted per solve by the runner

 private:
  Hand hand_;
  double b_norm_;
  int iterations_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("gmg", "kokkos"));
KFUSE_BENCH_REGISTER(register_variant_class<HandSolve>("gmg_solve", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::solvers
