// Black-Scholes, written once as kfuse user code (as in
// examples/black_scholes.cpp) and run under the three policies.
#include <string>
#include <type_traits>
#include <utility>

#include "black_scholes.hpp"

namespace kfuse::bench::black_scholes {
namespace {

// The constants are literals (kfuse::literals): written into the kernel's code as the
// hand-written kernel's are, so that the formulas used twice (d's cumulative normal, V
// sqrt(t)) hold each constant once. As plain doubles, each occurrence is a value of its
// own that the kernel keeps in a register or on the stack (docs/benchmarks-log.md).
using namespace kfuse::literals;
constexpr auto r = 0.02_kf;
constexpr auto v = 0.3_kf;
static_assert(decltype(r)::value == R && decltype(v)::value == V);

// The formulas, as expression builders shared by the programs below.
template <class S, class X, class T>
auto d1_of(const S& s, const X& x, const T& t) {
  return (kfuse::log(s / x) + (r + 0.5_kf * v * v) * t) / (v * kfuse::sqrt(t));
}
template <class D1, class T>
auto d2_of(const D1& d1, const T& t) {
  return d1 - v * kfuse::sqrt(t);
}
template <class X, class T>
auto discount_of(const X& x, const T& t) {
  return x * kfuse::exp(-r * t);
}
// Cumulative normal distribution (Abramowitz-Stegun, 5 terms): k, then c, then cnd.
template <class D>
auto cnd_k(const D& d) {
  return 1.0_kf / (1.0_kf + 0.2316419_kf * kfuse::abs(d));
}
template <class D, class K>
auto cnd_c(const D& d, const K& k) {
  return 0.39894228_kf * kfuse::exp(-0.5_kf * d * d) * k *
         (0.31938153_kf + k * (-0.356563782_kf +
                               k * (1.781477937_kf + k * (-1.821255978_kf + 1.330274429_kf * k))));
}
template <class D, class C>
auto cnd_of(const D& d, const C& c) {
  return kfuse::where(d > 0.0_kf, 1.0_kf - c, c);
}

using Array1 = Array<double, 1>;
constexpr auto tmp = kfuse::temporary<double>;

/// The whole computation as one program. Fused and per-statement: d1, d2, k and c of each
/// cnd, the cnds and the discount are program temporaries (registers when fused). Unfused:
/// the program as a user writes it first, the sub-expressions reused as `auto` values (no
/// temporaries), as an array library runs it: one kernel for each distinct operation (61;
/// with plain doubles 60, as `-R * t` had the type of `(R + 0.5 V V) * t`, whose temporary
/// it could not share, and was computed in place).
template <class Policy>
auto make_price(const Array1& s, const Array1& x, const Array1& t, const Array1& call,
                const Array1& put) {
  if constexpr (std::is_same_v<Policy, kfuse::Unfused>) {
    return kfuse::fuse<Policy>(s, x, t, call, put, [](auto S, auto X, auto T, auto call, auto put) {
      auto d1 = d1_of(S, X, T);
      auto d2 = d2_of(d1, T);
      auto nd1 = cnd_of(d1, cnd_c(d1, cnd_k(d1)));
      auto nd2 = cnd_of(d2, cnd_c(d2, cnd_k(d2)));
      auto discount = discount_of(X, T);
      return kfuse::seq(kfuse::assign(call, S * nd1 - discount * nd2),
                        kfuse::assign(put, discount * (1.0_kf - nd2) - S * (1.0_kf - nd1)));
    });
  } else {
    return kfuse::fuse<Policy>(
        s, x, t, call, put, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp,
        [](auto S, auto X, auto T, auto call, auto put, auto d1, auto d2, auto k1, auto c1,
           auto nd1, auto k2, auto c2, auto nd2, auto discount) {
          using kfuse::assign;
          return kfuse::seq(
              assign(d1, d1_of(S, X, T)), assign(d2, d2_of(d1, T)), assign(k1, cnd_k(d1)),
              assign(c1, cnd_c(d1, k1)), assign(nd1, cnd_of(d1, c1)), assign(k2, cnd_k(d2)),
              assign(c2, cnd_c(d2, k2)), assign(nd2, cnd_of(d2, c2)),
              assign(discount, discount_of(X, T)), assign(call, S * nd1 - discount * nd2),
              assign(put, discount * (1.0_kf - nd2) - S * (1.0_kf - nd1)));
        });
  }
}

template <class Policy>
class Kfuse final : public Variant {
 public:
  explicit Kfuse(const Setup& setup)
      : grid_(make_grid(setup)),
        in_(grid_),
        call_(grid_, "call"),
        put_(grid_, "put"),
        price_(make_price<Policy>(in_.S, in_.X, in_.T, call_, put_)) {
    if constexpr (std::is_same_v<Policy, kfuse::Fused>)
      static_assert(Program::kernel_count == 1, "Black-Scholes fuses into one kernel");
    if constexpr (std::is_same_v<Policy, kfuse::Unfused>)
      static_assert(Program::kernel_count == 61, "one kernel per distinct operation");
  }
  void reset() override {}
  void step() override { price_(); }
  Fields result() const override { return {field_of("call", call_), field_of("put", put_)}; }
  Figures figures() const override {
    return program_figures(price_, static_cast<double>(grid_.global_size()));
  }

 private:
  using Program = decltype(make_price<Policy>(std::declval<const Array1&>(),
                                              std::declval<const Array1&>(),
                                              std::declval<const Array1&>(),
                                              std::declval<const Array1&>(),
                                              std::declval<const Array1&>()));
  Grid<1> grid_;
  Inputs in_;
  Array1 call_, put_;
  Program price_;
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "black_scholes",
    "European call and put prices of N options (~60 operations, 2 outputs)",
    1 << 21,
    3,
    1e-12,
    [](const Setup& s) { return std::to_string(s.size); },
    [](const Setup& s) { return 40.0 * static_cast<double>(s.size); },  // S, X, T in; call, put out
    "benchmarks/workloads/black_scholes/black_scholes.cpp",
    "benchmarks/workloads/black_scholes/black_scholes_kokkos.cpp",
    // S, X, T, call, put. Compute-bound (~60 flops, an exp, a log and a sqrt an
    // option), so its default size stays.
    [](const Setup& s) { return 40.0 * static_cast<double>(s.size); }}));
#endif
KFUSE_BENCH_REGISTER(register_policies<Kfuse>("black_scholes"));

}  // namespace
}  // namespace kfuse::bench::black_scholes
