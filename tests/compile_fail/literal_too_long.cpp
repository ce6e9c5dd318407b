// A literal of kfuse holds at most 15 significant digits: more could round
// differently from the double the compiler reads for them.
#include <kfuse/kfuse.hpp>
int main() {
  using namespace kfuse::literals;
#ifndef KFUSE_COMPILE_FAIL_OK
  auto c = 0.39894228040143267794_kf;
#else
  auto c = 0.398942280401433_kf;
#endif
  (void)c;
}
