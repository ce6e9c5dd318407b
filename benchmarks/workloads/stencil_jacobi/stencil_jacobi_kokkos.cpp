// What an expert writes: the sweep and its residual in one pass over memory,
// vectorised rows, the sum split over lanes, v written with streaming stores, the
// sweep overlapped with the halo exchange (hand_loops.hpp).
// Jacobi sweep + residual by hand: one parallel_reduce by rows (hand_loops.hpp)
// that writes v and sums (v - u)^2, over the interior while u's halo messages
// (kfuse::HaloExchange) fly, then over the boundary strips; then one allreduce.
#include "../common/hand_loops.hpp"
#include "stencil_jacobi.hpp"

namespace kfuse::bench::stencil_jacobi {
namespace {

struct Sweep {
  static constexpr bool streams_stores = true;  // v is not read
  detail::view_t<double, 2> u, v;
  template <class Lane, class Put = hand::Stored>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Lane sum,
                                         Put put = {}) const {
    const double x = 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
    const double d = x - u(i, j);
    put(v, i, j, 0, x);
    sum[0] += d * d;
  }
  hand::RowsAhead<1, 1> ahead(std::int64_t i) const { return {{&u(i + 1, 0)}, {&v(i, 0)}}; }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : n_(setup.size), grid_(make_grid(setup)), boxes_(grid_), u_(grid_, "u"), v_(grid_, "v") {}
  void reset() override {
    initialise(u_, n_);
    initialise(v_, n_);
    steps_ = 0;
  }
  void step() override {
    const bool even = steps_++ % 2 == 0;
    const Array<double, 2>& in = even ? u_ : v_;
    const Array<double, 2>& out = even ? v_ : u_;
    HaloExchange<2> exchange(grid_);
    if (in.halo_stale()) exchange.add(in);
    double sum = 0;
    hand::reduce_box_overlapped<1>(hand_label("stencil_jacobi"), boxes_, exchange,
                                   Sweep{in.view(), out.view()}, &sum);
    res_ = grid_.comm().allreduce(sum, ReduceOp::sum);
    out.mark_halo_stale();
  }
  Fields result() const override {
    return {field_of("u", steps_ % 2 ? v_ : u_), field_of("res", res_)};
  }
  Figures figures() const override {
    Figures f;
    f.kernels = 1;
    f.allreduces = 1;
    f.exchanges = 1;
    f.bytes = 16.0 * double(grid_.global_size());
    return f;
  }

 private:
  std::int64_t n_;
  Grid<2> grid_;
  hand::OverlapBoxes boxes_;
  Array<double, 2> u_, v_;
  double res_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("stencil_jacobi", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::stencil_jacobi
