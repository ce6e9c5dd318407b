// Running programs: the three policies agree with each other and with host
// loops, ping-pong rebinding, eager NumPy semantics, counted kernel launches,
// and the run-time binding checks. Runs at 1, 2 and 4 ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/mpi_calls.hpp"
#include "../support/reference.hpp"

namespace {

constexpr std::int64_t nx = 13, ny = 11;

/// One Jacobi sweep + residual on the host, fixed boundaries holding f.
struct HostJacobi {
  std::vector<double> u;  // (nx + 2) x (ny + 2) with the boundary ring
  static double f(std::int64_t i, std::int64_t j) { return std::sin(0.3 * i) + 0.1 * j * j; }
  HostJacobi() : u((nx + 2) * (ny + 2)) {
    for (std::int64_t i = -1; i <= nx; ++i)
      for (std::int64_t j = -1; j <= ny; ++j) at(u, i, j) = f(i, j);
  }
  static double& at(std::vector<double>& a, std::int64_t i, std::int64_t j) {
    return a[(i + 1) * (ny + 2) + (j + 1)];
  }
  double step() {  // u <- stencil(u), returns sum((v-u)^2)
    std::vector<double> v = u;
    double res = 0;
    for (std::int64_t i = 0; i < nx; ++i)
      for (std::int64_t j = 0; j < ny; ++j) {
        at(v, i, j) =
            0.25 * (at(u, i - 1, j) + at(u, i + 1, j) + at(u, i, j - 1) + at(u, i, j + 1));
        res += std::pow(at(v, i, j) - at(u, i, j), 2);
      }
    u = v;
    return res;
  }
  std::vector<double> owned() {
    std::vector<double> out;
    for (std::int64_t i = 0; i < nx; ++i)
      for (std::int64_t j = 0; j < ny; ++j) out.push_back(at(u, i, j));
    return out;
  }
};

void init(kfuse::Array<double, 2>& a) {
  a.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
    return kfuse::detail::math::sin(0.3 * double(i)) + 0.1 * double(j * j);
  });
}

auto jacobi_body = [](auto u, auto v, auto res) {
  return kfuse::seq(kfuse::assign(v, 0.25 * (kfuse::shift<-1, 0>(u) + kfuse::shift<1, 0>(u) +
                                             kfuse::shift<0, -1>(u) + kfuse::shift<0, 1>(u))),
                    kfuse::reduce(res, kfuse::sum(kfuse::pow(v - u, 2))));
};

template <class Policy>
void check_ping_pong() {
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  init(u);
  init(v);
  kfuse::Scalar<double> res("res");
  auto step = kfuse::fuse<Policy>(u, v, res, jacobi_body);
  HostJacobi host;
  for (int it = 0; it < 4; ++it) {
    const double want = host.step();
    if (it % 2 == 0)
      step(u, v, res);
    else
      step(v, u, res);
    CHECK(res.value() == doctest::Approx(want).epsilon(1e-12));
  }
  kfuse_test::check_close(u.gather(), host.owned(), 1e-14);
}

/// A one-rank communicator on every rank: reductions that MPI does not join.
kfuse::Comm one_rank() {
#if KFUSE_ENABLE_MPI
  return kfuse::Comm(MPI_COMM_SELF);
#else
  return kfuse::Comm();
#endif
}

/// sum(values) as host launches associate it: each call (a run of
/// `per_call` consecutive values) sums value k of the call into lane
/// k % host_lanes, in order, joins the lanes pairwise (0+1, 2+3, ..., then
/// pairs of pairs), and the calls' sums are joined in call order.
double host_launch_sum(const std::vector<double>& values, std::size_t per_call) {
  constexpr int lanes = kfuse::detail::host_lanes;
  double total = 0;
  for (std::size_t begin = 0; begin < values.size(); begin += per_call) {
    double lane[lanes] = {};
    for (std::size_t k = begin; k < std::min(values.size(), begin + per_call); ++k)
      lane[(k - begin) % lanes] += values[k];
    for (int step = 1; step < lanes; step *= 2)
      for (int l = 0; l + step < lanes; l += 2 * step) lane[l] += lane[l + step];
    total += lane[0];
  }
  return total;
}

/// Values whose sum depends on the order of the additions.
KOKKOS_INLINE_FUNCTION double uneven(std::int64_t k) {
  return 1e7 * kfuse::detail::math::sin(0.37 * double(k)) + 1e-3 * double(k % 7);
}

}  // namespace

TEST_CASE("Jacobi ping-pong equals the host loop under every policy") {
  SUBCASE("Fused") { check_ping_pong<kfuse::Fused>(); }
  SUBCASE("PerStatement") { check_ping_pong<kfuse::PerStatement>(); }
  SUBCASE("Unfused") { check_ping_pong<kfuse::Unfused>(); }
}

TEST_CASE("counted kernel launches and allreduces per run equal kernel_count and allreduce_count") {
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  init(u);
  kfuse::Scalar<double> res("res");
  auto fused = kfuse::fuse(u, v, res, jacobi_body);
  auto per = kfuse::fuse<kfuse::PerStatement>(u, v, res, jacobi_body);
  auto unfused = kfuse::fuse<kfuse::Unfused>(u, v, res, jacobi_body);
  kfuse::KernelCounter counter;
  auto count = [&](auto& program) {
    u.mark_halo_stale();  // force the exchange kernels too; they must not count
    counter.reset();
    program();
    return counter.compute_kernels();
  };
  CHECK(count(fused) == decltype(fused)::kernel_count);
  CHECK(count(per) == decltype(per)::kernel_count);
  CHECK(count(unfused) == decltype(unfused)::kernel_count);
  CHECK(decltype(unfused)::kernel_count > decltype(fused)::kernel_count);

  // Allreduces (counted in MPI builds): a run makes allreduce_count of them, a rebind one
  // more, its checks' agreement (docs/user-guide.md, "Running and rebinding").
  if (kfuse_test::counts_allreduces()) {
    auto allreduces = [&](auto&& run) {
      const std::int64_t before = kfuse_test::allreduce_calls();
      run();
      return kfuse_test::allreduce_calls() - before;
    };
    static_assert(decltype(fused)::allreduce_count == 1);
    CHECK(allreduces([&] { fused(); }) == 1);
    CHECK(allreduces([&] { per(); }) == decltype(per)::allreduce_count);
    CHECK(allreduces([&] { unfused(); }) == decltype(unfused)::allreduce_count);
    CHECK(allreduces([&] { fused(v, u, res); }) == 1 + 1);
    CHECK(allreduces([&] { fused.rebind(u, v, res); }) == 1);
  }

  // Rebinding keeps the memory temporaries (allocated once, at fuse()): a
  // rebound run launches nothing more than a plain run.
  counter.reset();
  unfused();
  const kfuse::KernelCounts plain = counter.counts();
  counter.reset();
  unfused(u, v, res);
  CHECK(counter.counts().other == plain.other);
  CHECK(counter.counts().compute == plain.compute);
}

