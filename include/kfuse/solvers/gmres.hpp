// kfuse::gmres and kfuse::fgmres: restarted GMRES(m) as PETSc's KSPGMRES runs
// it (classical Gram-Schmidt without refinement, Givens rotations, the
// happy-breakdown rule), preconditioned on the right so that the residual
// norm it monitors and tests is ||b - A x||; FGMRES (KSPFGMRES) keeps each
// z_j = M v_j, so M may change from one apply to the next.
//
// One Arnoldi step j:
//   w = A z_j                            (z_j = v_j; D^-1 v_j for Jacobi, stored
//                                         with v_j; M v_j for any other M)
//   h = V_j^T w                          (Kokkos Kernels' gemv: every dot in one
//                                         kernel) + one MPI_Allreduce (VecMDot)
//   w -= V_j h, ww = w.w                 (one kernel) + one MPI_Allreduce
//   v_{j+1} = w / ||w||                  (one kernel, also writes z_{j+1} for Jacobi)
// Host: the Hessenberg column, its Givens rotations and the residual estimate
// |g_{j+1}|. At the end of a cycle x += M V y (FGMRES: x += Z y), and a
// restart starts from the true residual b - A x.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <KokkosBlas2_gemv.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/preconditioners.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/solvers/workspace.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse {
namespace detail {

/// Vectors kept as the columns of one matrix (the Krylov basis V, or FGMRES's
/// Z), so that products with all of them are one gemv.
template <class T>
class Columns {
 public:
  using matrix_type = Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace>;
  using column_type = typename Vector<T>::view_type;

  Columns(const std::string& label, index_t rows, int count)
      : all_(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), rows, count) {
    detail::advise_huge_pages(all_);
  }

  /// Column j as a vector view (unmanaged: valid while this object lives).
  column_type column(int j) const {
    return column_type(all_.data() + std::size_t(j) * all_.stride(1), all_.extent(0));
  }
  /// Columns [0, count).
  auto first(int count) const {
    return Kokkos::subview(all_, Kokkos::ALL, Kokkos::make_pair(0, count));
  }
  const matrix_type& all() const { return all_; }

 private:
  matrix_type all_;
};

/// v_j = scale * w, and what the operator reads: D^-1 v_j (`scaled`) or v_j
/// itself in `out` (`write_out`). A functor, not a lambda: nvcc refuses an
/// extended lambda in a function templated on a user's (local) type.
template <class T>
struct NormalizeColumn {
  using view = typename Vector<T>::view_type;
  view w, column, out, inverse_diagonal;
  T scale;
  bool write_out, scaled;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    const T vi = w(i) * scale;
    column(i) = vi;
    if (write_out) out(i) = scaled ? inverse_diagonal(i) * vi : vi;
  }
};

/// w -= V_j h (columns 0..j) and w.w: the second half of classical
/// Gram-Schmidt, one pass over w.
template <class T>
struct Orthogonalize {
  typename Columns<T>::matrix_type basis;
  Kokkos::View<T*, Kokkos::LayoutLeft, MemSpace> h;
  typename Vector<T>::view_type w;
  int j;
  using value_type = T;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i, T& sum) const {
    T wi = w(i);
    for (int k = 0; k <= j; ++k) wi -= basis(i, k) * h(k);
    w(i) = wi;
    sum += wi * wi;
  }
  KOKKOS_INLINE_FUNCTION void init(T& sum) const { sum = 0; }
  KOKKOS_INLINE_FUNCTION void join(T& into, const T& from) const { into += from; }
  KFUSE_VOLATILE_JOIN(T)
};

/// The Hessenberg matrix of a GMRES cycle, reduced to upper triangular form
/// by Givens rotations as it grows, and the rotated right-hand side g
/// (|g_{j+1}| is the residual norm of the cycle's best x). On the host.
class Hessenberg {
 public:
  explicit Hessenberg(int m) : m_(m), h_((m + 1) * m), c_(m), s_(m), g_(m + 1) {}

