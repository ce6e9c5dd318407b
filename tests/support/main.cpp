// doctest runner for every kfuse test program: MPI and Kokkos come up once
// through kfuse::Environment; each rank runs the same test cases.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <kfuse/kfuse.hpp>

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  doctest::Context context(argc, argv);
  // One full report (rank 0); other ranks print only their failures.
  if (env.comm().rank() != 0) context.setOption("minimal", true);
  const int failed = context.run();
  return env.comm().allreduce(failed, kfuse::ReduceOp::max);
}
