// Preconditioners for kfuse's Krylov solvers (namespace kfuse::pc), PETSc's
// PC types in kfuse's terms. Every solver takes one as its optional last
// argument M (cg, bicgstab, gmres, fgmres):
//   pc::none             PCNONE
//   pc::jacobi(A)        PCJACOBI: z = D^-1 r. Pointwise, so solvers fuse it into
//                        their kernels (dinv * r is an expression; no kernel of its own)
//   pc::bjacobi_ilu0(A)  PCBJACOBI with PCILU (level 0) on each rank's diagonal
//                        block: Kokkos Kernels' SpILUK factors it, its triangular solves apply it
//   pc::chebyshev(A, k)  PCKSP running KSPCHEBYSHEV + PCJACOBI k times
//                        (kfuse/solvers/chebyshev.hpp)
//   a callable           void(const Vector<T>& r, Vector<T>& z), z = M r; it may run
//                        kfuse programs of its own (e.g. a few inner iterations)
// Built-in preconditioners are handles: copies share the factors.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/solvers/convergence.hpp"
#include "kfuse/solvers/options.hpp"
#include "kfuse/solvers/sparse_lu.hpp"
#include "kfuse/solvers/system.hpp"
#include "kfuse/sparse/csr_matrix.hpp"

namespace kfuse::pc {

/// No preconditioner (PCNONE).
struct None {};
inline constexpr None none{};

/// Jacobi (PCJACOBI): z = D^-1 r with D the diagonal of A.
template <class T>
class Jacobi {
 public:
  /// Collective: a kfuse::Error on every rank when a diagonal entry is missing or zero.
  explicit Jacobi(const CsrMatrix<T>& A)
      : inverse_diagonal_(detail::inverse_diagonal("kfuse::pc::jacobi", A)) {}
  /// D^-1 given directly (e.g. for a matrix-free operator).
  explicit Jacobi(Vector<T> inverse_diagonal) : inverse_diagonal_(std::move(inverse_diagonal)) {}

  const Vector<T>& inverse_diagonal() const { return inverse_diagonal_; }
  /// z = D^-1 r (solvers use inverse_diagonal() inside their own kernels instead).
  void operator()(const Vector<T>& r, Vector<T>& z) const { z = inverse_diagonal_ * r; }

 private:
  Vector<T> inverse_diagonal_;
};

template <class T>
Jacobi<T> jacobi(const CsrMatrix<T>& A) {
  return Jacobi<T>(A);
}

/// Block Jacobi with ILU(0) on each rank's diagonal block (PETSc's default
/// parallel preconditioner, -pc_type bjacobi -sub_pc_type ilu): the block is
/// A's rows and columns owned by the rank, factorised once by Kokkos Kernels'
/// SpILUK (level 0: L and U keep A's pattern), each apply two triangular
/// solves (SpTRSV's level schedule, or row loops on one host thread:
/// detail::SparseLu).
/// Natural ordering, as PETSc's ILU. No communication in the apply.
template <class T>
class BlockJacobiIlu0 {
 public:
  /// Collective: a kfuse::Error on every rank when A is not square with rows
  /// and columns split alike, or a block row has no diagonal entry.
  explicit BlockJacobiIlu0(const CsrMatrix<T>& A);

  /// z = U^-1 L^-1 r on this rank's rows. Collective: r and z are checked to
  /// lie on the matrix's rows (one allreduce); solvers call apply().
  void operator()(const Vector<T>& r, Vector<T>& z) const;
  /// The same without the check: no communication.
  void apply(const Vector<T>& r, Vector<T>& z) const;
  /// The same on this rank's entries held in plain views (what hand-written
  /// code calls; r may be z).
  void solve_local(const Kokkos::View<T*, detail::MemSpace>& r,
                   const Kokkos::View<T*, detail::MemSpace>& z) const {
    factors_->solve(r, z);
  }

 private:
  using size_type = typename CsrMatrix<T>::offset_type;
  using ordinal_type = typename CsrMatrix<T>::ordinal_type;
  RowMap rows_;
  std::shared_ptr<detail::SparseLu<T>> factors_;
};

template <class T>
BlockJacobiIlu0<T> bjacobi_ilu0(const CsrMatrix<T>& A) {
  return BlockJacobiIlu0<T>(A);
}

template <class T>
BlockJacobiIlu0<T>::BlockJacobiIlu0(const CsrMatrix<T>& A) : rows_(A.range()) {
  constexpr const char* api = "kfuse::pc::bjacobi_ilu0";
  detail::check_square_blocks(api, A);
  const index_t n = A.local_rows();

  // The diagonal block (owned columns only), on the host: a one-time setup.
  const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_ptr());
  const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.col_idx());
  const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values());
  detail::HostCsr<T> block;
  std::vector<std::pair<ordinal_type, T>> row;
  for (index_t i = 0; i < n; ++i) {
    row.clear();
    for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k)
      if (col_idx(k) < n) row.emplace_back(col_idx(k), values(k));
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      block.cols.push_back(c);
      block.values.push_back(v);
    }
    block.rows.push_back(static_cast<size_type>(block.cols.size()));
  }
  std::string error;
  if (const index_t missing = block.rows_without_diagonal(); missing > 0)
    error = detail::error_message(api, ": ILU(0) needs a nonzero diagonal entry in every row, but ",
                                  missing, " row(s) of '", A.label(),
                                  "' have none on this rank (PETSc: zero pivot)");
  A.range().comm().agree_or_throw(error);

  // Kokkos Kernels' factorisation, agreed on: a rank that fails (memory)
  // throws on every rank, not only on its own.
  A.range().comm().agree_on([&] {
    factors_ = std::make_shared<detail::SparseLu<T>>(A.label() + ".ilu", block, 0,
                                                     detail::default_triangular_solve());
  });
}

