// Compile-cost sample (benchmarks/CMakeLists.txt): a user's multigrid file: the 2-D
// Poisson system solved by the shipped kfuse::cg preconditioned by kfuse::pc::multigrid
// (the hierarchy's setup and its V-cycle) and by kfuse::pc::chebyshev. Compiled, never run.
#include <cstdio>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::index_t n = 255;
  const kfuse::CsrMatrix<double> A = kfuse::poisson2d<double>(env.comm(), n, n);
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b");
  b.fill(1.0);
  const kfuse::SolverOptions options{1e-8, 1000};

  kfuse::pc::MultigridOptions mg;
  mg.levels = 4;
  const kfuse::SolveResult multigrid =
      kfuse::cg(A, x, b, options, kfuse::pc::multigrid(A, {n, n}, mg));
  x.fill(0.0);
  const kfuse::SolveResult chebyshev = kfuse::cg(A, x, b, options, kfuse::pc::chebyshev(A, 3));

  if (env.comm().rank() == 0)
    std::printf("cg + multigrid %d, cg + chebyshev %d iterations\n", multigrid.iterations,
                chebyshev.iterations);
  return 0;
}
