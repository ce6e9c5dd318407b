// What an expert writes: b fused into the first sweep (a pass fewer), each
// sweep one vectorised pass, arrays written but not read stored with streaming
// stores beyond the cache; sweeps cannot fuse (each reads its neighbours' new p).
// Cavity flow by hand: per step one kernel for b and the first sweep, nit - 1
// sweep kernels, one update kernel, each by rows (hand_loops.hpp) and each over
// the interior while the halo messages of what it reads (kfuse::HaloExchange)
// fly, then over the boundary strips. The arithmetic is cfd.cpp's, in the same order.
#include <array>

#include "cfd.hpp"
#include "../common/hand_loops.hpp"

namespace kfuse::bench::cfd {
namespace {

using View = detail::view_t<double, 2>;
/// Host-computed constants of the kernels (as the kfuse expressions fold them).
struct Coefficients {
  std::int64_t n, gi0, gj0;  // global extent; global index of view coordinate 0
  double dx2, dy2, sweep_div, sweep_b;
  double two_dx, two_dy, inv_dt, rho;
  double dt_dx, dt_dy, dt_2rho_dx, dt_2rho_dy, nu, dt_dx2, dt_dy2;
  double dt, dx, dy;

  Coefficients(const Constants& c, const Grid<2>& g)
      : n(c.n), gi0(g.local_begin(0) - g.halo()), gj0(g.local_begin(1) - g.halo()) {
    dx2 = c.dx2;
    dy2 = c.dy2;
    sweep_div = 2 * (c.dx2 + c.dy2);
    sweep_b = c.dx2 * c.dy2 / (2 * (c.dx2 + c.dy2));
    two_dx = 2 * c.dx;
    two_dy = 2 * c.dy;
    inv_dt = 1 / c.dt;
    rho = c.rho;
    dt_2rho_dx = c.dt / (2 * c.rho * c.dx);
    dt_2rho_dy = c.dt / (2 * c.rho * c.dy);
    nu = c.nu;
    dt_dx2 = c.dt / c.dx2;
    dt_dy2 = c.dt / c.dy2;
    dt = c.dt;
    dx = c.dx;
    dy = c.dy;
  }

  // Pressure neighbours with the Neumann walls: both values loaded, then one selected (the
  // neighbour lies in the halo, so the load is always in bounds). A conditional load became
  // a masked load (vmaskmovpd), slower than a load and a blend; kfuse::where selects too.
  static KOKKOS_INLINE_FUNCTION double select(bool wall, double centre, double neighbour) {
    return wall ? centre : neighbour;
  }
  KOKKOS_INLINE_FUNCTION double east(const View& p, std::int64_t i, std::int64_t j) const {
    return select(j + gj0 == n - 1, p(i, j), p(i, j + 1));
  }
  KOKKOS_INLINE_FUNCTION double west(const View& p, std::int64_t i, std::int64_t j) const {
    return select(j + gj0 == 0, p(i, j), p(i, j - 1));
  }
  KOKKOS_INLINE_FUNCTION double south(const View& p, std::int64_t i, std::int64_t j) const {
    return select(i + gi0 == 0, p(i, j), p(i - 1, j));
  }
  KOKKOS_INLINE_FUNCTION double sweep(const View& p, double b, std::int64_t i,
                                      std::int64_t j) const {
    return ((east(p, i, j) + west(p, i, j)) * dy2 + (p(i + 1, j) + south(p, i, j)) * dx2) /
               sweep_div -
           sweep_b * b;
  }
};

// The bodies are forced inline, as kfuse's kernels are into its loops: a row loop holds
// three copies of its body (hand_loops.hpp's RowLoop: streamed, prefetched, plain), and GCC
// called Update's out of line from two of them, a call a point, not vectorised (the update
// in the cache 3.8x slower, 863 us a launch against kfuse's 226).
struct FirstSweep {
  static constexpr bool streams_stores = true;  // b and q are not read
  Coefficients c;
  View u, v, p, q, b;
  template <class Put = hand::Stored>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Put put = {}) const {
    const double dudx = (u(i, j + 1) - u(i, j - 1)) / c.two_dx;
    const double dvdy = (v(i + 1, j) - v(i - 1, j)) / c.two_dy;
    const double bij =
        c.rho *
        (c.inv_dt * (dudx + dvdy) - dudx * dudx -
         2.0 * ((u(i + 1, j) - u(i - 1, j)) / c.two_dy * (v(i, j + 1) - v(i, j - 1)) / c.two_dx) -
         dvdy * dvdy);
    const double qij = c.sweep(p, bij, i, j);
    put(b, i, j, 0, bij);
    put(q, i, j, 1, qij);
  }
  hand::RowsAhead<3, 2> ahead(std::int64_t i) const {
    return {{&u(i + 1, 0), &v(i + 1, 0), &p(i + 1, 0)}, {&b(i, 0), &q(i, 0)}};
  }
};

struct Sweep {
  static constexpr bool streams_stores = true;  // q is not read
  Coefficients c;
  View p, q, b;
  template <class Put = hand::Stored>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Put put = {}) const {
    put(q, i, j, 0, c.sweep(p, b(i, j), i, j));
  }
  hand::RowsAhead<2, 1> ahead(std::int64_t i) const {
    return {{&p(i + 1, 0), &b(i, 0)}, {&q(i, 0)}};
  }
};

