// The single-reduction CG iteration as one sweep over memory (kfuse::cg_matfree with
// SolverOptions::cg_single_reduction, where cg_sweeps_v and the backend admit it).
//
// Chronopoulos and Gear's form needs, per iteration, p = r + beta p, x += alpha p,
// r -= alpha A p, and the sums r.r and r.(A r) of the new r. The two-kernel form
// (cg.hpp) stores s = A p and w = A r because a kernel cannot read a neighbour of a point
// it writes. A stencil on a grid can, a few rows later: one sweep along the first
// dimension updates p and x on slab t, r on slab t - R (A p there reads p's slabs t - 2R
// to t, all new) and sums r.(A r) on slab t - 2R (r's slabs t - 3R to t - R, all new),
// R being the stencil's reach. Each array is read and written once an iteration, in
// place: 48 bytes a point where the standard CG's three kernels stream 72 and the
// two-kernel form 88. The slabs a sweep holds in flight (2R + 1 of p, 3R + 1 of r) stay
// in cache.
//
// What one process cannot sweep alone: p's new values on the halo come from r's and p's
// halos (current at the sweep's start: the linear update of every owned point applies
// there too, physical boundaries included), and r.(A r) within R of the owned box's faces
// needs r's new halo. After the sweep one exchange refreshes r's and p's halos; the
// faces' cells then add their r.(A r) (the kernel's ":boundary" part, as an overlapped
// kernel's), and one allreduce sums r.r and r.(A r).
//
// The sweep runs its slabs in order, so it needs a host backend that runs a kernel on one
// thread (Kokkos::Serial: one process a core, MPI everywhere); elsewhere cg_matfree runs
// the two-kernel form.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/core/config.hpp"
#include "kfuse/exec/exchange.hpp"
#include "kfuse/exec/group.hpp"
#include "kfuse/exec/kernel.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/solvers/system.hpp"

