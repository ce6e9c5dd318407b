// Sparse products in expressions: eager y = A * x (Kokkos Kernels under the GPU schedule) and
// general eager expressions with A * x, fused groups that consume A * x
// pointwise without materialising it (Ap = A p with p . Ap in one kernel;
// r = b - A x), the interior/boundary overlap of the ghost import, ghost
// reuse while x is unchanged, the three policies, and the binding checks.
// Everything against a host product over the gathered matrix; 1, 2, 4 ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

using Triplets = std::vector<kfuse::detail::Triplet<double>>;

/// y = A x on the host, over the gathered entries.
std::vector<double> host_product(const Triplets& entries, const std::vector<double>& x,
                                 std::int64_t rows) {
  std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
  for (const auto& e : entries) y[e.row] += e.value * x[e.col];
  return y;
}

double xf(std::int64_t i) { return 1.0 + 0.25 * std::sin(0.7 * double(i)); }

void fill_x(kfuse::Vector<double>& x) {
  x.fill_with(KOKKOS_LAMBDA(std::int64_t i) {
    return 1.0 + 0.25 * kfuse::detail::math::sin(0.7 * double(i));
  });
}

std::vector<double> host_x(std::int64_t n) {
  std::vector<double> x(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = xf(i);
  return x;
}

/// A nonsymmetric matrix with couplings far across the row blocks.
kfuse::CsrMatrix<double> scattered_matrix(const kfuse::Comm& comm, std::int64_t n,
                                          unsigned seed = 7) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  if (comm.rank() == 0) {
    std::mt19937 random(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (std::int64_t i = 0; i < n; ++i) {
      rows.push_back(i), cols.push_back(i), vals.push_back(4.0 + 0.01 * double(i));
      for (int k = 0; k < 3; ++k)
        rows.push_back(i), cols.push_back(pick(random)), vals.push_back(-0.3 - 0.1 * k);
    }
  }
  return kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "S");
}

/// Tridiagonal; with `far`, every 16th row (from row 8) also couples to the
/// column half the matrix away, on another rank at 2 and 4 ranks: such a row
/// needs a ghost in the middle of its block, so the interior rows are not
/// consecutive.
kfuse::CsrMatrix<double> banded_matrix(const kfuse::Comm& comm, std::int64_t n, bool far) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> vals;
  if (comm.rank() == 0) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = std::max<std::int64_t>(0, i - 1); j <= std::min(n - 1, i + 1); ++j)
        rows.push_back(i), cols.push_back(j),
            vals.push_back(i == j ? 3.0 + 0.01 * double(i) : -1.0);
      if (far && i % 16 == 8)
        rows.push_back(i), cols.push_back((i + n / 2) % n), vals.push_back(0.5);
    }
  }
  return kfuse::CsrMatrix<double>::from_triplets(comm, n, n, rows, cols, vals, "B");
}

}  // namespace

TEST_CASE("eager y = A * x and expressions with A * x equal the host product") {
  kfuse::Comm comm;
  for (const auto& A : {kfuse::poisson2d<double>(comm, 9, 7), scattered_matrix(comm, 50)}) {
    const std::int64_t n = A.global_rows();
    const Triplets entries = kfuse::detail::gather_triplets(A);
    kfuse::Vector<double> x(A.domain(), "x"), y(A.range(), "y"), b(A.range(), "b");
    fill_x(x);
    b.fill(1.0);
    const auto want = host_product(entries, host_x(n), n);

    y = A * x;  // Kokkos Kernels under the GPU schedule, kfuse's row loop on the host
    kfuse_test::check_close(y.gather(), want, 1e-14);

    y = b - 2.0 * (A * x);  // one fused kernel reading rows of A
    std::vector<double> r(n);
    for (std::int64_t i = 0; i < n; ++i) r[i] = 1.0 - 2.0 * want[i];
    kfuse_test::check_close(y.gather(), r, 1e-14);

    double xax = 0;
    for (std::int64_t i = 0; i < n; ++i) xax += xf(i) * want[i];
    CHECK(kfuse::eval(kfuse::dot(x, A * x)) == doctest::Approx(xax).epsilon(1e-13));

    x = A * x;  // in place: NumPy semantics through a copy
    kfuse_test::check_close(x.gather(), want, 1e-14);
  }
}

