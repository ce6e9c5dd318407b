// Every operator, math function and reduction, evaluated eagerly on N = 1,
// 2, 3 grids for float and double, against plain host loops.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <kfuse/kfuse.hpp>

#include "../support/reference.hpp"

namespace {

using kfuse_test::check_close;
using kfuse_test::make_reference;

template <int N>
kfuse::Grid<N> make_grid(const kfuse::Comm& comm) {
  if constexpr (N == 1) return kfuse::Grid<1>(comm, {37});
  if constexpr (N == 2) return kfuse::Grid<2>(comm, {9, 7});
  if constexpr (N == 3) return kfuse::Grid<3>(comm, {5, 4, 6});
}

template <int N>
std::array<std::int64_t, 3> extents() {
  if constexpr (N == 1) return {37, 1, 1};
  if constexpr (N == 2) return {9, 7, 1};
  return {5, 4, 6};
}

// Positive, varied test data: a(i,j,k) and b(i,j,k).
inline double fa(std::int64_t i, std::int64_t j, std::int64_t k) {
  return 0.5 + 0.1 * double(i) + 0.07 * double(j) + 0.03 * double(k);
}
inline double fb(std::int64_t i, std::int64_t j, std::int64_t k) {
  return 1.5 - 0.02 * double(i) + 0.02 * double((j * 3 + k) % 5);
}

template <class T, int N>
void fill_inputs(kfuse::Array<T, N>& a, kfuse::Array<T, N>& b) {
  if constexpr (N == 1) {
    a.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return T(0.5 + 0.1 * double(i)); });
    b.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return T(1.5 - 0.02 * double(i)); });
  } else if constexpr (N == 2) {
    a.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
      return T(0.5 + 0.1 * double(i) + 0.07 * double(j));
    });
    b.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
      return T(1.5 - 0.02 * double(i) + 0.02 * double((j * 3) % 5));
    });
  } else {
    a.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
      return T(0.5 + 0.1 * double(i) + 0.07 * double(j) + 0.03 * double(k));
    });
    b.fill_with(KOKKOS_LAMBDA(std::int64_t i, std::int64_t j, std::int64_t k) {
      return T(1.5 - 0.02 * double(i) + 0.02 * double((j * 3 + k) % 5));
    });
  }
}

