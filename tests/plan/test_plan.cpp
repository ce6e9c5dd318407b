// Plans decided at compile time: kernel, allreduce and exchange counts of
// the acceptance programs (their expected plans: docs/user-guide.md §7), checked with
// static_assert, and the register/memory decision for temporaries.
#include <doctest/doctest.h>

#include <string>

#include <kfuse/kfuse.hpp>

namespace {

// cnd(d): the Abramowitz-Stegun cumulative normal (docs/benchmarks.md, Workloads).
template <class D>
auto cnd(const D& d) {
  auto k = 1.0 / (1.0 + 0.2316419 * kfuse::abs(d));
  auto c = 0.39894228 * kfuse::exp(-0.5 * d * d) * k *
           (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + 1.330274429 * k))));
  return kfuse::where(d > 0.0, 1.0 - c, c);
}

}  // namespace

TEST_CASE("Black-Scholes with shared subexpressions as temporaries is one kernel") {
  kfuse::Grid<1> grid(kfuse::Comm(), {64});
  kfuse::Array<double, 1> S(grid, "S"), X(grid, "X"), T(grid, "T"), call(grid, "call"),
      put(grid, "put");
  const double R = 0.02, V = 0.3;
  auto bs = kfuse::fuse(
      S, X, T, call, put, kfuse::temporary<double>, kfuse::temporary<double>,
      kfuse::temporary<double>, kfuse::temporary<double>,
      [=](auto S, auto X, auto T, auto call, auto put, auto d1, auto d2, auto nd1, auto nd2) {
        return kfuse::seq(
            kfuse::assign(d1, (kfuse::log(S / X) + (R + 0.5 * V * V) * T) / (V * kfuse::sqrt(T))),
            kfuse::assign(d2, d1 - V * kfuse::sqrt(T)), kfuse::assign(nd1, cnd(d1)),
            kfuse::assign(nd2, cnd(d2)),
            kfuse::assign(call, S * nd1 - X * kfuse::exp(-R * T) * nd2),
            kfuse::assign(put, X * kfuse::exp(-R * T) * (1.0 - nd2) - S * (1.0 - nd1)));
      });
  using P = decltype(bs);
  static_assert(P::kernel_count == 1);
  static_assert(P::allreduce_count == 0);
  static_assert(P::exchange_count == 0);
  static_assert(P::plan::in_register(5) && P::plan::in_register(8), "temporaries stay in registers");
  CHECK(bs.explain().find("register") != std::string::npos);
  // STREAM's convention: S, X, T read, call and put written; registers are free.
  CHECK(bs.explain().find("memory traffic: 40 bytes/point (24 read, 16 written)") !=
        std::string::npos);
  static_assert(P::bytes_per_point() == 40, "the figure explain() prints, at compile time");
}

TEST_CASE(
    "explain() counts an array read and written twice, a value written before it is "
    "read once") {
  kfuse::Grid<1> grid(kfuse::Comm(), {64});
  kfuse::Array<double, 1> x(grid, "x"), p(grid, "p"), y(grid, "y");
  kfuse::Scalar<double> s("s");
  auto update = kfuse::fuse(x, p, y, s, [](auto x, auto p, auto y, auto s) {
    return kfuse::seq(kfuse::assign(x, x + 2.0 * p),  // x read and written, p read
                      kfuse::assign(y, 3.0 * x),      // x's new value: no second read
                      kfuse::reduce(s, kfuse::sum(y)));
  });
  static_assert(decltype(update)::kernel_count == 1);
  CHECK(update.explain().find("memory traffic: 32 bytes/point (16 read, 16 written)") !=
        std::string::npos);
  static_assert(decltype(update)::bytes_per_point() == 32);

  // Per statement: three kernels, each reading from memory what the one before wrote.
  auto apart = kfuse::fuse<kfuse::PerStatement>(x, p, y, s, [](auto x, auto p, auto y, auto s) {
    return kfuse::seq(kfuse::assign(x, x + 2.0 * p), kfuse::assign(y, 3.0 * x),
                      kfuse::reduce(s, kfuse::sum(y)));
  });
  static_assert(decltype(apart)::kernel_count == 3);
  static_assert(decltype(apart)::bytes_per_point() == 24 + 16 + 8);
  CHECK(apart.explain().find("memory traffic: 16 bytes/point (8 read, 8 written)") !=
        std::string::npos);
}

