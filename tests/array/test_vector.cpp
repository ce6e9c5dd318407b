// Vector<T> on a RowMap: eager expressions, reductions, fused programs with
// vector statements (one kernel; vector and grid statements never share
// one), memory temporaries on the row map, index<0>, gather, and the
// row-map checks, and the huge-page advice behind large host allocations.
// Runs at 1, 2 and 4 ranks.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

constexpr std::int64_t n = 37;  // uneven over 2 and 4 ranks

double f(std::int64_t i) { return std::cos(0.1 * double(i)) + 0.01 * double(i); }
double g(std::int64_t i) { return 1.0 + 0.5 * std::sin(0.2 * double(i)); }

void init(kfuse::Vector<double>& x, kfuse::Vector<double>& y) {
  x.fill_with(KOKKOS_LAMBDA(std::int64_t i) {
    return kfuse::detail::math::cos(0.1 * double(i)) + 0.01 * double(i);
  });
  y.fill_with(KOKKOS_LAMBDA(std::int64_t i) {
    return 1.0 + 0.5 * kfuse::detail::math::sin(0.2 * double(i));
  });
}

// The kernel's flags of the mapping that holds `address` (/proc/self/smaps' VmFlags), or ""
// where there is no such file; "hg" among them once madvise(MADV_HUGEPAGE) has taken.
std::string vm_flags(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' '))
      inside = begin <= at && at < end;  // a mapping's header line: "begin-end perms ..."
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

std::vector<double> host(double (*h)(std::int64_t)) {
  std::vector<double> out(n);
  for (std::int64_t i = 0; i < n; ++i) out[i] = h(i);
  return out;
}

}  // namespace

TEST_CASE("RowMap splits rows like PETSC_DECIDE and checks its arguments") {
  kfuse::Comm comm;
  kfuse::RowMap map(comm, n);
  CHECK(map.global_size() == n);
  std::int64_t total = comm.allreduce(map.local_size(), kfuse::ReduceOp::sum);
  CHECK(total == n);
  for (int r = 0; r < comm.size(); ++r) {
    CHECK(map.size_of(r) == n / comm.size() + (r < n % comm.size() ? 1 : 0));
    if (map.size_of(r) > 0) CHECK(map.owner(map.begin_of(r)) == r);
  }
  CHECK(map == kfuse::RowMap(comm, n));
  CHECK(map != kfuse::RowMap(comm, n + 1));
  CHECK(kfuse::RowMap::from_local_size(comm, map.local_size()) == map);
  // One rank passing another size (or a negative one, on one rank): every rank throws.
  if (comm.size() > 1)
    CHECK_THROWS_AS(kfuse::RowMap(comm, comm.rank() == comm.size() - 1 ? n + 1 : n), kfuse::Error);
  CHECK_THROWS_AS(kfuse::RowMap(comm, comm.rank() == comm.size() - 1 ? -1 : n), kfuse::Error);
}

TEST_CASE("eager vector expressions and reductions equal host loops") {
  kfuse::RowMap map(kfuse::Comm(), n);
  kfuse::Vector<double> x(map, "x"), y(map, "y"), z(map, "z");
  init(x, y);
  kfuse_test::check_close(x.gather(), host(f), 1e-15);

  z = 2.0 * x - kfuse::exp(y) / (x * x + 1.0) + kfuse::cast<double>(kfuse::index<0>());
  std::vector<double> want(n);
  for (std::int64_t i = 0; i < n; ++i)
    want[i] = 2.0 * f(i) - std::exp(g(i)) / (f(i) * f(i) + 1.0) + double(i);
  kfuse_test::check_close(z.gather(), want, 1e-14);

  double dot = 0, mx = -1e300;
  for (std::int64_t i = 0; i < n; ++i) dot += f(i) * g(i), mx = std::max(mx, f(i));
  CHECK(kfuse::eval(kfuse::dot(x, y)) == doctest::Approx(dot).epsilon(1e-13));
  CHECK(kfuse::eval(kfuse::reduce_max(x)) == mx);
  const std::vector<double> gs = host(g);
  CHECK(kfuse::eval(kfuse::norm2(y)) ==
        doctest::Approx(std::sqrt(std::inner_product(gs.begin(), gs.end(), gs.begin(), 0.0)))
            .epsilon(1e-13));

  z = x;  // copies values, bit for bit (a GPU's cos may differ from the host's in the last bit)
  kfuse_test::check_close(z.gather(), x.gather(), 0);
  const auto on_root = x.gather(0);
  CHECK(on_root.size() == (map.comm().rank() == 0 ? std::size_t(n) : 0u));
}