template <class T, int N>
void run_operator_checks() {
  auto grid = make_grid<N>(kfuse::Comm());
  kfuse::Array<T, N> a(grid, "a"), b(grid, "b"), out(grid, "out");
  fill_inputs(a, b);
  const auto e = extents<N>();
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  auto A = [](std::int64_t i, std::int64_t j, std::int64_t k) { return T(fa(i, j, k)); };
  auto B = [](std::int64_t i, std::int64_t j, std::int64_t k) { return T(fb(i, j, k)); };
  auto ref = [&](auto f) { return make_reference<T>(e[0], e[1], e[2], f); };
  auto check = [&](const char* what, auto f) {
    INFO(what);
    check_close(out.gather(), ref(f), tol);
  };

  out = a + b;
  check("a + b", [&](auto i, auto j, auto k) { return T(A(i, j, k) + B(i, j, k)); });
  out = a - 2.0 * b;
  check("a - 2b", [&](auto i, auto j, auto k) { return T(A(i, j, k) - T(2) * B(i, j, k)); });
  {
    using namespace kfuse::literals;
    out = a - 2.0_kf * b + 0.39894228_kf;  // literals take the array's type, as 2.0 does
    check("literals", [&](auto i, auto j, auto k) {
      return T(A(i, j, k) - T(2) * B(i, j, k) + T(0.39894228));
    });
  }
  out = a * b / (b + 1.0);
  check("a*b/(b+1)", [&](auto i, auto j, auto k) {
    return T(A(i, j, k) * B(i, j, k) / (B(i, j, k) + T(1)));
  });
  out = -a;
  check("-a", [&](auto i, auto j, auto k) { return T(-A(i, j, k)); });
  out = kfuse::exp(a) + kfuse::log(b) + kfuse::sqrt(a);
  check("exp+log+sqrt", [&](auto i, auto j, auto k) {
    return T(std::exp(A(i, j, k)) + std::log(B(i, j, k)) + std::sqrt(A(i, j, k)));
  });
  out = kfuse::sin(a) * kfuse::cos(b);
  check("sin*cos", [&](auto i, auto j, auto k) {
    return T(std::sin(A(i, j, k)) * std::cos(B(i, j, k)));
  });
  out = kfuse::abs(a - b) + kfuse::pow(a, 3) + kfuse::pow(b, 0.5);
  check("abs, pow", [&](auto i, auto j, auto k) {
    return T(std::abs(A(i, j, k) - B(i, j, k)) + A(i, j, k) * A(i, j, k) * A(i, j, k) +
             std::pow(B(i, j, k), T(0.5)));
  });
  out = kfuse::min(a, b) + 2.0 * kfuse::max(a, b);
  check("min, max", [&](auto i, auto j, auto k) {
    return T(std::min(A(i, j, k), B(i, j, k)) + T(2) * std::max(A(i, j, k), B(i, j, k)));
  });
  out = kfuse::where(a > b, a, -b) + (a <= b) * 10.0;
  check("where, comparisons", [&](auto i, auto j, auto k) {
    const T x = A(i, j, k), y = B(i, j, k);
    return T((x > y ? x : -y) + (x <= y ? T(10) : T(0)));
  });
  out = kfuse::cast<T>(kfuse::index<0>()) * 1.0 + a;
  check("index<0>", [&](auto i, auto j, auto k) { return T(T(i) + A(i, j, k)); });
  if constexpr (N >= 2) {
    out = kfuse::cast<T>(kfuse::index<N - 1>()) + 0.0 * a;
    check("index<N-1>", [&](auto, auto j, auto k) { return T(N == 2 ? j : k); });
  }
  kfuse::Scalar<T> s("s", T(3));
  out = a * s + s;
  check("scalar broadcast", [&](auto i, auto j, auto k) { return T(A(i, j, k) * T(3) + T(3)); });

  // Reductions against host sums.
  const auto av = ref(A), bv = ref(B);
  double sum = 0, dot = 0, sq = 0, mx = -1e300, mn = 1e300, count = 0;
  for (std::size_t n = 0; n < av.size(); ++n) {
    sum += av[n];
    dot += double(av[n]) * double(bv[n]);
    sq += double(av[n] - bv[n]) * double(av[n] - bv[n]);
    mx = std::max(mx, double(av[n]));
    mn = std::min(mn, double(bv[n]));
    count += av[n] > bv[n] ? 1 : 0;
  }
  const double rtol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  CHECK(double(kfuse::eval(kfuse::sum(a))) == doctest::Approx(sum).epsilon(rtol));
  CHECK(double(kfuse::eval(kfuse::dot(a, b))) == doctest::Approx(dot).epsilon(rtol));
  CHECK(double(kfuse::eval(kfuse::norm2(a - b))) == doctest::Approx(std::sqrt(sq)).epsilon(rtol));
  CHECK(double(kfuse::eval(kfuse::reduce_max(a))) == doctest::Approx(mx).epsilon(rtol));
  CHECK(double(kfuse::eval(kfuse::reduce_min(b))) == doctest::Approx(mn).epsilon(rtol));
  const kfuse::index_t counted = kfuse::eval(kfuse::sum(a > b));
  CHECK(double(counted) == count);
  static_assert(std::is_same_v<decltype(kfuse::eval(kfuse::sum(a))), T>,
                "reductions return the element type");
}

}  // namespace

TEST_CASE_TEMPLATE("operators and reductions match host loops, N = 1", T, float, double) {
  run_operator_checks<T, 1>();
}
TEST_CASE_TEMPLATE("operators and reductions match host loops, N = 2", T, float, double) {
  run_operator_checks<T, 2>();
}
TEST_CASE_TEMPLATE("operators and reductions match host loops, N = 3", T, float, double) {
  run_operator_checks<T, 3>();
}

TEST_CASE("scalar constants take the array's element type") {
  kfuse::Grid<1> grid(kfuse::Comm(), {4});
  kfuse::Array<float, 1> f(grid, "f");
  using E = decltype(0.5 * f);
  static_assert(std::is_same_v<kfuse::detail::expr_traits<E>::value_type, float>);
  static_assert(std::is_same_v<kfuse::detail::expr_traits<decltype(f > 0.0)>::value_type, bool>);
}

TEST_CASE("a kernel finds the sparse rows in an operand, which it computes first") {
  using namespace kfuse::detail;
  using Row = SparseRowRead<double, int>;
  using Read = ParamRead<0, double, 1, std::integer_sequence<int, 0>>;
  static_assert(runs_loop_v<Row> && !runs_loop_v<Read>);
  static_assert(runs_loop_v<Binary<Subtract, Read, Row>>);  // b - A x
  static_assert(runs_loop_v<Unary<Negate, Binary<Multiply, Read, Row>>>);
  static_assert(runs_loop_v<Where<Binary<Greater, Read, Read>, Read, Row>>);
  static_assert(!runs_loop_v<Binary<Divide, Unary<Log, Read>, Unary<Sqrt, Read>>>);
}

