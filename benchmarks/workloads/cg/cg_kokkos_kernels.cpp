// CG as a Kokkos Kernels user writes it: KokkosSparse::spmv on the local
// block (after importing p's ghosts with the matrix's import plan, into the
// tail of p's column array), KokkosBlas dot / axpy / axpby for the vectors,
// one allreduce per dot. LayoutLeft vectors: the layout Debian's Kokkos
// Kernels instantiates (and hands to the BLAS library where it can).
#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosSparse_spmv.hpp>

#include "../solvers/solver_kokkos_kernels.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace kk;

class KokkosKernelsCg final : public Variant {
 public:
  explicit KokkosKernelsCg(const Setup& setup)
      : A_(cg_matrix(setup)),
        b_(make_rhs(A_)),
        bk_(copy_of(b_)),
        x_(A_, "x"),
        p_(A_, "p"),
        r_("r", A_.local_rows()),
        Ap_("Ap", A_.local_rows()) {}

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = A_.range().comm();
    const KView x = x_.owned_part(), p = p_.owned_part();
    if (steps_++ == 0) {  // r = b - A x, p = r, ||b||, r.r
      x_.import(A_);
      KokkosSparse::spmv("N", 1.0, A_.local_matrix(), x_.all, 0.0, r_);
      KokkosBlas::axpby(1.0, bk_, -1.0, r_);
      Kokkos::deep_copy(p, r_);
      b_norm_ = std::sqrt(comm.allreduce(KokkosBlas::dot(bk_, bk_), ReduceOp::sum));
      rr_ = comm.allreduce(KokkosBlas::dot(r_, r_), ReduceOp::sum);
    }
    p_.import(A_);
    KokkosSparse::spmv("N", 1.0, A_.local_matrix(), p_.all, 0.0, Ap_);
    const double pAp = comm.allreduce(KokkosBlas::dot(p, Ap_), ReduceOp::sum);
    const double alpha = rr_ / pAp;
    KokkosBlas::axpy(alpha, p, x);
    KokkosBlas::axpy(-alpha, Ap_, r_);
    const double rr_new = comm.allreduce(KokkosBlas::dot(r_, r_), ReduceOp::sum);
    const double beta = rr_new / rr_;
    rr_ = rr_new;
    KokkosBlas::axpby(1.0, r_, beta, p);
  }

  Fields result() const override { return solution_fields(A_, b_, x_.owned_part()); }

  Figures figures() const override {
    Figures f;
    f.kernels = 6;  // spmv, dot, axpy, axpy, dot, axpby
    f.allreduces = 2;
    f.exchanges = 1;
    // read / written: p / Ap + A, p Ap, x p / x, r Ap / r, r, r p / p
    f.bytes = 112.0 * double(A_.global_rows()) + matrix_bytes(A_);
    return f;
  }

 private:
  Matrix A_;
  Vec b_;
  KView bk_;
  KColumnVector x_, p_;
  KView r_, Ap_;
  double rr_ = 0, b_norm_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<KokkosKernelsCg>("cg", "kokkos_kernels"));

}  // namespace
}  // namespace kfuse::bench::solvers
