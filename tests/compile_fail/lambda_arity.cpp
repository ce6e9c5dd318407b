// kfuse::fuse's lambda takes one parameter per argument before it.
#include <kfuse/kfuse.hpp>
void build(const kfuse::Array<double, 2>& u, const kfuse::Array<double, 2>& v) {
#ifndef KFUSE_COMPILE_FAIL_OK
  auto program = kfuse::fuse(u, v, [](auto v) { return kfuse::assign(v, 2.0 * v); });
#else
  auto program = kfuse::fuse(u, v, [](auto u, auto v) { return kfuse::assign(v, 2.0 * u); });
#endif
  (void)program;
}
