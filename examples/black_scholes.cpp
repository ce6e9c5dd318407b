// Black-Scholes call and put prices for N options: ~60 operations, two
// outputs and shared subexpressions (d1, d2, cnd) held in program
// temporaries, all in one kernel.
//   mpirun -np 2 ./black_scholes [N]
#include <cstdio>
#include <cstdlib>

#include <kfuse/kfuse.hpp>

// Cumulative normal distribution (Abramowitz-Stegun, 5 terms).
template <class D>
auto cnd(const D& d) {
  auto k = 1.0 / (1.0 + 0.2316419 * kfuse::abs(d));
  auto c = 0.39894228 * kfuse::exp(-0.5 * d * d) * k *
           (0.31938153 +
            k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + 1.330274429 * k))));
  return kfuse::where(d > 0.0, 1.0 - c, c);
}

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const double R = 0.02, V = 0.3;

  kfuse::Grid<1> grid(env.comm(), {n});
  kfuse::Array<double, 1> S(grid, "S"), X(grid, "X"), T(grid, "T"), call(grid, "call"),
      put(grid, "put");
  // Deterministic pseudo-random inputs: S in [5,30], X in [1,100], T in [0.25,10].
  S.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 5.0 + 25.0 * double((i * 7919) % 1000) / 999.0; });
  X.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 1.0 + 99.0 * double((i * 104729) % 1000) / 999.0; });
  T.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 0.25 + 9.75 * double((i * 1299709) % 1000) / 999.0; });

  auto price = kfuse::fuse(
      S, X, T, call, put, kfuse::temporary<double>, kfuse::temporary<double>,
      kfuse::temporary<double>, kfuse::temporary<double>, kfuse::temporary<double>,
      [=](auto S, auto X, auto T, auto call, auto put, auto d1, auto d2, auto nd1, auto nd2,
          auto discount) {
        return kfuse::seq(
            kfuse::assign(d1, (kfuse::log(S / X) + (R + 0.5 * V * V) * T) / (V * kfuse::sqrt(T))),
            kfuse::assign(d2, d1 - V * kfuse::sqrt(T)),
            kfuse::assign(nd1, cnd(d1)),
            kfuse::assign(nd2, cnd(d2)),
            kfuse::assign(discount, X * kfuse::exp(-R * T)),
            kfuse::assign(call, S * nd1 - discount * nd2),
            kfuse::assign(put, discount * (1.0 - nd2) - S * (1.0 - nd1)));
      });
  static_assert(decltype(price)::kernel_count == 1, "Black-Scholes is one kernel");
  price();

  const double calls = kfuse::eval(kfuse::sum(call)), puts = kfuse::eval(kfuse::sum(put));
  if (env.comm().rank() == 0)
    std::printf("%lld options: mean call %.6f, mean put %.6f\n%s", static_cast<long long>(n),
                calls / double(n), puts / double(n), price.explain().c_str());
  return 0;
}
