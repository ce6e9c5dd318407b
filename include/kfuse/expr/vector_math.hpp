// exp and log for kernels, written so that on host CPUs the compiler
// vectorises them together with the kernel's loop: no branch (special values
// are selects), integer work on the bit patterns, no table lookup. glibc's
// exp and log are a call per element, which keeps the whole loop scalar; in
// Black-Scholes that call, not memory, bounds the fused kernel. Both stay
// within 1 ulp of the exact result (tests/expr/test_vector_math.cpp measures
// it) and return what std::exp / std::log return for 0, ±inf, NaN, negative
// and subnormal arguments. GPUs keep their own exp and log.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kfuse/core/kokkos_compat.hpp"

namespace kfuse::detail::vector_math {

inline std::uint64_t bits_of(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline double double_of(std::uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// ln 2 = ln2_hi + ln2_lo; ln2_hi ends in 12 zero bits, so k * ln2_hi is exact
// for every |k| < 4096 that range reduction meets.
inline constexpr double ln2_hi = 0x1.62e42fefa3000p-1;
inline constexpr double ln2_lo = 0x1.3de6af278ece6p-42;
inline constexpr double inv_ln2 = 0x1.71547652b82fep+0;
// x + round_shift rounds x (|x| < 2^51) to an integer held in the low bits
// of the sum's mantissa: rounding without a float-to-integer conversion,
// which SSE2 and AVX2 have no vector instruction for.
inline constexpr double round_shift = 0x1.8p52;

/// e^x: x = k ln 2 + r with |r| <= ln 2 / 2, e^r by its Taylor polynomial of
/// degree 13 (truncation below 0.1 ulp), times 2^k.
inline double exp(double x) {
  // Clamp where e^x is already 0 or inf, keeping k small; NaN passes through
  // (both comparisons are false).
  x = x < -746.0 ? -746.0 : x;
  x = x > 710.0 ? 710.0 : x;
  const double shifted = x * inv_ln2 + round_shift;
  const double k = shifted - round_shift;
  const double r = (x - k * ln2_hi) - k * ln2_lo;
  double q = 1.0 / 6227020800.0;  // 1/13!
  q = q * r + 1.0 / 479001600.0;
  q = q * r + 1.0 / 39916800.0;
  q = q * r + 1.0 / 3628800.0;
  q = q * r + 1.0 / 362880.0;
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  const double p = 1.0 + (r + r * r * q);  // e^r, the small terms summed first
  // 2^k as two normal factors 2^k1 * 2^k2 (k1 = floor(k / 2)), so that an
  // overflowing or subnormal result is rounded once, by the last product.
  // Biased by 2048 / 1024 to stay in unsigned shifts, which vectorise.
  const std::uint64_t kb = bits_of(shifted) - bits_of(round_shift) + 2048;  // k + 2048
  const std::uint64_t k1b = kb >> 1;                                        // k1 + 1024
  const std::uint64_t k2b = kb - k1b;                                       // k2 + 1024
  return p * double_of((k1b - 1) << 52) * double_of((k2b - 1) << 52);
}

/// log x: x = 2^e m with m in [sqrt(2)/2, sqrt(2)), log m = log(1 + f) =
/// 2 atanh(s) with s = f / (2 + f), |s| < 0.172, arranged as in fdlibm so
/// that the rounding errors are second order; the atanh series to s^21.
inline double log(double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool subnormal = x < 0x1p-1022;
  const double scaled = subnormal ? x * 0x1p52 : x;
  const std::uint64_t u = bits_of(scaled);
  // Exponent of x / (sqrt(2)/2), biased by 1024; m = x / 2^e by its bits.
  constexpr std::uint64_t sqrt_half = 0x3fe6a09e667f3bcd, bias = std::uint64_t(1024) << 52;
  const std::uint64_t eb = (u - sqrt_half + bias) >> 52;
  const double m = double_of(u - (eb << 52) + bias);
  const double e = (double_of(0x4330000000000000 | eb) - 0x1p52) - (subnormal ? 1076.0 : 1024.0);
  const double f = m - 1.0, s = f / (2.0 + f), z = s * s, hfsq = 0.5 * f * f;
  double t = 2.0 / 21.0;
  t = t * z + 2.0 / 19.0;
  t = t * z + 2.0 / 17.0;
  t = t * z + 2.0 / 15.0;
  t = t * z + 2.0 / 13.0;
  t = t * z + 2.0 / 11.0;
  t = t * z + 2.0 / 9.0;
  t = t * z + 2.0 / 7.0;
  t = t * z + 2.0 / 5.0;
  t = t * z + 2.0 / 3.0;
  const double R = t * z;  // log(1 + f) = 2 s + s R
  const double y = e * ln2_hi + (f - (hfsq - (s * (hfsq + R) + e * ln2_lo)));
  return x > 0.0 && x < inf ? y
         : x == 0.0         ? -inf
         : x == inf         ? inf
                            : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace kfuse::detail::vector_math

namespace kfuse::detail {

/// exp and log as kernels compute them: the vectorisable versions above on
/// host CPUs (float through double), the device's own on GPUs, Kokkos' for
/// other types.
template <class T>
KOKKOS_INLINE_FUNCTION T kernel_exp(T x) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    return T(vector_math::exp(double(x)));
#endif
  return math::exp(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T kernel_log(T x) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    return T(vector_math::log(double(x)));
#endif
  return math::log(x);
}

}  // namespace kfuse::detail
