// shift<O...> needs one offset per dimension of the array.
#include <kfuse/kfuse.hpp>
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto e = kfuse::shift<1>(u);
#else
  auto e = kfuse::shift<1, 0>(u);
#endif
  (void)e;
}
