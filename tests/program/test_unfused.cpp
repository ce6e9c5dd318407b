// The Unfused rewrite (plan/unfused.hpp) on programs that repeat sub-expressions:
// an operation is computed once while nothing it reads is written; an occurrence
// with other constants evaluates in place; Black-Scholes written naturally (d1, d2
// and the discount reused, no temporaries; host backends) against a host loop.
// Runs at 1, 2 and 4 ranks.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

constexpr std::int64_t n = 37;

void init(kfuse::Array<double, 1>& a, double lo, double step) {
  a.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return lo + step * double(i); });
}

template <class Program>
int launches(Program& program) {
  kfuse::KernelCounter counter;
  program();
  return counter.compute_kernels();
}

std::vector<double> host(double lo, double step) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(lo + step * double(i));
  return out;
}

}  // namespace

TEST_CASE("Unfused: a repeated operation is one kernel, its later uses read its temporary") {
  kfuse::Grid<1> grid(kfuse::Comm(), {n});
  kfuse::Array<double, 1> x(grid, "x"), y(grid, "y"), a(grid, "a");
  init(x, 1.0, 0.5);
  init(y, -2.0, 0.25);
  // x + y appears twice (no constants: always the same values): t = x + y, a = t * t.
  auto p = kfuse::fuse<kfuse::Unfused>(
      x, y, a, [](auto x, auto y, auto a) { return kfuse::assign(a, (x + y) * (x + y)); });
  static_assert(decltype(p)::kernel_count == 2);
  CHECK(launches(p) == 2);
  CHECK(p.explain().find("(t3 * t3)") != std::string::npos);
  std::vector<double> want;
  for (std::int64_t i = 0; i < n; ++i) want.push_back(std::pow(-1.0 + 0.75 * double(i), 2));
  kfuse_test::check_close(a.gather(), want, 1e-15);
}

TEST_CASE("Unfused: the same operation with other constants is evaluated in place") {
  kfuse::Grid<1> grid(kfuse::Comm(), {n});
  kfuse::Array<double, 1> x(grid, "x"), a(grid, "a"), b(grid, "b");
  init(x, 1.0, 0.5);
  // 2 * x and 3 * x have one type; 3 * x must not read 2 * x's temporary. 2 * x again
  // (bit for bit the same constant) reads it. 0.0 * x and -0.0 * x differ too (1 / it is
  // +inf or -inf), and so do the two where()s around them.
  auto p = kfuse::fuse<kfuse::Unfused>(x, a, b, [](auto x, auto a, auto b) {
    return kfuse::seq(kfuse::assign(a, 1.0 / (2.0 * x + 3.0 * x + 2.0 * x)),
                      kfuse::assign(b, kfuse::where(1.0 / (0.0 * x) > 0.0, 1.0, 0.0) +
                                           kfuse::where(1.0 / (-0.0 * x) > 0.0, 10.0, 0.0)));
  });
  const std::string text = p.explain();
  INFO(text);
  CHECK(text.find("assign t4 = (t3 + (3 * x))\n") != std::string::npos);
  CHECK(text.find("assign t5 = (t4 + t3)\n") != std::string::npos);
  CHECK(text.find("where(((1 / (-0 * x)) > 0), 10, 0)") != std::string::npos);
  CHECK(launches(p) == decltype(p)::kernel_count);
  std::vector<double> want_a;
  for (std::int64_t i = 0; i < n; ++i) want_a.push_back(1.0 / (7.0 * (1.0 + 0.5 * double(i))));
  kfuse_test::check_close(a.gather(), want_a, 1e-15);
  kfuse_test::check_close(b.gather(), std::vector<double>(n, 1.0), 0.0);
}

TEST_CASE("Unfused: operations of one type with other data are not shared") {
  kfuse::Grid<1> grid(kfuse::Comm(), {n});
  kfuse::Array<double, 1> x(grid, "x"), a(grid, "a");
  init(x, 0.5, 0.125);
  auto p = kfuse::fuse<kfuse::Unfused>(x, a, [](auto x, auto a) {
    return kfuse::assign(a, kfuse::pow(x, 2) + kfuse::pow(x, 3) + kfuse::pow(x, 2));
  });
  p();
  std::vector<double> want;
  for (double xi : host(0.5, 0.125)) want.push_back(2 * xi * xi + xi * xi * xi);
  kfuse_test::check_close(a.gather(), want, 1e-14);

  // A * x and B * x for two captured matrices have one type; B * x must not read A * x's
  // temporary. The fused program (each product in place) is the reference.
  const kfuse::Comm comm;
  const auto A = kfuse::poisson2d<double>(comm, 9, 7, "A");
  const auto B = kfuse::convection_diffusion2d<double>(comm, 9, 7, 1.0, 0.5, "B");
  kfuse::Vector<double> v(A.domain(), "v"), y(A.range(), "y"), z(A.range(), "z");
  v.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 1.0 + 0.25 * double(i % 5); });
  auto body = [&A, &B](auto v, auto y) { return kfuse::assign(y, A * v + B * v + A * v); };
  auto unfused = kfuse::fuse<kfuse::Unfused>(v, y, body);
  auto fused = kfuse::fuse(v, z, body);
  unfused();
  fused();
  kfuse_test::check_close(y.gather(), z.gather(), 1e-14);
  INFO(unfused.explain());
  CHECK(unfused.explain().find("assign t3 = (t2 + B * v)\n") != std::string::npos);
}

