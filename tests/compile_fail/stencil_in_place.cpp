// assign(u, shift<1, 0>(u)) inside a program would race: rejected.
#include <kfuse/kfuse.hpp>
int main() {
  kfuse::detail::ArrayParam<0, double, 2> u;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto s = kfuse::assign(u, kfuse::shift<1, 0>(u));
#else
  auto s = kfuse::assign(u, 2.0 * u);
#endif
  (void)s;
}
