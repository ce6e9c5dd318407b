// Helpers of the error tests: an error that one rank (or every rank) makes must
// end in kfuse::Error on every rank, never in a hang or a crash.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include <kfuse/kfuse.hpp>

namespace kfuse_test {

/// f() must throw kfuse::Error whose message contains `part`, on every rank.
template <class F>
void check_error_everywhere(const F& f, const std::string& part) {
  const kfuse::Comm comm;
  std::string message;
  try {
    f();
  } catch (const kfuse::Error& e) {
    message = e.what();
  }
  INFO("rank " << comm.rank() << ": " << message);
  CHECK(message.find(part) != std::string::npos);
  const int everywhere = comm.allreduce(message.empty() ? 0 : 1, kfuse::ReduceOp::min);
  CHECK(everywhere == 1);
}

/// The rank that makes the mistake: the last one (at one rank, that rank).
inline bool odd_one_out() {
  const kfuse::Comm comm;
  return comm.rank() == comm.size() - 1;
}

}  // namespace kfuse_test