TEST_CASE("fused Ap = A p; pAp = p . Ap is one kernel with an overlapped ghost import") {
  kfuse::Comm comm;
  const auto A = scattered_matrix(comm, 64);
  const std::int64_t n = A.global_rows();
  const Triplets entries = kfuse::detail::gather_triplets(A);
  kfuse::Vector<double> p(A.domain(), "p"), Ap(A.range(), "Ap");
  fill_x(p);
  kfuse::Scalar<double> pAp("pAp");
  auto body = [](auto A, auto p, auto Ap, auto pAp) {
    return kfuse::seq(kfuse::assign(Ap, A * p), kfuse::reduce(pAp, kfuse::dot(p, Ap)));
  };
  auto fused = kfuse::fuse(A, p, Ap, pAp, body);
  static_assert(decltype(fused)::kernel_count == 1);
  static_assert(decltype(fused)::allreduce_count == 1);
  static_assert(decltype(fused)::exchange_count == 1);
  auto unfused = kfuse::fuse<kfuse::Unfused>(A, p, Ap, pAp, body);
  static_assert(decltype(unfused)::kernel_count == 2);  // no fusion across statements

  const auto want = host_product(entries, host_x(n), n);
  double want_pap = 0;
  for (std::int64_t i = 0; i < n; ++i) want_pap += xf(i) * want[i];

  kfuse::KernelCounter counter;
  fused();
  const kfuse::KernelCounts first = counter.counts();
  CHECK(first.compute == 1);
  if (A.num_ghosts() > 0) {
    // Boundary rows after the import, when there were interior rows to overlap with.
    CHECK(first.boundary == (A.interior_rows().extent(0) > 0 ? 1 : 0));
  }
  if (comm.size() > 1) CHECK(first.exchange >= 1);  // ghost pack
  kfuse_test::check_close(Ap.gather(), want, 1e-14);
  CHECK(pAp.value() == doctest::Approx(want_pap).epsilon(1e-13));

  counter.reset();
  fused();  // p unchanged: its ghosts are still current, no import
  CHECK(counter.counts().exchange == 0);
  CHECK(counter.counts().compute == 1);

  Ap.fill(0.0);
  pAp = 0.0;
  unfused();
  kfuse_test::check_close(Ap.gather(), want, 1e-14);
  CHECK(pAp.value() == doctest::Approx(want_pap).epsilon(1e-13));
  CHECK(fused.explain().find("S * p") != std::string::npos);
}

TEST_CASE("overlapped products run consecutive interior rows as a range, others by their list") {
  kfuse::Comm comm;
  const std::int64_t n = 200;
  for (const bool far : {false, true}) {
    CAPTURE(far);
    const auto A = banded_matrix(comm, n, far);
    if (comm.size() > 1) {
      REQUIRE(A.interior_rows().extent(0) > 0);
      CHECK(A.interior_range().has_value() == !far);
    }
    const Triplets entries = kfuse::detail::gather_triplets(A);
    kfuse::Vector<double> p(A.domain(), "p"), Ap(A.range(), "Ap");
    fill_x(p);
    kfuse::Scalar<double> pAp("pAp");
    auto fused = kfuse::fuse(A, p, Ap, pAp, [](auto A, auto p, auto Ap, auto pAp) {
      return kfuse::seq(kfuse::assign(Ap, A * p), kfuse::reduce(pAp, kfuse::dot(p, Ap)));
    });
    kfuse::KernelCounter counter;
    fused();
    if (comm.size() > 1) CHECK(counter.counts().boundary == 1);  // overlapped
    const auto want = host_product(entries, host_x(n), n);
    double want_pap = 0;
    for (std::int64_t i = 0; i < n; ++i) want_pap += xf(i) * want[i];
    kfuse_test::check_close(Ap.gather(), want, 1e-14);
    CHECK(pAp.value() == doctest::Approx(want_pap).epsilon(1e-13));
  }
}