TEST_CASE("Unfused: an operation is computed again after a statement writes what it reads") {
  kfuse::Grid<1> grid(kfuse::Comm(), {n});
  kfuse::Array<double, 1> x(grid, "x"), y(grid, "y"), a(grid, "a"), b(grid, "b");
  kfuse::Scalar<double> s("s");
  init(x, 0.1, 0.05);
  init(y, 1.0, -0.05);
  auto p = kfuse::fuse<kfuse::Unfused>(x, y, a, b, s, [](auto x, auto y, auto a, auto b, auto s) {
    return kfuse::seq(kfuse::assign(a, kfuse::exp(x * y) + 1.0),        // t = x * y, t' = exp(t)
                      kfuse::assign(x, kfuse::exp(x * y) - 1.0),        // reads t' (x unchanged)
                      kfuse::reduce(s, kfuse::sum(kfuse::exp(x * y))),  // x changed: again
                      kfuse::assign(b, kfuse::exp(x * y) * s));         // s changed, x * y not
  });
  // a: x * y, exp, root (3); x: root, reading exp's temporary (1); x changed, so s: x * y
  // again and the sum of exp (2); b: exp, whose sum was a root and not held, and root (2).
  static_assert(decltype(p)::kernel_count == 3 + 1 + 3 + 1);
  CHECK(launches(p) == decltype(p)::kernel_count);
  const std::vector<double> x0 = host(0.1, 0.05), y0 = host(1.0, -0.05);
  std::vector<double> want_a, want_x, want_b;
  double want_s = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    want_a.push_back(std::exp(x0[i] * y0[i]) + 1.0);
    want_x.push_back(std::exp(x0[i] * y0[i]) - 1.0);
    want_s += std::exp(want_x[i] * y0[i]);
  }
  for (std::int64_t i = 0; i < n; ++i) want_b.push_back(std::exp(want_x[i] * y0[i]) * want_s);
  kfuse_test::check_close(a.gather(), want_a, 1e-14);
  kfuse_test::check_close(x.gather(), want_x, 1e-14);
  CHECK(s.value() == doctest::Approx(want_s).epsilon(1e-13));
  kfuse_test::check_close(b.gather(), want_b, 1e-13);
}

// Host backends only: nvcc's front end (cudafe++) spends over 16 minutes of this machine
// on any Unfused program of ~60 kernels (Black-Scholes with temporaries, before this
// rewrite, as long as this one), more than the nvcc stage can give one test; the rewrite
// does not depend on the backend, and the GPU harness builds this program in kfuse-bench.
#if !defined(KOKKOS_ENABLE_CUDA)
namespace {

// ---- Black-Scholes as a user writes it first ---------------------------------------

constexpr double R = 0.02, V = 0.3;

template <class D>
auto cnd(const D& d) {  // Abramowitz-Stegun: k and c are sub-expressions, used again
  auto k = 1.0 / (1.0 + 0.2316419 * kfuse::abs(d));
  auto c =
      0.39894228 * kfuse::exp(-0.5 * d * d) * k *
      (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + 1.330274429 * k))));
  return kfuse::where(d > 0.0, 1.0 - c, c);
}

double host_cnd(double d) {
  const double k = 1.0 / (1.0 + 0.2316419 * std::abs(d));
  const double c =
      0.39894228 * std::exp(-0.5 * d * d) * k *
      (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + 1.330274429 * k))));
  return d > 0.0 ? 1.0 - c : c;
}

}  // namespace

TEST_CASE("Unfused: Black-Scholes written naturally is one kernel per distinct operation") {
  kfuse::Grid<1> grid(kfuse::Comm(), {n});
  kfuse::Array<double, 1> S(grid, "S"), X(grid, "X"), T(grid, "T"), call(grid, "call"),
      put(grid, "put");
  init(S, 5.0, 0.7);
  init(X, 1.0, 2.7);
  init(T, 0.25, 0.26);
  auto price = kfuse::fuse<kfuse::Unfused>(
      S, X, T, call, put, [](auto S, auto X, auto T, auto call, auto put) {
        auto d1 = (kfuse::log(S / X) + (R + 0.5 * V * V) * T) / (V * kfuse::sqrt(T));
        auto d2 = d1 - V * kfuse::sqrt(T);
        auto discount = X * kfuse::exp(-R * T);
        return kfuse::seq(kfuse::assign(call, S * cnd(d1) - discount * cnd(d2)),
                          kfuse::assign(put, discount * (1.0 - cnd(d2)) - S * (1.0 - cnd(d1))));
      });
  // The trees hold 808 operations (d1 is copied into each of its uses); the rewrite makes
  // a kernel for each of the 58 distinct ones below the two roots, and the roots'.
  static_assert(decltype(price)::kernel_count == 60);
  CHECK(launches(price) == 60);
  const std::vector<double> s = host(5.0, 0.7), x = host(1.0, 2.7), t = host(0.25, 0.26);
  std::vector<double> want_call, want_put;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d1 = (std::log(s[i] / x[i]) + (R + 0.5 * V * V) * t[i]) / (V * std::sqrt(t[i]));
    const double d2 = d1 - V * std::sqrt(t[i]);
    const double discount = x[i] * std::exp(-R * t[i]);
    want_call.push_back(s[i] * host_cnd(d1) - discount * host_cnd(d2));
    want_put.push_back(discount * (1.0 - host_cnd(d2)) - s[i] * (1.0 - host_cnd(d1)));
  }
  kfuse_test::check_close(call.gather(), want_call, 1e-13);
  kfuse_test::check_close(put.gather(), want_put, 1e-13);
}
#endif
