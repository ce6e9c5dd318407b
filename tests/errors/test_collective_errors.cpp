// Collective errors: a mistake that only one rank makes must end in
// kfuse::Error on every rank (agreed before any rank throws), never in a hang
// (ctest's short timeout turns a hang into a failure). Each case has the last
// rank differ, asserts that this rank caught the error, and then that every
// rank did.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <kfuse/kfuse.hpp>

#include "error_support.hpp"

using kfuse_test::check_error_everywhere;
using kfuse_test::odd_one_out;

TEST_CASE("one rank passes another extent to Grid") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;  // nothing to disagree with
  const std::int64_t ny = odd_one_out() ? 13 : 12;
  check_error_everywhere(
      [&] {
        kfuse::Grid<2> grid(comm, {10, ny});
      },
      "kfuse::Grid: ranks passed different extents in dimension 1 (12 and 13)");
}

TEST_CASE("one rank passes other grid options") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::GridOptions<3> options{1, {false, odd_one_out(), false}};
  check_error_everywhere(
      [&] {
        kfuse::Grid<3> grid(comm, {8, 8, 8}, options);
      },
      "kfuse::Grid: ranks passed different periodic flags");
}

TEST_CASE("one rank names another checkpoint file") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {9, 9});
  kfuse::Array<double, 2> u(grid, "u");
  u.fill(2.0);
  kfuse::save_checkpoint("shared.ckpt", u);
  const std::string path = odd_one_out() ? "elsewhere.ckpt" : "shared.ckpt";
  check_error_everywhere([&] { kfuse::save_checkpoint(path, u); },
                         "kfuse::save_checkpoint: rank " + std::to_string(comm.size() - 1) +
                             " passed 'elsewhere.ckpt' but rank 0 passed 'shared.ckpt'");
  check_error_everywhere([&] { kfuse::load_checkpoint(path, u); },
                         "kfuse::load_checkpoint: rank " + std::to_string(comm.size() - 1) +
                             " passed 'elsewhere.ckpt'");
}

TEST_CASE("one rank loads into an array of another label") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {9, 9});
  kfuse::Array<double, 2> u(grid, "u"), other(grid, odd_one_out() ? "v" : "u");
  u.fill(2.0);
  kfuse::save_checkpoint("labels.ckpt", u);
  other.fill(1.0);
  check_error_everywhere([&] { kfuse::load_checkpoint("labels.ckpt", other); },
                         "kfuse::load_checkpoint: rank " + std::to_string(comm.size() - 1) +
                             " passed 'v' float64 9x9 but rank 0 passed 'u' float64 9x9");
  CHECK(other.gather() == std::vector<double>(81, 1.0));  // unchanged on every rank
}

TEST_CASE("one rank writes VTK output of arrays on two grids") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {8, 8}), other(comm, {8, 9});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(other, "w");
  check_error_everywhere([&] { kfuse::write_vtk("vtk/u", u, odd_one_out() ? w : v); },
                         "kfuse::write_vtk: array 'w' lives on grid 8x9");
}

TEST_CASE("one rank binds a program to an array of another grid") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {8, 8}), other(comm, {8, 9});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(other, "w");
  u.mark_halo_stale();
  auto step = kfuse::fuse(u, v, [](auto u, auto v) {
    return kfuse::seq(kfuse::assign(v, kfuse::shift<1, 0>(u) + kfuse::shift<-1, 0>(u)));
  });
  check_error_everywhere([&] { step(u, odd_one_out() ? w : v); },
                         "are used in one kernel but live on different grids");
  u.fill(1.0);
  step();  // the binding (u, v) stayed, on every rank
  CHECK(v.gather() == std::vector<double>(64, 2.0));
}

// detail::prepare_leaves (include/kfuse/program/eager.hpp) agrees on the outcome
// of its checks before the halo exchange, which the other ranks would
// otherwise wait in.
TEST_CASE("one rank assigns eagerly from an array of another grid") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {8, 8}), other(comm, {8, 9});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(other, "w");
  u.mark_halo_stale();
  check_error_everywhere([&] { v = kfuse::shift<1, 0>(odd_one_out() ? w : u); },
                         "kfuse::Array::operator=: 'w' lives on grid 8x9");
}

TEST_CASE("a checkpoint file that one rank cannot see") {
  const kfuse::Comm comm;
  if (comm.size() < 2) return;
  kfuse::Grid<2> grid(comm, {9, 9});
  kfuse::Array<double, 2> u(grid, "u");
  u.fill(2.0);
  kfuse::save_checkpoint("seen.ckpt", u);
  // The same relative path, from another working directory on the last rank.
  const auto home = std::filesystem::current_path();
  if (odd_one_out()) {
    std::filesystem::create_directories("elsewhere");
    std::filesystem::current_path("elsewhere");
  }
  u.fill(1.0);
  check_error_everywhere([&] { kfuse::load_checkpoint("seen.ckpt", u); },
                         "kfuse::load_checkpoint: ");
  CHECK(u.gather() == std::vector<double>(81, 1.0));
  // A save that one rank cannot write leaves the old checkpoint as it was.
  check_error_everywhere([&] { kfuse::save_checkpoint("seen.ckpt", u); },
                         "kfuse::save_checkpoint: cannot create 'seen.ckpt.tmp'");
  std::filesystem::current_path(home);
  kfuse::load_checkpoint("seen.ckpt", u);
  CHECK(u.gather() == std::vector<double>(81, 2.0));
}
