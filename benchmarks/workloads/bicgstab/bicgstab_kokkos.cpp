// What an expert writes: the fewest passes over memory BiCGSTAB's dependences
// allow, products overlapped with imports, reductions split over lanes.
// BiCGSTAB by hand: the expert's five Kokkos kernels per iteration (each
// boundary forced by a data dependence: a product needs its whole input, a
// scalar needs a reduction), the two products overlapped with the ghost
// imports of p and s, reductions summed in registers by chunks and lanes
// (solver_hand.hpp), three allreduces:
//   kernel 1: p = r + beta (p - omega v)
//   kernel 2: v = A p, d = v.r_hat                     -> alpha = rho / d
//   kernel 3: s = r - alpha v
//   kernel 4: t = A s, t.s, t.t                        -> omega = t.s / t.t
//   kernel 5: x += alpha p + omega s, r = s - omega t, rho = r.r_hat, r.r
#include "bicgstab_hand.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace hand;

/// t = A s, t.s and t.t over the rows row_of(k).
template <class RowOf>
struct SpmvDots {
  Csr A;
  ConstView s;  // all columns
  View t;
  RowOf row_of;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, Lane sums) const {
    const std::int64_t row = row_of(k);
    const double y = A.row_times(row, s), si = s(row);
    t(row) = y;
    sums[0] += y * si;
    sums[1] += y * y;
  }
};

/// x += alpha p + omega s, r = s - omega t, r.r_hat and r.r.
struct UpdateXR {
  View x, r;
  ConstView p, s, t, r_hat;
  double alpha, omega;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double si = s(i), xi = x(i) + alpha * p(i) + omega * si, ri = si - omega * t(i);
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
        n_(A_.local_rows()),
        x_(A_, "x"),
        p_(A_, "p"),
        s_(A_, "s"),
        r_(work_vector("r", n_)),
        r_hat_(work_vector("r_hat", n_)),
        v_(work_vector("v", n_)),
        t_(work_vector("t", n_)) {}

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    Kokkos::deep_copy(p_.all, 0.0);
    Kokkos::deep_copy(v_, 0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = A_.range().comm();
    if (steps_++ == 0) {
      x_.import(A_);
      double sums[2];
      reduce_rows<2>(hand_label("bicgstab: r = b - A x, r_hat = r, r.r, b.b"), n_,
                     ResidualStart{Csr(A_), x_.all, b_.view(), r_, r_hat_}, sums);
      comm.allreduce(sums, 2, ReduceOp::sum);
      rho_ = sums[0];
      b_norm_ = std::sqrt(sums[1]);
      rho_old_ = alpha_ = omega_ = 1.0;  // with p = v = 0 the first p is r
    }
    const double beta = (rho_ / rho_old_) * (alpha_ / omega_);
    for_points(hand_label("bicgstab: p = r + beta (p - omega v)"), 0, n_,
               UpdateP{p_.all, r_, v_, beta, omega_});

    double d = 0;
    overlapped_rows<1>(
        hand_label("bicgstab: v = A p, v.r_hat"), A_, p_,
        [&](auto row_of) {
          return SpmvDot<decltype(row_of)>{Csr(A_), p_.all, r_hat_, v_, row_of};
        },
        &d);
    d = comm.allreduce(d, ReduceOp::sum);
    alpha_ = rho_ / d;
    rho_old_ = rho_;

    for_points(hand_label("bicgstab: s = r - alpha v"), 0, n_, UpdateS{s_.all, r_, v_, alpha_});

    double tst[2];
    overlapped_rows<2>(
        hand_label("bicgstab: t = A s, t.s, t.t"), A_, s_,
        [&](auto row_of) {
          return SpmvDots<decltype(row_of)>{Csr(A_), s_.all, t_, row_of};
        },
        tst);
    comm.allreduce(tst, 2, ReduceOp::sum);
    omega_ = tst[1] > 0 ? tst[0] / tst[1] : 0.0;

    double rho_rr[2];
    reduce<2>(hand_label("bicgstab: x += alpha p + omega s, r = s - omega t, r.r_hat, r.r"), n_,
              UpdateXR{x_.all, r_, p_.all, s_.all, t_, r_hat_, alpha_, omega_}, rho_rr);
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
    f.bytes = bicgstab_min_bytes(double(A_.global_rows()), matrix_bytes(A_));
    return f;
  }

 private:
  Matrix A_;
  Vec b_;
  std::int64_t n_;
  ColumnVector x_, p_, s_;
  View r_, r_hat_, v_, t_;
  double rho_ = 0, rho_old_ = 1, alpha_ = 1, omega_ = 1, rr_ = 0, b_norm_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("bicgstab", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::solvers
