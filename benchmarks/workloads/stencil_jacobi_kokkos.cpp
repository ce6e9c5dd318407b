// Jacobi sweep + residual by hand: halo exchange (kfuse::HaloExchange), then
// one parallel_reduce that writes v and sums (v - u)^2, then one allreduce.
// `kokkos` (the reference) iterates an MDRangePolicy like kfuse; `kokkos_rows`
// iterates rows with an inner loop, to show what the iteration scheme costs.
#include "stencil_jacobi.hpp"

namespace kfuse::bench::stencil_jacobi {
namespace {

struct Sweep {
  detail::view_t<double, 2> u, v;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, double& sum) const {
    const double x = 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
    v(i, j) = x;
    const double d = x - u(i, j);
    sum += d * d;
  }
};

/// The same sweep as an expert CPU programmer might write it instead: a
/// RangePolicy over rows, a contiguous inner loop over the row, the row's
/// residual summed in a local variable (a register) and added once per row.
struct RowSweep {
  detail::view_t<double, 2> u, v;
  std::int64_t j0, j1;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double& sum) const {
    double row = 0;
    for (std::int64_t j = j0; j < j1; ++j) {
      const double x = 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
      v(i, j) = x;
      const double d = x - u(i, j);
      row += d * d;
    }
    sum += row;
  }
};

template <bool Rows>
class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : n_(setup.size), grid_(make_grid(setup)), u_(grid_, "u"), v_(grid_, "v") {}
  void reset() override {
    initialise(u_, n_);
    initialise(v_, n_);
    steps_ = 0;
  }
  void step() override {
    const bool even = steps_++ % 2 == 0;
    const Array<double, 2>& in = even ? u_ : v_;
    const Array<double, 2>& out = even ? v_ : u_;
    if (in.halo_stale()) {
      HaloExchange<2> exchange(grid_);
      exchange.add(in);
      exchange.run();
    }
    const std::int64_t h = grid_.halo();
    double sum = 0;
    if constexpr (Rows) {
      Kokkos::parallel_reduce(
          hand_label("stencil_jacobi:rows"),
          Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>(
              h, h + grid_.local_extent(0)),
          RowSweep{in.view(), out.view(), h, h + grid_.local_extent(1)}, sum);
    } else {
      Kokkos::parallel_reduce(
          hand_label("stencil_jacobi"),
          Kokkos::MDRangePolicy<detail::ExecSpace, Kokkos::Rank<2>,
                                Kokkos::IndexType<std::int64_t>>(
              {h, h}, {h + grid_.local_extent(0), h + grid_.local_extent(1)}),
          Sweep{in.view(), out.view()}, sum);
    }
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
  Array<double, 2> u_, v_;
  double res_ = 0;
  int steps_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand<false>>("stencil_jacobi", "kokkos"));
KFUSE_BENCH_REGISTER(register_variant_class<Hand<true>>("stencil_jacobi", "kokkos_rows"));

}  // namespace
}  // namespace kfuse::bench::stencil_jacobi
