// What an expert writes: the fewest passes over memory CG's dependences allow,
// the product overlapped with the import, reductions split over lanes.
// CG by hand: the expert's three Kokkos kernels per iteration on the local
// CSR block, the ghost import of p through the matrix's import plan,
// overlapped with the interior rows, reductions summed in registers by
// chunks and lanes (solver_hand.hpp):
//   kernel 1: Ap = A p, pAp = p.Ap          (interior rows, then ":boundary" rows)
//   kernel 2: r -= alpha Ap, rr' = r.r
//   kernel 3: x += alpha p, p = r + beta p   (p is read there anyway)
// and one allreduce after kernels 1 and 2.
#include "../solvers/solver_hand.hpp"

namespace kfuse::bench::solvers {
namespace {

using namespace hand;

/// r -= alpha Ap, and r.r.
struct UpdateR {
  View r;
  ConstView Ap;
  double alpha;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Lane sums) const {
    const double ri = r(i) - alpha * Ap(i);
    r(i) = ri;
    sums[0] += ri * ri;
  }
};

/// x += alpha p, p = r + beta p.
struct UpdateXP {
  View x, p;
  ConstView r;
  double alpha, beta;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const double pi = p(i), xi = x(i) + alpha * pi, pnew = r(i) + beta * pi;
    x(i) = xi;
    p(i) = pnew;
  }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : A_(cg_matrix(setup)),
        b_(make_rhs(A_)),
        n_(A_.local_rows()),
        x_(A_, "x"),
        p_(A_, "p"),
        r_(work_vector("r", n_)),
        Ap_(work_vector("Ap", n_)) {}

  void reset() override {
    Kokkos::deep_copy(x_.all, 0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = A_.range().comm();
    if (steps_++ == 0) {
      x_.import(A_);
      double sums[2];
      reduce_rows<2>(hand_label("cg: r = b - A x, p = r, r.r, b.b"), n_,
                     ResidualStart{Csr(A_), x_.all, b_.view(), r_, p_.all}, sums);
      comm.allreduce(sums, 2, ReduceOp::sum);
      rr_ = sums[0];
      b_norm_ = std::sqrt(sums[1]);
    }
    double pAp = 0;
    overlapped_rows<1>(
        hand_label("cg: Ap = A p, p.Ap"), A_, p_,
        [&](auto row_of) {
          return SpmvPAp<decltype(row_of)>{Csr(A_), p_.all, Ap_, row_of};
        },
        &pAp);
    pAp = comm.allreduce(pAp, ReduceOp::sum);
    const double alpha = rr_ / pAp;

    double rr_new = 0;
    reduce<1>(hand_label("cg: r -= alpha Ap, r.r"), n_, UpdateR{r_, Ap_, alpha}, &rr_new);
    rr_new = comm.allreduce(rr_new, ReduceOp::sum);
    const double beta = rr_new / rr_;
    rr_ = rr_new;

    for_points(hand_label("cg: x += alpha p, p = r + beta p"), 0, n_,
               UpdateXP{x_.all, p_.all, r_, alpha, beta});
  }

  Fields result() const override { return solution_fields(A_, b_, x_.owned_part()); }

  Figures figures() const override {
    Figures f;
    f.kernels = 3;
    f.allreduces = 2;
    f.exchanges = 1;
    f.bytes = cg_min_bytes(double(A_.global_rows()), matrix_bytes(A_));
    return f;
  }

 private:
  Matrix A_;
  Vec b_;
  std::int64_t n_;
  ColumnVector x_, p_;
  View r_, Ap_;
  double rr_ = 0, b_norm_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("cg", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::solvers