TEST_CASE("a plan has no parameter limit: positions past 64 and 128") {
  kfuse::detail::ArrayParam<0, double, 2> u;
  kfuse::detail::ArrayParam<70, double, 2> v;
  kfuse::detail::ArrayParam<130, double, 2> w;
  kfuse::detail::TempParam<129, double> t;
  auto statements = boost::hana::make_tuple(kfuse::assign(t, u + 1.0), kfuse::assign(v, t * 2.0),
                                            kfuse::assign(w, kfuse::shift<1, 0>(v)));
  (void)statements;  // only its type is planned
  using P = kfuse::detail::Plan<kfuse::Fused, decltype(statements), false, 131>;
  static_assert(P::mask_words == 3);
  static_assert(P::kernel_count == 2, "w reads v at an offset after the group wrote v (rule 2)");
  static_assert(P::exchange_count == 1);
  static_assert(P::in_register(129), "t is written, then read pointwise, in one group");
  static_assert(P::statement_facts[1].writes.test(70) && !P::statement_facts[1].writes.test(6));
  static_assert(P::statement_facts[2].neighbour_reads.test(70) &&
                P::statement_facts[2].writes.test(130));
  static_assert(P::statement_facts[0].pointwise.test(0) &&
                P::statement_facts[1].pointwise.test(129));
}

TEST_CASE("Jacobi step + residual: 1 kernel, 1 allreduce, 1 exchange point") {
  kfuse::Grid<2> grid(kfuse::Comm(), {16, 16});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  kfuse::Scalar<double> res("res");
  auto step = kfuse::fuse(u, v, res, [](auto u, auto v, auto res) {
    return kfuse::seq(kfuse::assign(v, 0.25 * (kfuse::shift<-1, 0>(u) + kfuse::shift<1, 0>(u) +
                                               kfuse::shift<0, -1>(u) + kfuse::shift<0, 1>(u))),
                      kfuse::reduce(res, kfuse::sum(kfuse::pow(v - u, 2))));
  });
  static_assert(decltype(step)::kernel_count == 1);
  static_assert(decltype(step)::allreduce_count == 1);
  static_assert(decltype(step)::exchange_count == 1);
  CHECK(step.kernel_labels().front() == "kfuse:group[assign v|reduce res]");
  CHECK(step.explain().find("memory traffic: 16 bytes/point (8 read, 8 written)") !=
        std::string::npos);
  const std::string dot = step.to_dot();
  CHECK(dot.find("digraph") != std::string::npos);
  CHECK(dot.find("s0 -> s1") != std::string::npos);
}

TEST_CASE("a reduction that feeds a later statement splits the kernel (rule 4)") {
  kfuse::Grid<2> grid(kfuse::Comm(), {8, 8});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  kfuse::Scalar<double> total("total"), mean("mean");
  auto p = kfuse::fuse(u, v, total, mean, [](auto u, auto v, auto total, auto mean) {
    return kfuse::seq(kfuse::reduce(total, kfuse::sum(u)), kfuse::assign(mean, total / 64.0),
                      kfuse::assign(v, u - mean));
  });
  static_assert(decltype(p)::kernel_count == 2);
  static_assert(decltype(p)::allreduce_count == 1);
  static_assert(decltype(p)::exchange_count == 0);
}

TEST_CASE("a stencil read after a write in the group splits the kernel (rule 2)") {
  kfuse::Grid<2> grid(kfuse::Comm(), {8, 8});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v"), w(grid, "w");
  auto p = kfuse::fuse(u, v, w, [](auto u, auto v, auto w) {
    return kfuse::seq(kfuse::assign(v, 2.0 * u), kfuse::assign(w, kfuse::shift<1, 0>(v)));
  });
  static_assert(decltype(p)::kernel_count == 2);
  static_assert(decltype(p)::exchange_count == 1);
  // Pointwise reads of what the group wrote stay in one kernel.
  auto q = kfuse::fuse(u, v, w, [](auto u, auto v, auto w) {
    return kfuse::seq(kfuse::assign(v, 2.0 * u), kfuse::assign(w, v + u));
  });
  static_assert(decltype(q)::kernel_count == 1);
}

