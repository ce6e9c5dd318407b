// kfuse::fuse's lambda returns its statements.
#include <kfuse/kfuse.hpp>
void build(const kfuse::Array<double, 2>& u, const kfuse::Array<double, 2>& v) {
#ifndef KFUSE_COMPILE_FAIL_OK
  auto program = kfuse::fuse(u, v, [](auto u, auto v) { kfuse::assign(v, 2.0 * u); });
#else
  auto program = kfuse::fuse(u, v, [](auto u, auto v) { return kfuse::assign(v, 2.0 * u); });
#endif
  (void)program;
}
