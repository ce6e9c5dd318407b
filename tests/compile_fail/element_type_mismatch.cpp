// float and double arrays do not mix without kfuse::cast.
#include <kfuse/kfuse.hpp>
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
  kfuse::detail::ArrayParam<1, float, 2> f;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto e = u + f;
#else
  auto e = u + kfuse::cast<double>(f);
#endif
  (void)e;
}