namespace kfuse::detail {

/// Whether the execution space runs a kernel on one thread, in order (Kokkos::Serial).
inline constexpr bool runs_in_order =
#if defined(KOKKOS_ENABLE_SERIAL)
    std::is_same_v<ExecSpace, Kokkos::Serial>;
#else
    false;
#endif

template <class V>
struct is_sweepable_array : std::false_type {};
template <class T, int N>
struct is_sweepable_array<Array<T, N>> : std::bool_constant<N == 2 || N == 3> {};

/// Whether CG's single-reduction iteration on V with operator Apply runs as one sweep:
/// Arrays of rank 2 or 3, an operator that reads nothing but its argument (a stencil),
/// on a backend that runs a kernel in order.
template <class Apply, class V>
inline constexpr bool cg_sweeps_v = (runs_in_order && is_sweepable_array<V>::value &&
                                     reads_only_its_argument_v<Apply, V>);

/// The largest offset at which an expression reads an array (0: pointwise).
template <class E>
int stencil_reach(const E& e) {
  int reach = 0;
  for_each_leaf(e, [&](const auto& leaf) {
    using L = std::decay_t<decltype(leaf)>;
    if constexpr (is_shifted<L>::value) reach = std::max(reach, L::reach);
  });
  return reach;
}

/// f(point, lane) at every point of a slab's box (slab `a` of the first dimension, lo..hi
/// in the others), the last dimension a loop whose point k adds into lane k % host_lanes
/// (exec/kernel.hpp says why); returns the lanes' sum, joined pairwise.
template <class T, int N, class F>
KOKKOS_FORCEINLINE_FUNCTION T sum_over_slab(index_t a, const index_t (&lo)[N],
                                            const index_t (&hi)[N], const F& f) {
  constexpr int L = host_lanes;
  T lanes[L];
  for (int l = 0; l < L; ++l) lanes[l] = T(0);
  auto row = [&](auto point) {
    const index_t begin = lo[N - 1], end = hi[N - 1];
    index_t k = begin;
    for (; k + L <= end; k += L) {
      KFUSE_INDEPENDENT_LANES
      for (int l = 0; l < L; ++l) {
        point.i[N - 1] = k + l;
        f(point, lanes[l]);
      }
    }
    for (int l = 0; k + l < end; ++l) {
      point.i[N - 1] = k + l;
      f(point, lanes[l]);
    }
  };
  if constexpr (N == 2) {
    row(Point<2>{{a, 0}});
  } else {
    for (index_t j = lo[1]; j < hi[1]; ++j) row(Point<3>{{a, j, 0}});
  }
  for (int step = 1; step < L; step *= 2)
    for (int l = 0; l + step < L; l += 2 * step) lanes[l] += lanes[l + step];
  return lanes[0];
}

/// f(point) at every point of slab `a`'s box (lo..hi in the dimensions after the first).
template <int N, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_slab(index_t a, const index_t (&lo)[N], const index_t (&hi)[N],
                                          const F& f) {
  if constexpr (N == 2) {
    KFUSE_INDEPENDENT_ITERATIONS
    for (index_t k = lo[1]; k < hi[1]; ++k) f(Point<2>{{a, k}});
  } else {
    for (index_t j = lo[1]; j < hi[1]; ++j) {
      KFUSE_INDEPENDENT_ITERATIONS
      for (index_t k = lo[2]; k < hi[2]; ++k) f(Point<3>{{a, j, k}});
    }
  }
}

/// f(point) at the halo points of slab `a` within `all` (owned: lo..hi; all: the owned
/// box and the halo within reach, in the dimensions after the first): a few points a slab.
template <int N, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_slab_halo(index_t a, const index_t (&lo)[N],
                                               const index_t (&hi)[N], const index_t (&all_lo)[N],
                                               const index_t (&all_hi)[N], const F& f) {
  auto columns = [&](auto point, index_t begin, index_t end) {
    for (index_t k = begin; k < end; ++k) {
      point.i[N - 1] = k;
      f(point);
    }
  };
  auto row = [&](auto point) {
    columns(point, all_lo[N - 1], lo[N - 1]);
    columns(point, hi[N - 1], all_hi[N - 1]);
  };
  if constexpr (N == 2) {
    row(Point<2>{{a, 0}});
  } else {
    for (index_t j = all_lo[1]; j < all_hi[1]; ++j)
      if (j < lo[1] || j >= hi[1])
        columns(Point<3>{{a, j, 0}}, all_lo[2], all_hi[2]);
      else
        row(Point<3>{{a, j, 0}});
  }
}

/// An array's element at a point (stored to, or read).
template <class View, int N>
auto& cell(const View& v, const Point<N>& q) {
  if constexpr (N == 2)
    return v(q.i[0], q.i[1]);
  else
    return v(q.i[0], q.i[1], q.i[2]);
}

/// The sweep's kernel (one call: the slabs in order). `Ap` and `Ar` are the operator's
/// lowered expressions on p and r; `owned` the owned box, `interior` the owned box
/// `reach` cells in from every face.
template <class T, int N, class ApplyP, class ApplyR>
struct CgSweep {
  view_t<T, N> x, r, p;
  ApplyP Ap;
  ApplyR Ar;
  Box<N> owned, interior;
  int reach;
  T alpha, beta;
  T* sums;  // r.r, and r.(A r) over the interior, on the host (the sweep runs there)

  void operator()(int) const {
    const T a = alpha, b = beta;  // locals: no store through a view reaches them
    const index_t R = reach;
    Box<N> all = owned;  // p: the halo within reach too
    for (int d = 0; d < N; ++d) all.lo[d] -= R, all.hi[d] += R;
    NoRegisters none;
    T rr = 0, rw = 0;
    // r trails p by R slabs, r.(A r) by 2R. x is updated with p, so that every stream
    // from memory is read in one loop: the loops behind it read what is in cache.
    auto update_p = [&](const Point<N>& q) {
      T& pq = cell(p, q);
      pq = cell(r, q) + b * pq;
    };
    for (index_t t = all.lo[0]; t < all.hi[0] + 2 * R; ++t) {
      if (t >= owned.lo[0] && t < owned.hi[0]) {  // slab t: p = r + beta p, x += alpha p
        for_slab<N>(t, owned.lo, owned.hi, [&](const Point<N>& q) {
          T& pq = cell(p, q);
          const T pn = cell(r, q) + b * pq;
          pq = pn;
          cell(x, q) += a * pn;
        });
        for_slab_halo<N>(t, owned.lo, owned.hi, all.lo, all.hi, update_p);
      } else if (t < all.hi[0]) {  // a halo slab: p alone
        for_slab<N>(t, all.lo, all.hi, update_p);
      }
      const index_t r_slab = t - R;  // r -= alpha A p, r.r
      if (r_slab >= owned.lo[0] && r_slab < owned.hi[0])
        rr += sum_over_slab<T, N>(r_slab, owned.lo, owned.hi, [&](const Point<N>& q, T& lane) {
          const T rq = cell(r, q) - a * Ap.eval(q, none);
          cell(r, q) = rq;
          lane += rq * rq;
        });
      const index_t rw_slab = t - 2 * R;  // r.(A r) over the interior
      if (rw_slab >= interior.lo[0] && rw_slab < interior.hi[0])
        rw += sum_over_slab<T, N>(
            rw_slab, interior.lo, interior.hi,
            [&](const Point<N>& q, T& lane) { lane += cell(r, q) * Ar.eval(q, none); });
    }
    sums[0] = rr;
    sums[1] = rw;
  }
};

/// r.(A r) over `faces`, the owned box less the sweep's interior (boundary_slabs), once
/// r's halo is current: the sweep's ":boundary" part.
template <class T, int N, class ApplyR>
struct CgSweepFaces {
  view_t<T, N> r;
  ApplyR Ar;
  std::vector<Box<N>> faces;
  T* sum;