  void start(double beta) {
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
  }
  double& at(int i, int j) { return h_[std::size_t(j) * (m_ + 1) + i]; }
  double g(int i) const { return g_[i]; }

  /// Rotates column j (its entries 0..j+1 set) and returns the new residual
  /// estimate; false when the column is zero below the rotations (PETSc's
  /// KSP_DIVERGED_NULL). `happy`: H(j+1, j) is negligible, the Krylov space is
  /// invariant and the estimate is 0 (PETSc's happy breakdown).
  bool rotate(int j, bool happy, double& estimate) {
    for (int i = 0; i < j; ++i) {
      const double a = at(i, j), b = at(i + 1, j);
      at(i, j) = c_[i] * a + s_[i] * b;
      at(i + 1, j) = -s_[i] * a + c_[i] * b;
    }
    if (happy) {
      estimate = 0;
      return true;
    }
    const double a = at(j, j), b = at(j + 1, j);
    const double norm = std::sqrt(a * a + b * b);
    if (norm == 0) return false;
    c_[j] = a / norm;
    s_[j] = b / norm;
    g_[j + 1] = -s_[j] * g_[j];
    g_[j] = c_[j] * g_[j];
    at(j, j) = c_[j] * a + s_[j] * b;
    at(j + 1, j) = 0;
    estimate = std::abs(g_[j + 1]);
    return true;
  }

  /// y minimising ||g - H y|| over the first k columns (back substitution);
  /// empty when it is not finite.
  std::vector<double> solution(int k) {
    std::vector<double> y(k);
    for (int i = k - 1; i >= 0; --i) {
      double sum = g_[i];
      for (int l = i + 1; l < k; ++l) sum -= at(i, l) * y[l];
      y[i] = sum / at(i, i);
      if (!std::isfinite(y[i])) return {};
    }
    return y;
  }

 private:
  int m_;
  std::vector<double> h_, c_, s_, g_;
};