template <class T>
void BlockJacobiIlu0<T>::operator()(const Vector<T>& r, Vector<T>& z) const {
  std::string error;
  if (r.row_map() != rows_ || z.row_map() != rows_)
    error =
        detail::error_message("kfuse::pc::bjacobi_ilu0: r ('", r.label(), "') and z ('", z.label(),
                              "') must lie on the matrix's rows (", rows_.describe(), ")");
  rows_.comm().agree_or_throw(error);
  apply(r, z);
}

template <class T>
void BlockJacobiIlu0<T>::apply(const Vector<T>& r, Vector<T>& z) const {
  factors_->solve(r.view(), z.view());
  z.mark_halo_stale();  // written outside kfuse's statements: no ghost buffer holds it
}

}  // namespace kfuse::pc

namespace kfuse::detail {

/// A preconditioner as the solvers see it: none, a diagonal scaling (fused
/// into the solver's kernels), or an operator z = M r run between programs.
template <class M>
struct is_no_preconditioner : std::is_same<M, pc::None> {};

template <class M>
struct is_diagonal_preconditioner : std::false_type {};
template <class T>
struct is_diagonal_preconditioner<pc::Jacobi<T>> : std::true_type {};

template <class M>
struct is_builtin_preconditioner : std::false_type {};
template <class T>
struct is_builtin_preconditioner<pc::BlockJacobiIlu0<T>> : std::true_type {};

/// An operator of kfuse's own (the identity of FGMRES without M, Jacobi as
/// FGMRES applies it): run without the agreement a user's callable gets.
template <class F>
struct BuiltinOperator {
  F f;
  template <class T>
  void apply(const Vector<T>& r, Vector<T>& z) const {
    f(r, z);
  }
  template <class T>
  void operator()(const Vector<T>& r, Vector<T>& z) const {
    f(r, z);
  }
};
template <class F>
struct is_builtin_preconditioner<BuiltinOperator<F>> : std::true_type {};

/// An operator whose first kernel and last reduction a solver fuses into its
/// own kernels (pc::multigrid: `ends` and `apply_from_first_sweep`).
template <class M, class = void>
struct fuses_cycle_ends : std::false_type {};
template <class M>
struct fuses_cycle_ends<M, std::void_t<decltype(&M::apply_from_first_sweep)>> : std::true_type {};

/// Such a cycle's first kernel from z = 0, u = w D^-1 r: the statement the
/// cycle runs (pc::multigrid) and the one the solver fuses (kfuse::cg's kernel 2).
template <class R, class U, class D, class W>
auto assign_first_sweep(const R& r, const U& u, const D& dinv, const W& w) {
  return assign(u, w * (dinv * r));
}

template <class M, class T>
constexpr bool is_preconditioner_for =
    is_no_preconditioner<M>::value || is_diagonal_preconditioner<M>::value ||
    std::is_invocable_v<const M&, const Vector<T>&, Vector<T>&>;

/// A diagonal preconditioner as the solvers' kernels see it: the inverse diagonal,
/// an Array or Vector of the solve's space (fused, never a kernel of its own).
template <class V>
struct DiagonalScaling {
  const V& inverse;
};

/// The preconditioner as the solvers take it: Jacobi as a DiagonalScaling.
template <class V, class M>
decltype(auto) solver_preconditioner(const M& m) {
  if constexpr (is_diagonal_preconditioner<M>::value)
    return DiagonalScaling<V>{m.inverse_diagonal()};
  else
    return (m);
}

/// Where a preconditioner is passed as M and SolverOptions::preconditioner is
/// set as well, why ("" otherwise; agreed with the options, agree_on_solve).
template <class M>
std::string preconditioner_choice_error(const char* api, const SolverOptions& options) {
  if (is_no_preconditioner<M>::value || options.preconditioner == Preconditioner::none) return {};
  return error_message(api,
                       ": a preconditioner is passed as M and SolverOptions::preconditioner"
                       " is set as well; use one of them (kfuse::pc::jacobi(A) replaces "
                       "Preconditioner::jacobi)");
}

/// A solve of A x = b with M checked, collectively, in one allreduce
/// (agree_on_solve): the system, then M and SolverOptions::preconditioner not
/// both set, then `also` (a solver's own check, "" when it has none), then the
/// options.
template <class M, class T>
void agree_on_matrix_solve(const char* api, const CsrMatrix<T>& A, const Vector<T>& x,
                           const Vector<T>& b, const SolverOptions& options,
                           std::string also = {}) {
  std::string error = system_error(api, A, x, b);
  if (error.empty()) error = preconditioner_choice_error<M>(api, options);
  if (error.empty()) error = std::move(also);
  agree_on_solve(api, A.range().comm(), std::move(error), options);
}

/// Runs `solve(m)` with the preconditioner as the solvers take it: M, or
/// Jacobi when M is pc::none and SolverOptions::preconditioner asks for it.
template <class T, class M, class Solve>
SolveResult with_preconditioner(const CsrMatrix<T>& A, const SolverOptions& options, const M& m,
                                const Solve& solve) {
  if constexpr (is_no_preconditioner<M>::value) {
    if (options.preconditioner == Preconditioner::jacobi) {
      const auto jacobi = pc::jacobi(A);
      return solve(DiagonalScaling<Vector<T>>{jacobi.inverse_diagonal()});
    }
  }
  return solve(solver_preconditioner<Vector<T>>(m));
}

/// A built-in operator's programs (z = M r) bound to the (r, z) pairs of its
/// last two applies: a solver that applies it to two pairs in turn (BiCGSTAB's
/// p and s, GMRES's v and w) binds each pair once, not at every apply, and a
/// repeated solve in the same work vectors binds none. Binding is collective,
/// and which pair a set holds is decided alike on every rank: the ranks apply
/// the operator in the same order to vectors made alike (solvers agree that
/// every rank keeps its work vectors or none, agree_on_solve).
template <class Programs>
class PairBindings {
 public:
  /// Whether a set is bound to (r, z).
  bool holds(const void* r, const void* z) const { return index_of(r, z) >= 0; }
  /// Makes the set bound to (r, z) the active one; false where none is.
  bool activate(const void* r, const void* z) {
    const int k = index_of(r, z);
    if (k >= 0) active_ = k;
    return k >= 0;
  }
  /// The set to bind anew, the one used longer ago; it holds no pair until
  /// bound(), so that a binding that throws leaves it unused.
  Programs& replace() {
    Set& older = sets_[static_cast<std::size_t>(1 - active_)];
    older.r = older.z = nullptr;
    return older.programs;
  }
  /// replace()'s set, now bound to (r, z), made the active one.
  void bound(const void* r, const void* z) {
    active_ = 1 - active_;
    sets_[static_cast<std::size_t>(active_)].r = r;
    sets_[static_cast<std::size_t>(active_)].z = z;
  }
  Programs& active() { return sets_[static_cast<std::size_t>(active_)].programs; }

