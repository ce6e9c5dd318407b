// The `petsc` variants of cg and bicgstab: PETSc's KSPCG / KSPBCGS with
// PCNONE on the same matrix (MPIAIJ, preallocated exactly) and right-hand
// side, rtol = atol = 0 and max_it = Setup::iterations, so KSPSolve runs
// exactly the iterations every other variant runs. Step 0 of a repetition is
// one KSPSolve (solvers.hpp); KSPSetUp runs once, at construction.
//
// Norms: CG uses KSP_NORM_NATURAL, which with PCNONE is ||r|| = sqrt(r.r),
// the quantity kfuse::cg tests, from the dot product CG computes anyway (the
// unpreconditioned norm would cost PETSc a third reduction per iteration for
// the same number). BiCGSTAB uses the unpreconditioned norm, as kfuse::bicgstab.
//
// gmg_solve's variants solve to a tolerance instead (PetscSolve's `rtol`):
// KSPSolve until ||b - A x|| <= rtol ||b||, the unpreconditioned norm kfuse::cg tests.
//
// Built only where CMake found PETSc (MPI builds: KFUSE_BENCH_HAVE_PETSC).
#ifdef KFUSE_BENCH_HAVE_PETSC

#include <dlfcn.h>
#include <petscksp.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

// PETSc's record of its own build: static strings, some unused here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <petscmachineinfo.h>
#pragma GCC diagnostic pop

#include "../gmg/gmg.hpp"
#include "solvers.hpp"