TEST_CASE("fused r = b - A x consumes A x pointwise, and p's update invalidates its ghosts") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 8, 9);
  const std::int64_t n = A.global_rows();
  const Triplets entries = kfuse::detail::gather_triplets(A);
  kfuse::Vector<double> x(A.domain(), "x"), b(A.range(), "b"), r(A.range(), "r");
  fill_x(x);
  b.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return double(i % 5); });
  kfuse::Scalar<double> rr("rr");
  auto residual = kfuse::fuse(A, x, b, r, rr, [](auto A, auto x, auto b, auto r, auto rr) {
    return kfuse::seq(kfuse::assign(r, b - A * x), kfuse::reduce(rr, kfuse::dot(r, r)));
  });
  static_assert(decltype(residual)::kernel_count == 1);
  auto scale = kfuse::fuse(x, [](auto x) { return kfuse::assign(x, 0.5 * x); });
  for (int round = 0; round < 2; ++round) {
    residual();
    std::vector<double> hx = host_x(n);
    for (auto& v : hx) v *= std::pow(0.5, round);
    const auto ax = host_product(entries, hx, n);
    std::vector<double> want(n);
    double want_rr = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      want[i] = double(i % 5) - ax[i];
      want_rr += want[i] * want[i];
    }
    kfuse_test::check_close(r.gather(), want, 1e-14);
    CHECK(rr.value() == doctest::Approx(want_rr).epsilon(1e-13));
    scale();  // writes x: the next residual must import fresh ghosts
  }
}

TEST_CASE("a product whose matrix exceeds the cache prefetches it, and equals the host product") {
  using kfuse::detail::host_cache_share;
  using kfuse::detail::lower;
  kfuse::Comm comm;
  const auto prefetches = [](const kfuse::CsrMatrix<double>& A, const kfuse::Vector<double>& x) {
    return lower(A * x, 0).prefetch;  // the ctx serves parameters only
  };
  // A 2-D Poisson matrix whose every rank's block (12 bytes an entry) passes this process's
  // share of the cache; rows of at least 64 points, so that most rows' entries lie within
  // the ahead distance of a row before them.
  const std::int64_t share = std::min<std::int64_t>(host_cache_share(), std::int64_t(64) << 20);
  std::int64_t side = 64;
  while (12 * 5 * side * side / comm.size() <= share * 9 / 8) side += side / 4;
  const auto A = kfuse::poisson2d<double>(comm, side, side);
  kfuse::Vector<double> x(A.domain(), "x"), y(A.range(), "y");
  fill_x(x);
  const auto small = kfuse::poisson2d<double>(comm, 9, 7);
  kfuse::Vector<double> x_small(small.domain(), "x_small");
  if (host_cache_share() > 0) CHECK_FALSE(prefetches(small, x_small));  // 0: unknown, prefetch
  const bool streams = host_cache_share() <= share;  // a cache share above 64 MiB: not tested
  if (streams) CHECK(prefetches(A, x) == kfuse::detail::host_prefetch);

  auto product =
      kfuse::fuse(A, x, y, [](auto A, auto x, auto y) { return kfuse::assign(y, A * x); });
  product();
  // Row (i, j) of the 5-point matrix: 4 x(i, j) less each neighbour inside the grid, summed
  // in the order of the row's columns, as the row loop sums.
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
  const std::int64_t begin = A.range().local_begin();
  double worst = 0;
  for (std::int64_t local = 0; local < A.range().local_size(); ++local) {
    const std::int64_t row = begin + local, i = row / side, j = row % side;
    double want = 0;
    if (i > 0) want += -1.0 * xf(row - side);
    if (j > 0) want += -1.0 * xf(row - 1);
    want += 4.0 * xf(row);
    if (j + 1 < side) want += -1.0 * xf(row + 1);
    if (i + 1 < side) want += -1.0 * xf(row + side);
    worst = std::max(worst, std::abs(got(local) - want) / std::max(1.0, std::abs(want)));
  }
  CHECK(worst <= 1e-14);
}

TEST_CASE("one vector multiplied by two matrices with different ghosts") {
  kfuse::Comm comm;
  const auto A = scattered_matrix(comm, 60, 7), B = scattered_matrix(comm, 60, 11);
  const Triplets a = kfuse::detail::gather_triplets(A), b = kfuse::detail::gather_triplets(B);
  kfuse::Vector<double> x(A.domain(), "x"), y(A.range(), "y"), z(A.range(), "z");
  fill_x(x);
  const auto ax = host_product(a, host_x(60), 60), bx = host_product(b, host_x(60), 60);
  std::vector<double> want(60);
  for (int i = 0; i < 60; ++i) want[i] = ax[i] - 2.0 * bx[i];
  y = A * x - 2.0 * (B * x);  // eager: two imports of x, one buffer each
  kfuse_test::check_close(y.gather(), want, 1e-14);
  auto both = kfuse::fuse(A, B, x, z, [](auto A, auto B, auto x, auto z) {
    return kfuse::assign(z, A * x - 2.0 * (B * x));
  });
  both();
  kfuse_test::check_close(z.gather(), want, 1e-14);
  x.fill(2.0);  // both buffers stale now
  both();
  for (int i = 0; i < 60; ++i) want[i] = 0;
  for (const auto& e : a) want[e.row] += 2.0 * e.value;
  for (const auto& e : b) want[e.row] -= 4.0 * e.value;
  kfuse_test::check_close(z.gather(), want, 1e-14);
}