TEST_CASE("a stencil's host calls prefetch each array's leading row and each stored row") {
  using kfuse::detail::ParamRead;
  using kfuse::detail::reads_other_row;
  static_assert(reads_other_row<ParamRead<0, double, 2, std::integer_sequence<int, 1, 0>>>::value);
  static_assert(
      reads_other_row<ParamRead<0, double, 3, std::integer_sequence<int, 0, -1, 0>>>::value);
  static_assert(!reads_other_row<ParamRead<0, double, 2, std::integer_sequence<int, 0, 1>>>::value);
  static_assert(!reads_other_row<ParamRead<0, double, 1, std::integer_sequence<int, 1>>>::value);

  using View = kfuse::detail::view_t<double, 2>;
  const View u("u", 6, 10), v("v", 6, 10), w("w", 6, 10);
  kfuse::detail::PrefetchRows<3, 1> rows;
  const int north[] = {-1, 0}, south[] = {1, 0}, east[] = {0, 1}, centre[] = {0, 0};
  for (const int* offset : {north, south, east, centre}) rows.add_read(u, offset);
  rows.add_read(w, centre);
  rows.add_read(v, centre);  // stored below: an update in place
  rows.add_store(v);
  rows.finish();

  const auto data = [](const View& a) { return reinterpret_cast<const char*>(a.data()); };
  CHECK(rows.read_count == 2);
  CHECK(rows.read[0].data == data(u));  // u's leading row: the one below the point's
  CHECK(rows.read[0].offset[0] == 1);
  CHECK(rows.read[0].offset[1] == 0);
  CHECK(rows.read[0].stride[0] == std::int64_t(u.stride(0) * sizeof(double)));
  CHECK(rows.read[0].element == std::int64_t(sizeof(double)));
  CHECK(rows.read[1].data == data(w));
  CHECK(rows.read[1].offset[0] == 0);
  CHECK(rows.read[2].data == data(u));  // the slot left empty repeats a filled one
  CHECK(rows.written_count == 1);
  CHECK(rows.written[0].data == data(v));
  CHECK(rows.reads_stored);  // v: its stores do not stream

  // A fourth array read finds no slot: it may be a stored one.
  kfuse::detail::PrefetchRows<3, 1> full;
  const View x("x", 6, 10);
  for (const View* a : {&u, &w, &x}) full.add_read(*a, centre);
  full.add_store(v);
  full.finish();
  CHECK(!full.reads_stored);
  full.add_read(View("y", 6, 10), centre);
  CHECK(full.reads_stored);
}

