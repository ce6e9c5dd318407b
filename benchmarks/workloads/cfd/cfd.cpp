// Cavity flow as kfuse user code. Three programs: build b and the first
// pressure sweep (they fuse: the sweep reads b pointwise), the other nit - 1
// sweeps, and the velocity update. The sweeps ping-pong between p and p', the
// steps between u, v and u', v': one program per binding, each bound (and its
// binding agreed) once, rather than one program rebound every run (an
// allreduce each time; docs/user-guide.md, "ping-pong").
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "cfd.hpp"

namespace kfuse::bench::cfd {
namespace {

using Array2 = Array<double, 2>;
using kfuse::shift;

// Which points lie next to a Neumann wall: an index comparison (the natural
// code). The Unfused policy cannot take it: its rewrite makes `index<1>() == c`
// a statement of its own that touches no array, whose temporary then has no
// rank (kfuse/program/arguments.hpp: "a temporary that must live in memory is never
// written by an array statement"). So under Unfused the same conditions come
// from boolean mask arrays filled once at setup, compared with `true` (where()
// rejects a bool array as its condition next to double operands, as a type
// mismatch; a comparison is accepted): still one kernel per comparison.
template <class Policy>
constexpr bool masks = std::is_same_v<Policy, kfuse::Unfused>;

template <class Policy, class M>
auto east_wall(const M& mask, std::int64_t n) {
  if constexpr (masks<Policy>) return mask == true; else return kfuse::index<1>() == n - 1;
}
template <class Policy, class M>
auto west_wall(const M& mask) {
  if constexpr (masks<Policy>) return mask == true; else return kfuse::index<1>() == std::int64_t{0};
}
template <class Policy, class M>
auto south_wall(const M& mask) {
  if constexpr (masks<Policy>) return mask == true; else return kfuse::index<0>() == std::int64_t{0};
}

/// Wall masks (only the Unfused variant reads them).
struct Walls {
  Array<bool, 2> east, west, south;
  Walls(const Grid<2>& g, std::int64_t n) : east(g, "east"), west(g, "west"), south(g, "south") {
    fill(n);
  }
  // Not in the constructor: nvcc forbids extended lambdas there.
  void fill(std::int64_t n) {
    east.fill_with(KOKKOS_LAMBDA(std::int64_t, std::int64_t j) { return j == n - 1; });
    west.fill_with(KOKKOS_LAMBDA(std::int64_t, std::int64_t j) { return j == 0; });
    south.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t) { return i == 0; });
  }
};

// Pressure neighbours with the Neumann walls (south, west, east) folded in.
template <class Policy, class P, class E>
auto p_east(const P& p, const E& east, std::int64_t n) {
  return kfuse::where(east_wall<Policy>(east, n), p, shift<0, 1>(p));
}
template <class Policy, class P, class W>
auto p_west(const P& p, const W& west) {
  return kfuse::where(west_wall<Policy>(west), p, shift<0, -1>(p));
}
template <class Policy, class P, class S>
auto p_south(const P& p, const S& south) {
  return kfuse::where(south_wall<Policy>(south), p, shift<-1, 0>(p));
}
template <class P>
auto p_north(const P& p) {
  return shift<1, 0>(p);  // p = 0 on the lid: the halo
}

template <class U>
auto dudx_of(const Constants& c, const U& u) {
  return (shift<0, 1>(u) - shift<0, -1>(u)) / (2 * c.dx);
}
template <class V>
auto dvdy_of(const Constants& c, const V& v) {
  return (shift<1, 0>(v) - shift<-1, 0>(v)) / (2 * c.dy);
}
template <class DU, class DV, class U, class V>
auto b_of(const Constants& c, const DU& dudx, const DV& dvdy, const U& u, const V& v) {
  return c.rho * (1 / c.dt * (dudx + dvdy) - kfuse::pow(dudx, 2) -
                  2 * ((shift<1, 0>(u) - shift<-1, 0>(u)) / (2 * c.dy) *
                       (shift<0, 1>(v) - shift<0, -1>(v)) / (2 * c.dx)) -
                  kfuse::pow(dvdy, 2));
}

template <class Policy, class P, class B, class E, class W, class S>
auto sweep(const Constants& c, const P& p, const B& b, const E& e, const W& w, const S& s) {
  return ((p_east<Policy>(p, e, c.n) + p_west<Policy>(p, w)) * c.dy2 +
          (p_north(p) + p_south<Policy>(p, s)) * c.dx2) /
             (2 * (c.dx2 + c.dy2)) -
         c.dx2 * c.dy2 / (2 * (c.dx2 + c.dy2)) * b;
}