/// GMRES(m) (flexible: FGMRES(m)) on x; `m` is pc::None, a DiagonalScaling
/// or an operator.
template <bool Flexible, class T, class M>
SolveResult generalized_minimal_residual(const char* api, const CsrMatrix<T>& A, Vector<T>& x,
                                         const Vector<T>& b, const SolverOptions& options,
                                         const M& m) {
  constexpr bool no_pc = is_no_preconditioner<M>::value;
  constexpr bool diagonal = std::is_same_v<M, DiagonalScaling<Vector<T>>>;
  const RowMap& rows = A.range();
  const Comm& comm = rows.comm();
  const index_t n = rows.local_size();
  const int restart = options.restart;

  // The bases, allocated on every rank or none (a failure is agreed on).
  WorkVectors work(options.workspace);
  auto columns = [&](const char* name, int count) {
    return work.get<Columns<T>>(
        name,
        [&](const Columns<T>& held) {
          return held.all().extent(0) == std::size_t(n) &&
                 held.all().extent(1) == std::size_t(count);
        },
        [&] { return Columns<T>(name, n, count); });
  };
  std::optional<Columns<T>> basis_storage, preconditioned_storage;
  comm.agree_on([&] {
    basis_storage.emplace(columns("gmres.V", restart + 1));
    // FGMRES's z_j = M v_j (GMRES: an empty one, unused).
    if constexpr (Flexible)
      preconditioned_storage.emplace(columns("fgmres.Z", restart));
    else
      preconditioned_storage.emplace("gmres.Z", 0, 1);
  });
  const Columns<T>& basis = *basis_storage;
  const Columns<T>& preconditioned = *preconditioned_storage;
  const auto held = work.vectors<Vector<T>>(rows, {"gmres.w", "gmres.v", "gmres.z"});
  Vector<T> w = held[0];  // A z_j; the residual at a (re)start
  Vector<T> v = held[1];  // v_j for an operator M
  Vector<T> z = held[2];  // z_j = M v_j (or D^-1 v_j)
  Kokkos::View<T*, Kokkos::LayoutLeft, MemSpace> h_device("gmres.h", restart + 1);
  auto h_host = Kokkos::create_mirror_view(h_device);
  Hessenberg H(restart);
  typename Vector<T>::view_type dinv;
  if constexpr (diagonal) dinv = m.inverse.view();

  // v_j = w / norm, plus what the operator reads: D^-1 v_j (Jacobi) or v_j as
  // a Vector (an operator M); without M, A reads v_j in the basis itself.
  auto normalize = [&](int j, T scale) {
    Kokkos::parallel_for(
        "kfuse:gmres.normalize", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(0, n),
        NormalizeColumn<T>{w.view(), basis.column(j), diagonal ? z.view() : v.view(), dinv, scale,
                           !no_pc, diagonal});
    (diagonal ? z : v).mark_halo_stale();
  };

  // w = A z_j.
  auto apply_operator = [&](int j) {
    if constexpr (Flexible) {
      apply_preconditioner(api, m, v, z);
      copy_values("copy [fgmres.z]", preconditioned.column(j), z.view());
      spmv_unchecked(A, z.view(), w.view());
    } else if constexpr (no_pc) {
      spmv_unchecked(A, basis.column(j), w.view());
    } else if constexpr (diagonal) {
      spmv_unchecked(A, z.view(), w.view());
    } else {
      apply_preconditioner(api, m, v, z);
      spmv_unchecked(A, z.view(), w.view());
    }
    w.mark_halo_stale();
  };

  // h = V_j^T w (one gemv, one allreduce), then w -= V_j h and ||w|| (one
  // kernel, one allreduce): classical Gram-Schmidt, PETSc's default.
  auto orthogonalize = [&](int j) {
    const auto h = Kokkos::subview(h_device, Kokkos::make_pair(0, j + 1));
    KokkosBlas::gemv("T", T(1), basis.first(j + 1), w.view(), T(0), h);
    copy_values("copy [gmres.h]", h_host, h_device);
    comm.allreduce(h_host.data(), j + 1, ReduceOp::sum);
    copy_values("copy [gmres.h]", h_device, h_host);
    for (int i = 0; i <= j; ++i) H.at(i, j) = double(h_host(i));
    T ww = 0;
    detail::reduce_box<1>("kfuse:gmres.orthogonalize", {{0}, {n}},
                          Orthogonalize<T>{basis.all(), h_device, w.view(), j}, ww);
    w.mark_halo_stale();
    return std::sqrt(double(comm.allreduce(ww, ReduceOp::sum)));
  };

  // x += M V_k y (FGMRES: x += Z_k y); false when y is not finite (a zero
  // on the rotated diagonal: PETSc's KSP_DIVERGED_BREAKDOWN), x unchanged.
  auto update_solution = [&](int k) {
    if (k == 0) return true;
    const std::vector<double> y = H.solution(k);
    if (y.empty()) return false;
    for (int i = 0; i < k; ++i) h_host(i) = T(y[i]);
    copy_values("copy [gmres.h]", h_device, h_host);
    const auto yk = Kokkos::subview(h_device, Kokkos::make_pair(0, k));
    KokkosBlas::gemv("N", T(1), Flexible ? preconditioned.first(k) : basis.first(k), yk, T(0),
                     w.view());
    w.mark_halo_stale();
    if constexpr (Flexible || no_pc) {
      x = x + w;
    } else if constexpr (diagonal) {
      x = x + m.inverse * w;
    } else {
      apply_preconditioner(api, m, w, z);
      x = x + z;
    }
    return true;
  };

  w = b - A * x;
  double rnorm = double(eval(norm2(w)));
  Convergence convergence(api, comm, options, double(eval(norm2(b))));
  SolveResult result;
  if (convergence.done(0, rnorm, result)) return convergence.finish(result);
  int its = 0;
  for (;;) {  // one cycle
    H.start(rnorm);
    normalize(0, T(1) / T(rnorm));
    int steps = 0;  // columns of this cycle that enter x
    const char* failure = nullptr;
    bool stop = false;
    for (int j = 0; j < restart && !stop; ++j) {
      apply_operator(j);
      const double next = orthogonalize(j);
      H.at(j + 1, j) = next;
      // PETSc's happy breakdown: ||w|| below min(||w|| / |g_j|, 1e-30).
      const bool happy = next < std::min(next / std::abs(H.g(j)), 1e-30);
      double estimate = 0;
      if (!std::isfinite(next) || !H.rotate(j, happy, estimate)) {
        failure = std::isfinite(next) ? "breakdown" : "not finite";  // its not counted, as PETSc
        result.iterations = its;
        break;
      }
      ++its;
      steps = j + 1;
      const bool last = j + 1 == restart;
      stop = convergence.done(its, estimate, result, !last);
      if (stop && last) convergence.report(its, estimate);
      if (!stop && happy) failure = "breakdown";
      if (failure != nullptr) break;
      if (!stop && !last) normalize(j + 1, T(1) / T(next));
    }
    if (!update_solution(steps)) failure = "breakdown";
    if (failure != nullptr) {
      Convergence::stop(result, false, failure);
      return convergence.finish(result);
    }
    if (stop) return convergence.finish(result);
    w = b - A * x;  // restart from the true residual
    rnorm = double(eval(norm2(w)));
    if (convergence.done(its, rnorm, result)) return convergence.finish(result);
  }
}