TEST_CASE("a stencil's stores of arrays it does not read stream to memory, the same values") {
  // Small arrays take the paths of data from memory while `from_memory` lives.
  struct FromMemory {
    FromMemory() { kfuse::detail::cache_share_override() = 1; }
    ~FromMemory() { kfuse::detail::cache_share_override() = -1; }
  };
  // Rows of 47 doubles with the halo: a row starts at each place in a cache line.
  kfuse::Grid<2> grid(kfuse::Comm(), {21, 45});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), a(grid, "a"), b(grid, "b");
  kfuse::Scalar<double> res("res");
  auto jacobi = kfuse::fuse(u, v, res, jacobi_body);
  auto two_stores = kfuse::fuse(u, a, b, [](auto u, auto a, auto b) {
    return kfuse::seq(kfuse::assign(a, kfuse::shift<1, 0>(u) - kfuse::shift<-1, 0>(u)),
                      kfuse::assign(b, u * kfuse::shift<0, -1>(u)));
  });
  auto in_place = kfuse::fuse(
      u, a, [](auto u, auto a) { return kfuse::assign(a, a - 0.1 * kfuse::shift<1, 0>(u)); });
  // Reductions of two kinds and types beside a streamed store, each held between lines.
  kfuse::Scalar<double> peak("peak");
  kfuse::Scalar<kfuse::index_t> above("above");
  auto peak_and_count = kfuse::fuse(u, b, peak, above, [](auto u, auto b, auto peak, auto above) {
    return kfuse::seq(kfuse::assign(b, kfuse::shift<1, 0>(u) - u),
                      kfuse::reduce(peak, kfuse::reduce_max(b)),
                      kfuse::reduce(above, kfuse::sum(b > 0.0)));
  });
  const bool can_stream =
      kfuse::detail::stream_stores_available && KFUSE_HOST_PREFETCH &&
      std::is_same_v<kfuse::detail::default_schedule, kfuse::detail::HostSchedule>;

  // Each program from the same inputs, with ordinary stores, then streamed: the same bits.
  struct Run {
    std::vector<double> v, a, b, a_updated, differences;
    double res = 0, peak = 0;
    kfuse::index_t above = 0, streamed = 0;
  };
  const auto run = [&](bool streams) {
    std::optional<FromMemory> from_memory;
    if (streams) from_memory.emplace();
    init(u);
    v.fill(0.0);
    const kfuse::index_t before = kfuse::detail::streaming_launches();
    Run out;
    jacobi(u, v, res);
    out.res = res.value();
    two_stores();
    in_place();
    out.streamed = kfuse::detail::streaming_launches() - before;
    out.v = v.gather(), out.a = a.gather(), out.b = b.gather();
    in_place();
    out.a_updated = a.gather();
    const kfuse::index_t before_counting = kfuse::detail::streaming_launches();
    peak_and_count(u, b, peak, above);
    if (streams && can_stream) CHECK(kfuse::detail::streaming_launches() > before_counting);
    out.differences = b.gather(), out.peak = peak.value(), out.above = above.value();
    return out;
  };
  const Run plain = run(false), streamed = run(true);
  CHECK(plain.streamed == 0);  // data in the cache
  // Jacobi and the two stores stream (two launches each where the exchange overlaps);
  // the update in place reads what it stores and does not.
  if (can_stream) CHECK(streamed.streamed >= 2);
  kfuse_test::check_close(streamed.v, plain.v, 0);
  kfuse_test::check_close(streamed.a, plain.a, 0);
  kfuse_test::check_close(streamed.b, plain.b, 0);
  kfuse_test::check_close(streamed.a_updated, plain.a_updated, 0);
  // The residual's points add in other lanes (their places in a line): close, not the same bits.
  CHECK(streamed.res == doctest::Approx(plain.res).epsilon(1e-13));
  kfuse_test::check_close(streamed.differences, plain.differences, 0);
  CHECK(streamed.peak == plain.peak);
  CHECK(streamed.above == plain.above);

  // A stencil of rank 3 streams its rows alike (rows of 23 doubles with the halo).
  kfuse::Grid<3> grid3(kfuse::Comm(), {6, 5, 21});
  kfuse::Array<double, 3> p3(grid3, "p3"), q3(grid3, "q3");
  p3.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
    return kfuse::detail::math::sin(0.3 * double(i) + 0.7 * double(j)) + 0.01 * double(k * k);
  });
  auto stencil3 = kfuse::fuse(p3, q3, [](auto p, auto q) {
    return kfuse::assign(
        q, kfuse::shift<1, 0, 0>(p) - 2.0 * kfuse::shift<0, -1, 0>(p) + kfuse::shift<0, 0, 1>(p));
  });
  const auto run3 = [&](bool streams) {
    std::optional<FromMemory> from_memory;
    if (streams) from_memory.emplace();
    q3.fill(0.0);
    const kfuse::index_t before = kfuse::detail::streaming_launches();
    stencil3();
    if (streams && can_stream) CHECK(kfuse::detail::streaming_launches() > before);
    return q3.gather();
  };
  const std::vector<double> q3_plain = run3(false);
  kfuse_test::check_close(run3(true), q3_plain, 0);

  // And the values are the loops': v, and the residual against u.
  const std::vector<double> u0 = u.gather();
  double want_res = 0, want_peak = -std::numeric_limits<double>::infinity();
  kfuse::index_t want_above = 0;
  std::vector<double> want_v(u0.size());
  {
    kfuse::Array<double, 2> host(grid, "host");
    init(host);
    const auto view = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), host.view());
    const std::int64_t h = grid.halo();
    std::vector<double> owned;
    for (std::int64_t i = h; i < h + grid.local_extent(0); ++i)
      for (std::int64_t j = h; j < h + grid.local_extent(1); ++j) {
        const double x = 0.25 * (view(i - 1, j) + view(i + 1, j) + view(i, j - 1) + view(i, j + 1));
        owned.push_back(x);
        want_res += (x - view(i, j)) * (x - view(i, j));
        const double difference = view(i + 1, j) - view(i, j);
        want_peak = std::max(want_peak, difference);
        want_above += difference > 0.0;
      }
    kfuse::Array<double, 2> expected(grid, "expected");
    const auto out = Kokkos::create_mirror_view(expected.view());
    std::size_t at = 0;
    for (std::int64_t i = h; i < h + grid.local_extent(0); ++i)
      for (std::int64_t j = h; j < h + grid.local_extent(1); ++j) out(i, j) = owned[at++];
    Kokkos::deep_copy(expected.view(), out);
    want_v = expected.gather();
    want_res = grid.comm().allreduce(want_res, kfuse::ReduceOp::sum);
    want_peak = grid.comm().allreduce(want_peak, kfuse::ReduceOp::max);
    want_above = grid.comm().allreduce(want_above, kfuse::ReduceOp::sum);
  }
  kfuse_test::check_close(streamed.v, want_v, 1e-15);
  CHECK(streamed.res == doctest::Approx(want_res).epsilon(1e-12));
  CHECK(streamed.peak == want_peak);
  CHECK(streamed.above == want_above);
}

TEST_CASE("arrays made one after another start far apart within a 4 KiB page") {
  // Kernels stream several arrays at once; arrays at nearby offsets modulo
  // 4 KiB make loads wait on unrelated stores (4K aliasing).
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  std::vector<kfuse::Array<double, 2>> arrays;
  for (int k = 0; k < 6; ++k) arrays.emplace_back(grid, "a" + std::to_string(k));
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    const auto at = reinterpret_cast<std::uintptr_t>(arrays[a].view().data());
    CHECK(at % 64 == 0);
    for (std::size_t b = 0; b < a; ++b) {
      const auto other = reinterpret_cast<std::uintptr_t>(arrays[b].view().data());
      const std::uintptr_t gap = (at - other) % 4096;
      CAPTURE(a);
      CAPTURE(b);
      CHECK(std::min(gap, 4096 - gap) >= 512);
    }
  }
  // Zero-initialised, halo included; a handle copy keeps the storage.
  kfuse::Array<double, 2> kept = arrays.front();
  arrays.clear();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), kept.view());
  double largest = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j)
      largest = std::max(largest, std::abs(host(i, j)));
  CHECK(largest == 0.0);
  kept.fill(2.5);
  CHECK(kfuse::eval(kfuse::sum(kept)) == doctest::Approx(2.5 * nx * ny));
}