template <class Policy, class U, class V, class P, class E, class W>
auto new_u(const Constants& c, const U& u, const V& v, const P& p, const E& e, const W& w) {
  return u - u * c.dt / c.dx * (u - shift<0, -1>(u)) - v * c.dt / c.dy * (u - shift<-1, 0>(u)) -
         c.dt / (2 * c.rho * c.dx) * (p_east<Policy>(p, e, c.n) - p_west<Policy>(p, w)) +
         c.nu * (c.dt / c.dx2 * (shift<0, 1>(u) - 2 * u + shift<0, -1>(u)) +
                 c.dt / c.dy2 * (shift<1, 0>(u) - 2 * u + shift<-1, 0>(u)));
}

template <class Policy, class U, class V, class P, class S>
auto new_v(const Constants& c, const U& u, const V& v, const P& p, const S& s) {
  return v - u * c.dt / c.dx * (v - shift<0, -1>(v)) - v * c.dt / c.dy * (v - shift<-1, 0>(v)) -
         c.dt / (2 * c.rho * c.dy) * (p_north(p) - p_south<Policy>(p, s)) +
         c.nu * (c.dt / c.dx2 * (shift<0, 1>(v) - 2 * v + shift<0, -1>(v)) +
                 c.dt / c.dy2 * (shift<1, 0>(v) - 2 * v + shift<-1, 0>(v)));
}

// b's derivatives dudx and dvdy are used twice each. Fused and per-statement they are
// program temporaries (registers when fused), as Black-Scholes names d1: an `auto`
// expression used twice is two copies of its tree, each with its own copy of the
// constants, and the compiler cannot tell that two divisions by members of equal value are
// one (fused b computed 7 divisions a point where the hand-written code, which names them,
// computes 5: docs/benchmarks.md). Unfused: the `auto` sub-expressions of an array
// program, which its rewrite computes once each.
template <class Policy>
auto make_first(const Constants& c, const Walls& m, const Array2& u, const Array2& v,
                const Array2& p, const Array2& q, const Array2& b) {
  if constexpr (std::is_same_v<Policy, kfuse::Unfused>) {
    return kfuse::fuse<Policy>(u, v, p, q, b, m.east, m.west, m.south,
                               [c](auto u, auto v, auto p, auto q, auto b, auto e, auto w, auto s) {
                                 return kfuse::seq(
                                     kfuse::assign(b, b_of(c, dudx_of(c, u), dvdy_of(c, v), u, v)),
                                     kfuse::assign(q, sweep<Policy>(c, p, b, e, w, s)));
                               });
  } else {
    constexpr auto tmp = kfuse::temporary<double>;
    return kfuse::fuse<Policy>(
        u, v, p, q, b, m.east, m.west, m.south, tmp, tmp,
        [c](auto u, auto v, auto p, auto q, auto b, auto e, auto w, auto s, auto dudx, auto dvdy) {
          using kfuse::assign;
          return kfuse::seq(assign(dudx, dudx_of(c, u)), assign(dvdy, dvdy_of(c, v)),
                            assign(b, b_of(c, dudx, dvdy, u, v)),
                            assign(q, sweep<Policy>(c, p, b, e, w, s)));
        });
  }
}
template <class Policy>
auto make_sweep(const Constants& c, const Walls& m, const Array2& p, const Array2& q,
                const Array2& b) {
  return kfuse::fuse<Policy>(p, q, b, m.east, m.west, m.south,
                             [c](auto p, auto q, auto b, auto e, auto w, auto s) {
                               return kfuse::assign(q, sweep<Policy>(c, p, b, e, w, s));
                             });
}
template <class Policy>
auto make_update(const Constants& c, const Walls& m, const Array2& u, const Array2& v,
                 const Array2& p, const Array2& u2, const Array2& v2) {
  return kfuse::fuse<Policy>(
      u, v, p, u2, v2, m.east, m.west, m.south,
      [c](auto u, auto v, auto p, auto u2, auto v2, auto e, auto w, auto s) {
        return kfuse::seq(kfuse::assign(u2, new_u<Policy>(c, u, v, p, e, w)),
                          kfuse::assign(v2, new_v<Policy>(c, u, v, p, s)));
      });
}

