// Black-Scholes (docs/benchmarks.md, Workloads): the problem shared by the kfuse variants
// (black_scholes.cpp) and the hand-written one (black_scholes_kokkos.cpp).
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

#include "../framework/bench.hpp"
#include "inputs.hpp"

namespace kfuse::bench::black_scholes {

inline constexpr double R = 0.02;  // riskless rate
inline constexpr double V = 0.3;   // volatility

/// Inputs S in [5, 30], X in [1, 100], T in [0.25, 10], from a hash of the option's index.
struct Inputs {
  Array<double, 1> S, X, T;
  explicit Inputs(const Grid<1>& grid) : S(grid, "S"), X(grid, "X"), T(grid, "T") { fill(); }
  // Not in the constructor: nvcc forbids extended lambdas there.
  void fill() {
    S.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 5.0 + 25.0 * uniform(i, 1); });
    X.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 1.0 + 99.0 * uniform(i, 2); });
    T.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 0.25 + 9.75 * uniform(i, 3); });
  }
};

inline Grid<1> make_grid(const Setup& s) { return Grid<1>(s.comm, {s.size}); }

}  // namespace kfuse::bench::black_scholes