TEST_CASE("allocate_storage zero-fills every data byte, the last partial word too") {
  // Allocated, dirtied and freed first, so that the allocator's reuse of the block (not
  // fresh pages, zero already) is what the fill must clear; the data at an offset past
  // an alignment (an Array's page and stagger) or at the allocation's start (a Vector's).
  struct Placement {
    std::size_t align, offset;
  };
  for (const Placement at : {Placement{1, 0}, Placement{4096, 704}}) {
    for (std::int64_t n : {1, 7, 8, 9, 63, 4097, 100003}) {
      CAPTURE(n);
      CAPTURE(at.align);
      const std::array<std::int64_t, 1> extent{n};
      {
        auto dirty =
            kfuse::detail::allocate_storage<char>("test", "dirty", extent, at.align, at.offset);
        Kokkos::deep_copy(dirty.allocation, char(0x5a));
      }
      const auto fresh =
          kfuse::detail::allocate_storage<char>("test", "fresh", extent, at.align, at.offset);
      const auto data = reinterpret_cast<std::uintptr_t>(fresh.data());
      CHECK((data - at.offset) % at.align == 0);
      CHECK(fresh.count == std::size_t(n));
      REQUIRE(fresh.first + fresh.count <= fresh.allocation.extent(0));
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fresh.view());
      std::int64_t zeros = 0;
      for (std::int64_t i = 0; i < n; ++i) zeros += host(std::size_t(i)) == 0;
      CHECK(zeros == n);
    }
  }
}

namespace storage_test {
struct Odd {  // 12 bytes: past a page and a stagger, its data may start mid-word
  float a, b, c;
};
}  // namespace storage_test

TEST_CASE("allocate_storage zero-fills elements that start inside an 8-byte word") {
  using storage_test::Odd;  // at namespace scope: a CUDA kernel's type cannot be local
  for (std::int64_t n : {1, 5, 1001}) {
    CAPTURE(n);
    const std::array<std::int64_t, 1> extent{n};
    {
      auto dirty = kfuse::detail::allocate_storage<Odd>("test", "dirty", extent, 4096, 704);
      Kokkos::deep_copy(dirty.allocation, Odd{1.5f, 2.5f, 3.5f});
    }
    const auto fresh = kfuse::detail::allocate_storage<Odd>("test", "fresh", extent, 4096, 704);
    REQUIRE(fresh.first + fresh.count <= fresh.allocation.extent(0));
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fresh.view());
    std::int64_t zeros = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const Odd& e = host(std::size_t(i));
      zeros += e.a == 0.0f && e.b == 0.0f && e.c == 0.0f;
    }
    CHECK(zeros == n);
  }
}

TEST_CASE("overlapped exchange: same values, interior then :boundary launches") {
  // 3-D, periodic in x, fixed in y, zero-gradient in z, halo 2 (a
  // 27-point-like stencil reaching 2 cells, corners read). The interior
  // shrinks by 2 from each face whose halo is not ready before the exchange
  // finishes: faces toward other ranks and mirrored ones; not the faces a
  // rank sends itself (periodic, one rank along x) or holds (fixed).
  constexpr std::int64_t n0 = 12, n1 = 10, n2 = 7;  // wider than 2 x halo per rank at 4 ranks
  std::int64_t boundary_faces = 0;
  auto run = [&](bool overlap, kfuse::KernelCounts* counts) {
    kfuse::GridOptions<3> options{2, {true, false, false}};
    options.boundary = {kfuse::Boundary::fixed, kfuse::Boundary::fixed,
                        kfuse::Boundary::zero_gradient};
    options.overlap = overlap;
    kfuse::Grid<3> grid(kfuse::Comm(), {n0, n1, n2}, options);
    kfuse::Array<double, 3> u(grid, "u"), v(grid, "v");
    u.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
      return double(i * 100 + j * 10 + k) + 0.5 * double(j * k);
    });
    kfuse::Scalar<double> total("total"), peak("peak");
    auto step = kfuse::fuse(u, v, total, peak, [](auto u, auto v, auto total, auto peak) {
      return kfuse::seq(kfuse::assign(v, kfuse::shift<-2, 0, 0>(u) + kfuse::shift<1, 1, 1>(u) -
                                             kfuse::shift<0, -1, 2>(u) + 0.5 * u),
                        kfuse::reduce(total, kfuse::sum(v)),
                        kfuse::reduce(peak, kfuse::reduce_max(v - u)));
    });
    static_assert(decltype(step)::kernel_count == 1 && decltype(step)::allreduce_count == 1);
    {  // Garble every halo cell the exchange must fill (all but y's fixed ones): a read
       // before the exchange delivers it shows in the values.
      const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u.view());
      const std::int64_t h = grid.halo();
      for (std::int64_t i = 0; i < std::int64_t(host.extent(0)); ++i)
        for (std::int64_t j = 0; j < std::int64_t(host.extent(1)); ++j)
          for (std::int64_t k = 0; k < std::int64_t(host.extent(2)); ++k) {
            const std::int64_t at[3] = {i, j, k};
            bool owned = true;
            for (int d = 0; d < 3; ++d)
              owned = owned && at[d] >= h && at[d] < h + grid.local_extent(d);
            const std::int64_t gj = grid.local_begin(1) + j - h;
            if (!owned && gj >= 0 && gj < n1) host(i, j, k) = -1e30;
          }
      Kokkos::deep_copy(u.view(), host);
      u.mark_halo_stale();
    }
    kfuse::KernelCounter counter;
    step();
    if (counts) *counts = counter.counts();
    if (overlap) CHECK(step.explain().find(":boundary") != std::string::npos);
    bool splittable = true;  // an interior remains once 2 cells go from every face
    for (int d = 0; d < 3; ++d) splittable = splittable && grid.local_extent(d) > 4;
    boundary_faces = 0;
    for (int d = 0; d < 3; ++d)
      for (int side = 0; side < 2; ++side)
        boundary_faces += kfuse_test::face_ready_after_start(grid, d, side) ? 0 : 1;
    return std::make_tuple(v.gather(), total.value(), peak.value(), splittable);
  };
  kfuse::KernelCounts counts;
  const auto [with, total_with, peak_with, splittable] = run(true, &counts);
  const auto [without, total_without, peak_without, unused] = run(false, nullptr);
  (void)unused;
  CHECK(with == without);  // bitwise: the same point formula either way
  CHECK(total_with == doctest::Approx(total_without).epsilon(1e-13));
  CHECK(peak_with == peak_without);
  CHECK(counts.compute == 1);
  REQUIRE(splittable);
  CHECK(counts.boundary == boundary_faces);  // a slab per face that is not ready early
  // The host reference for v: x periodic, y fixed, z mirrored.
  auto u_at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    i = (i % n0 + n0) % n0;  // the fixed halo in y holds f at the outside index
    k = k < 0 ? -1 - k : k >= n2 ? 2 * n2 - 1 - k : k;
    return double(i * 100 + j * 10 + k) + 0.5 * double(j * k);
  };
  double want_total = 0;
  const auto want = kfuse_test::make_reference<double>(n0, n1, n2, [&](auto i, auto j, auto k) {
    const double value =
        u_at(i - 2, j, k) + u_at(i + 1, j + 1, k + 1) - u_at(i, j - 1, k + 2) + 0.5 * u_at(i, j, k);
    want_total += value;
    return value;
  });
  kfuse_test::check_close(with, want, 1e-14);
  CHECK(total_with == doctest::Approx(want_total).epsilon(1e-12));
}

