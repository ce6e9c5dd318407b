// What an expert writes: the whole update and the mass sum in one pass over
// memory, vectorised rows, the sum split over lanes, the new state written with
// streaming stores, the pass overlapped with the halo exchange (hand_loops.hpp).
// Shallow water by hand: one parallel_reduce by rows (hand_loops.hpp) that writes
// the new state and sums the mass, over the interior while the halo messages of
// h, hu, hv (kfuse::HaloExchange) fly, then over the boundary strips; one
// allreduce. The arithmetic is swe.cpp's, in the same order.
#include <array>

#include "../common/hand_loops.hpp"
#include "swe.hpp"

namespace kfuse::bench::swe {
namespace {

using View = detail::view_t<double, 2>;

struct LaxFriedrichs {
  View h, hu, hv, h2, hu2, hv2;
  double cx, cy, half_g;

  // swe.cpp's fluxes through the velocity across the face, u = q/h: q^2/h + g h^2/2 as
  // q u + g h^2/2 and p q/h as p u; GCC computes each neighbour's u once for both updates.
  KOKKOS_INLINE_FUNCTION double momentum(double a, double q) const {
    return q * (q / a) + half_g * a * a;
  }
  KOKKOS_INLINE_FUNCTION static double cross(double a, double q, double p) { return p * (q / a); }

  static constexpr bool streams_stores = true;  // h2, hu2, hv2 are not read
  template <class Lane, class Put = hand::Stored>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Lane mass,
                                         Put put = {}) const {
    const double hE = h(i, j + 1), hW = h(i, j - 1), hN = h(i + 1, j), hS = h(i - 1, j);
    const double uE = hu(i, j + 1), uW = hu(i, j - 1), uN = hu(i + 1, j), uS = hu(i - 1, j);
    const double vE = hv(i, j + 1), vW = hv(i, j - 1), vN = hv(i + 1, j), vS = hv(i - 1, j);
    const double hn = 0.25 * (hE + hW + hN + hS) - cx * (uE - uW) - cy * (vN - vS);
    put(h2, i, j, 0, hn);  // each value put as computed: the loads stay in registers
    const double hun = 0.25 * (uE + uW + uN + uS) - cx * (momentum(hE, uE) - momentum(hW, uW)) -
                       cy * (cross(hN, vN, uN) - cross(hS, vS, uS));
    put(hu2, i, j, 1, hun);
    const double hvn = 0.25 * (vE + vW + vN + vS) - cx * (cross(hE, uE, vE) - cross(hW, uW, vW)) -
                       cy * (momentum(hN, vN) - momentum(hS, vS));
    put(hv2, i, j, 2, hvn);
    mass[0] += hn;
  }
  hand::RowsAhead<3, 3> ahead(std::int64_t i) const {
    return {{&h(i + 1, 0), &hu(i + 1, 0), &hv(i + 1, 0)}, {&h2(i, 0), &hu2(i, 0), &hv2(i, 0)}};
  }
};

class Hand final : public Variant {
  using Array2 = Array<double, 2>;

 public:
  explicit Hand(const Setup& setup)
      : c_(setup.size),
        grid_(make_grid(setup)),
        boxes_(grid_),
        h_{Array2(grid_, "h"), Array2(grid_, "h'")},
        hu_{Array2(grid_, "hu"), Array2(grid_, "hu'")},
        hv_{Array2(grid_, "hv"), Array2(grid_, "hv'")} {}
  void reset() override {
    for (int k = 0; k < 2; ++k) initialise(h_[k], hu_[k], hv_[k], c_.n);
    cur_ = 0;
  }
  void step() override {
    const int n = 1 - cur_;
    HaloExchange<2> ex(grid_);
    for (const Array2* a : {&h_[cur_], &hu_[cur_], &hv_[cur_]})
      if (a->halo_stale()) ex.add(*a);
    double mass = 0;
    hand::reduce_box_overlapped<1>(
        hand_label("swe"), boxes_, ex,
        LaxFriedrichs{h_[cur_].view(), hu_[cur_].view(), hv_[cur_].view(), h_[n].view(),
                      hu_[n].view(), hv_[n].view(), c_.cx, c_.cy, c_.half_g},
        &mass);
    mass_ = grid_.comm().allreduce(mass, ReduceOp::sum);
    for (Array2* a : {&h_[n], &hu_[n], &hv_[n]}) a->mark_halo_stale();
    cur_ = n;
  }
  Fields result() const override {
    return {field_of("h", h_[cur_]), field_of("hu", hu_[cur_]), field_of("hv", hv_[cur_]),
            field_of("mass", mass_)};
  }
  Figures figures() const override {
    Figures f;
    f.kernels = 1;
    f.allreduces = 1;
    f.exchanges = 1;
    f.bytes = 48.0 * double(grid_.global_size());
    return f;
  }

 private:
  Constants c_;
  Grid<2> grid_;
  hand::OverlapBoxes boxes_;
  std::array<Array2, 2> h_, hu_, hv_;
  double mass_ = 0;
  int cur_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("swe", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::swe
