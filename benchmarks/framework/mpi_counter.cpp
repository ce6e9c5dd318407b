#include "mpi_counter.hpp"

#include <kfuse/dist/comm.hpp>  // mpi.h, when KFUSE_ENABLE_MPI

namespace kfuse::bench {
namespace {
std::int64_t allreduce_calls = 0;
}  // namespace

bool AllreduceCounter::counting() { return KFUSE_ENABLE_MPI != 0; }
std::int64_t AllreduceCounter::calls() { return allreduce_calls; }

}  // namespace kfuse::bench

#if KFUSE_ENABLE_MPI
// The profiling-interface wrapper: same signature as mpi.h's declaration.
extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm) {
  ++kfuse::bench::allreduce_calls;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif
