// Checkpoints: round trips of arrays on several grids (bit for bit), the
// file's layout (global row-major data, independent of the rank count), halo
// refresh after a load, and every error case: kfuse::Error on every rank with
// the arrays left as they were.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "io_test_support.hpp"

using kfuse_test::contains;
using kfuse_test::error_of;

namespace {

// Values whose bits are far from round, so a lost or moved bit shows.
KOKKOS_INLINE_FUNCTION double value_of(std::int64_t i, std::int64_t j, std::int64_t k) {
  return 1.0 / double(3 + i) + 0.1 / double(7 + j) + double(k) / 3.0;
}

/// Three arrays of three kinds on three grids, as the tests save them.
struct Fields {
  kfuse::Grid<1> g1;
  kfuse::Grid<2> g2;
  kfuse::Grid<3> g3;
  kfuse::Array<float, 1> a;
  kfuse::Array<double, 2> b;
  kfuse::Array<double, 3> c;

  explicit Fields(bool fill_values)
      : g1(kfuse::Comm(), {37}, kfuse::GridOptions<1>{1, {true}}),
        g2(kfuse::Comm(), {13, 9}, kfuse::GridOptions<2>{2, {true, false}}),
        g3(kfuse::Comm(), {5, 6, 7}),
        a(g1, "a"),
        b(g2, "b"),
        c(g3, "c") {
    fill(fill_values);
  }
  // Not in the constructor: nvcc forbids extended lambdas there.
  void fill(bool fill_values) {
    // As on a fresh start: fill_with sets the fixed-boundary halos too.
    a.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return float(value_of(i, 0, 0)); });
    b.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return value_of(i, j, 1); });
    c.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
      return value_of(i, j, k);
    });
    if (!fill_values) {  // owned cells only: the halos stay as set up
      a = -1.0f;
      b = -1.0;
      c = -1.0;
    }
  }
};

std::uint64_t header_size(const std::string& bytes) {
  std::uint64_t h = 0;
  std::memcpy(&h, bytes.data() + 16, 8);
  return h;
}

}  // namespace

TEST_CASE("save and load arrays of several grids bit for bit") {
  const kfuse::Comm comm;
  Fields saved(true), loaded(false);
  kfuse::save_checkpoint("round_trip.ckpt", saved.a, saved.b, saved.c);
  kfuse::load_checkpoint("round_trip.ckpt", loaded.a, loaded.b, loaded.c);
  CHECK(kfuse_test::bitwise_equal(loaded.a.gather(), saved.a.gather()));
  CHECK(kfuse_test::bitwise_equal(loaded.b.gather(), saved.b.gather()));
  CHECK(kfuse_test::bitwise_equal(loaded.c.gather(), saved.c.gather()));
  CHECK(loaded.a.halo_stale());
  CHECK(loaded.b.halo_stale());

  const auto all_a = saved.a.gather();
  const auto all_b = saved.b.gather();
  const auto all_c = saved.c.gather();
  if (comm.rank() == 0) {
    // The layout: header, then each array's global row-major values.
    const std::string bytes = kfuse_test::read_bytes("round_trip.ckpt");
    REQUIRE(bytes.size() > 28);
    CHECK(bytes.compare(0, 8, "KFUSECKP") == 0);
    std::uint64_t at = header_size(bytes);
    auto section = [&](const auto& values) {
      using T = typename std::decay_t<decltype(values)>::value_type;
      const std::size_t n = values.size() * sizeof(T);
      REQUIRE(at + n <= bytes.size());
      CHECK(std::memcmp(bytes.data() + at, values.data(), n) == 0);
      at += n;
    };
    section(all_a);
    section(all_b);
    section(all_c);
    CHECK(at == bytes.size());
    // The temporary file was renamed, not left behind.
    for (const auto& entry : std::filesystem::directory_iterator("."))
      CHECK_FALSE(contains(entry.path().filename().string(), "round_trip.ckpt.tmp"));
  }
  comm.barrier();
}

TEST_CASE("a loaded array refreshes its halo before a stencil reads it") {
  Fields saved(true), loaded(false);
  kfuse::save_checkpoint("halo.ckpt", saved.b);
  kfuse::load_checkpoint("halo.ckpt", loaded.b);
  // Periodic in x (refreshed by the exchange), fixed in y (kept from fill_with), width 2.
  auto stencil = [](const kfuse::Array<double, 2>& u) {
    kfuse::Array<double, 2> v(u.grid(), "v");
    v = kfuse::shift<-2, 0>(u) + 3.0 * kfuse::shift<1, -1>(u) + 5.0 * kfuse::shift<2, 2>(u) +
        7.0 * kfuse::shift<-1, 1>(u);
    return v.gather();
  };
  CHECK(kfuse_test::bitwise_equal(stencil(loaded.b), stencil(saved.b)));
}

TEST_CASE("saving again replaces the checkpoint") {
  Fields first(true), second(false), loaded(false);
  kfuse::save_checkpoint("replace.ckpt", first.a);
  kfuse::save_checkpoint("replace.ckpt", second.a);
  kfuse::load_checkpoint("replace.ckpt", loaded.a);
  CHECK(kfuse_test::bitwise_equal(loaded.a.gather(), second.a.gather()));
}