struct Update {
  static constexpr bool streams_stores = true;  // u2 and v2 are not read
  Coefficients c;
  View u, v, p, u2, v2;
  template <class Put = hand::Stored>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, Put put = {}) const {
    const double uc = u(i, j), vc = v(i, j);
    const double un = uc - uc * c.dt / c.dx * (uc - u(i, j - 1)) -
                      vc * c.dt / c.dy * (uc - u(i - 1, j)) -
                      c.dt_2rho_dx * (c.east(p, i, j) - c.west(p, i, j)) +
                      c.nu * (c.dt_dx2 * (u(i, j + 1) - 2.0 * uc + u(i, j - 1)) +
                              c.dt_dy2 * (u(i + 1, j) - 2.0 * uc + u(i - 1, j)));
    const double vn = vc - uc * c.dt / c.dx * (vc - v(i, j - 1)) -
                      vc * c.dt / c.dy * (vc - v(i - 1, j)) -
                      c.dt_2rho_dy * (p(i + 1, j) - c.south(p, i, j)) +
                      c.nu * (c.dt_dx2 * (v(i, j + 1) - 2.0 * vc + v(i, j - 1)) +
                              c.dt_dy2 * (v(i + 1, j) - 2.0 * vc + v(i - 1, j)));
    put(u2, i, j, 0, un);
    put(v2, i, j, 1, vn);
  }
  hand::RowsAhead<3, 2> ahead(std::int64_t i) const {
    return {{&u(i + 1, 0), &v(i + 1, 0), &p(i + 1, 0)}, {&u2(i, 0), &v2(i, 0)}};
  }
};

class Hand final : public Variant {
  using Array2 = Array<double, 2>;

 public:
  explicit Hand(const Setup& setup)
      : c_(setup.size),
        nit_(setup.nit),
        grid_(make_grid(setup)),
        boxes_(grid_),
        k_(c_, grid_),
        u_{Array2(grid_, "u"), Array2(grid_, "u'")},
        v_{Array2(grid_, "v"), Array2(grid_, "v'")},
        p_{Array2(grid_, "p"), Array2(grid_, "p'")},
        b_(grid_, "b") {}
  void reset() override {
    for (auto& a : u_) initialise_u(a, c_.n);
    for (auto& a : v_) a.fill(0.0);
    for (auto& a : p_) a.fill(0.0);
    b_.fill(0.0);
    cu_ = cp_ = 0;
  }
  void step() override {
    Array2 &u = u_[cu_], &v = v_[cu_];
    overlapped("cfd:b+sweep", {&u, &v, &p_[cp_]},
               FirstSweep{k_, u.view(), v.view(), p_[cp_].view(), p_[1 - cp_].view(), b_.view()});
    p_[1 - cp_].mark_halo_stale();
    cp_ = 1 - cp_;
    for (int k = 1; k < nit_; ++k) {
      overlapped("cfd:sweep", {&p_[cp_]}, Sweep{k_, p_[cp_].view(), p_[1 - cp_].view(), b_.view()});
      p_[1 - cp_].mark_halo_stale();
      cp_ = 1 - cp_;
    }
    overlapped(
        "cfd:update", {&u, &v, &p_[cp_]},
        Update{k_, u.view(), v.view(), p_[cp_].view(), u_[1 - cu_].view(), v_[1 - cu_].view()});
    u_[1 - cu_].mark_halo_stale();
    v_[1 - cu_].mark_halo_stale();
    cu_ = 1 - cu_;
  }
  Fields result() const override {
    return {field_of("u", u_[cu_]), field_of("v", v_[cu_]), field_of("p", p_[cp_])};
  }
  Figures figures() const override {
    Figures f;
    f.kernels = nit_ + 1;
    f.exchanges = nit_ + 1;
    // b+sweep: u, v, p in, b, q out; sweeps: p, b in, q out; update: u, v, p in, u', v' out.
    f.bytes = 8.0 * double(grid_.global_size()) * (5.0 + 3.0 * (nit_ - 1) + 5.0);
    return f;
  }

 private:
  /// body over the owned box while the stale halos among `reads` come.
  template <class Body>
  void overlapped(const char* name, std::initializer_list<const Array2*> reads, const Body& body) {
    HaloExchange<2> ex(grid_);
    for (const Array2* a : reads)
      if (a->halo_stale()) ex.add(*a);
    hand::for_box_overlapped(hand_label(name), boxes_, ex, body);
  }

  Constants c_;
  int nit_;
  Grid<2> grid_;
  hand::OverlapBoxes boxes_;
  Coefficients k_;
  std::array<Array2, 2> u_, v_, p_;
  Array2 b_;
  int cu_ = 0, cp_ = 0;
};

KFUSE_BENCH_REGISTER(register_variant_class<Hand>("cfd", "kokkos"));

}  // namespace
}  // namespace kfuse::bench::cfd
