// Preconditioners for kfuse's Krylov solvers (namespace kfuse::pc), PETSc's
// PC types in kfuse's terms. Every solver takes one as its optional last
// argument M (cg, bicgstab, gmres, fgmres):
//   pc::none             PCNONE
//   pc::jacobi(A)        PCJACOBI: z = D^-1 r. Pointwise, so solvers fuse it into
//                        their kernels (dinv * r is an expression; no kernel of its own)
//   pc::bjacobi_ilu0(A)  PCBJACOBI with PCILU (level 0) on each rank's diagonal
//                        block: Kokkos Kernels' SpILUK factors it, SpTRSV applies it
//   pc::chebyshev(A, k)  PCKSP running KSPCHEBYSHEV + PCJACOBI k times
//                        (kfuse/solvers/chebyshev.hpp)
//   a callable           void(const Vector<T>& r, Vector<T>& z), z = M r; it may run
//                        kfuse programs of its own (e.g. a few inner iterations)
// Built-in preconditioners are handles: copies share the factors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spiluk.hpp>
#include <KokkosSparse_sptrsv.hpp>
#include <Kokkos_Core.hpp>

#include "kfuse/array/vector.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/exec/eager.hpp"
#include "kfuse/solvers/options.hpp"
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
/// SpILUK (level 0: L and U keep A's pattern), each apply two SpTRSV solves.
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

 private:
  using size_type = typename CsrMatrix<T>::offset_type;
  using ordinal_type = typename CsrMatrix<T>::ordinal_type;
  using Handle = KokkosKernels::Experimental::KokkosKernelsHandle<
      size_type, ordinal_type, T, detail::ExecSpace, detail::MemSpace, detail::MemSpace>;
  using RowMapView = Kokkos::View<size_type*, detail::MemSpace>;
  using EntriesView = Kokkos::View<ordinal_type*, detail::MemSpace>;
  using ValuesView = Kokkos::View<T*, detail::MemSpace>;
  struct Triangle {
    RowMapView row_map;
    EntriesView entries;
    ValuesView values;
    Handle handle;
  };
  struct Factors {
    explicit Factors(RowMap r) : rows(std::move(r)) {}
    RowMap rows;
    Triangle lower, upper;
    ValuesView scratch;  // L^-1 r
  };
  std::shared_ptr<Factors> factors_;
};

template <class T>
BlockJacobiIlu0<T> bjacobi_ilu0(const CsrMatrix<T>& A) {
  return BlockJacobiIlu0<T>(A);
}

template <class T>
BlockJacobiIlu0<T>::BlockJacobiIlu0(const CsrMatrix<T>& A) {
  constexpr const char* api = "kfuse::pc::bjacobi_ilu0";
  detail::check_square_blocks(api, A);
  const index_t n = A.local_rows();

  // The diagonal block (owned columns only), on the host: a one-time setup.
  const auto row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_ptr());
  const auto col_idx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.col_idx());
  const auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values());
  std::vector<size_type> block_rows(static_cast<std::size_t>(n) + 1, 0);
  std::vector<ordinal_type> block_cols;
  std::vector<T> block_values;
  index_t no_diagonal = 0;
  for (index_t i = 0; i < n; ++i) {
    std::vector<std::pair<ordinal_type, T>> row;
    for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k)
      if (col_idx(k) < n) row.emplace_back(col_idx(k), values(k));
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    bool diagonal = false;
    for (const auto& [c, v] : row) {
      diagonal = diagonal || (c == i && v != T(0));
      block_cols.push_back(c);
      block_values.push_back(v);
    }
    if (!diagonal) ++no_diagonal;
    block_rows[i + 1] = static_cast<size_type>(block_cols.size());
  }
  std::string error;
  if (no_diagonal > 0)
    error = detail::error_message(api, ": ILU(0) needs a nonzero diagonal entry in every row, but ",
                                  no_diagonal, " row(s) of '", A.label(),
                                  "' have none on this rank (PETSc: zero pivot)");
  A.range().comm().agree_or_throw(error);

  // Allocations and Kokkos Kernels' factorisation, agreed on: a rank that
  // fails (memory) throws on every rank, not only on its own.
  auto f = std::make_shared<Factors>(A.range());
  A.range().comm().agree_on([&] {
    auto to_device = [](const auto& host, const std::string& label) {
      using V = std::remove_cv_t<std::remove_reference_t<decltype(host)>>;
      Kokkos::View<typename V::value_type*, detail::MemSpace> out(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, label), host.size());
      Kokkos::deep_copy(
          out, Kokkos::View<const typename V::value_type*, Kokkos::HostSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), host.size()));
      return out;
    };
    const auto a_rows = to_device(block_rows, A.label() + ".block.rows");
    const auto a_cols = to_device(block_cols, A.label() + ".block.cols");
    const auto a_values = to_device(block_values, A.label() + ".block.values");

    const auto nnz = static_cast<size_type>(block_cols.size());
    const ordinal_type fill_level = 0;
    Handle ilu;
    ilu.create_spiluk_handle(KokkosSparse::Experimental::SPILUKAlgorithm::SEQLVLSCHD_TP1, n, nnz,
                             nnz);
    Triangle& L = f->lower;
    Triangle& U = f->upper;
    L.row_map = RowMapView(A.label() + ".ilu.L.rows", n + 1);
    U.row_map = RowMapView(A.label() + ".ilu.U.rows", n + 1);
    L.entries = EntriesView(A.label() + ".ilu.L.cols", nnz);
    U.entries = EntriesView(A.label() + ".ilu.U.cols", nnz);
    detail::kk_factorization::spiluk_symbolic(&ilu, fill_level, a_rows, a_cols, L.row_map,
                                              L.entries, U.row_map, U.entries);
    Kokkos::resize(L.entries, ilu.get_spiluk_handle()->get_nnzL());
    Kokkos::resize(U.entries, ilu.get_spiluk_handle()->get_nnzU());
    L.values = ValuesView(A.label() + ".ilu.L.values", L.entries.extent(0));
    U.values = ValuesView(A.label() + ".ilu.U.values", U.entries.extent(0));
    detail::kk_factorization::spiluk_numeric(&ilu, fill_level, a_rows, a_cols, a_values, L.row_map,
                                             L.entries, L.values, U.row_map, U.entries, U.values);
    ilu.destroy_spiluk_handle();

    for (Triangle* t : {&L, &U}) {
      t->handle.create_sptrsv_handle(KokkosSparse::Experimental::SPTRSVAlgorithm::SEQLVLSCHD_TP1, n,
                                     t == &L);
      detail::kk_factorization::sptrsv_symbolic(&t->handle, t->row_map, t->entries);
    }
    f->scratch = ValuesView(A.label() + ".ilu.scratch", n);
  });
  factors_ = std::move(f);
}