template <class Policy>
class Kfuse final : public Variant {
 public:
  explicit Kfuse(const Setup& setup)
      : c_(setup.size),
        nit_(setup.nit),
        grid_(make_grid(setup)),
        u_{Array2(grid_, "u"), Array2(grid_, "u'")},
        v_{Array2(grid_, "v"), Array2(grid_, "v'")},
        p_{Array2(grid_, "p"), Array2(grid_, "p'")},
        b_(grid_, "b"),
        walls_(grid_, c_.n),
        first_{make_first<Policy>(c_, walls_, u_[0], v_[0], p_[0], p_[1], b_),
               make_first<Policy>(c_, walls_, u_[0], v_[0], p_[1], p_[0], b_),
               make_first<Policy>(c_, walls_, u_[1], v_[1], p_[0], p_[1], b_),
               make_first<Policy>(c_, walls_, u_[1], v_[1], p_[1], p_[0], b_)},
        sweep_{make_sweep<Policy>(c_, walls_, p_[0], p_[1], b_),
               make_sweep<Policy>(c_, walls_, p_[1], p_[0], b_)},
        update_{make_update<Policy>(c_, walls_, u_[0], v_[0], p_[0], u_[1], v_[1]),
                make_update<Policy>(c_, walls_, u_[0], v_[0], p_[1], u_[1], v_[1]),
                make_update<Policy>(c_, walls_, u_[1], v_[1], p_[0], u_[0], v_[0]),
                make_update<Policy>(c_, walls_, u_[1], v_[1], p_[1], u_[0], v_[0])} {
    if constexpr (std::is_same_v<Policy, kfuse::Fused>)
      static_assert(First::kernel_count == 1, "cfd: b and the first sweep fuse into one kernel");
  }
  void reset() override {
    for (auto& a : u_) initialise_u(a, c_.n);
    for (auto& a : v_) a.fill(0.0);
    for (auto& a : p_) a.fill(0.0);
    b_.fill(0.0);
    cu_ = cp_ = 0;
  }
  void step() override {
    first_[2 * cu_ + cp_]();  // p_[cp_] -> p_[1 - cp_]
    cp_ = 1 - cp_;
    for (int k = 1; k < nit_; ++k) {
      sweep_[cp_]();  // p_[cp_] -> p_[1 - cp_]
      cp_ = 1 - cp_;
    }
    update_[2 * cu_ + cp_]();  // u_[cu_], v_[cu_] -> u_[1 - cu_], v_[1 - cu_]
    cu_ = 1 - cu_;
  }
  Fields result() const override {
    return {field_of("u", u_[cu_]), field_of("v", v_[cu_]), field_of("p", p_[cp_])};
  }
  Figures figures() const override {
    const double points = static_cast<double>(grid_.global_size());
    return program_figures(first_[0], points) + program_figures(sweep_[0], points) * (nit_ - 1) +
           program_figures(update_[0], points);
  }

 private:
  using First = decltype(make_first<Policy>(std::declval<const Constants&>(),
                                            std::declval<const Walls&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>()));
  using Sweep = decltype(make_sweep<Policy>(std::declval<const Constants&>(),
                                            std::declval<const Walls&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>(),
                                            std::declval<const Array2&>()));
  using Update = decltype(make_update<Policy>(std::declval<const Constants&>(),
                                              std::declval<const Walls&>(),
                                              std::declval<const Array2&>(),
                                              std::declval<const Array2&>(),
                                              std::declval<const Array2&>(),
                                              std::declval<const Array2&>(),
                                              std::declval<const Array2&>()));
  Constants c_;
  int nit_;
  Grid<2> grid_;
  std::array<Array2, 2> u_, v_, p_;
  Array2 b_;
  Walls walls_;
  std::array<First, 4> first_;    // [2 * cu + cp]: reading u_[cu], v_[cu] and p_[cp]
  std::array<Sweep, 2> sweep_;    // reading p_[0], reading p_[1]
  std::array<Update, 4> update_;  // [2 * cu + cp]: reading u_[cu], v_[cu] and p_[cp]
  int cu_ = 0, cp_ = 0;
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "cfd",
    "cavity flow (CFD Python step 11): b, nit pressure-Poisson sweeps, u/v update per step",
    512,
    2,
    1e-12,
    [](const Setup& s) {
      return std::to_string(s.size) + "x" + std::to_string(s.size) + " nit=" + std::to_string(s.nit);
    },
    min_bytes,
    "benchmarks/workloads/cfd/cfd.cpp",
    "benchmarks/workloads/cfd/cfd_kokkos.cpp",
    [](const Setup& s) { return 56.0 * double(s.size) * double(s.size); },  // u, v, p, b, u', v', p'
    // Not grown beyond the cache: the unfused variant materialises about 130 arrays
    // (1 KB a point), 12 GB a rank at the 4736^2 that 4x a 260 MiB cache needs.
    false}));
#endif
KFUSE_BENCH_REGISTER(register_policies<Kfuse>("cfd"));

}  // namespace
}  // namespace kfuse::bench::cfd
