// Literals: constants written into the kernel's code (`0.5_kf`, namespace
// kfuse::literals). A plain number in an expression is a Constant leaf, a value
// the kernel holds: the compiler loads it, keeps it in a register (or spills it
// when they run out) and cannot tell it from an equal one elsewhere in the
// kernel, so a formula used twice (Black-Scholes' cumulative normal) holds its
// constants twice. A literal is a type whose value the compiler sees, as a
// hand-written kernel's constants: equal literals are one constant, used from
// memory by the instructions themselves (docs/benchmarks-log.md, Black-Scholes).
#pragma once

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "kfuse/expr/node.hpp"

namespace kfuse {
namespace detail {

/// A decimal literal as digits times a power of ten; `exact` when both are
/// doubles held exactly (digits <= 2^53, |exponent| <= 22), so that one
/// product or quotient rounds it once, as the compiler rounds the literal.
struct DecimalLiteral {
  std::uint64_t digits = 0;
  int exponent = 0;
  bool exact = true;
};

constexpr std::uint64_t exact_digits_limit = std::uint64_t(1) << 53;

template <char... C>
constexpr DecimalLiteral read_decimal() {
  constexpr char text[] = {C..., '\0'};
  DecimalLiteral d;
  int i = 0;
  bool fraction = false;
  for (; text[i] != '\0' && text[i] != 'e' && text[i] != 'E'; ++i) {
    const char c = text[i];
    if (c == '\'') continue;  // digit separator
    if (c == '.') {
      fraction = true;
    } else if (c < '0' || c > '9' || d.digits > exact_digits_limit / 10) {
      d.exact = false;  // hexadecimal, or too many digits
      return d;
    } else {
      d.digits = d.digits * 10 + std::uint64_t(c - '0');
      d.exponent -= fraction ? 1 : 0;
    }
  }
  if (text[i] != '\0') {  // the exponent
    const bool negative = text[++i] == '-';
    int e = 0;
    for (i += (text[i] == '-' || text[i] == '+') ? 1 : 0; text[i] != '\0'; ++i)
      if (text[i] != '\'' && e < 1000) e = e * 10 + (text[i] - '0');
    d.exponent += negative ? -e : e;
  }
  d.exact =
      d.digits <= exact_digits_limit && (d.digits == 0 || (d.exponent >= -22 && d.exponent <= 22));
  return d;
}

constexpr double power_of_ten(int e) {  // exact for e <= 22
  double p = 1;
  for (int i = 0; i < e; ++i) p *= 10;
  return p;
}

template <char... C>
constexpr double literal_value() {
  constexpr DecimalLiteral d = read_decimal<C...>();
  if (!d.exact || d.digits == 0) return 0;
  return d.exponent >= 0 ? double(d.digits) * power_of_ten(d.exponent)
                         : double(d.digits) / power_of_ten(-d.exponent);
}

/// A number written into the kernel's code, made by `1.5_kf`. Like a plain
/// number (a Constant), it takes the element type of the expression it meets.
template <char... C>
struct Literal : ExprTag {
  using value_type = double;
  static constexpr bool strict = false;
  static constexpr int domain = domain::scalar;
  static constexpr double value = literal_value<C...>();
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION double eval(const P&, R&) const {
    return value;
  }
};

}  // namespace detail

namespace literals {

/// `0.39894228_kf`: a decimal number of at most 15 significant digits and a
/// power of ten within 1e-22 to 1e22, exactly the double the compiler reads
/// for `0.39894228`.
template <char... C>
constexpr detail::Literal<C...> operator""_kf() {
  static_assert(detail::read_decimal<C...>().exact,
                "kfuse::literals: a literal of kfuse (1.5_kf) is a decimal number of at most 15 "
                "significant digits and a power of ten within 1e-22 to 1e22 (exactly the double "
                "the compiler reads); write a plain double for others");
  return {};
}

}  // namespace literals
}  // namespace kfuse
