// doctest runner for every kfuse test program: MPI and Kokkos come up once
// through kfuse::Environment; each rank runs the same test cases. It also counts
// MPI_Allreduce calls (mpi_calls.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <kfuse/kfuse.hpp>

#include "mpi_calls.hpp"

namespace {
std::int64_t allreduces = 0;
}  // namespace

namespace kfuse_test {
bool counts_allreduces() { return KFUSE_ENABLE_MPI != 0; }
std::int64_t allreduce_calls() { return allreduces; }
}  // namespace kfuse_test

#if KFUSE_ENABLE_MPI
// The profiling interface's wrapper, with mpi.h's signature.
extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm) {
  ++allreduces;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  doctest::Context context(argc, argv);
  // One full report (rank 0); other ranks print only their failures.
  if (env.comm().rank() != 0) context.setOption("minimal", true);
  const int failed = context.run();
  return env.comm().allreduce(failed, kfuse::ReduceOp::max);
}