namespace {
using namespace kfuse::literals;
// Literals are the doubles the compiler reads for the same digits.
template <class L>
bool same_bits(L, double d) {
  return std::memcmp(&L::value, &d, sizeof d) == 0;
}
}  // namespace

TEST_CASE("literals (1.5_kf) are the doubles the compiler reads") {
  CHECK(same_bits(0.39894228_kf, 0.39894228));
  CHECK(same_bits(1.330274429_kf, 1.330274429));
  CHECK(same_bits(0.1_kf, 0.1));
  CHECK(same_bits(2_kf, 2.0));
  CHECK(same_bits(.5_kf, 0.5));
  CHECK(same_bits(1e-3_kf, 1e-3));
  CHECK(same_bits(2.5E+10_kf, 2.5e10));
  CHECK(same_bits(1'000.25_kf, 1000.25));
  CHECK(same_bits(0.0_kf, 0.0));
  CHECK(same_bits(3.141592653589793_kf, 3.141592653589793));
  CHECK(same_bits(123456789012345e-22_kf, 123456789012345e-22));
  CHECK(same_bits(9007199254740992e22_kf, 9007199254740992e22));
}

// Bitwise where the compiler keeps every product apart from the sum it feeds; within a
// rounding where it may contract a * b + c into one fused multiply-add (nvcc's and hipcc's
// default, GCC's on an FMA target): seeing a constant's value, it may contract another pair.
constexpr double literal_rtol =
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL) || \
    defined(__FP_FAST_FMA)
    1e-15;
#else
    0.0;
#endif

TEST_CASE("a program with literals computes what it computes with plain doubles") {
  kfuse::Grid<1> grid(kfuse::Comm(), {1000});
  kfuse::Array<double, 1> a(grid, "a"), u(grid, "u"), v(grid, "v");
  a.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return -2.0 + 0.004 * double(i); });
  // A formula used twice, as Black-Scholes uses its cumulative normal.
  auto twice = [](auto x, auto c1, auto c2) {
    auto f = [&](auto y) { return c1 * kfuse::exp(-c2 * y * y) * (c2 + y); };
    return f(x) + f(x * c1);
  };
  auto with_literals = kfuse::fuse(
      a, u, [&](auto a, auto u) { return kfuse::assign(u, twice(a, 0.39894228_kf, 0.5_kf)); });
  auto with_doubles = kfuse::fuse(
      a, v, [&](auto a, auto v) { return kfuse::assign(v, twice(a, 0.39894228, 0.5)); });
  with_literals();
  with_doubles();
  check_close(u.gather(), v.gather(), literal_rtol);
  CHECK(with_literals.explain().find("0.39894228") != std::string::npos);
  auto unfused = kfuse::fuse<kfuse::Unfused>(
      a, u, [&](auto a, auto u) { return kfuse::assign(u, twice(a, 0.39894228_kf, 0.5_kf)); });
  u.fill(0.0);
  unfused();
  check_close(u.gather(), v.gather(), 1e-15);
}

TEST_CASE("pow(e, n): exact products for n = 1, 2, 3, repeated squaring otherwise") {
  kfuse::Grid<1> grid(kfuse::Comm(), {101});
  kfuse::Array<double, 1> a(grid, "a"), out(grid, "out");
  a.fill_with(KOKKOS_LAMBDA(std::int64_t i) { return 0.37 + 0.0173 * double(i); });
  const std::vector<double> as = a.gather();
  for (int n : {1, 2, 3, 0, -1, -2, -3, 4, 5, 7, 31, 64, -17}) {
    INFO("n = " << n);
    out = kfuse::pow(a, n) + kfuse::pow(a + 1.0, 2);  // two powers in one kernel
    std::vector<double> want;
    for (double v : as) {
      double power = 1;
      for (int k = 0; k < std::abs(n); ++k) power *= v;
      if (n < 0) power = 1 / power;
      want.push_back(power + (v + 1.0) * (v + 1.0));
    }
    // n = 1, 2, 3 multiply exactly as the loop does; larger n square, which
    // rounds differently from n - 1 multiplications.
    check_close(out.gather(), want, std::abs(n) <= 3 && n > 0 ? 0.0 : 1e-13);
  }
}