TEST_CASE("the overlap runs A's interior rows, where another matrix's product reads ghosts") {
  kfuse::Comm comm;
  const auto A = scattered_matrix(comm, 60, 7), B = scattered_matrix(comm, 60, 11);
  const Triplets a = kfuse::detail::gather_triplets(A), b = kfuse::detail::gather_triplets(B);
  kfuse::Vector<double> x(A.domain(), "x"), w(A.domain(), "w"), y(A.range(), "y"),
      z(A.range(), "z");
  w.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 2.0 - 0.01 * double(i); });
  auto bw = kfuse::fuse(B, w, y, [](auto B, auto w, auto y) { return kfuse::assign(y, B * w); });
  auto mixed = kfuse::fuse(A, B, x, w, z, [](auto A, auto B, auto x, auto w, auto z) {
    return kfuse::assign(z, A * x - B * w);
  });
  bw();  // w's ghosts for B are current from here on
  fill_x(x);
  kfuse::KernelCounter counter;
  mixed();  // only x's import for A is pending: it overlaps with A's interior rows
  if (A.num_ghosts() > 0 && A.interior_rows().extent(0) > 0) CHECK(counter.counts().boundary == 1);
  std::vector<double> hw(60);
  for (int i = 0; i < 60; ++i) hw[i] = 2.0 - 0.01 * double(i);
  const auto ax = host_product(a, host_x(60), 60), bw_host = host_product(b, hw, 60);
  std::vector<double> want(60);
  for (int i = 0; i < 60; ++i) want[i] = ax[i] - bw_host[i];
  kfuse_test::check_close(z.gather(), want, 1e-14);
}

TEST_CASE("a vector on the wrong row map for A: kfuse::Error on every rank") {
  kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 6, 6);
  kfuse::RowMap other(comm, 35);
  kfuse::Vector<double> x(other, "x"), y(A.range(), "y");
  CHECK_THROWS_WITH_AS(y = A * x, doctest::Contains("columns of"), kfuse::Error);
  auto body = [](auto A, auto x, auto y) { return kfuse::assign(y, A * x); };
  CHECK_THROWS_WITH_AS(kfuse::fuse(A, x, y, body), doctest::Contains("columns of"), kfuse::Error);
}

TEST_CASE(
    "a fused product into a temporary with two reductions, over many host chunks and threads") {
  kfuse::Comm comm;
  const auto A = scattered_matrix(comm, 5000);  // several host chunks per rank
  const std::int64_t n = A.global_rows();
  const Triplets entries = kfuse::detail::gather_triplets(A);
  kfuse::Vector<double> s(A.domain(), "s"), r(A.range(), "r");
  fill_x(s);
  kfuse::Scalar<double> ts("ts"), tt("tt"), omega("omega");
  auto step = kfuse::fuse(A, s, r, ts, tt, omega, kfuse::temporary<double>,
                          [](auto A, auto s, auto r, auto ts, auto tt, auto omega, auto t) {
                            return kfuse::seq(
                                kfuse::assign(t, A * s), kfuse::reduce(ts, kfuse::dot(t, s)),
                                kfuse::reduce(tt, kfuse::dot(t, t)), kfuse::assign(omega, ts / tt),
                                kfuse::assign(r, s - omega * t));
                          });
  step();

  const auto t = host_product(entries, host_x(n), n);
  double want_ts = 0, want_tt = 0;
  for (std::int64_t i = 0; i < n; ++i) want_ts += t[i] * xf(i), want_tt += t[i] * t[i];
  CHECK(ts.value() == doctest::Approx(want_ts).epsilon(1e-12));
  CHECK(tt.value() == doctest::Approx(want_tt).epsilon(1e-12));
  std::vector<double> want_r(n);
  for (std::int64_t i = 0; i < n; ++i) want_r[i] = xf(i) - (want_ts / want_tt) * t[i];
  kfuse_test::check_close(r.gather(), want_r, 1e-12);
}