TEST_CASE("temporaries: register and memory results match") {
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Array<double, 2> u(grid, "u"), out(grid, "out"), ref(grid, "ref");
  init(u);
  auto p = kfuse::fuse(u, out, kfuse::temporary<double>, kfuse::temporary<double>,
                       [](auto u, auto out, auto t, auto s) {
                         return kfuse::seq(kfuse::assign(t, 2.0 * u + 1.0),
                                           kfuse::assign(s, t * t),  // register
                                           kfuse::assign(out, kfuse::shift<1, 0>(u) + s + t));
                       });
  static_assert(decltype(p)::kernel_count == 1);
  static_assert(decltype(p)::plan::in_register(2) && decltype(p)::plan::in_register(3));
  p();
  ref = kfuse::shift<1, 0>(u) + (2.0 * u + 1.0) * (2.0 * u + 1.0) + (2.0 * u + 1.0);
  kfuse_test::check_close(out.gather(), ref.gather(), 1e-14);

  // A temporary read at an offset must live in memory and is exchanged.
  auto q = kfuse::fuse(u, out, kfuse::temporary<double>, [](auto u, auto out, auto t) {
    return kfuse::seq(kfuse::assign(t, 3.0 * u), kfuse::assign(out, kfuse::shift<0, -1>(t) + t));
  });
  static_assert(!decltype(q)::plan::in_register(2));
  static_assert(decltype(q)::kernel_count == 2);
  q();
  kfuse::Array<double, 2> t3(grid, "t3");
  t3 = 3.0 * u;
  ref = kfuse::shift<0, -1>(t3) + t3;
  // The fixed-boundary halo of a temporary is zero; of t3 too (never filled).
  kfuse_test::check_close(out.gather(), ref.gather(), 1e-14);
}

TEST_CASE("one kernel reads back what its statements stored, in program order") {
  // Stores of a group reach memory after all its statements ran at a point;
  // later statements read the stored values from registers. Each case below
  // is one kernel and must still mean what the statements say in order.
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Array<double, 2> x(grid, "x"), a(grid, "a"), w(grid, "w"), c(grid, "c");
  init(x);
  const std::vector<double> x0 = x.gather();
  kfuse::Scalar<double> total("total");
  auto p = kfuse::fuse(x, a, w, c, total, [](auto x, auto a, auto w, auto c, auto total) {
    return kfuse::seq(kfuse::assign(w, x + 1.0),                    // reads x before x is stored
                      kfuse::assign(a, 2.0 * x),                    // a stored ...
                      kfuse::assign(a, a + kfuse::shift<0, 0>(a)),  // ... and stored again
                      kfuse::assign(x, a - w),                      // x overwritten last
                      kfuse::assign(c, x * kfuse::shift<0, 0>(x)),
                      kfuse::reduce(total, kfuse::sum(x + a)));
  });
  static_assert(decltype(p)::kernel_count == 1);
  p();
  std::vector<double> want_x, want_a, want_w, want_c;
  double want_total = 0;
  for (double x_old : x0) {
    const double wv = x_old + 1.0, av = 4.0 * x_old, xv = av - wv;
    want_w.push_back(wv), want_a.push_back(av), want_x.push_back(xv), want_c.push_back(xv * xv);
    want_total += xv + av;
  }
  kfuse_test::check_close(w.gather(), want_w, 1e-14);
  kfuse_test::check_close(a.gather(), want_a, 1e-14);
  kfuse_test::check_close(x.gather(), want_x, 1e-14);
  kfuse_test::check_close(c.gather(), want_c, 1e-14);
  CHECK(total.value() == doctest::Approx(want_total).epsilon(1e-12));

  // An array captured as a handle may be a bound parameter too: stores stay
  // in order, so the second statement sees the first one's value.
  kfuse::Array<double, 2> y(grid, "y"), z(grid, "z");
  y.fill(1.0);
  const kfuse::Array<double, 2>& y_handle = y;
  auto q = kfuse::fuse(y, z, [&y_handle](auto y, auto z) {
    return kfuse::seq(kfuse::assign(y, 5.0), kfuse::assign(z, y_handle + 1.0));
  });
  q();
  kfuse_test::check_close(z.gather(), std::vector<double>(nx * ny, 6.0), 0);

  // Such a group stores as it goes, so a later statement's read of a stored parameter
  // reads memory after the store, not a value loaded at the point's start (centres_of).
  kfuse::Array<double, 2> v(grid, "v");
  v.fill(2.0);
  const kfuse::Array<double, 2>& v_handle = v;
  auto r = kfuse::fuse(y, z, [&v_handle](auto y, auto z) {
    return kfuse::seq(kfuse::assign(y, 7.0), kfuse::assign(z, y + v_handle));
  });
  r();
  kfuse_test::check_close(z.gather(), std::vector<double>(nx * ny, 9.0), 0);
}

