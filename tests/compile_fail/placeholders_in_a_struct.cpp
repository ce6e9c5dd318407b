// A struct bundling a program's placeholders: a member of another placeholder's
// type does not take a different placeholder (it would silently become that one).
#include <kfuse/kfuse.hpp>
template <class A, class B = A>
struct Coefficients {
  A alpha;
  B beta;
};
void build(const kfuse::Array<double, 1>& u, const kfuse::Array<double, 1>& v,
           const kfuse::Scalar<double>& a, const kfuse::Scalar<double>& b) {
  auto program = kfuse::fuse(u, v, a, b, [](auto u, auto v, auto a, auto b) {
#ifndef KFUSE_COMPILE_FAIL_OK
    const Coefficients<decltype(a)> c{a, b};
#else
    const Coefficients<decltype(a), decltype(b)> c{a, b};
#endif
    return kfuse::assign(v, c.alpha * u + c.beta);
  });
  (void)program;
}
