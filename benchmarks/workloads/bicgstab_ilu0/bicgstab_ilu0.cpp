// bicgstab_ilu0: BiCGSTAB right-preconditioned by block Jacobi with ILU(0)
// of each rank's diagonal block (PETSc's default parallel preconditioner),
// on the bicgstab workload's convection-diffusion matrix, a fixed iteration
// count from x = 0 (solvers.hpp). A workload of its own: its iterates are
// not the unpreconditioned ones, so it needs its own reference. The
// factorisation (Kokkos Kernels' SpILUK) is built once, untimed; each
// iteration runs two pairs of SpTRSV solves. Variants: fused (the shipped
// kfuse::bicgstab with pc::bjacobi_ilu0), kokkos (hand-written, the same
// Kokkos Kernels solves) and petsc (KSPBCGS + PCBJACOBI with ILU(0)).
#include <string>

#include "../solvers/solver_kfuse.hpp"

namespace kfuse::bench::solvers {
namespace {

#if KFUSE_BENCH_COMPILES(FUSED)
struct SolveBicgstabIlu0 {
  pc::BlockJacobiIlu0<double> M;
  SolveResult operator()(const CsrProblem& p, Vec& x, const SolverOptions& options) const {
    return kfuse::bicgstab(p.A, x, p.b, options, M);
  }
};

/// 5 kfuse kernels (kfuse::bicgstab with an operator M), 3 allreduces, 2
/// ghost imports; the solves are Kokkos Kernels' (not counted).
struct Ilu0Figures {
  Figures operator()(const CsrProblem&) const {
    Figures f;
    f.kernels = 5;
    f.allreduces = 3;
    f.exchanges = 2;
    return f;
  }
};
#endif

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "bicgstab_ilu0",
    "BiCGSTAB with block Jacobi + ILU(0) (right) on the 2-D convection-diffusion matrix, fixed "
    "iteration count",
    1000, 10,
    // As bicgstab: the iterates drift with summation order.
    1e-2, grid_label,
    [](const Setup& s) {  // bicgstab's, plus two applies of L and U (A's pattern),
      const double n = double(s.size) * double(s.size);  // each solve a vector in, one out
      const double nnz = 5.0 * n - 4.0 * double(s.size);
      return bicgstab_min_bytes(n, 12.0 * nnz + 8.0 * n) + 2.0 * (12.0 * nnz + 8.0 * n + 32.0 * n);
    },
    "benchmarks/workloads/bicgstab_ilu0/bicgstab_ilu0.cpp", "benchmarks/workloads/bicgstab_ilu0/bicgstab_ilu0_kokkos.cpp",
    [](const Setup& s) {  // A, L and U, and bicgstab's 7 vectors with p^, s^
      const double n = double(s.size) * double(s.size);
      return 2.0 * (12.0 * (5.0 * n - 4.0 * double(s.size)) + 8.0 * n) + 72.0 * n;
    },
    // Not grown beyond the cache: Kokkos Kernels 3.4's SpILUK factorisation takes a
    // workspace of (widest level) x (rows) indices, about 2 n^3 bytes a rank on an n x n
    // grid split in two (24 GB a rank at the 2304^2 that 4x a 260 MiB cache needs).
    false}));
#endif
#if KFUSE_BENCH_COMPILES(FUSED)
KFUSE_BENCH_REGISTER(register_variant("bicgstab_ilu0", "fused", [](const Setup& s) {
  CsrProblem problem(bicgstab_matrix(s));
  const auto M = pc::bjacobi_ilu0(problem.A);
  return make_shipped(std::move(problem), s, SolveBicgstabIlu0{M}, Ilu0Figures{});
}));
#endif

}  // namespace
}  // namespace kfuse::bench::solvers