TEST_CASE("fused vector statements: one kernel, temporaries, rebinding") {
  kfuse::RowMap map(kfuse::Comm(), n);
  kfuse::Vector<double> x(map, "x"), y(map, "y"), r(map, "r");
  init(x, y);
  kfuse::Scalar<double> alpha("alpha"), rr("rr"), big("big");
  alpha = 0.75;
  auto axpy = kfuse::fuse(x, y, r, alpha, rr, big, kfuse::temporary<double>,
                          [](auto x, auto y, auto r, auto alpha, auto rr, auto big, auto t) {
                            return kfuse::seq(kfuse::assign(t, alpha * x), kfuse::assign(r, y - t),
                                              kfuse::reduce(rr, kfuse::dot(r, r)),
                                              kfuse::reduce(big, kfuse::reduce_max(kfuse::abs(r))));
                          });
  static_assert(decltype(axpy)::kernel_count == 1 && decltype(axpy)::allreduce_count == 1);
  CHECK(axpy.explain().find("row map") != std::string::npos);
  kfuse::KernelCounter counter;
  axpy();
  CHECK(counter.compute_kernels() == 1);
  double want_rr = 0, want_big = 0;
  std::vector<double> want(n);
  for (std::int64_t i = 0; i < n; ++i) {
    want[i] = g(i) - 0.75 * f(i);
    want_rr += want[i] * want[i];
    want_big = std::max(want_big, std::abs(want[i]));
  }
  kfuse_test::check_close(r.gather(), want, 1e-15);
  CHECK(rr.value() == doctest::Approx(want_rr).epsilon(1e-13));
  CHECK(big.value() == want_big);

  // Rebinding: swap x and y.
  axpy(y, x, r, alpha, rr, big);
  for (std::int64_t i = 0; i < n; ++i) want[i] = f(i) - 0.75 * g(i);
  kfuse_test::check_close(r.gather(), want, 1e-15);

  // Unfused materialises intermediates as vectors on the row map.
  auto unfused = kfuse::fuse<kfuse::Unfused>(
      x, y, r, alpha, rr, big, kfuse::temporary<double>,
      [](auto x, auto y, auto r, auto alpha, auto rr, auto big, auto t) {
        return kfuse::seq(kfuse::assign(t, alpha * x), kfuse::assign(r, y - t),
                          kfuse::reduce(rr, kfuse::dot(r, r)),
                          kfuse::reduce(big, kfuse::reduce_max(kfuse::abs(r))));
      });
  unfused();
  for (std::int64_t i = 0; i < n; ++i) want[i] = g(i) - 0.75 * f(i);
  kfuse_test::check_close(r.gather(), want, 1e-15);
  CHECK(rr.value() == doctest::Approx(want_rr).epsilon(1e-13));
}

TEST_CASE("vector and grid statements never share a kernel (rule 1)") {
  kfuse::Comm comm;
  kfuse::RowMap map(comm, n);
  kfuse::Grid<1> grid(comm, {n});
  kfuse::Vector<double> x(map, "x"), y(map, "y");
  kfuse::Array<double, 1> a(grid, "a"), b(grid, "b");
  init(x, y);
  a.fill(2.0);
  auto mixed = kfuse::fuse(x, y, a, b, [](auto x, auto y, auto a, auto b) {
    return kfuse::seq(kfuse::assign(y, x + 1.0), kfuse::assign(b, a * 3.0));
  });
  static_assert(decltype(mixed)::kernel_count == 2);
  mixed();
  std::vector<double> want = host(f);
  for (auto& w : want) w += 1.0;
  kfuse_test::check_close(y.gather(), want, 1e-15);
  kfuse_test::check_close(b.gather(), std::vector<double>(n, 6.0), 0);
}

TEST_CASE("vectors on different row maps: kfuse::Error on every rank, nothing runs") {
  kfuse::Comm comm;
  kfuse::RowMap map(comm, n), other(comm, n + 3);
  kfuse::Vector<double> x(map, "x"), y(map, "y"), w(other, "w");
  init(x, y);
  // Unchanged: bit for bit what init wrote (the device's cos and sin, not the host's).
  const std::vector<double> x0 = x.gather(), y0 = y.gather();
  CHECK_THROWS_WITH_AS(x = y + w, doctest::Contains("lives on row map"), kfuse::Error);
  kfuse_test::check_close(x.gather(), x0, 0);
  auto body = [](auto x, auto y) { return kfuse::assign(y, 2.0 * x); };
  CHECK_THROWS_WITH_AS(kfuse::fuse(w, y, body), doctest::Contains("different row maps"),
                       kfuse::Error);
  kfuse_test::check_close(y.gather(), y0, 0);
}

