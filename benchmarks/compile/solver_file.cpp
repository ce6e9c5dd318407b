// Compile-cost sample (benchmarks/CMakeLists.txt): a user's solver file: the shipped
// kfuse::cg (without and with Jacobi) and kfuse::bicgstab, and one CG iteration of the
// user's own as a fused program. Compiled, never run.
#include <cmath>
#include <cstdio>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::CsrMatrix<double> A = kfuse::poisson2d<double>(env.comm(), 256, 256);
  const kfuse::CsrMatrix<double> B =
      kfuse::convection_diffusion2d<double>(env.comm(), 256, 256, 1.0, 0.5);
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b"), ones(A.domain(), "1");
  ones.fill(1.0);
  b = A * ones;
  const kfuse::SolverOptions options{1e-8, 1000};

  const kfuse::SolveResult plain = kfuse::cg(A, x, b, options);
  x.fill(0.0);
  const kfuse::SolveResult jacobi = kfuse::cg(A, x, b, options, kfuse::pc::jacobi(A));
  kfuse::Vector<double> y(B.domain(), "y"), c(B.range(), "c");
  c = B * ones;
  const kfuse::SolveResult nonsymmetric = kfuse::bicgstab(B, y, c, options);

  // The user's own iteration: A p and p.Ap, then r and r.r, then x and p.
  kfuse::Vector<double> r(A.range(), "r"), p(A.domain(), "p");
  kfuse::Scalar<double> rr("rr"), pAp("pAp"), alpha("alpha"), beta("beta"), rr_new("rr'");
  x.fill(0.0);
  r = b;
  p = r;
  rr = kfuse::eval(kfuse::dot(r, r));
  auto iteration = kfuse::fuse(
      A, x, r, p, rr, pAp, alpha, rr_new, beta, kfuse::temporary<double>,
      [](auto A, auto x, auto r, auto p, auto rr, auto pAp, auto alpha, auto rr_new, auto beta,
         auto Ap) {
        using namespace kfuse;
        return seq(assign(Ap, A * p), reduce(pAp, dot(p, Ap)), assign(alpha, rr / pAp),
                   assign(r, r - alpha * Ap), reduce(rr_new, dot(r, r)), assign(beta, rr_new / rr),
                   assign(rr, rr_new), assign(x, x + alpha * p), assign(p, r + beta * p));
      });
  for (int it = 0; it < 100; ++it) iteration();

  if (env.comm().rank() == 0)
    std::printf("cg %d, cg + Jacobi %d, bicgstab %d iterations; own CG |r| = %.3e\n",
                plain.iterations, jacobi.iterations, nonsymmetric.iterations,
                std::sqrt(rr.value()));
  return 0;
}