  void operator()(int) const {
    NoRegisters none;
    T total = 0;
    for (const Box<N>& box : faces)
      for (index_t a = box.lo[0]; a < box.hi[0]; ++a)
        total += sum_over_slab<T, N>(a, box.lo, box.hi, [&](const Point<N>& q, T& lane) {
          lane += cell(r, q) * Ar.eval(q, none);
        });
    *sum = total;
  }
};

/// One sweep of the single-reduction iteration on x, r, p with the step `alpha` and
/// `beta` (see the file's comment): returns r.r and r.(A r) of the new r, summed over
/// the ranks (one exchange of r's and p's halos, one allreduce). The operator's arrays
/// and reach are not checked here: the solve's start (cg_start's r = b - A x, an eager
/// statement) checked them, collectively, for the same operator on the same grid.
template <class Apply, class T, int N>
void cg_sweep(const Apply& apply, const Array<T, N>& x, const Array<T, N>& r, const Array<T, N>& p,
              T alpha, T beta, T (&sums)[2]) {
  constexpr int D = domain::grid(N);
  const Grid<N>& grid = x.grid();
  const auto Ap_expr = as_node(apply(p));
  const int reach = stencil_reach(Ap_expr);
  {  // the halos p's update reads, current (stale only before the first sweep)
    HaloRefresh<N> exchange(grid);
    exchange.add(r);
    exchange.add(p);
    exchange.run();
  }
  const EagerContext<D> ctx{&grid};
  const auto Ap = lower(Ap_expr, ctx);
  const auto Ar = lower(as_node(apply(r)), ctx);
  using ApplyR = std::decay_t<decltype(Ar)>;
  const Box<N> owned = owned_box(grid);
  FaceMargins<N> margin;
  for (auto& sides : margin) sides = {reach, reach};
  T interior[2] = {0, 0};
  Kokkos::parallel_for(
      "kfuse:cg[sweep: p = r + beta p, x += alpha p, r -= alpha A p, r.r, r.(A r)]",
      Kokkos::RangePolicy<ExecSpace>(0, 1),
      CgSweep<T, N, std::decay_t<decltype(Ap)>, ApplyR>{x.view(), r.view(), p.view(), Ap, Ar, owned,
                                                        shrink<N>(owned, margin), reach, alpha,
                                                        beta, interior});
  x.mark_halo_stale();
  r.mark_halo_stale();
  p.mark_halo_stale();
  {
    HaloRefresh<N> exchange(grid);
    exchange.add(r);
    exchange.add(p);
    exchange.run();
  }
  T faces = 0;
  Kokkos::parallel_for(
      "kfuse:cg[sweep: p = r + beta p, x += alpha p, r -= alpha A p, r.r, r.(A r)]:boundary",
      Kokkos::RangePolicy<ExecSpace>(0, 1),
      CgSweepFaces<T, N, ApplyR>{r.view(), Ar, boundary_slabs<N>(owned, margin), &faces});
  ExecSpace().fence();
  sums[0] = interior[0];
  sums[1] = interior[1] + faces;
  grid.comm().allreduce(sums, 2, ReduceOp::sum);
}

}  // namespace kfuse::detail
