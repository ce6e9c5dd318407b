// Black-Scholes (docs/benchmarks.md, Workloads): the problem shared by the kfuse variants
// (black_scholes.cpp) and the hand-written one (black_scholes_kokkos.cpp).
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

#include "../../framework/bench.hpp"
#include "../common/inputs.hpp"

namespace kfuse::bench::black_scholes {

inline constexpr double R = 0.02;  // riskless rate
inline constexpr double V = 0.3;   // volatility

/// lo + width * uniform(i, stream). (Functors, not lambdas, in headers: docs/backends.md,
/// "Lambdas in headers".)
struct UniformInput {
  double lo, width;
  std::uint64_t stream;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i) const {
    return lo + width * uniform(i, stream);
  }
};

/// Inputs S in [5, 30], X in [1, 100], T in [0.25, 10], from a hash of the option's index.
struct Inputs {
  Array<double, 1> S, X, T;
  explicit Inputs(const Grid<1>& grid) : S(grid, "S"), X(grid, "X"), T(grid, "T") {
    S.fill_with(UniformInput{5.0, 25.0, 1});
    X.fill_with(UniformInput{1.0, 99.0, 2});
    T.fill_with(UniformInput{0.25, 9.75, 3});
  }
};

inline Grid<1> make_grid(const Setup& s) { return Grid<1>(s.comm, {s.size}); }

}  // namespace kfuse::bench::black_scholes