TEST_CASE("host reductions are the same bits at any thread count: lanes, then calls in order") {
  if (!std::is_same_v<kfuse::detail::default_schedule, kfuse::detail::HostSchedule>)
    return;  // the GPU schedule sums in Kokkos' order
  const kfuse::Comm comm = one_rank();
  kfuse::Scalar<double> total("total");
  auto sum_of = [&](const auto& a) {
    kfuse::fuse(a, total, [](auto a, auto total) { return kfuse::reduce(total, kfuse::sum(a)); })();
    return total.value();
  };

  const std::int64_t n = 7 * kfuse::detail::host_chunk + 77;  // rank 1: chunks of host_chunk
  kfuse::Array<double, 1> a1(kfuse::Grid<1>(comm, {n}), "a1");
  a1.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return uneven(i); });
  CHECK(sum_of(a1) == host_launch_sum(a1.gather(), kfuse::detail::host_chunk));

  kfuse::Array<double, 2> a2(kfuse::Grid<2>(comm, {53, 301}), "a2");  // one call per row
  a2.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { return uneven(301 * i + j); });
  CHECK(sum_of(a2) == host_launch_sum(a2.gather(), 301));

  kfuse::Array<double, 3> a3(kfuse::Grid<3>(comm, {9, 11, 70}), "a3");  // one call per (i, j)
  a3.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
    return uneven((11 * i + j) * 70 + k);
  });
  CHECK(sum_of(a3) == host_launch_sum(a3.gather(), 70));
}

// Named, not anonymous: nvcc warns of an unused function of internal linkage (the
// volatile join, which Kokkos 3.4 calls only in some reductions).
namespace reduce_box_test {
/// Sums, over the points of a box, a weight that tells the points apart (exact in
/// doubles, so any order of the adds gives the same sum), and counts the points.
struct WeighPoints {
  struct value_type {
    double weight;
    std::int64_t points;
  };
  KOKKOS_INLINE_FUNCTION static double weight(std::int64_t i, std::int64_t j) {
    return double(1 + i * 7919 + j);
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, value_type& v) const {
    v.weight += weight(i, 0), ++v.points;
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, value_type& v) const {
    v.weight += weight(i, j), ++v.points;
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = {0, 0}; }
  KOKKOS_INLINE_FUNCTION void join(value_type& into, const value_type& from) const {
    into.weight += from.weight, into.points += from.points;
  }
  KFUSE_VOLATILE_JOIN(value_type)
};
}  // namespace reduce_box_test

namespace {
/// Records the points FlatBox::call visits, in call order (3 indices a point).
struct RecordPoint {
  std::int64_t* points;
  std::int64_t* count;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    std::int64_t* p = points + 3 * (*count)++;
    p[0] = i, p[1] = j, p[2] = k;
  }
};
template <std::size_t Bytes>
struct FunctorOf {
  char bytes[Bytes];
};
template <class Policy>
constexpr bool light_weight =
    std::is_same_v<typename Policy::work_item_property,
                   Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>;
}  // namespace

TEST_CASE("GPU launches: a box's flat range visits its points row-major; light-weight hint") {
  // FlatBox: point k of the flat range is the k-th point of the nested loops.
  const kfuse::detail::Box<3> box{{1, -2, 3}, {4, 2, 8}};
  const kfuse::detail::FlatBox<3> flat(box);
  CHECK(flat.size() == 3 * 4 * 5);
  std::vector<std::int64_t> seen(3 * flat.size()), want;
  std::int64_t count = 0;
  for (std::int64_t k = 0; k < flat.size(); ++k) flat.call(k, RecordPoint{seen.data(), &count});
  for (std::int64_t i = 1; i < 4; ++i)
    for (std::int64_t j = -2; j < 2; ++j)
      for (std::int64_t k = 3; k < 8; ++k) want.insert(want.end(), {i, j, k});
  CHECK(seen == want);
  CHECK(kfuse::detail::FlatBox<2>(kfuse::detail::Box<2>{{0, 5}, {3, 5}}).size() == 0);

  // Beyond 2^32 points a flat box divides in 64 bits: the same points.
  const kfuse::detail::Box<3> wide_box{{0, 0, 0}, {std::int64_t(1) << 20, 3, 1 << 12}};
  const kfuse::detail::FlatBox<3> wide(wide_box);
  CHECK(!wide.is_narrow);
  CHECK(flat.is_narrow);
  const std::int64_t last = wide.size() - 1;
  for (std::int64_t k : {std::int64_t(0), std::int64_t(4095), std::int64_t(UINT32_MAX) + 7, last}) {
    CAPTURE(k);
    std::int64_t point[3], one = 0;
    wide.call(k, RecordPoint{point, &one});
    CHECK(point[0] == k / (3 << 12));
    CHECK(point[1] == k / (1 << 12) % 3);
    CHECK(point[2] == k % (1 << 12));
  }

  // NarrowDivisor: exact quotients of every 32-bit numerator, checked at the edges and on a
  // pseudo-random sample, for small, power-of-two, odd and largest divisors.
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return std::uint32_t(state >> 32);
  };
  const std::uint32_t half = 1u << 31;
  std::vector<std::uint32_t> divisors{1,     2,        3,    5,        7,         255,
                                      256,   257,      301,  4096,     8191,      8192,
                                      12345, half - 1, half, half + 1, UINT32_MAX};
  for (int r = 0; r < 200; ++r) divisors.push_back(next() >> (next() % 32) | 1u);
  for (std::uint32_t d : divisors) {
    const kfuse::detail::NarrowDivisor by(d);
    std::vector<std::uint32_t> numerators{0, 1, d - 1, d, UINT32_MAX, UINT32_MAX - 1};
    if (d < UINT32_MAX / 3) numerators.insert(numerators.end(), {2 * d - 1, 2 * d, 3 * d + 1});
    numerators.push_back(UINT32_MAX / d * d - 1);
    numerators.push_back(UINT32_MAX / d * d);
    for (int r = 0; r < 2000; ++r) numerators.push_back(next());
    bool exact = true;
    for (std::uint32_t n : numerators) exact = exact && by.divide(n) == n / d;
    CAPTURE(d);
    CHECK(exact);
  }

  // Functors up to light_functor_bytes launch light-weight (kernel parameters on CUDA).
  using kfuse::detail::light_functor_bytes;
  using Small = decltype(kfuse::detail::range_for<FunctorOf<light_functor_bytes>>(0, 1));
  using Large = decltype(kfuse::detail::range_for<FunctorOf<light_functor_bytes + 8>>(0, 1));
  static_assert(light_weight<Small> && !light_weight<Large>);
  using Teams = Kokkos::TeamPolicy<kfuse::detail::ExecSpace>;
  using SmallTeams =
      decltype(kfuse::detail::light_if_small<FunctorOf<light_functor_bytes>>(Teams(1, 1)));
  using LargeTeams =
      decltype(kfuse::detail::light_if_small<FunctorOf<light_functor_bytes + 8>>(Teams(1, 1)));
  static_assert(light_weight<SmallTeams> && !light_weight<LargeTeams>);
}