template <class T>
void BlockJacobiIlu0<T>::operator()(const Vector<T>& r, Vector<T>& z) const {
  std::string error;
  if (r.row_map() != factors_->rows || z.row_map() != factors_->rows)
    error =
        detail::error_message("kfuse::pc::bjacobi_ilu0: r ('", r.label(), "') and z ('", z.label(),
                              "') must lie on the matrix's rows (", factors_->rows.describe(), ")");
  factors_->rows.comm().agree_or_throw(error);
  apply(r, z);
}

template <class T>
void BlockJacobiIlu0<T>::apply(const Vector<T>& r, Vector<T>& z) const {
  Triangle& L = factors_->lower;
  Triangle& U = factors_->upper;
  const ValuesView rhs = r.view();
  detail::kk_factorization::sptrsv_solve(&L.handle, L.row_map, L.entries, L.values, rhs,
                                         factors_->scratch);
  const ValuesView out = z.view();
  detail::kk_factorization::sptrsv_solve(&U.handle, U.row_map, U.entries, U.values,
                                         factors_->scratch, out);
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

/// A preconditioner passed as M and SolverOptions::preconditioner both set
/// is refused (on every rank: the options are the same everywhere).
inline void check_one_preconditioner(const char* api, const Comm& comm,
                                     const SolverOptions& options) {
  std::string error;
  if (options.preconditioner != Preconditioner::none)
    error = error_message(api,
                          ": a preconditioner is passed as M and SolverOptions::preconditioner"
                          " is set as well; use one of them (kfuse::pc::jacobi(A) replaces "
                          "Preconditioner::jacobi)");
  comm.agree_or_throw(error);
}

/// Runs `solve(m)` with the preconditioner as the solvers take it: M, or
/// Jacobi when M is pc::none and SolverOptions::preconditioner asks for it.
template <class T, class M, class Solve>
SolveResult with_preconditioner(const char* api, const CsrMatrix<T>& A,
                                const SolverOptions& options, const M& m, const Solve& solve) {
  if constexpr (is_no_preconditioner<M>::value) {
    if (options.preconditioner == Preconditioner::jacobi) {
      const auto jacobi = pc::jacobi(A);
      return solve(DiagonalScaling<Vector<T>>{jacobi.inverse_diagonal()});
    }
  } else {
    check_one_preconditioner(api, A.range().comm(), options);
  }
  return solve(solver_preconditioner<Vector<T>>(m));
}

/// The checks of a built-in operator's z = M r called by hand (collective):
/// r and z on `rows` and not one vector, a kfuse::Error on every rank
/// otherwise; true, on every rank, when some rank passes other vectors than
/// the `bound` ones (the operator's programs must then be bound anew, which
/// is collective).
template <class T>
bool check_apply_vectors(const char* api, const RowMap& rows, const Vector<T>& r,
                         const Vector<T>& z, const void* bound_r, const void* bound_z) {
  std::string error;
  if (r.row_map() != rows || z.row_map() != rows)
    error = error_message(api, ": r ('", r.label(), "') and z ('", z.label(),
                          "') must lie on the matrix's rows (", rows.describe(), ")");
  else if (r.same_storage(z))
    error = error_message(api, ": r and z are the same vector; z = M r needs two");
  rows.comm().agree_or_throw(error);
  std::int64_t rebind = bound_r != r.storage_id() || bound_z != z.storage_id();
  rows.comm().allreduce(&rebind, 1, ReduceOp::max);
  return rebind != 0;
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
