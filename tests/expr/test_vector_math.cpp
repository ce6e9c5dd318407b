// kfuse's vectorisable exp and log (kfuse/expr/vector_math.hpp): their
// error in ulps against long double expl / logl over the whole domain, the
// special values against std::exp / std::log, and that kernels use them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

namespace vm = kfuse::detail::vector_math;

/// |got - want| in units of the last place of the double nearest to want.
double ulps(double got, long double want) {
  const double nearest = double(want);
  if (got == nearest) return 0;
  const double below = std::nextafter(std::fabs(nearest), 0.0);
  const double ulp =
      nearest == 0 ? std::numeric_limits<double>::denorm_min() : std::fabs(nearest) - below;
  return double(std::fabs((long double)got - want) / (long double)ulp);
}

struct Worst {
  double ulps = 0, at = 0;
  void see(double error, double x) {
    if (error > ulps) ulps = error, at = x;
  }
};

/// Doubles spread over every binade in [lo, hi): uniform bit patterns.
std::vector<double> every_binade(double lo, double hi, int n, std::mt19937_64& random) {
  std::uniform_int_distribution<std::uint64_t> bits(vm::bits_of(lo), vm::bits_of(hi));
  std::vector<double> xs(n);
  for (double& x : xs) x = vm::double_of(bits(random));
  return xs;
}

}  // namespace

TEST_CASE("exp is within 1 ulp of expl over its whole range") {
  if (std::numeric_limits<long double>::digits <= 53) return;  // no wider reference here
  std::mt19937_64 random(2026);
  std::uniform_real_distribution<double> whole(-746.0, 710.0), unit(-1.0, 1.0);
  Worst worst;
  for (int k = 0; k < 200000; ++k) {
    for (double x : {whole(random), unit(random), 1e-3 * unit(random),
                     -708.0 - 37.0 * std::fabs(unit(random))})
      worst.see(ulps(vm::exp(x), std::exp((long double)x)), x);
  }
  for (double x : every_binade(1e-300, 700.0, 100000, random)) {
    worst.see(ulps(vm::exp(x), std::exp((long double)x)), x);
    worst.see(ulps(vm::exp(-x), std::exp(-(long double)x)), -x);
  }
  INFO("worst error " << worst.ulps << " ulp at x = " << worst.at);
  CHECK(worst.ulps <= 1.0);
}

TEST_CASE("log is within 1 ulp of logl over its whole range") {
  if (std::numeric_limits<long double>::digits <= 53) return;
  std::mt19937_64 random(2027);
  std::uniform_real_distribution<double> near_one(0.5, 2.0), tiny(-1e-4, 1e-4);
  Worst worst;
  for (double x : every_binade(std::numeric_limits<double>::denorm_min(),
                               std::numeric_limits<double>::max(), 400000, random))
    worst.see(ulps(vm::log(x), std::log((long double)x)), x);
  for (int k = 0; k < 200000; ++k)
    for (double x : {near_one(random), 1.0 + tiny(random)})
      worst.see(ulps(vm::log(x), std::log((long double)x)), x);
  INFO("worst error " << worst.ulps << " ulp at x = " << worst.at);
  CHECK(worst.ulps <= 1.0);
}

TEST_CASE("exp and log return what std::exp and std::log return at special values") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double min_normal = std::numeric_limits<double>::min();
  const double denorm_min = std::numeric_limits<double>::denorm_min();
  for (double x : {0.0, -0.0, inf, -inf, 709.78, 709.79, 710.0, 1e300, -708.5, -745.13, -745.14,
                   -746.0, -1e300, denorm_min, -denorm_min}) {
    INFO("exp(" << x << ")");
    CHECK(vm::exp(x) == std::exp(x));
  }
  CHECK(std::isnan(vm::exp(nan)));
  for (double x : {0.0, -0.0, 1.0, inf, min_normal, denorm_min, 3 * denorm_min, min_normal / 3,
                   std::numeric_limits<double>::max()}) {
    INFO("log(" << x << ")");
    CHECK(vm::log(x) == std::log(x));
  }
  for (double x : {-1.0, -denorm_min, -inf, nan}) {
    INFO("log(" << x << ")");
    CHECK(std::isnan(vm::log(x)));
  }
}

TEST_CASE("kernels compute exp and log with them on host CPUs, float through double") {
  if (!std::is_same_v<kfuse::detail::ExecSpace, Kokkos::DefaultHostExecutionSpace>) return;
  kfuse::Grid<1> grid(kfuse::Comm(), {1000});
  kfuse::Array<double, 1> x(grid, "x"), y(grid, "y");
  x.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return -30.0 + 0.0617 * double(i); });
  y = kfuse::exp(x) + kfuse::log(kfuse::abs(x));
  const std::vector<double> xs = x.gather();
  std::vector<double> want;
  for (double v : xs) want.push_back(vm::exp(v) + vm::log(std::fabs(v)));
  kfuse_test::check_close(y.gather(), want, 0);

  kfuse::Array<float, 1> xf(grid, "xf"), yf(grid, "yf");
  xf.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 0.001f + 0.05f * float(i); });
  yf = kfuse::exp(-xf) * kfuse::log(xf);
  std::vector<float> want_f;
  for (float v : xf.gather())
    want_f.push_back(float(vm::exp(-double(v))) * float(vm::log(double(v))));
  kfuse_test::check_close(yf.gather(), want_f, 0);
}
