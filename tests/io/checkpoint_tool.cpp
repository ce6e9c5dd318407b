// The program of the killed-save test (tests/io/checkpoint_killed.sh):
//
//   checkpoint_tool save PATH VALUE   saves a 4096 x 2048 array, every cell VALUE
//   checkpoint_tool saves PATH        saves with VALUE 1, 2, 3, ... until killed
//   checkpoint_tool check PATH        loads PATH, prints its VALUE; exit 1 unless
//                                     every cell holds the same whole number >= 1
#include <cstdio>
#include <cstdlib>
#include <string>

#include <kfuse/kfuse.hpp>

namespace {

// Large enough (64 MiB) that writing the data takes a while, so the test can kill a
// save before its header (written last) completes the file.
kfuse::Array<double, 2> field(const kfuse::Comm& comm) {
  kfuse::Grid<2> grid(comm, {4096, 2048});
  return kfuse::Array<double, 2>(grid, "field");
}

int run(const kfuse::Comm& comm, const std::string& command, const std::string& path,
        const char* value) {
  auto u = field(comm);
  if (command == "save" && value != nullptr) {
    u = std::atof(value);
    kfuse::save_checkpoint(path, u);
    return 0;
  }
  if (command == "saves") {
    for (long k = 1;; ++k) {
      u = double(k);
      kfuse::save_checkpoint(path, u);
    }
  }
  if (command == "check") {
    kfuse::load_checkpoint(path, u);
    const double low = kfuse::eval(kfuse::reduce_min(u)), high = kfuse::eval(kfuse::reduce_max(u));
    if (comm.rank() == 0) std::printf("%.17g\n", low);
    return low == high && low >= 1 && low == double(long(low)) ? 0 : 1;
  }
  if (comm.rank() == 0) std::fprintf(stderr, "usage: checkpoint_tool save|saves|check PATH [VALUE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  if (argc < 3) return run(env.comm(), "", "", nullptr);
  try {
    return run(env.comm(), argv[1], argv[2], argc > 3 ? argv[3] : nullptr);
  } catch (const kfuse::Error& e) {
    if (env.comm().rank() == 0) std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