TEST_CASE("a view taken from a temporary Vector keeps its memory") {
  // As the hand-written multigrid takes `inverse_diagonal(...).view()`: the Vector's
  // view owns a share of the allocation (its data lie inside a larger, aligned one).
  kfuse::Comm comm;
  kfuse::RowMap map(comm, n);
  const auto kept = [&] {
    kfuse::Vector<double> x(map, "x");
    x.fill(3.0);
    return x.view();
  }();
  kfuse::Vector<double> y(map, "y");  // may take the memory of a freed x
  y.fill(-1.0);
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), kept);
  REQUIRE(std::int64_t(host.extent(0)) == map.local_size());
  std::int64_t threes = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i) threes += host(i) == 3.0;
  CHECK(threes == map.local_size());
}

TEST_CASE("large host allocations ask for transparent huge pages, small ones do not") {
  // kfuse advises HostSpace only (not memory a GPU driver maps, even host-accessible).
  if constexpr (!std::is_same_v<kfuse::Vector<double>::view_type::memory_space,
                                Kokkos::HostSpace>) {
    MESSAGE("not HostSpace: huge pages are a host allocation's matter");
    return;
  }
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled") ||
      !std::ifstream("/proc/self/smaps")) {
    MESSAGE("no transparent huge pages in this kernel: nothing to check");
    return;
  }
  // kfuse's advice (KFUSE_HUGE_PAGES=0 turns it off) or glibc's, which also covers
  // kfuse's allocations when GLIBC_TUNABLES has glibc.malloc.hugetlb=1.
  const char* setting = std::getenv("KFUSE_HUGE_PAGES");
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool glibc_advises =
      tunables != nullptr && std::string(tunables).find("hugetlb=1") != std::string::npos;
  const bool kfuse_advises = setting == nullptr || std::string(setting) != "0";
  const bool wanted = kfuse_advises || glibc_advises;
  const auto advised = [](const void* address) {
    return vm_flags(address).find(" hg") != std::string::npos;
  };
  kfuse::Comm comm;
  // 8 MiB of doubles a rank: its middle lies in the advised, 2 MiB-aligned part.
  kfuse::Vector<double> big(kfuse::RowMap(comm, comm.size() * (std::int64_t{1} << 20)), "big");
  const double* middle = big.view().data() + big.view().extent(0) / 2;
  if (vm_flags(middle).empty()) {  // a kernel (or sandbox) whose smaps has no VmFlags
    MESSAGE("/proc/self/smaps gives no VmFlags here: nothing to check");
    return;
  }
  CHECK(advised(middle) == wanted);
  if (kfuse_advises) {
    // kfuse's own placement: the data start on a 2 MiB boundary (an Array's plus its
    // stagger within a page), so that huge pages cover them from the first byte; the
    // last huge page too when the data fill at least half of it (else the tail stays
    // on small pages: no unused megabytes).
    const auto huge_aligned = [](const void* address) {
      return reinterpret_cast<std::uintptr_t>(address) % (std::uintptr_t{2} << 20) < 4096;
    };
    CHECK(huge_aligned(big.view().data()));
    CHECK(advised(big.view().data()));
    CHECK(advised(big.view().data() + big.view().extent(0) - 1));  // 8 MiB: 4 whole ones
    // As swe's arrays at 2 ranks: 4 MiB and 23 KiB (its last huge page all but empty),
    // and 7 MiB and 23 KiB (its last one more than half full).
    for (const std::int64_t columns : {1024, 1792}) {
      CAPTURE(columns);
      kfuse::Grid<2> grid(comm, {512 * comm.size(), columns},
                          kfuse::GridOptions<2>{1, {true, true}});
      kfuse::Array<double, 2> a(grid, "a");
      const auto& v = a.view();
      REQUIRE(v.span() * sizeof(double) > (std::size_t{4} << 20));
      CHECK(huge_aligned(v.data()));
      CHECK(advised(v.data()));
      const auto end = reinterpret_cast<std::uintptr_t>(v.data() + v.span());
      const bool half_full = 2 * (end % (std::uintptr_t{2} << 20)) >= (std::uintptr_t{2} << 20);
      if (half_full || !glibc_advises) CHECK(advised(v.data() + v.span() - 1) == half_full);
    }
  }
  // A CSR matrix's entries (copied from the host after the advice): about 8 MB a rank.
  const auto A = kfuse::poisson2d<double>(comm, 500, 400 * comm.size());
  REQUIRE(A.values().extent(0) * sizeof(double) >= (std::size_t{6} << 20));
  CHECK(advised(A.values().data() + A.values().extent(0) / 2) == wanted);
  // Below 4 MiB kfuse leaves the pages to the system's default.
  if (!glibc_advises) {
    kfuse::Vector<double> small(kfuse::RowMap(comm, comm.size() * 1000), "small");
    CHECK_FALSE(advised(small.view().data()));
  }
}
