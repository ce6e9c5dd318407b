// What an expert writes: bicgstab's expert kernels, with kfuse's ILU(0) and its
// triangular solves (what an expert calls rather than writes).
// bicgstab_ilu0 by hand: bicgstab_kokkos.cpp's five kernels with the right
// preconditioner between them, p^ = M p after kernel 1 and s^ = M s after
// kernel 3, each two triangular solves with the rank's ILU(0) factors
// (SpILUK; through pc::BlockJacobiIlu0::solve_local, the same calls kfuse
// makes); the products read p^ and s^, overlapped with their imports:
//   kernel 1: p = r + beta (p - omega v)
//   kernel 2: v = A p^, d = v.r_hat                    -> alpha = rho / d
//   kernel 3: s = r - alpha v
//   kernel 4: t = A s^, t.s, t.t                       -> omega = t.s / t.t
//   kernel 5: x += alpha p^ + omega s^, r = s - omega t, rho = r.r_hat, r.r
#include "../bicgstab/bicgstab_hand.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace hand;

template <class RowOf>
struct SpmvDots {  // t = A s^, t.s, t.t
  Csr A;
  ConstView s_hat, s;  // s_hat: all columns
  View t;
  RowOf row_of;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, Lane sums) const {
    const std::int64_t row = row_of(k);
    const double y = A.row_times(row, s_hat), si = s(row);
    t(row) = y;
    sums[0] += y * si;
    sums[1] += y * y;
  }
};

struct UpdateXR {  // x += alpha p^ + omega s^, r = s - omega t, r.r_hat, r.r
  View x, r;
  ConstView p_hat, s_hat, s, t, r_hat;
  double alpha, omega;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double xi = x(i) + alpha * p_hat(i) + omega * s_hat(i), ri = s(i) - omega * t(i);
    const double rhi = r_hat(i);
    x(i) = xi;
    r(i) = ri;
    sums[0] += ri * rhi;
    sums[1] += ri * ri;
  }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : A_(bicgstab_matrix(setup)),
        b_(make_rhs(A_)),
        ilu_(pc::bjacobi_ilu0(A_)),
        n_(A_.local_rows()),
        x_(A_, "x"),
        p_hat_(A_, "p_hat"),
        s_hat_(A_, "s_hat"),
        p_(work_vector("p", n_)),
        s_(work_vector("s", n_)),
        r_(work_vector("r", n_)),
        r_hat_(work_vector("r_hat", n_)),
        v_(work_vector("v", n_)),
        t_(work_vector("t", n_)) {}

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    Kokkos::deep_copy(p_, 0.0);
    Kokkos::deep_copy(v_, 0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = A_.range().comm();
    if (steps_++ == 0) {
      x_.import(A_);
      double sums[2];
      reduce_rows<2>(hand_label("bicgstab_ilu0: r = b - A x, r_hat = r, r.r, b.b"), n_,
                     ResidualStart{Csr(A_), x_.all, b_.view(), r_, r_hat_}, sums);
      comm.allreduce(sums, 2, ReduceOp::sum);
      rho_ = sums[0];
      rho_old_ = alpha_ = omega_ = 1.0;  // with p = v = 0 the first p is r
    }
    const double beta = (rho_ / rho_old_) * (alpha_ / omega_);
    for_points(hand_label("bicgstab_ilu0: p = r + beta (p - omega v)"), 0, n_,
               UpdateP{p_, r_, v_, beta, omega_});
    ilu_.solve_local(p_, p_hat_.owned_part());

    double d = 0;
    overlapped_rows<1>(
        hand_label("bicgstab_ilu0: v = A p^, v.r_hat"), A_, p_hat_,
        [&](auto row_of) {
          return SpmvDot<decltype(row_of)>{Csr(A_), p_hat_.all, r_hat_, v_, row_of};
        },
        &d);
    alpha_ = rho_ / comm.allreduce(d, ReduceOp::sum);
    rho_old_ = rho_;

    for_points(hand_label("bicgstab_ilu0: s = r - alpha v"), 0, n_, UpdateS{s_, r_, v_, alpha_});
    ilu_.solve_local(s_, s_hat_.owned_part());

    double tst[2];
    overlapped_rows<2>(
        hand_label("bicgstab_ilu0: t = A s^, t.s, t.t"), A_, s_hat_,
        [&](auto row_of) {
          return SpmvDots<decltype(row_of)>{Csr(A_), s_hat_.all, s_, t_, row_of};
        },
        tst);
    comm.allreduce(tst, 2, ReduceOp::sum);
    omega_ = tst[1] > 0 ? tst[0] / tst[1] : 0.0;

    double rho_rr[2];
    reduce<2>(hand_label("bicgstab_ilu0: x += alpha p^ + omega s^, r = s - omega t, r.r_hat, r.r"),
              n_, UpdateXR{x_.all, r_, p_hat_.all, s_hat_.all, s_, t_, r_hat_, alpha_, omega_},
              rho_rr);
    comm.allreduce(rho_rr, 2, ReduceOp::sum);
    rho_ = rho_rr[0];
    rr_ = rho_rr[1];
  }

  Fields result() const override { return solution_fields(A_, b_, x_.owned_part()); }

  Figures figures() const override {
    Figures f;
    f.kernels = 5;
    f.allreduces = 3;
    f.exchanges = 2;
    return f;
  }

 private:
  Matrix A_;
  Vec b_;
  pc::BlockJacobiIlu0<double> ilu_;
  std::int64_t n_;
  ColumnVector x_, p_hat_, s_hat_;
  View p_, s_, r_, r_hat_, v_, t_;
  double rho_ = 0, rho_old_ = 1, alpha_ = 1, omega_ = 1, rr_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("bicgstab_ilu0", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::solvers
