// A 2-D convection-diffusion system, nonsymmetric, solved three ways as a
// PETSc user would: BiCGSTAB and GMRES(30) preconditioned by block Jacobi
// with ILU(0) per rank (-pc_type bjacobi -sub_pc_type ilu), and FGMRES with a
// preconditioner of one's own (two Jacobi sweeps written with kfuse
// statements). Prints each solve's iterations and true residual, and fails
// when one of them is above 1e-7 ||b||.
//
//   mpirun -np 4 convection_diffusion                  # 200 x 200, bx = 1, by = 0.5
//   mpirun -np 4 convection_diffusion --n 400 --bx 4
#include <cmath>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::Comm world = env.comm();
  const bool root = world.rank() == 0;

  CLI::App app{"convection-diffusion with preconditioned BiCGSTAB, GMRES and FGMRES"};
  std::int64_t n = 200;
  double bx = 1.0, by = 0.5;
  app.add_option("--n", n, "grid points per direction")->check(CLI::PositiveNumber);
  app.add_option("--bx", bx, "convection along i");
  app.add_option("--by", by, "convection along j");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto A = kfuse::convection_diffusion2d<double>(world, n, n, bx, by);
    kfuse::Vector<double> b(A.range(), "b"), x(A.domain(), "x"), r(A.range(), "r");
    b.fill(1.0);
    const double b_norm = kfuse::eval(kfuse::norm2(b));

    const auto ilu = kfuse::pc::bjacobi_ilu0(A);  // factorised once, used by two solves
    const auto jacobi = kfuse::pc::jacobi(A);
    kfuse::Vector<double> t(A.range(), "t");
    auto two_sweeps = [&](const kfuse::Vector<double>& rhs, kfuse::Vector<double>& z) {
      z = jacobi.inverse_diagonal() * rhs;
      t = rhs - A * z;
      z = z + jacobi.inverse_diagonal() * t;
    };

    kfuse::SolverOptions options;
    options.max_it = 5000;
    bool all_good = true;
    auto report = [&](const char* name, const kfuse::SolveResult& result) {
      r = b - A * x;
      const double true_residual = kfuse::eval(kfuse::norm2(r)) / b_norm;
      all_good = all_good && result.converged && true_residual <= 1e-7;
      if (root)
        std::printf("%-28s %-10s %5d iterations, |b - A x| / |b| = %.2e\n", name,
                    result.reason.c_str(), result.iterations, true_residual);
      x.fill(0.0);
    };
    if (root)
      std::printf("convection_diffusion2d %lld x %lld (bx %g, by %g), %d rank(s)\n",
                  (long long)n, (long long)n, bx, by, world.size());
    report("bicgstab + bjacobi_ilu0", kfuse::bicgstab(A, x, b, options, ilu));
    report("gmres(30) + bjacobi_ilu0", kfuse::gmres(A, x, b, options, ilu));
    report("fgmres(30) + two sweeps", kfuse::fgmres(A, x, b, options, two_sweeps));
    return all_good ? 0 : 1;
  } catch (const kfuse::Error& e) {
    if (root) std::fprintf(stderr, "convection_diffusion: %s\n", e.what());
    return 1;
  }
}
