// kfuse::assign(array, reduction) is rejected: reductions give one value.
#include <kfuse/kfuse.hpp>
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
  kfuse::detail::ArrayParam<1, double, 2> v;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto s = kfuse::assign(v, kfuse::sum(u));
#else
  auto s = kfuse::assign(v, u);
#endif
  (void)s;
}
