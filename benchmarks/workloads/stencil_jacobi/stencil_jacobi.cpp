// Jacobi sweep + residual as kfuse user code: one program, run on (u, v) and
// (v, u) alternately by rebinding (ping-pong).
#include <string>
#include <utility>

#include "stencil_jacobi.hpp"

namespace kfuse::bench::stencil_jacobi {
namespace {

using Array2 = Array<double, 2>;

template <class Policy>
auto make_sweep(const Array2& u, const Array2& v, const Scalar<double>& res) {
  return kfuse::fuse<Policy>(u, v, res, [](auto u, auto v, auto res) {
    using kfuse::shift;
    return kfuse::seq(
        kfuse::assign(v, 0.25 * (shift<-1, 0>(u) + shift<1, 0>(u) + shift<0, -1>(u) +
                                 shift<0, 1>(u))),
        kfuse::reduce(res, kfuse::sum(kfuse::pow(v - u, 2))));
  });
}

template <class Policy>
class Kfuse final : public Variant {
 public:
  explicit Kfuse(const Setup& setup)
      : n_(setup.size),
        grid_(make_grid(setup)),
        u_(grid_, "u"),
        v_(grid_, "v"),
        res_("res"),
        sweep_(make_sweep<Policy>(u_, v_, res_)) {
    if constexpr (std::is_same_v<Policy, kfuse::Fused>)
      static_assert(Program::kernel_count == 1 && Program::allreduce_count == 1,
                    "Jacobi sweep + residual: one kernel, one allreduce");
  }
  void reset() override {
    initialise(u_, n_);
    initialise(v_, n_);
    steps_ = 0;
  }
  void step() override {
    if (steps_++ % 2 == 0)
      sweep_(u_, v_, res_);
    else
      sweep_(v_, u_, res_);
  }
  Fields result() const override {
    return {field_of("u", steps_ % 2 ? v_ : u_), field_of("res", res_.value())};
  }
  Figures figures() const override {
    return program_figures(sweep_, static_cast<double>(grid_.global_size()));
  }

 private:
  using Program = decltype(make_sweep<Policy>(std::declval<const Array2&>(),
                                              std::declval<const Array2&>(),
                                              std::declval<const Scalar<double>&>()));
  std::int64_t n_;
  Grid<2> grid_;
  Array2 u_, v_;
  Scalar<double> res_;
  Program sweep_;
  int steps_ = 0;
};

#if KFUSE_BENCH_COMPILES(REST)
KFUSE_BENCH_REGISTER(register_workload(Workload{
    "stencil_jacobi",
    "2-D 5-point Jacobi sweep + residual sum((v-u)^2), ping-pong by rebinding",
    2048,
    10,
    1e-12,
    [](const Setup& s) { return std::to_string(s.size) + "x" + std::to_string(s.size); },
    min_bytes,
    "benchmarks/workloads/stencil_jacobi/stencil_jacobi.cpp",
    "benchmarks/workloads/stencil_jacobi/stencil_jacobi_kokkos.cpp",
    [](const Setup& s) { return 16.0 * double(s.size) * double(s.size); },  // u, v
    true}));
#endif
KFUSE_BENCH_REGISTER(register_policies<Kfuse>("stencil_jacobi"));

}  // namespace
}  // namespace kfuse::bench::stencil_jacobi
