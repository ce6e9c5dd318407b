// What an expert writes: the fewest passes over memory CG's dependences allow,
// the stencil overlapped with the halo exchange, reductions split over lanes,
// and A p applied twice rather than stored (a stencil costs less than the
// vector pass that storing A p and reading it back takes: 1.11-1.23x faster
// in docs/benchmarks-log.md's runs; kfuse::cg_matfree does the same).
// Matrix-free CG by hand: three Kokkos kernels per iteration on the grid
// arrays, the first stencil fused with its dot and overlapped with p's halo
// exchange (kfuse::HaloExchange: interior points while the messages fly,
// then the boundary strips at faces with a neighbour, labelled ":boundary"
// as kfuse does). Kernels run
// by rows, an inner loop along j per row, sums kept in registers for a row
// and split over lanes (hand_loops.hpp says why):
//   kernel 1: pAp = p.(A p), A p = 4 p - p(i-1,j) - p(i+1,j) - p(i,j-1) - p(i,j+1)
//   kernel 2: r -= alpha A p (p's halo still current), rr' = r.r
//   kernel 3: x += alpha p, p = r + beta p   (p is read there anyway)
// Dirichlet 0: the physical halo cells of p and x stay 0 (never written).
#include <string>

#include "../solvers/solver_hand.hpp"

namespace kfuse::bench::solvers {
namespace {

using hand::for_box;
using hand::reduce_box;
using View2 = detail::view_t<double, 2>;

KOKKOS_INLINE_FUNCTION double laplacian(const View2& u, std::int64_t i, std::int64_t j) {
  return 4.0 * u(i, j) - u(i - 1, j) - u(i + 1, j) - u(i, j - 1) - u(i, j + 1);
}

/// p.(A p).
struct StencilDot {
  View2 p;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Lane sums) const {
    sums[0] += p(i, j) * laplacian(p, i, j);
  }
  hand::RowsAhead<1, 0> ahead(std::int64_t i) const { return {{&p(i + 1, 0)}, {}}; }
};

/// r -= alpha A p and r.r.
struct UpdateR {
  View2 r, p;
  double alpha;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Lane sums) const {
    const double ri = r(i, j) - alpha * laplacian(p, i, j);
    r(i, j) = ri;
    sums[0] += ri * ri;
  }
  hand::RowsAhead<1, 1> ahead(std::int64_t i) const { return {{&p(i + 1, 0)}, {&r(i, 0)}}; }
};

struct UpdateXP {
  View2 x, p, r;
  double alpha, beta;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    const double pij = p(i, j), xij = x(i, j) + alpha * pij, pnew = r(i, j) + beta * pij;
    x(i, j) = xij;
    p(i, j) = pnew;
  }
};

/// The start: r = b - A x, p = r, with r.r and b.b.
struct Start {
  static constexpr bool streams_stores = true;  // r and p are not read
  View2 x, b, r, p;
  template <class Lane, class Put = hand::Stored>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Lane sums,
                                         Put put = {}) const {
    const double bij = b(i, j), ri = bij - laplacian(x, i, j);
    put(r, i, j, 0, ri);
    put(p, i, j, 1, ri);
    sums[0] += ri * ri;
    sums[1] += bij * bij;
  }
  hand::RowsAhead<2, 2> ahead(std::int64_t i) const {
    return {{&x(i + 1, 0), &b(i, 0)}, {&r(i, 0), &p(i, 0)}};
  }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : grid_(make_grid(setup)),
        boxes_(grid_),
        b_(make_rhs(grid_)),
        x_(grid_, "x"),
        r_(grid_, "r"),
        p_(grid_, "p") {}

  void reset() override {
    x_.fill(0.0);
    steps_ = 0;
  }

  void step() override {
    const Comm& comm = grid_.comm();
    if (steps_++ == 0) {
      {
        HaloExchange<2> exchange(grid_);
        exchange.add(x_);
        exchange.run();
      }
      double sums[2];
      reduce_box<2>(hand_label("cg_matfree: r = b - A x, p = r, r.r, b.b"), boxes_.owned,
                    Start{x_.view(), b_.view(), r_.view(), p_.view()}, sums);
      comm.allreduce(sums, 2, ReduceOp::sum);
      rr_ = sums[0];
      b_norm_ = std::sqrt(sums[1]);
    }

    double pAp = 0;
    {
      HaloExchange<2> exchange(grid_);
      exchange.add(p_);
      hand::reduce_box_overlapped<1>(hand_label("cg_matfree: p.(A p)"), boxes_, exchange,
                                     StencilDot{p_.view()}, &pAp);
    }
    pAp = comm.allreduce(pAp, ReduceOp::sum);
    const double alpha = rr_ / pAp;

    double rr_new = 0;
    reduce_box<1>(hand_label("cg_matfree: r -= alpha A p, r.r"), boxes_.owned,
                  UpdateR{r_.view(), p_.view(), alpha}, &rr_new);
    rr_new = comm.allreduce(rr_new, ReduceOp::sum);
    const double beta = rr_new / rr_;
    rr_ = rr_new;

    for_box(hand_label("cg_matfree: x += alpha p, p = r + beta p"), boxes_.owned,
            UpdateXP{x_.view(), p_.view(), r_.view(), alpha, beta});
    p_.mark_halo_stale();
  }

  Fields result() const override { return solution_fields(b_, x_); }

  Figures figures() const override {
    Figures f;
    f.kernels = 3;
    f.allreduces = 2;
    f.exchanges = 1;
    f.bytes = cg_matfree_min_bytes(double(grid_.global_size()));
    return f;
  }

 private:
  Grid<2> grid_;
  hand::OverlapBoxes boxes_;
  Array2 b_, x_, r_, p_;
  double rr_ = 0, b_norm_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("cg_matfree", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::solvers
