// BiCGSTAB as a Kokkos Kernels user writes it: KokkosSparse::spmv on the
// local block after importing the ghosts of p and s (matrix import plan,
// into the tail of their column arrays), KokkosBlas update / dot for the
// vectors; the dots of one step share an allreduce (3 per iteration).
#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_update.hpp>
#include <KokkosSparse_spmv.hpp>

#include "../solvers/solver_kokkos_kernels.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace kk;

class KokkosKernelsBicgstab final : public Variant {
 public:
  explicit KokkosKernelsBicgstab(const Setup& setup)
      : A_(bicgstab_matrix(setup)),
        b_(make_rhs(A_)),
        bk_(copy_of(b_)),
        x_(A_, "x"),
        p_(A_, "p"),
        s_(A_, "s"),
        r_("r", A_.local_rows()),
        r_hat_("r_hat", A_.local_rows()),
        v_("v", A_.local_rows()),
        t_("t", A_.local_rows()) {}

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    Kokkos::deep_copy(p_.all, 0.0);
    Kokkos::deep_copy(v_, 0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = A_.range().comm();
    const KView x = x_.owned_part(), p = p_.owned_part(), s = s_.owned_part();
    if (steps_++ == 0) {  // r = b - A x, r_hat = r, ||b||, r.r
      x_.import(A_);
      KokkosSparse::spmv("N", 1.0, A_.local_matrix(), x_.all, 0.0, r_);
      KokkosBlas::axpby(1.0, bk_, -1.0, r_);
      Kokkos::deep_copy(r_hat_, r_);
      double sums[2] = {KokkosBlas::dot(r_, r_), KokkosBlas::dot(bk_, bk_)};
      comm.allreduce(sums, 2, ReduceOp::sum);
      rho_ = sums[0];
      b_norm_ = std::sqrt(sums[1]);
      rho_old_ = alpha_ = omega_ = 1.0;  // with p = v = 0 the first p is r
    }
    const double beta = (rho_ / rho_old_) * (alpha_ / omega_);
    KokkosBlas::update(1.0, r_, -beta * omega_, v_, beta, p);  // p = r + beta (p - omega v)

    p_.import(A_);
    KokkosSparse::spmv("N", 1.0, A_.local_matrix(), p_.all, 0.0, v_);
    const double d = comm.allreduce(KokkosBlas::dot(v_, r_hat_), ReduceOp::sum);
    alpha_ = rho_ / d;
    rho_old_ = rho_;

    KokkosBlas::update(1.0, r_, -alpha_, v_, 0.0, s);  // s = r - alpha v

    s_.import(A_);
    KokkosSparse::spmv("N", 1.0, A_.local_matrix(), s_.all, 0.0, t_);
    double tst[2] = {KokkosBlas::dot(t_, s), KokkosBlas::dot(t_, t_)};
    comm.allreduce(tst, 2, ReduceOp::sum);
    omega_ = tst[1] > 0 ? tst[0] / tst[1] : 0.0;

    KokkosBlas::update(alpha_, p, omega_, s, 1.0, x);  // x += alpha p + omega s
    KokkosBlas::update(1.0, s, -omega_, t_, 0.0, r_);  // r = s - omega t
    double rho_rr[2] = {KokkosBlas::dot(r_, r_hat_), KokkosBlas::dot(r_, r_)};
    comm.allreduce(rho_rr, 2, ReduceOp::sum);
    rho_ = rho_rr[0];
    rr_ = rho_rr[1];
  }

  Fields result() const override { return solution_fields(A_, b_, x_.owned_part()); }

  Figures figures() const override {
    Figures f;
    f.kernels = 11;  // 4 updates, 2 spmv, 5 dots
    f.allreduces = 3;
    f.exchanges = 2;
    // read / written: p r v / p, p / v + A, v r_hat, r v / s, s / t + A, t s, t,
    // x p s / x, s t / r, r r_hat, r
    f.bytes = 208.0 * double(A_.global_rows()) + 2 * matrix_bytes(A_);
    return f;
  }

 private:
  Matrix A_;
  Vec b_;
  KView bk_;
  KColumnVector x_, p_, s_;
  KView r_, r_hat_, v_, t_;
  double rho_ = 0, rho_old_ = 1, alpha_ = 1, omega_ = 1, rr_ = 0, b_norm_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<KokkosKernelsBicgstab>("bicgstab", "kokkos_kernels"));

}  // namespace
}  // namespace kfuse::bench::solvers
