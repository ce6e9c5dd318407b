// 2-D 5-point Jacobi sweep with the residual sum((v - u)^2): the problem
// shared by stencil_jacobi.cpp (kfuse) and stencil_jacobi_kokkos.cpp (by hand).
// Dirichlet boundary in the halo: 1 along the top (i = n), 0 elsewhere.
#pragma once

#include <cstdint>

#include <kfuse/kfuse.hpp>

#include "../../framework/bench.hpp"
#include "../common/inputs.hpp"

namespace kfuse::bench::stencil_jacobi {

inline Grid<2> make_grid(const Setup& s) { return Grid<2>(s.comm, {s.size, s.size}); }

/// Initial state of both ping-pong arrays (owned cells and boundary halo). (Functors, not
/// lambdas, in headers: docs/backends.md, "Lambdas in headers".)
struct InitialState {
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t j) const {
    if (i >= n) return 1.0;
    if (i < 0 || j < 0 || j >= n) return 0.0;
    return 0.5 * uniform(i * n + j, 11);
  }
};
inline void initialise(Array<double, 2>& a, std::int64_t n) { a.fill_with(InitialState{n}); }

inline double min_bytes(const Setup& s) { return 16.0 * double(s.size) * double(s.size); }

}  // namespace kfuse::bench::stencil_jacobi
