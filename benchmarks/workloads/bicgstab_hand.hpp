// Functors both hand-written BiCGSTAB variants use (bicgstab_kokkos.cpp and
// bicgstab_ilu0_kokkos.cpp): the updates of p and s, the first product, and
// the start.
#pragma once

#include "solver_hand.hpp"

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
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, double* sums) const {
    const int row = row_of(k);
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

/// The start: r = b - A x, r_hat = r, with r.r and b.b.
struct BicgstabStart {
  Csr A;
  ConstView x, b;  // x: all columns
  View r, r_hat;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double* sums) const {
    const double ri = b(i) - A.row_times(int(i), x);
    r(i) = ri;
    r_hat(i) = ri;
    sums[0] += ri * ri;
    sums[1] += b(i) * b(i);
  }
};

}  // namespace kfuse::bench::solvers::hand