 private:
  int index_of(const void* r, const void* z) const {
    for (int k : {active_, 1 - active_})
      if (sets_[static_cast<std::size_t>(k)].r == r && sets_[static_cast<std::size_t>(k)].z == z)
        return k;
    return -1;
  }
  struct Set {
    const void* r = nullptr;  // Vector::storage_id of the bound r and z
    const void* z = nullptr;
    Programs programs;
  };
  std::array<Set, 2> sets_;
  int active_ = 0;
};

/// The checks of a built-in operator's z = M r called by hand (collective):
/// r and z on `rows` and not one vector, a kfuse::Error on every rank
/// otherwise; true, on every rank, when some rank's operator holds no
/// programs bound to (r, z) (`bound`: whether this rank's does; binding them
/// anew is collective).
template <class T>
bool check_apply_vectors(const char* api, const RowMap& rows, const Vector<T>& r,
                         const Vector<T>& z, bool bound) {
  std::string error;
  if (r.row_map() != rows || z.row_map() != rows)
    error = error_message(api, ": r ('", r.label(), "') and z ('", z.label(),
                          "') must lie on the matrix's rows (", rows.describe(), ")");
  else if (r.same_storage(z))
    error = error_message(api, ": r and z are the same vector; z = M r needs two");
  std::vector<std::int64_t> bound_here{bound ? 1 : 0};
  rows.comm().agree_or_throw(error, bound_here);  // now the smallest over the ranks
  return bound_here[0] == 0;
}

/// z = M r for an operator preconditioner. A user's callable that throws on
/// some ranks is agreed on (one small allreduce), so that every rank throws a
/// kfuse::Error instead of the others waiting in the next MPI call.
template <class M, class T>
void apply_preconditioner(const char* api, const M& m, const Vector<T>& r, Vector<T>& z) {
  if constexpr (is_builtin_preconditioner<M>::value) {
    m.apply(r, z);
  } else {
    std::string error;
    try {
      m(r, z);
      z.mark_halo_stale();  // it may have written z's view directly
    } catch (const std::exception& e) {
      error = error_message(api, ": the preconditioner threw: ", e.what());
    } catch (...) {
      error = error_message(api, ": the preconditioner threw");
    }
    r.row_map().comm().agree_or_throw(error);
  }
}

}  // namespace kfuse::detail