namespace for_box_test {
/// Counts the visits of each point of a box (atomically: a GPU schedule's threads run at once).
struct CountVisits {
  Kokkos::View<int**, kfuse::detail::MemSpace> visits;
  std::int64_t lo0, lo1;
  // Rank 3: point (i, j, k) counts in row i - lo0, column (j - lo1) * extent2 + k - lo2.
  std::int64_t lo2 = 0, extent2 = 1;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    Kokkos::atomic_increment(&visits(i - lo0, 0));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    Kokkos::atomic_increment(&visits(i - lo0, j - lo1));
  }
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j, std::int64_t k) const {
    Kokkos::atomic_increment(&visits(i - lo0, (j - lo1) * extent2 + k - lo2));
  }
};
}  // namespace for_box_test

TEST_CASE("for_box visits every point of a box once (GPUs: a team per 256 points)") {
  using for_box_test::CountVisits;
  const auto once = [](const Kokkos::View<int**, kfuse::detail::MemSpace>& visits) {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), visits);
    std::int64_t good = 0;
    for (std::size_t i = 0; i < host.extent(0); ++i)
      for (std::size_t j = 0; j < host.extent(1); ++j) good += host(i, j) == 1;
    return good == std::int64_t(host.size());
  };
  for (std::int64_t n : {0, 1, 255, 256, 257, 3 * 256 + 5, 100003}) {
    CAPTURE(n);
    Kokkos::View<int**, kfuse::detail::MemSpace> line("visits", std::size_t(n), 1);
    kfuse::detail::for_box<1>("test:for_box", {{-3}, {n - 3}}, CountVisits{line, -3, 0});
    CHECK(once(line));
  }
  for (std::int64_t m : {1, 17, 300}) {
    CAPTURE(m);
    Kokkos::View<int**, kfuse::detail::MemSpace> grid("visits", std::size_t(m), 255);
    kfuse::detail::for_box<2>("test:for_box", {{2, 5}, {2 + m, 260}}, CountVisits{grid, 2, 5});
    CHECK(once(grid));
    Kokkos::View<int**, kfuse::detail::MemSpace> block("visits", std::size_t(m), 7 * 13);
    kfuse::detail::for_box<3>("test:for_box", {{-1, 4, 2}, {m - 1, 11, 15}},
                              CountVisits{block, -1, 4, 2, 13});
    CHECK(once(block));
  }
}

TEST_CASE("eager u = shift<1>(u) has NumPy semantics") {
  kfuse::Grid<1> grid(kfuse::Comm(), {20}, kfuse::GridOptions<1>{1, {true}});
  kfuse::Array<double, 1> u(grid, "u");
  u.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return double(i * i); });
  u = kfuse::shift<1>(u) - u;  // periodic: u[i] = u[i+1] - u[i], all from the old u
  std::vector<double> want;
  for (std::int64_t i = 0; i < 20; ++i)
    want.push_back(double(((i + 1) % 20) * ((i + 1) % 20) - i * i));
  kfuse_test::check_close(u.gather(), want, 0);
}

TEST_CASE("a kernel's numbers: conditions on Scalars per run, and every bit kept") {
  // Kernels hold Scalars' values and constants as integers (exec/lower.hpp, HeldValue), so
  // that host loops keep them in registers and split by conditions on them.
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Array<double, 2> x(grid, "x"), p(grid, "p"), s(grid, "s"), y(grid, "y"), z(grid, "z");
  kfuse::Array<float, 2> f(grid, "f");
  init(p);
  s.fill(3.0);
  kfuse::Scalar<double> alpha("alpha"), omega("omega"), value("value");
  kfuse::Scalar<float> narrow("narrow");
  // BiCGSTAB's guarded update (solvers/bicgstab.hpp), and copies of numbers: a Scalar's
  // (y, f) and a constant's, -0.0 (z: p is never above 1e9).
  auto update = kfuse::fuse(x, p, s, y, z, f, alpha, omega, value, narrow,
                            [](auto x, auto p, auto s, auto y, auto z, auto f, auto alpha,
                               auto omega, auto value, auto narrow) {
                              return kfuse::seq(
                                  kfuse::assign(x, x + kfuse::where(alpha != 0.0, alpha * p, 0.0) +
                                                       kfuse::where(omega != 0.0, omega * s, 0.0)),
                                  kfuse::assign(y, kfuse::where(p == p, value, value)),
                                  kfuse::assign(z, kfuse::where(p > 1e9, 1e-310, -0.0)),
                                  kfuse::assign(f, narrow));
                            });
  const std::vector<double> p0 = p.gather();
  for (const double a : {0.0, 0.5})
    for (const double o : {0.0, -2.0})
      for (const double v : {-0.0, 1e-310, std::nan("7"), -HUGE_VAL}) {
        CAPTURE(a);
        CAPTURE(o);
        CAPTURE(v);
        x.fill(1.0);
        alpha = a, omega = o, value = v, narrow = 1.0f / 3.0f;
        update();
        std::vector<double> want_x;
        for (const double pv : p0)
          want_x.push_back(1.0 + (a != 0.0 ? a * pv : 0.0) + (o != 0.0 ? o * 3.0 : 0.0));
        kfuse_test::check_close(x.gather(), want_x, 1e-15);
        for (const double yv : y.gather()) {
          CHECK(std::isnan(yv) == std::isnan(v));
          if (!std::isnan(v)) CHECK((yv == v && std::signbit(yv) == std::signbit(v)));
        }
        for (const double zv : z.gather()) CHECK((zv == 0.0 && std::signbit(zv)));
        for (const float fv : f.gather()) CHECK(fv == 1.0f / 3.0f);
      }
}

