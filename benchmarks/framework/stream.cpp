#include "stream.hpp"

#include <algorithm>

#include "timer.hpp"

namespace kfuse::bench {

namespace {

using View = Kokkos::View<double*, detail::MemSpace>;
using Policy = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;

struct Triad {
  View a, b, c;
  double scalar;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { a(i) = b(i) + scalar * c(i); }
};

struct Init {
  View a, b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    a(i) = 1.0;
    b(i) = 2.0;
    c(i) = 0.5;
  }
};

}  // namespace

StreamTriad::StreamTriad(const Comm& comm, std::int64_t n)
    : comm_(comm),
      n_(n),
      a_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:a"), n),
      b_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:b"), n),
      c_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:c"), n) {
  Kokkos::parallel_for("stream:init", Policy(0, n_), Init{a_, b_, c_});
  run();  // warm-up: the arrays' pages and the kernel are ready for every measure()
  Kokkos::fence();
}

void StreamTriad::run() const {
  Kokkos::parallel_for("stream:triad", Policy(0, n_), Triad{a_, b_, c_, 3.0});
}

StreamResult StreamTriad::measure(int repetitions) const {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    const double seconds = timed_max_over_ranks(comm_, [&] { run(); });
    best = std::max(best, 24.0 * double(n_) * comm_.size() / seconds / 1e9);
  }
  return StreamResult{best, n_, repetitions};
}

}  // namespace kfuse::bench
