// What the solver tests share, without PETSc: the systems' right-hand side,
// the true residual, a monitor that checks its calls, and one call for every
// solver. The solvers' common cases come explicitly instantiated, as a user
// may have them (kfuse/solvers/extern.hpp): compiled once, in
// solver_instances.cpp, for every solver test.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <kfuse/kfuse.hpp>
#include <kfuse/solvers/extern.hpp>

namespace kfuse_test {

/// ||b - A x|| computed independently of the solver's recursion.
inline double true_residual(const kfuse::CsrMatrix<double>& A, const kfuse::Vector<double>& x,
                            const kfuse::Vector<double>& b) {
  kfuse::Vector<double> r(A.range(), "true_r");
  r = b - A * x;
  return kfuse::eval(kfuse::norm2(r));
}

/// b = A * 1 (PETSc's convention in the matrices' README).
inline kfuse::Vector<double> rhs_of_ones(const kfuse::CsrMatrix<double>& A) {
  kfuse::Vector<double> ones(A.domain(), "ones"), b(A.range(), "b");
  ones.fill(1.0);
  b = A * ones;
  return b;
}

#ifdef KFUSE_MATRICES_DIR
inline kfuse::CsrMatrix<double> shared_matrix(const std::string& name) {
  return kfuse::read_matrix_market<double>(kfuse::Comm(),
                                           std::string(KFUSE_MATRICES_DIR) + "/" + name);
}
#endif

/// A monitor that checks it sees iterations 0, 1, 2, ... in order (printing
/// them with KFUSE_TEST_MONITOR set, as PETSc's -ksp_monitor does).
struct MonitorCheck {
  int calls = 0;
  double last = -1;
  std::function<void(int, double)> monitor() {
    return [this](int it, double rnorm) {
      CHECK(it == calls);
      if (std::getenv("KFUSE_TEST_MONITOR"))
        std::printf("%3d KSP Residual norm %.12e\n", it, rnorm);
      ++calls;
      last = rnorm;
    };
  }
};

/// The solvers that take a matrix and a preconditioner.
enum class Method { cg, bicgstab, gmres, fgmres };

template <class M>
kfuse::SolveResult solve(Method method, const kfuse::CsrMatrix<double>& A,
                         kfuse::Vector<double>& x, const kfuse::Vector<double>& b,
                         const kfuse::SolverOptions& options, const M& m) {
  switch (method) {
    case Method::cg:
      return kfuse::cg(A, x, b, options, m);
    case Method::bicgstab:
      return kfuse::bicgstab(A, x, b, options, m);
    case Method::gmres:
      return kfuse::gmres(A, x, b, options, m);
    default:
      return kfuse::fgmres(A, x, b, options, m);
  }
}

}  // namespace kfuse_test