TEST_CASE("load errors: kfuse::Error on every rank, arrays unchanged") {
  const kfuse::Comm comm;
  Fields saved(true);
  kfuse::save_checkpoint("good.ckpt", saved.a, saved.b);
  const std::string good = comm.rank() == 0 ? kfuse_test::read_bytes("good.ckpt") : "";

  Fields target(false);
  const auto before_a = target.a.gather();
  const auto before_b = target.b.gather();
  auto unchanged = [&] {
    CHECK(kfuse_test::bitwise_equal(target.a.gather(), before_a));
    CHECK(kfuse_test::bitwise_equal(target.b.gather(), before_b));
  };
  // A damaged copy of good.ckpt, made by rank 0.
  auto damaged = [&](const std::string& name, auto change) {
    kfuse_test::on_root(comm, [&] {
      std::string bytes = good;
      change(bytes);
      kfuse_test::write_bytes(name, bytes);
    });
    return name;
  };
  auto load_error = [&](const std::string& path) {
    return error_of([&] { kfuse::load_checkpoint(path, target.a, target.b); });
  };

  SUBCASE("missing file") {
    const std::string e = load_error("missing.ckpt");
    CHECK(contains(e, "kfuse::load_checkpoint: cannot open 'missing.ckpt'"));
    unchanged();
  }
  SUBCASE("bad magic") {
    const std::string e = load_error(damaged("magic.ckpt", [](std::string& s) { s[3] = 'X'; }));
    CHECK(contains(e, "kfuse::load_checkpoint: 'magic.ckpt' is not a kfuse checkpoint"));
    unchanged();
  }
  SUBCASE("unknown format version") {
    const std::string e = load_error(damaged("version.ckpt", [](std::string& s) {
      const std::uint32_t v = 99;
      std::memcpy(s.data() + 8, &v, 4);
    }));
    CHECK(contains(e, "'version.ckpt' has format version 99; this kfuse reads versions 1 to 2"));
    unchanged();
  }
  SUBCASE("truncated data") {
    const std::string e =
        load_error(damaged("short.ckpt", [](std::string& s) { s.resize(s.size() - 5); }));
    CHECK(contains(e, "kfuse::load_checkpoint: 'short.ckpt' has "));
    CHECK(contains(e, "(truncated)"));
    unchanged();
  }
  SUBCASE("truncated header") {
    const std::string e = load_error(damaged("stub.ckpt", [](std::string& s) { s.resize(40); }));
    CHECK(contains(e, "kfuse::load_checkpoint: 'stub.ckpt' is truncated"));
    unchanged();
  }
  SUBCASE("empty file") {
    const std::string e = load_error(damaged("empty.ckpt", [](std::string& s) { s.clear(); }));
    CHECK(contains(e, "'empty.ckpt' is truncated: 0 bytes"));
    unchanged();
  }
  SUBCASE("another label") {
    kfuse::Array<double, 2> x(target.g2, "x");
    const std::string e = error_of([&] { kfuse::load_checkpoint("good.ckpt", target.a, x); });
    CHECK(contains(
        e, "kfuse::load_checkpoint: array 1 of 'good.ckpt' is 'b' but the array given is 'x'"));
    unchanged();
  }
  SUBCASE("other extents") {
    kfuse::Grid<2> other(comm, {13, 10});
    kfuse::Array<double, 2> b(other, "b");
    const std::string e = error_of([&] { kfuse::load_checkpoint("good.ckpt", target.a, b); });
    CHECK(contains(
        e, "array 1 ('b') of 'good.ckpt' is float64 13x9 but the array given is float64 13x10"));
    unchanged();
  }
  SUBCASE("another element type") {
    kfuse::Array<float, 2> b(target.g2, "b");
    const std::string e = error_of([&] { kfuse::load_checkpoint("good.ckpt", target.a, b); });
    CHECK(contains(e, "is float64 13x9 but the array given is float32 13x9"));
    unchanged();
  }
  SUBCASE("another rank") {
    kfuse::Grid<3> other(comm, {13, 9, 1}, kfuse::GridOptions<3>{0});
    kfuse::Array<double, 3> b(other, "b");
    const std::string e = error_of([&] { kfuse::load_checkpoint("good.ckpt", target.a, b); });
    CHECK(contains(e, "is float64 13x9 but the array given is float64 13x9x1"));
    unchanged();
  }
  SUBCASE("another number of arrays") {
    const std::string e = error_of([&] { kfuse::load_checkpoint("good.ckpt", target.a); });
    CHECK(contains(e, "'good.ckpt' holds 2 arrays ('a', 'b'); the call passed 1 ('a')"));
    unchanged();
  }
  SUBCASE("the intact file still loads") {
    CHECK(load_error("good.ckpt").empty());
    CHECK(kfuse_test::bitwise_equal(target.b.gather(), saved.b.gather()));
  }
}

TEST_CASE("save errors: kfuse::Error on every rank, nothing left behind") {
  const kfuse::Comm comm;
  Fields saved(true);
  SUBCASE("no such directory") {
    const std::string e = error_of([&] { kfuse::save_checkpoint("no/such/dir/x.ckpt", saved.a); });
    CHECK(contains(e, "kfuse::save_checkpoint: cannot create 'no/such/dir/x.ckpt.tmp'"));
  }
  SUBCASE("the path is a directory") {
    kfuse_test::on_root(comm, [] { std::filesystem::create_directories("taken.ckpt"); });
    const std::string e = error_of([&] { kfuse::save_checkpoint("taken.ckpt", saved.a); });
    CHECK(contains(e, "kfuse::save_checkpoint: 'taken.ckpt' is a directory"));
    CHECK(std::filesystem::is_directory("taken.ckpt"));
  }
  if (comm.rank() == 0)
    for (const auto& entry : std::filesystem::directory_iterator("."))
      CHECK_FALSE(contains(entry.path().filename().string(), ".tmp"));
  comm.barrier();
}