TEST_CASE("binding checks throw kfuse::Error before anything runs") {
  kfuse::Grid<2> grid(kfuse::Comm(), {nx, ny});
  kfuse::Grid<2> other(kfuse::Comm(), {nx + 1, ny});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(other, "w");
  kfuse::Scalar<double> res("res");
  SUBCASE("one array bound to two parameters, one written") {
    CHECK_THROWS_WITH_AS(kfuse::fuse(u, u, res, jacobi_body),
                         doctest::Contains("parameters 0 and 1 are both bound to 'u'"),
                         kfuse::Error);
    auto step = kfuse::fuse(u, v, res, jacobi_body);
    CHECK_THROWS_AS(step(v, v, res), kfuse::Error);
    // The binding is unchanged: the program still runs on (u, v).
    init(u);
    step();
    CHECK(res.value() > 0);
  }
  SUBCASE("arrays of one group on different grids") {
    CHECK_THROWS_WITH_AS(kfuse::fuse(u, w, res, jacobi_body),
                         doctest::Contains("live on different grids"), kfuse::Error);
    // Positions in order, whichever statement reads the first.
    auto copy_back = [](auto a, auto b) { return kfuse::assign(b, a + 1.0); };
    const std::string want = "parameters 0 ('w', grid " + other.describe() + ") and 1 ('u', grid " +
                             grid.describe() +
                             ") are used in one kernel but live on different grids";
    CHECK_THROWS_WITH_AS(kfuse::fuse(w, u, copy_back), doctest::Contains(want.c_str()),
                         kfuse::Error);
    CHECK_THROWS_AS(v = u + w, kfuse::Error);
  }
  SUBCASE("a shift wider than the halo") {
    auto wide = [](auto u, auto v) { return kfuse::assign(v, kfuse::shift<2, 0>(u)); };
    CHECK_THROWS_WITH_AS(kfuse::fuse(u, v, wide), doctest::Contains("halo is only 1"),
                         kfuse::Error);
    // The message names the farthest read of the parameter, in whichever kernel it is.
    auto two_kernels = [](auto u, auto v, auto res) {
      return kfuse::seq(kfuse::reduce(res, kfuse::sum(u)),
                        kfuse::assign(v, res * (kfuse::shift<1, 0>(u) + kfuse::shift<0, -3>(u) +
                                                kfuse::shift<-2, 0>(u))));
    };
    CHECK_THROWS_WITH_AS(
        kfuse::fuse(u, v, res, two_kernels),
        doctest::Contains("kfuse::fuse: parameter 0 ('u') is read at offset 3 but its grid's "
                          "halo is only 1; use GridOptions{3} or a narrower stencil"),
        kfuse::Error);
    CHECK_THROWS_AS((v = kfuse::shift<0, -2>(u)), kfuse::Error);
  }
}

TEST_CASE("reduce_box visits every point of a box once (GPUs: a league striding through them)") {
  using reduce_box_test::WeighPoints;
  for (std::int64_t n : {0, 1, 255, 256, 257, 3 * 256 + 5, 100003}) {
    CAPTURE(n);
    WeighPoints::value_type got{};
    kfuse::detail::reduce_box<1>("test:reduce_box", {{2}, {2 + n}}, WeighPoints{}, got);
    double want = 0;
    for (std::int64_t i = 2; i < 2 + n; ++i) want += WeighPoints::weight(i, 0);
    CHECK(got.points == n);
    CHECK(got.weight == want);
  }
  // The cut of a GPU reduction: no more teams than the device holds threads for (an H100: 132
  // multiprocessors of 2048 threads), at least one.
  using kfuse::detail::ReduceLeague;
  for (std::int64_t points : {0, 1, 255, 256, 257, 1 << 20, 67108864, 67108865})
    for (std::int64_t concurrency : {1, 2, 255, 270336}) {
      CAPTURE(points);
      CAPTURE(concurrency);
      const auto league = ReduceLeague::of(points, 256, concurrency);
      CHECK(league.teams >= 1);
      CHECK(league.teams <= std::max<std::int64_t>(1, concurrency / 256));
      CHECK(league.teams <= std::max<std::int64_t>(1, (points + 255) / 256));
    }
  // Its order: every point once, and step s of every thread of every team together covers the
  // window [s * teams * threads, (s + 1) * teams * threads) of the points, threads side by side.
  for (std::int64_t points : {1, 7, 12, 37, 1000})
    for (std::int64_t teams : {1, 3, 5})
      for (std::int64_t threads : {1, 4}) {
        CAPTURE(points);
        CAPTURE(teams);
        CAPTURE(threads);
        std::vector<int> visits(std::size_t(points), 0);
        std::vector<std::vector<std::int64_t>> at_step;  // the points of step s
        for (std::int64_t t = 0; t < teams; ++t)
          for (std::int64_t r = 0; r < threads; ++r)
            for (std::int64_t k = ReduceLeague::first(t, r, threads), s = 0; k < points;
                 k += ReduceLeague::stride(teams, threads), ++s) {
              ++visits[std::size_t(k)];
              if (at_step.size() <= std::size_t(s)) at_step.resize(std::size_t(s) + 1);
              at_step[std::size_t(s)].push_back(k);  // teams and their threads in order
            }
        const std::int64_t window = teams * threads;
        for (std::size_t s = 0; s < at_step.size(); ++s) {
          std::vector<std::int64_t> want;
          for (std::int64_t k = std::int64_t(s) * window;
               k < std::min(points, std::int64_t(s + 1) * window); ++k)
            want.push_back(k);
          CHECK(at_step[s] == want);
        }
        CHECK(std::count(visits.begin(), visits.end(), 1) == points);
      }
  // 2-D, not starting at 0: rows of 301 points, teams across row ends.
  const kfuse::detail::Box<2> box{{3, 1}, {3 + 17, 1 + 301}};
  WeighPoints::value_type got{};
  kfuse::detail::reduce_box("test:reduce_box", box, WeighPoints{}, got);
  double want = 0;
  for (std::int64_t i = 3; i < 20; ++i)
    for (std::int64_t j = 1; j < 302; ++j) want += WeighPoints::weight(i, j);
  CHECK(got.points == 17 * 301);
  CHECK(got.weight == want);
}
