// Arrays of different ranks cannot be combined.
#include <kfuse/kfuse.hpp>
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
  kfuse::detail::ArrayParam<1, double, 3> w;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto e = u + w;
#else
  auto e = u + u;
#endif
  (void)e;
}
