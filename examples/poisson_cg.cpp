// Conjugate gradients on a 2-D Poisson problem (or a Matrix Market file),
// written with kfuse::fuse: one iteration is 3 fused kernels and 2 allreduces.
// Prints the plan of the iteration, the residual history, and checks the
// answer against the library's kfuse::cg.
//
//   mpirun -np 4 poisson_cg                 # 64 x 64 grid
//   mpirun -np 4 poisson_cg 512 512
//   mpirun -np 4 poisson_cg matrix.mtx      # b = A * 1
#include <cmath>
#include <cstdio>
#include <string>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::Comm world = env.comm();
  const bool root = world.rank() == 0;
  try {
    const std::string first = argc > 1 ? argv[1] : "";
    const bool from_file = first.size() > 4 && first.substr(first.size() - 4) == ".mtx";
    const std::int64_t nx = !from_file && argc > 1 ? std::stoll(argv[1]) : 64;
    const std::int64_t ny = !from_file && argc > 2 ? std::stoll(argv[2]) : nx;
    const kfuse::CsrMatrix<double> A = from_file ? kfuse::read_matrix_market<double>(world, first)
                                                 : kfuse::poisson2d<double>(world, nx, ny);

    kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b"), r(A.range(), "r"),
        p(A.domain(), "p");
    kfuse::Vector<double> ones(A.domain(), "ones");
    ones.fill(1.0);
    b = A * ones;  // the exact solution is 1 everywhere

    // r = b - A x with x = 0; p = r.
    kfuse::Scalar<double> rr("rr"), pAp("pAp"), alpha("alpha"), beta("beta"), rr_new("rr_new");
    r = b;
    p = r;
    rr = kfuse::eval(kfuse::dot(r, r));

    auto iteration = kfuse::fuse(
        A, x, r, p, rr, pAp, alpha, rr_new, beta, kfuse::temporary<double>,
        [](auto A, auto x, auto r, auto p, auto rr, auto pAp, auto alpha, auto rr_new, auto beta,
           auto Ap) {
          using namespace kfuse;
          // x += alpha p joins kernel 3, which reads p anyway (the old p: statements
          // run in order at each point), rather than kernel 2.
          return seq(assign(Ap, A * p), reduce(pAp, dot(p, Ap)),            // kernel 1
                     assign(alpha, rr / pAp),                               // host
                     assign(r, r - alpha * Ap), reduce(rr_new, dot(r, r)),  // kernel 2
                     assign(beta, rr_new / rr), assign(rr, rr_new),         // host
                     assign(x, x + alpha * p), assign(p, r + beta * p));    // kernel 3
        });
    static_assert(decltype(iteration)::kernel_count == 3);
    static_assert(decltype(iteration)::allreduce_count == 2);
    if (root)
      std::printf("%s: %lld rows, %lld nonzeros, %d rank(s)\n\n%s\n",
                  from_file ? first.c_str() : "poisson2d", (long long)A.global_rows(),
                  (long long)A.global_nnz(), world.size(), iteration.explain().c_str());

    const double tolerance = 1e-8 * std::sqrt(rr.value());
    int it = 0;
    while (std::sqrt(rr.value()) > tolerance && it < 10000) {
      iteration();
      ++it;
      if (root && (it % 10 == 0 || std::sqrt(rr.value()) <= tolerance))
        std::printf("%5d KSP Residual norm %.12e\n", it, std::sqrt(rr.value()));
    }
    const double error = kfuse::eval(kfuse::reduce_max(kfuse::abs(x - 1.0)));

    kfuse::Vector<double> y(A.domain(), "y");
    const kfuse::SolveResult library = kfuse::cg(A, y, b, kfuse::SolverOptions{1e-8, 10000});
    if (root)
      std::printf("\nconverged in %d iterations, max |x - 1| = %.3e; kfuse::cg: %d iterations (%s)\n",
                  it, error, library.iterations, library.reason.c_str());
    return library.converged && std::abs(library.iterations - it) <= 1 ? 0 : 1;
  } catch (const kfuse::Error& e) {
    if (root) std::fprintf(stderr, "poisson_cg: %s\n", e.what());
    return 1;
  }
}