TEST_CASE("writing an array the group read at an offset splits the kernel (rule 3)") {
  kfuse::Grid<2> grid(kfuse::Comm(), {8, 8});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  auto p = kfuse::fuse(u, v, [](auto u, auto v) {
    return kfuse::seq(kfuse::assign(v, kfuse::shift<0, 1>(u)), kfuse::assign(u, 2.0 * v));
  });
  static_assert(decltype(p)::kernel_count == 2);
}

TEST_CASE("arrays of different ranks never share a kernel (rule 1)") {
  kfuse::Grid<1> g1(kfuse::Comm(), {8});
  kfuse::Grid<2> g2(kfuse::Comm(), {8, 8});
  kfuse::Array<double, 1> x(g1, "x");
  kfuse::Array<double, 2> u(g2, "u");
  auto p = kfuse::fuse(x, u, [](auto x, auto u) {
    return kfuse::seq(kfuse::assign(x, x + 1.0), kfuse::assign(u, u * 2.0));
  });
  static_assert(decltype(p)::kernel_count == 2);
}

TEST_CASE("policies: PerStatement is one kernel per statement, Unfused one per operation") {
  kfuse::Grid<2> grid(kfuse::Comm(), {8, 8});
  kfuse::Array<double, 2> u(grid, "u"), v(grid, "v");
  kfuse::Scalar<double> res("res");
  auto body = [](auto u, auto v, auto res) {
    return kfuse::seq(kfuse::assign(v, 0.25 * (kfuse::shift<-1, 0>(u) + kfuse::shift<1, 0>(u))),
                      kfuse::reduce(res, kfuse::sum(kfuse::pow(v - u, 2))));
  };
  auto per = kfuse::fuse<kfuse::PerStatement>(u, v, res, body);
  auto unf = kfuse::fuse<kfuse::Unfused>(u, v, res, body);
  static_assert(decltype(per)::kernel_count == 2);
  // (shift + shift) -> t, 0.25 * t -> v, v - u -> t, sum(pow(t, 2)) -> res
  static_assert(decltype(unf)::kernel_count == 4);
  static_assert(decltype(unf)::allreduce_count == 1);
}

TEST_CASE("explain() writes every node kind: infix, prefix, functions, where, pow, shifts") {
  kfuse::Grid<1> grid(kfuse::Comm(), {16});
  kfuse::Array<double, 1> u(grid, "u"), v(grid, "v");
  kfuse::Scalar<double> s("s"), m("m");
  auto p = kfuse::fuse(u, v, s, m, [](auto u, auto v, auto s, auto m) {
    return kfuse::seq(
        kfuse::assign(
            v, kfuse::where(!(u > 0.5), -kfuse::exp(u), kfuse::min(u, 2.0) * kfuse::pow(u, 3)) +
                   kfuse::cast<double>(u < 1.0) - kfuse::abs(kfuse::shift<1>(u))),
        kfuse::reduce(s, kfuse::norm2(v - u)), kfuse::reduce(m, kfuse::sum(kfuse::max(u, v))));
  });
  const std::string text = p.explain();
  CHECK(text.find("assign v = ((where(!(u > 0.5), -exp(u), (min(u, 2) * pow(u, 3))) + "
                  "cast((u < 1))) - abs(shift<1>(u)))\n") != std::string::npos);
  CHECK(text.find("reduce s = sqrt(sum(((v - u) * (v - u))))\n") != std::string::npos);
  CHECK(text.find("reduce m = sum(max(u, v))\n") != std::string::npos);
  CHECK(p.kernel_labels()[0] == "kfuse:group[assign v|reduce s|reduce m]");
}
