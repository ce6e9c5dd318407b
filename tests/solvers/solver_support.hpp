// What the solver tests share, without PETSc: the systems' right-hand side,
// the true residual, a monitor that checks its calls, one that counts kernels and
// allreduces per iteration, and one call for every solver. The solvers' common
// cases come explicitly instantiated, as a user may have them
// (kfuse/solvers/extern.hpp): compiled once, in solver_instances.cpp, for every
// solver test.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <kfuse/kfuse.hpp>
#include <kfuse/solvers/extern.hpp>

#include "../support/mpi_calls.hpp"

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

/// Kernels and allreduces per solver iteration: a monitor that reads the kernel counter
/// and the allreduce count (mpi_calls.hpp) at iterations `first` and `last`. A monitor
/// costs an allreduce an iteration of its own (SolverOptions::monitor), which
/// allreduces_per_iteration() leaves out.
struct IterationCounts {
  const kfuse::KernelCounter& counter;
  int first, last;
  std::int64_t kernels_at_first = 0, kernels_at_last = 0;
  std::int64_t allreduces_at_first = 0, allreduces_at_last = 0;
  std::function<void(int, double)> monitor() {
    return [this](int it, double) {
      if (it == first) {
        kernels_at_first = counter.compute_kernels();
        allreduces_at_first = kfuse_test::allreduce_calls();
      }
      if (it == last) {
        kernels_at_last = counter.compute_kernels();
        allreduces_at_last = kfuse_test::allreduce_calls();
      }
    };
  }
  // Means over the iterations, not rounded: one iteration's extra launch or allreduce
  // shows as a fraction.
  double kernels_per_iteration() const {
    return double(kernels_at_last - kernels_at_first) / (last - first);
  }
  /// -1 where nothing is counted (no MPI): compare with expected_allreduces(n).
  double allreduces_per_iteration() const {
    if (!kfuse_test::counts_allreduces()) return -1;
    return double(allreduces_at_last - allreduces_at_first) / (last - first) - 1;
  }
};
/// n, or -1 where nothing is counted (as IterationCounts::allreduces_per_iteration()).
inline double expected_allreduces(int n) { return kfuse_test::counts_allreduces() ? n : -1; }

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
