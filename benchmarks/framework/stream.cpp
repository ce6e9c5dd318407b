#include "stream.hpp"

#include <algorithm>

#include "timer.hpp"

namespace kfuse::bench {

namespace {

using View = Kokkos::View<double*, detail::MemSpace>;

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

StreamResult stream_triad(const Comm& comm, std::int64_t n, int repetitions) {
  using Policy = Kokkos::RangePolicy<detail::ExecSpace, Kokkos::IndexType<std::int64_t>>;
  View a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:a"), n);
  View b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:b"), n);
  View c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream:c"), n);
  Kokkos::parallel_for("stream:init", Policy(0, n), Init{a, b, c});
  Kokkos::fence();
  double best = 0;
  for (int r = 0; r <= repetitions; ++r) {  // the first one warms up
    const double seconds = timed_max_over_ranks(comm, [&] {
      Kokkos::parallel_for("stream:triad", Policy(0, n), Triad{a, b, c, 3.0});
    });
    if (r > 0) best = std::max(best, 24.0 * double(n) * comm.size() / seconds / 1e9);
  }
  return StreamResult{best, n, repetitions};
}

}  // namespace kfuse::bench
