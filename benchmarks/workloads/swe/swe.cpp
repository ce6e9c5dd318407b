// Shallow water (Lax-Friedrichs) as kfuse user code: one program for the three
// updates and the mass, one per direction of the ping-pong, each bound once (as the user
// guide advises: rebinding one program every step agrees on the binding, an allreduce).
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "swe.hpp"

namespace kfuse::bench::swe {
namespace {

using Array2 = Array<double, 2>;
using kfuse::shift;

// Fluxes F (along x) and G (along y) of the state at one offset, through the velocity
// across the face: u = hu/h along x, v = hv/h along y. Each neighbour's quotient serves both
// momentum updates (the compiler computes it once), so a point costs 4 divisions, not the 8
// of hu^2/h and hu hv/h: with 8, Zen 4's divider held the sweep to ~29 GB/s in the cache
// and from memory alike (docs/benchmarks.md).
template <class H, class Q>
auto velocity(const H& h, const Q& q) {
  return q / h;
}
template <class H, class Q>
auto momentum_flux(const Constants& c, const H& h, const Q& q) {  // q^2/h + g h^2/2
  return q * velocity(h, q) + c.half_g * h * h;
}
template <class H, class Q, class P>
auto cross_flux(const H& h, const Q& q, const P& p) {  // p q/h, q along the face's normal
  return p * velocity(h, q);
}

template <int I, int J, class A>
auto at(const A& a) {
  return shift<I, J>(a);
}

template <class H, class HU, class HV>
auto new_h(const Constants& c, const H& h, const HU& hu, const HV& hv) {
  return 0.25 * (at<0, 1>(h) + at<0, -1>(h) + at<1, 0>(h) + at<-1, 0>(h)) -
         c.cx * (at<0, 1>(hu) - at<0, -1>(hu)) - c.cy * (at<1, 0>(hv) - at<-1, 0>(hv));
}
template <class H, class HU, class HV>
auto new_hu(const Constants& c, const H& h, const HU& hu, const HV& hv) {
  return 0.25 * (at<0, 1>(hu) + at<0, -1>(hu) + at<1, 0>(hu) + at<-1, 0>(hu)) -
         c.cx * (momentum_flux(c, at<0, 1>(h), at<0, 1>(hu)) -
                 momentum_flux(c, at<0, -1>(h), at<0, -1>(hu))) -
         c.cy * (cross_flux(at<1, 0>(h), at<1, 0>(hv), at<1, 0>(hu)) -
                 cross_flux(at<-1, 0>(h), at<-1, 0>(hv), at<-1, 0>(hu)));
}
template <class H, class HU, class HV>
auto new_hv(const Constants& c, const H& h, const HU& hu, const HV& hv) {
  return 0.25 * (at<0, 1>(hv) + at<0, -1>(hv) + at<1, 0>(hv) + at<-1, 0>(hv)) -
         c.cx * (cross_flux(at<0, 1>(h), at<0, 1>(hu), at<0, 1>(hv)) -
                 cross_flux(at<0, -1>(h), at<0, -1>(hu), at<0, -1>(hv))) -
         c.cy * (momentum_flux(c, at<1, 0>(h), at<1, 0>(hv)) -
                 momentum_flux(c, at<-1, 0>(h), at<-1, 0>(hv)));
}

/// One step: the three updates and the mass, in one program (under every policy; Unfused
/// materialises its ~60 operations).
template <class Policy>
auto make_step(const Constants& c, const Array2& h, const Array2& hu, const Array2& hv,
               const Array2& h2, const Array2& hu2, const Array2& hv2, const Scalar<double>& mass) {
  return kfuse::fuse<Policy>(h, hu, hv, h2, hu2, hv2, mass,
                             [c](auto h, auto hu, auto hv, auto h2, auto hu2, auto hv2, auto mass) {
                               return kfuse::seq(kfuse::assign(h2, new_h(c, h, hu, hv)),
                                                 kfuse::assign(hu2, new_hu(c, h, hu, hv)),
                                                 kfuse::assign(hv2, new_hv(c, h, hu, hv)),
                                                 kfuse::reduce(mass, kfuse::sum(h2)));
                             });
}

/// State and ping-pong shared by the variants below.
class State {
 public:
  explicit State(const Setup& setup)
      : c_(setup.size),
        grid_(make_grid(setup)),
        h_{Array2(grid_, "h"), Array2(grid_, "h'")},
        hu_{Array2(grid_, "hu"), Array2(grid_, "hu'")},
        hv_{Array2(grid_, "hv"), Array2(grid_, "hv'")},
        mass_("mass") {}
  void reset() {
    for (int k = 0; k < 2; ++k) initialise(h_[k], hu_[k], hv_[k], c_.n);
    cur_ = 0;
  }
  Fields result() const {
    return {field_of("h", h_[cur_]), field_of("hu", hu_[cur_]), field_of("hv", hv_[cur_]),
            field_of("mass", mass_.value())};
  }

 protected:
  Constants c_;
  Grid<2> grid_;
  std::array<Array2, 2> h_, hu_, hv_;
  Scalar<double> mass_;
  int cur_ = 0;
};

template <class Policy>
class Kfuse final : public Variant, State {
 public:
  explicit Kfuse(const Setup& setup)
      : State(setup),
        step_{make_step<Policy>(c_, h_[0], hu_[0], hv_[0], h_[1], hu_[1], hv_[1], mass_),
              make_step<Policy>(c_, h_[1], hu_[1], hv_[1], h_[0], hu_[0], hv_[0], mass_)} {
    if constexpr (std::is_same_v<Policy, kfuse::Fused>)
      static_assert(Step::kernel_count == 1 && Step::allreduce_count == 1,
                    "swe: the three updates and the mass are one kernel");
  }
  void reset() override { State::reset(); }
  void step() override {
    step_[cur_]();  // state cur_ -> 1 - cur_
    cur_ = 1 - cur_;
  }
  Fields result() const override { return State::result(); }
  Figures figures() const override {
    return program_figures(step_[0], static_cast<double>(grid_.global_size()));
  }

 private:
  using Step = decltype(make_step<Policy>(
      std::declval<const Constants&>(), std::declval<const Array2&>(), std::declval<const Array2&>(),
      std::declval<const Array2&>(), std::declval<const Array2&>(), std::declval<const Array2&>(),
      std::declval<const Array2&>(), std::declval<const Scalar<double>&>()));
  std::array<Step, 2> step_;  // one program per direction of the ping-pong, each bound once
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "swe",
    "2-D shallow water (h, hu, hv), Lax-Friedrichs, periodic, plus total mass per step",
    1024,
    5,
    1e-12,
    [](const Setup& s) { return std::to_string(s.size) + "x" + std::to_string(s.size); },
    min_bytes,
    "benchmarks/workloads/swe/swe.cpp",
    "benchmarks/workloads/swe/swe_kokkos.cpp",
    // h, hu, hv and the next state. Memory-bound beyond the cache (~60 flops and 4
    // divisions a point: 80-90% of STREAM at the default size), so grown there: at
    // 1024 x 1024 (48 MiB) the state straddled the 32 MiB cache, and times hung on
    // which lines survived (repetitions 0.51-1.49x apart).
    min_bytes,
    true}));
#endif
KFUSE_BENCH_REGISTER(register_policies<Kfuse>("swe"));

}  // namespace
}  // namespace kfuse::bench::swe
