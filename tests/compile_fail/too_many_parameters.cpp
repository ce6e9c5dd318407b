// A program has at most 64 parameters: their positions are bits of a mask.
#include <kfuse/kfuse.hpp>
#ifndef KFUSE_COMPILE_FAIL_OK
constexpr int last = 64;
#else
constexpr int last = 63;
#endif
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
  kfuse::detail::ArrayParam<last, double, 2> v;
  auto statements = boost::hana::make_tuple(kfuse::assign(v, u + 1.0));
  using Plan = kfuse::detail::Plan<kfuse::Fused, decltype(statements)>;
  static_assert(Plan::kernel_count == 1);
}
