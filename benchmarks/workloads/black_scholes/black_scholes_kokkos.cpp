// Black-Scholes by hand: one Kokkos kernel over this rank's options, the
// same arithmetic in the same order as black_scholes.cpp. An expert's loop
// vectorises: chunks with an inner loop marked independent (hand_loops.hpp),
// and an exp and log that vectorise with it (kfuse's, the same as the fused
// kernel's: glibc's are a call per element, which keeps the loop scalar); |d|
// as fabs, a mask of the sign bit (a select let GCC divide twice, docs/benchmarks-log.md).
#include <cmath>

#include "black_scholes.hpp"
#include "../common/hand_loops.hpp"

namespace kfuse::bench::black_scholes {
namespace {

KOKKOS_INLINE_FUNCTION double cnd(double d) {
  const double k = 1.0 / (1.0 + 0.2316419 * detail::math::fabs(d));
  const double c =
      0.39894228 * detail::kernel_exp(-0.5 * d * d) * k *
      (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + 1.330274429 * k))));
  return d > 0.0 ? 1.0 - c : c;
}

struct Price {
  detail::view_t<double, 1> S, X, T, call, put;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const double s = S(i), x = X(i), t = T(i);
    const double d1 = (detail::kernel_log(s / x) + (R + 0.5 * V * V) * t) / (V * std::sqrt(t));
    const double d2 = d1 - V * std::sqrt(t);
    const double nd1 = cnd(d1), nd2 = cnd(d2);
    const double discount = x * detail::kernel_exp(-R * t);
    call(i) = s * nd1 - discount * nd2;
    put(i) = discount * (1.0 - nd2) - s * (1.0 - nd1);
  }
};

class Hand final : public Variant {
 public:
  explicit Hand(const Setup& setup)
      : grid_(make_grid(setup)), in_(grid_), call_(grid_, "call"), put_(grid_, "put") {}
  void reset() override {}
  void step() override {
    const std::int64_t h = grid_.halo();
    hand::for_points(hand_label("black_scholes"), h, h + grid_.local_extent(0),
                     Price{in_.S.view(), in_.X.view(), in_.T.view(), call_.view(), put_.view()});
  }
  Fields result() const override { return {field_of("call", call_), field_of("put", put_)}; }
  Figures figures() const override {
    Figures f;
    f.kernels = 1;
    f.bytes = 40.0 * static_cast<double>(grid_.global_size());
    return f;
  }

 private:
  Grid<1> grid_;
  Inputs in_;
  Array<double, 1> call_, put_;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("black_scholes", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::black_scholes
