// The 2-D Poisson system (5-point Laplacian, b = 1) solved by CG as a PETSc
// user would compare preconditioners: none, Jacobi, a Chebyshev polynomial
// (-pc_type ksp with KSPCHEBYSHEV) and geometric multigrid (-pc_type mg with
// Galerkin coarse operators) twice: weighted-Jacobi smoothing with Jacobi
// sweeps on the coarsest grid (legate.sparse's GMG), and Chebyshev smoothing
// with LU on the coarsest grid (PETSc's PCMG defaults, PCJACOBI for PCSOR). Prints the V-cycle's
// kernels per level, each solve's iterations and true residual, and fails when one of them is above
// 1e-7 ||b||.
//
//   mpirun -np 4 poisson_multigrid                   # 255 x 255, 5 levels
//   mpirun -np 4 poisson_multigrid --n 511 --levels 6
#include <cmath>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::Comm world = env.comm();
  const bool root = world.rank() == 0;

  CLI::App app{"2-D Poisson with CG and Jacobi, Chebyshev and multigrid preconditioners"};
  std::int64_t n = 255;
  kfuse::pc::MultigridOptions mg;
  mg.levels = 5;
  mg.sweeps = 2;
  mg.coarse_sweeps = 8;
  int degree = 3;
  app.add_option("--n", n, "grid points per direction")->check(CLI::PositiveNumber);
  app.add_option("--levels", mg.levels, "multigrid levels");
  app.add_option("--sweeps", mg.sweeps, "smoother iterations before and after each correction");
  app.add_option("--degree", degree, "degree of the Chebyshev preconditioner");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto A = kfuse::poisson2d<double>(world, n, n);
    kfuse::Vector<double> b(A.range(), "b"), x(A.domain(), "x"), r(A.range(), "r");
    b.fill(1.0);
    const double b_norm = kfuse::eval(kfuse::norm2(b));

    const auto multigrid = kfuse::pc::multigrid(A, {n, n}, mg);  // the hierarchy, built once
    if (root) std::printf("%s", multigrid.explain().c_str());

    kfuse::SolverOptions options;
    options.max_it = 10000;
    bool all_good = true;
    auto report = [&](const char* name, const kfuse::SolveResult& result) {
      r = b - A * x;
      const double true_residual = kfuse::eval(kfuse::norm2(r)) / b_norm;
      all_good = all_good && result.converged && true_residual <= 1e-7;
      if (root)
        std::printf("%-26s %-8s %5d iterations, |b - A x| / |b| = %.2e\n", name,
                    result.reason.c_str(), result.iterations, true_residual);
      x.fill(0.0);
    };
    if (root)
      std::printf("poisson2d %lld x %lld, %d rank(s)\n", (long long)n, (long long)n, world.size());
    report("cg", kfuse::cg(A, x, b, options));
    report("cg + jacobi", kfuse::cg(A, x, b, options, kfuse::pc::jacobi(A)));
    report(("cg + chebyshev(" + std::to_string(degree) + ")").c_str(),
           kfuse::cg(A, x, b, options, kfuse::pc::chebyshev(A, degree)));
    report("cg + multigrid", kfuse::cg(A, x, b, options, multigrid));
    kfuse::pc::MultigridOptions petsc_like = mg;
    petsc_like.smoother = kfuse::pc::Smoother::chebyshev;
    petsc_like.coarse = kfuse::pc::CoarseSolve::direct;
    report("cg + multigrid (cheb, LU)",
           kfuse::cg(A, x, b, options, kfuse::pc::multigrid(A, {n, n}, petsc_like)));
    return all_good ? 0 : 1;
  } catch (const kfuse::Error& e) {
    if (root) std::fprintf(stderr, "poisson_multigrid: %s\n", e.what());
    return 1;
  }
}