namespace kfuse::bench::solvers {
namespace {

void check_petsc(PetscErrorCode code, const char* call) {
  if (code != 0)
    throw Error(std::string("kfuse-bench: PETSc: ") + call + " failed (error " +
                std::to_string(int(code)) + ")");
}
#define KFUSE_BENCH_PETSC(call) check_petsc((call), #call)

/// PETSc comes up on kfuse's MPI, once, with the options of the environment
/// variable PETSC_OPTIONS (`PETSC_OPTIONS=-log_view`: its profile per event),
/// and goes down as Kokkos does, before kfuse::Environment finalizes MPI (every
/// PETSc object is destroyed by then, with the variants).
void ensure_petsc() {
  PetscBool up = PETSC_FALSE;
  KFUSE_BENCH_PETSC(PetscInitialized(&up));
  if (up) return;
  KFUSE_BENCH_PETSC(PetscInitializeNoArguments());
  Kokkos::push_finalize_hook([] { PetscFinalize(); });
}

/// PETSc's version, the optimisation flags its C code was compiled with (its
/// own record), and the BLAS this process loaded for it (the library that
/// defines ddot_, and OpenBLAS's configuration when it is OpenBLAS).
std::map<std::string, std::string> petsc_build() {
  std::map<std::string, std::string> facts;
  char version[128] = {};
  KFUSE_BENCH_PETSC(PetscGetVersion(version, sizeof version));
  facts["version"] = version;
  const std::string compiler = petsccompilerinfo;
  static const std::regex optimisation(R"((?:^|\s)(-O\S*|-march=\S+|-mtune=\S+))");
  std::string flags;
  for (std::sregex_iterator
           it(compiler.begin(), compiler.begin() + compiler.find('\n', 1), optimisation),
       end;
       it != end; ++it)
    flags += (flags.empty() ? "" : " ") + (*it)[1].str();
  facts["c_optimisation"] = flags;
  Dl_info where{};
  void* dot = dlsym(RTLD_DEFAULT, "ddot_");
  facts["blas"] = dot && dladdr(dot, &where) && where.dli_fname ? where.dli_fname : "unknown";
  using Config = char* (*)();
  if (auto config = reinterpret_cast<Config>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    facts["blas"] += " (OpenBLAS: " + std::string(config()) + ")";
  return facts;
}

/// A as an MPIAIJ matrix on the same rows, preallocated exactly.
Mat petsc_matrix(const Matrix& A) {
  const MPI_Comm comm = A.range().comm().native();
  const PetscInt rows = PetscInt(A.local_rows()), first = PetscInt(A.range().local_begin());
  const auto entries = detail::local_triplets(A);  // by row, then column
  std::vector<PetscInt> diagonal(std::size_t(rows), 0), off_diagonal(std::size_t(rows), 0);
  for (const auto& e : entries)
    ++(A.domain().owns(e.col) ? diagonal : off_diagonal)[std::size_t(e.row - first)];
  Mat M = nullptr;
  KFUSE_BENCH_PETSC(MatCreateAIJ(comm, rows, PetscInt(A.domain().local_size()),
                                 PetscInt(A.global_rows()), PetscInt(A.global_cols()), 0,
                                 diagonal.data(), 0, off_diagonal.data(), &M));
  std::vector<PetscInt> columns;
  std::vector<PetscScalar> values;
  for (std::size_t k = 0; k < entries.size();) {
    const PetscInt row = PetscInt(entries[k].row);
    columns.clear();
    values.clear();
    for (; k < entries.size() && entries[k].row == row; ++k) {
      columns.push_back(PetscInt(entries[k].col));
      values.push_back(entries[k].value);
    }
    KFUSE_BENCH_PETSC(MatSetValues(M, 1, &row, PetscInt(columns.size()), columns.data(),
                                   values.data(), INSERT_VALUES));
  }
  KFUSE_BENCH_PETSC(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  KFUSE_BENCH_PETSC(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  return M;
}

/// Sets up the KSP's preconditioner (PCNONE when empty).
using PcSetup = std::function<void(KSP, PC)>;

/// One KSPSolve a repetition: of Setup::iterations iterations exactly, or,
/// with `rtol` > 0, to ||b - A x|| <= rtol ||b|| (gmg_solve; fields as solved_fields).
class PetscSolve final : public Variant {
 public:
  PetscSolve(const Setup& setup, Matrix A, KSPType type, KSPNormType norm, Figures figures,
             const PcSetup& pc_setup = {}, double rtol = 0, std::string name = "petsc")
      : A_(std::move(A)),
        b_(make_rhs(A_)),
        iterations_(setup.iterations),
        figures_(figures),
        rtol_(rtol),
        name_(std::move(name)) {
    ensure_petsc();
    const MPI_Comm comm = A_.range().comm().native();
    const PetscInt rows = PetscInt(A_.local_rows());
    M_ = petsc_matrix(A_);

    // b, the same values as every variant's.
    KFUSE_BENCH_PETSC(MatCreateVecs(M_, &x_, &pb_));
    const auto host_b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b_.view());
    PetscScalar* out = nullptr;
    KFUSE_BENCH_PETSC(VecGetArray(pb_, &out));
    for (PetscInt i = 0; i < rows; ++i) out[i] = host_b(i);
    KFUSE_BENCH_PETSC(VecRestoreArray(pb_, &out));

    KFUSE_BENCH_PETSC(KSPCreate(comm, &ksp_));
    KFUSE_BENCH_PETSC(KSPSetOperators(ksp_, M_, M_));
    KFUSE_BENCH_PETSC(KSPSetType(ksp_, type));
    PC pc;
    KFUSE_BENCH_PETSC(KSPGetPC(ksp_, &pc));
    if (pc_setup)
      pc_setup(ksp_, pc);
    else
      KFUSE_BENCH_PETSC(PCSetType(pc, PCNONE));
    KFUSE_BENCH_PETSC(KSPSetNormType(ksp_, norm));
    if (rtol_ > 0)
      KFUSE_BENCH_PETSC(KSPSetTolerances(ksp_, rtol_, 0.0, PETSC_DEFAULT, PetscInt(gmg_max_it)));
    else
      KFUSE_BENCH_PETSC(KSPSetTolerances(ksp_, 0.0, 0.0, 1e300, PetscInt(iterations_)));
    KFUSE_BENCH_PETSC(KSPSetUp(ksp_));
  }

  ~PetscSolve() override {
    KSPDestroy(&ksp_);
    VecDestroy(&x_);
    VecDestroy(&pb_);
    MatDestroy(&M_);
  }
  PetscSolve(const PetscSolve&) = delete;
  PetscSolve& operator=(const PetscSolve&) = delete;

  void reset() override {
    KFUSE_BENCH_PETSC(VecSet(x_, 0.0));
    steps_ = 0;
  }

  void step() override {
    if (steps_++ % iterations_ != 0) return;
    KFUSE_BENCH_PETSC(KSPSolve(ksp_, pb_, x_));
    PetscInt done = 0;
    KFUSE_BENCH_PETSC(KSPGetIterationNumber(ksp_, &done));
    solved_iterations_ = int(done);
    if (rtol_ > 0) {
      KSPConvergedReason reason;
      KFUSE_BENCH_PETSC(KSPGetConvergedReason(ksp_, &reason));
      if (reason <= 0)
        throw Error("kfuse-bench: " + name_ + ": KSPSolve did not converge (reason " +
                    std::to_string(int(reason)) + " after " + std::to_string(int(done)) +
                    " iterations)");
      return;
    }
    if (done != iterations_)
      throw Error("kfuse-bench: PETSc stopped after " + std::to_string(int(done)) + " of " +
                  std::to_string(iterations_) + " iterations");
  }

  Fields result() const override {
    Vector<double> x(A_.domain(), "x");
    auto host = Kokkos::create_mirror_view(x.view());
    const PetscScalar* in = nullptr;
    KFUSE_BENCH_PETSC(VecGetArrayRead(x_, &in));
    for (std::size_t i = 0; i < host.extent(0); ++i) host(i) = in[i];
    KFUSE_BENCH_PETSC(VecRestoreArrayRead(x_, &in));
    Kokkos::deep_copy(x.view(), host);
    if (rtol_ > 0) {
      report_iterations(A_.range().comm(), name_, solved_iterations_);
      return solved_fields(solution_fields(A_, b_, x), eval(norm2(b_)));
    }
    return solution_fields(A_, b_, x);
  }

  Figures figures() const override { return figures_; }
  std::map<std::string, std::string> build() const override { return petsc_build(); }

 private:
  Matrix A_;
  Vec b_;
  int iterations_;
  Figures figures_;
  double rtol_;
  std::string name_;
  int solved_iterations_ = 0;
  Mat M_ = nullptr;
  ::Vec x_ = nullptr, pb_ = nullptr;
  KSP ksp_ = nullptr;
  int steps_ = 0;
};

/// PETSc's vector operations per iteration, as KSPSolve_CG / KSPSolve_BCGS
/// call them with PCNONE (declared: PETSc launches no Kokkos kernels to
/// count). Bytes as STREAM counts them: every vector an operation reads,
/// once, every vector it writes once more, plus the matrix per MatMult.
Figures petsc_figures(const Matrix& A, double kernels, double allreduces, double exchanges,
                      double vector_bytes_per_row, int products) {
  Figures f;
  f.kernels = kernels;
  f.allreduces = allreduces;
  f.exchanges = exchanges;
  f.bytes = vector_bytes_per_row * double(A.global_rows()) + products * matrix_bytes(A);
  return f;
}

// CG (read / written): MatMult p / z, VecDot p z, VecAXPY x p / x, VecAXPY r z / r,
// PCApply (PCNONE: VecCopy r / z), VecDot z r, VecAYPX p z / p: 17 vector passes.
// With -ksp_cg_single_reduction (KSPSolve_CG_SingleReduction, PCNONE; read /
// written): VecAYPX p z / p, VecAYPX s w / s, VecAXPY x p / x, VecAXPY r s / r,
// PCApply (VecCopy r / z), MatMult z / w, VecDot z r, VecDot z w (one allreduce
// for both): 20 vector passes.
std::unique_ptr<Variant> petsc_cg(const Setup& s, bool single_reduction) {
  Matrix A = cg_matrix(s);
  const Figures f = single_reduction ? petsc_figures(A, 8, 1, 1, 20 * 8.0, 1)
                                     : petsc_figures(A, 7, 2, 1, 17 * 8.0, 1);
  if (!single_reduction)
    return std::make_unique<PetscSolve>(s, std::move(A), KSPCG, KSP_NORM_NATURAL, f);
  auto setup = [](KSP ksp, PC pc) {
    KFUSE_BENCH_PETSC(PCSetType(pc, PCNONE));
    KFUSE_BENCH_PETSC(KSPCGUseSingleReduction(ksp, PETSC_TRUE));
  };
  return std::make_unique<PetscSolve>(s, std::move(A), KSPCG, KSP_NORM_NATURAL, f, setup);
}
KFUSE_BENCH_REGISTER(register_variant("cg", "petsc",
                                      [](const Setup& s) { return petsc_cg(s, false); }));
KFUSE_BENCH_REGISTER(register_variant("cg", "petsc_single_reduction",
                                      [](const Setup& s) { return petsc_cg(s, true); }));
// cg_matfree's peers: PETSc has no stencil operator of its own (a MatShell is the user's
// code), and its users assemble a stencil (a DMDA's matrix), so they are the same KSPs on
// the Poisson matrix of the grid (rows i * n + j, the same right-hand side).
KFUSE_BENCH_REGISTER(register_variant("cg_matfree", "petsc",
                                      [](const Setup& s) { return petsc_cg(s, false); }));
KFUSE_BENCH_REGISTER(register_variant("cg_matfree", "petsc_single_reduction",
                                      [](const Setup& s) { return petsc_cg(s, true); }));

// BiCGSTAB (right side, PCNONE; read / written): VecDot rho r r_hat, VecAXPBYPCZ
// p r v / p, PCApply (VecCopy p / w) + MatMult w / v, VecDot d v r_hat, VecWAXPY
// r v / s, PCApply s / w + MatMult w / t, VecDotNorm2 s t, VecAXPBYPCZ x p s / x,
// VecWAXPY s t / r, VecNorm r: 29 vector passes.
KFUSE_BENCH_REGISTER(register_variant("bicgstab", "petsc", [](const Setup& s) {
  Matrix A = bicgstab_matrix(s);
  const Figures f = petsc_figures(A, 12, 4, 2, 29 * 8.0, 2);
  return std::make_unique<PetscSolve>(s, std::move(A), KSPBCGS, KSP_NORM_UNPRECONDITIONED, f);
}));

// bicgstab_ilu0: KSPBCGS right-preconditioned by PCBJACOBI (one block per
// rank) with its default sub-preconditioner, ILU(0) in natural ordering.
// Declared kernels: bicgstab's 12 vector and matrix calls plus two
// PCApply (each two triangular solves).
KFUSE_BENCH_REGISTER(register_variant("bicgstab_ilu0", "petsc", [](const Setup& s) {
  Matrix A = bicgstab_matrix(s);
  Figures f;  // no traffic model for the solves: no bytes declared, as for the other variants
  f.kernels = 12 + 2;
  f.allreduces = 4;
  f.exchanges = 2;
  auto setup = [](KSP ksp, PC pc) {
    KFUSE_BENCH_PETSC(KSPSetPCSide(ksp, PC_RIGHT));  // as kfuse::bicgstab
    KFUSE_BENCH_PETSC(PCSetType(pc, PCBJACOBI));
  };
  return std::make_unique<PetscSolve>(s, std::move(A), KSPBCGS, KSP_NORM_UNPRECONDITIONED, f,
                                      setup);
}));

// gmg: KSPCG + PCMG with kfuse's hierarchy (gmg.hpp): its interpolation and
// restriction, Galerkin coarse operators (PETSc computes R A P itself),
// Richardson + PCJACOBI smoothers with kfuse's weights, one V-cycle; the
// natural norm (r.z, no extra reduction). Operations per iteration (PETSc
// 3.18's KSPSolve_CG, PCMGMCycle_Private, KSPSolve_Richardson): CG's MatMult,
// 2 VecDot, 3 vector updates; the V-cycle's pre-sweep from 0 (VecSet,
// VecCopy, PCApply, VecAXPY), MatResidual (MatMult, VecAYPX), MatRestrict,
// the coarse sweep from 0 (4), MatInterpolateAdd, the post-sweep (MatMult,
// VecAYPX, PCApply, VecAXPY): 6 + 16 declared as kernels.
/// PCMG with kfuse's hierarchy (see above). With Chebyshev smoothing (gmg_solve's
/// petsc_chebyshev) as tests/solvers/test_preconditioned.cpp checks it equal to
/// kfuse's: the operators flagged SPD (PETSc then estimates each level's
/// lambda_max by CG, as kfuse does), kfuse's coarse operators given (PETSc's own
/// R A P carries no SPD flag), KSPCHEBYSHEV + PCJACOBI on kfuse's bounds, and
/// PCREDUNDANT's LU on the coarsest grid when kfuse solves it directly.
PcSetup petsc_mg(const pc::Multigrid<double>& hierarchy) {
  return [hierarchy](KSP ksp, PC pc) {
    const pc::MultigridOptions o = hierarchy.options();
    const bool chebyshev = o.smoother == pc::Smoother::chebyshev;
    const int L = hierarchy.levels();
    if (chebyshev) {
      Mat A;
      KFUSE_BENCH_PETSC(KSPGetOperators(ksp, &A, nullptr));
      KFUSE_BENCH_PETSC(MatSetOption(A, MAT_SPD, PETSC_TRUE));
    }
    KFUSE_BENCH_PETSC(PCSetType(pc, PCMG));
    KFUSE_BENCH_PETSC(PCMGSetLevels(pc, L, nullptr));
    KFUSE_BENCH_PETSC(PCMGSetType(pc, PC_MG_MULTIPLICATIVE));
    KFUSE_BENCH_PETSC(PCMGSetCycleType(pc, PC_MG_CYCLE_V));
    KFUSE_BENCH_PETSC(PCMGSetGalerkin(pc, chebyshev ? PC_MG_GALERKIN_NONE : PC_MG_GALERKIN_BOTH));
    for (int l = 0; l < L; ++l) {  // kfuse's level l is PETSc's L - 1 - l
      const int k = L - 1 - l;
      if (l + 1 < L) {
        Mat P = petsc_matrix(hierarchy.interpolation(l));
        Mat R = petsc_matrix(hierarchy.restriction(l));
        KFUSE_BENCH_PETSC(PCMGSetInterpolation(pc, k, P));
        KFUSE_BENCH_PETSC(PCMGSetRestriction(pc, k, R));
        MatDestroy(&P);
        MatDestroy(&R);
      }
      KSP smoother;
      if (k == 0)
        KFUSE_BENCH_PETSC(PCMGGetCoarseSolve(pc, &smoother));
      else
        KFUSE_BENCH_PETSC(PCMGGetSmoother(pc, k, &smoother));
      if (chebyshev && l > 0) {
        Mat Al = petsc_matrix(hierarchy.matrix(l));
        KFUSE_BENCH_PETSC(MatSetOption(Al, MAT_SPD, PETSC_TRUE));
        KFUSE_BENCH_PETSC(KSPSetOperators(smoother, Al, Al));
        MatDestroy(&Al);
      }
      PC inner;
      KFUSE_BENCH_PETSC(KSPGetPC(smoother, &inner));
      if (k == 0 && o.coarse == pc::CoarseSolve::direct) {
        KFUSE_BENCH_PETSC(KSPSetType(smoother, KSPPREONLY));
        KFUSE_BENCH_PETSC(PCSetType(inner, PCREDUNDANT));  // LU of the gathered matrix
        continue;
      }
      if (chebyshev) {
        KFUSE_BENCH_PETSC(KSPSetType(smoother, KSPCHEBYSHEV));
        KFUSE_BENCH_PETSC(
            KSPChebyshevEstEigSet(smoother, 0, o.chebyshev.lower, 0, o.chebyshev.upper));
      } else {
        KFUSE_BENCH_PETSC(KSPSetType(smoother, KSPRICHARDSON));
        KFUSE_BENCH_PETSC(KSPRichardsonSetScale(smoother, hierarchy.jacobi_weight(l)));
      }
      KFUSE_BENCH_PETSC(PCSetType(inner, PCJACOBI));
      KFUSE_BENCH_PETSC(KSPSetNormType(smoother, KSP_NORM_NONE));
      KFUSE_BENCH_PETSC(KSPSetConvergenceTest(smoother, KSPConvergedSkip, nullptr, nullptr));
      KFUSE_BENCH_PETSC(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT,
                                         k == 0 ? o.coarse_sweeps : o.sweeps));
    }
  };
}

KFUSE_BENCH_REGISTER(register_variant("gmg", "petsc", [](const Setup& s) {
  Matrix A = cg_matrix(s);
  const pc::Multigrid<double> hierarchy = gmg_hierarchy(s);
  Figures f;  // PETSc launches no Kokkos kernels to count: declared, see above
  f.kernels = 6 + 16;
  f.allreduces = 2;
  f.exchanges = 1 + gmg_cycle_products(hierarchy.options());
  return std::make_unique<PetscSolve>(s, std::move(A), KSPCG, KSP_NORM_NATURAL, f,
                                      petsc_mg(hierarchy));
}));

// gmg_solve: the same PCMG, PCMG with kfuse's stronger cycle, and PCGAMG with
// PETSc's defaults; CG's
// unpreconditioned norm (one more reduction an iteration than the natural one).
KFUSE_BENCH_REGISTER(register_variant("gmg_solve", "petsc", [](const Setup& s) {
  Matrix A = cg_matrix(s);
  const pc::Multigrid<double> hierarchy = gmg_hierarchy(s);
  return std::make_unique<PetscSolve>(s, std::move(A), KSPCG, KSP_NORM_UNPRECONDITIONED, Figures{},
                                      petsc_mg(hierarchy), gmg_rtol);
}));
KFUSE_BENCH_REGISTER(register_variant("gmg_solve", "petsc_chebyshev", [](const Setup& s) {
  Matrix A = cg_matrix(s);
  const pc::Multigrid<double> hierarchy = pc::multigrid(A, gmg_shape(s), gmg_chebyshev_options(s));
  return std::make_unique<PetscSolve>(s, std::move(A), KSPCG, KSP_NORM_UNPRECONDITIONED, Figures{},
                                      petsc_mg(hierarchy), gmg_rtol, "petsc_chebyshev");
}));
KFUSE_BENCH_REGISTER(register_variant("gmg_solve", "petsc_gamg", [](const Setup& s) {
  auto gamg = [](KSP, PC pc) { KFUSE_BENCH_PETSC(PCSetType(pc, PCGAMG)); };
  return std::make_unique<PetscSolve>(s, cg_matrix(s), KSPCG, KSP_NORM_UNPRECONDITIONED, Figures{},
                                      gamg, gmg_rtol, "petsc_gamg");
}));

}  // namespace
}  // namespace kfuse::bench::solvers

#endif  // KFUSE_BENCH_HAVE_PETSC
