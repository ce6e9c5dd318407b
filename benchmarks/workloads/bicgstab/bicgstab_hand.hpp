// Functors both hand-written BiCGSTAB variants use (bicgstab_kokkos.cpp and
// bicgstab_ilu0_kokkos.cpp): the updates of p and s and the first product
// (the start is solver_hand.hpp's ResidualStart).
#pragma once

#include "../solvers/solver_hand.hpp"

namespace kfuse::bench::solvers::hand {

/// p = r + beta (p - omega v).
struct UpdateP {
  View p;
  ConstView r, v;
  double beta, omega;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    p(i) = r(i) + beta * (p(i) - omega * v(i));
  }
};

/// v = A y, v.r_hat over the rows row_of(k) (y: p, or p^ = M p).
template <class RowOf>
struct SpmvDot {
  Csr A;
  ConstView y, r_hat;  // y: all columns
  View v;
  RowOf row_of;
  template <class Lane>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, Lane sums) const {
    const std::int64_t row = row_of(k);
    const double product = A.row_times(row, y);
    v(row) = product;
    sums[0] += product * r_hat(row);
  }
};

/// s = r - alpha v.
struct UpdateS {
  View s;
  ConstView r, v;
  double alpha;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { s(i) = r(i) - alpha * v(i); }
};

}  // namespace kfuse::bench::solvers::hand