template <bool Flexible, class T, class M>
SolveResult gmres_solve(const char* api, const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
                        const SolverOptions& options, const M& m) {
  static_assert(is_preconditioner_for<M, T>,
                "kfuse::gmres / kfuse::fgmres(A, x, b, options, M): M must be kfuse::pc::none, a "
                "kfuse::pc preconditioner, or callable as M(const kfuse::Vector<T>& r, "
                "kfuse::Vector<T>& z)");
  agree_on_matrix_solve<M>(api, A, x, b, options,
                           options.preconditioner == Preconditioner::none
                               ? std::string()
                               : error_message(api,
                                               ": SolverOptions::preconditioner is for cg and "
                                               "bicgstab; pass kfuse::pc::jacobi(A) as the last "
                                               "argument"));
  if constexpr (Flexible && is_no_preconditioner<M>::value) {
    // FGMRES applies an operator: the identity.
    auto identity = [](const Vector<T>& r, Vector<T>& z) { z = r; };
    return generalized_minimal_residual<true>(api, A, x, b, options,
                                              BuiltinOperator<decltype(identity)>{identity});
  } else if constexpr (Flexible && is_diagonal_preconditioner<M>::value) {
    return generalized_minimal_residual<true>(api, A, x, b, options,
                                              BuiltinOperator<pc::Jacobi<T>>{m});
  } else {
    return generalized_minimal_residual<Flexible>(api, A, x, b, options,
                                                  solver_preconditioner<Vector<T>>(m));
  }
}

}  // namespace detail

/// Solves A x = b by restarted GMRES(m), m = SolverOptions::restart (default
/// 30), as PETSc's KSPGMRES with right preconditioning: the residual norm it
/// monitors and tests is ||b - A x|| (the cycle's estimate; the true residual
/// at each restart). x holds the initial guess on entry. M: pc::none (the
/// default), pc::jacobi(A), pc::bjacobi_ilu0(A) or a callable
/// void(const Vector<T>& r, Vector<T>& z) that applies the same operator
/// every time (else use fgmres). Collective.
template <class T, class M = pc::None>
SolveResult gmres(const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
                  const SolverOptions& options = {}, const M& m = {}) {
  return detail::gmres_solve<false>("kfuse::gmres", A, x, b, options, m);
}

/// Flexible GMRES(m) (PETSc's KSPFGMRES): as gmres, but it keeps every
/// z_j = M v_j (m more vectors), so M may differ from one apply to the next
/// (an inner iterative solve, a preconditioner that adapts). Collective.
template <class T, class M = pc::None>
SolveResult fgmres(const CsrMatrix<T>& A, Vector<T>& x, const Vector<T>& b,
                   const SolverOptions& options = {}, const M& m = {}) {
  return detail::gmres_solve<true>("kfuse::fgmres", A, x, b, options, m);
}

}  // namespace kfuse
