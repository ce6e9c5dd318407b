// The differences between Kokkos 3.4 (Debian) and Kokkos 4.x that kfuse
// touches, in one place: math functions, initialization settings, reducer
// join signatures, and the namespace of Kokkos Kernels' incomplete
// factorisation and triangular solves. kfuse's tests, examples and benchmarks use these too
// (tests/lint/kokkos4_api.sh fails on a direct use of an API Kokkos 4 removed).
#pragma once

#include <cstring>
#include <type_traits>

#include <Kokkos_Core.hpp>
#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>  // KOKKOSKERNELS_VERSION (Kokkos Kernels 4 defines it)
#endif

#if KOKKOS_VERSION >= 40000
#define KFUSE_KOKKOS_4 1
#else
#define KFUSE_KOKKOS_4 0
#endif

/// Inside a reduction functor that defines `join(T& into, const T& from)`:
/// Kokkos 3 joins through volatile references as well, Kokkos 4 removed
/// those, so this adds the volatile overload for Kokkos 3 only. It reads and
/// writes the operands as volatile words (detail::volatile_load/store): Kokkos
/// 3's CUDA reductions join other blocks' partials in global memory, and a
/// plain load there may hit a stale L1 line (wrong sums on an H200).
#if KFUSE_KOKKOS_4
#define KFUSE_VOLATILE_JOIN(T)
#else
#define KFUSE_VOLATILE_JOIN(T)                                                       \
  KOKKOS_INLINE_FUNCTION void join(volatile T& into, const volatile T& from) const { \
    T joined = ::kfuse::detail::volatile_load(into);                                 \
    join(joined, ::kfuse::detail::volatile_load(from));                              \
    ::kfuse::detail::volatile_store(into, joined);                                   \
  }
#endif

namespace kfuse::detail {

/// The widest word that tiles a T: volatile_load/store move a T in these.
template <class T>
using volatile_word_t = std::conditional_t<
    alignof(T) % 8 == 0 && sizeof(T) % 8 == 0, unsigned long long,
    std::conditional_t<alignof(T) % 4 == 0 && sizeof(T) % 4 == 0, unsigned int, unsigned char>>;

/// A copy of `from`, read word by word through volatile loads.
template <class T>
KOKKOS_INLINE_FUNCTION T volatile_load(const volatile T& from) {
  static_assert(std::is_trivially_copyable_v<T>,
                "kfuse: volatile_load needs a trivially copyable T");
  using Word = volatile_word_t<T>;
  constexpr int words = sizeof(T) / sizeof(Word);
  const volatile Word* src = reinterpret_cast<const volatile Word*>(&from);
  Word buffer[words];
  for (int k = 0; k < words; ++k) buffer[k] = src[k];
  T value;
  memcpy(&value, buffer, sizeof(T));
  return value;
}

/// Stores `value` into `into` word by word through volatile stores.
template <class T>
KOKKOS_INLINE_FUNCTION void volatile_store(volatile T& into, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>,
                "kfuse: volatile_store needs a trivially copyable T");
  using Word = volatile_word_t<T>;
  constexpr int words = sizeof(T) / sizeof(Word);
  Word buffer[words];
  memcpy(buffer, &value, sizeof(T));
  volatile Word* dst = reinterpret_cast<volatile Word*>(&into);
  for (int k = 0; k < words; ++k) dst[k] = buffer[k];
}

}  // namespace kfuse::detail

namespace kfuse::detail::math {

#if KFUSE_KOKKOS_4
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::log;
using Kokkos::pow;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::log;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif

}  // namespace kfuse::detail::math

namespace kfuse::detail {

/// Initializes Kokkos with an optional device id (-1: Kokkos' default).
inline void initialize_kokkos(int& argc, char* argv[], int device_id) {
  if (device_id < 0) {
    Kokkos::initialize(argc, argv);
    return;
  }
#if KFUSE_KOKKOS_4
  Kokkos::initialize(Kokkos::InitializationSettings().set_device_id(device_id));
#else
  Kokkos::InitArguments args;
  args.device_id = device_id;
  Kokkos::initialize(args);
#endif
}

}  // namespace kfuse::detail

// Kokkos Kernels 4.6 moved spiluk_symbolic/numeric and sptrsv_symbolic/solve
// from KokkosSparse::Experimental to KokkosSparse (their algorithm enums and
// the handle stayed where they were); 3.4 has no version macro.
namespace KokkosSparse::Experimental {}
namespace kfuse::detail {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40600
namespace kk_factorization = ::KokkosSparse;
#else
namespace kk_factorization = ::KokkosSparse::Experimental;
#endif
}  // namespace kfuse::detail
