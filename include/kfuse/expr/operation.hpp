// Unary and Binary nodes and their operations (the functors applied per
// point). Operations are small structs: apply() does the arithmetic, result<>
// says the value type, symbol names it in explain() and kernel labels.
#pragma once

#include <tuple>
#include <type_traits>

#include "kfuse/core/config.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/expr/node.hpp"
#include "kfuse/expr/vector_math.hpp"

namespace kfuse::detail {

template <class T>
using floating_of = std::conditional_t<std::is_integral_v<T>, double, T>;

// ---- operations ---------------------------------------------------------

#define KFUSE_ARITHMETIC_OP(NAME, SYMBOL, EXPR)                    \
  struct NAME {                                                    \
    static constexpr const char* symbol = SYMBOL;                  \
    static constexpr bool infix = true;                            \
    template <class T>                                             \
    using result = T;                                              \
    template <class T>                                             \
    KOKKOS_INLINE_FUNCTION T apply(const T& a, const T& b) const { \
      return EXPR;                                                 \
    }                                                              \
  };
KFUSE_ARITHMETIC_OP(Add, "+", a + b)
KFUSE_ARITHMETIC_OP(Subtract, "-", a - b)
KFUSE_ARITHMETIC_OP(Multiply, "*", a* b)
KFUSE_ARITHMETIC_OP(Divide, "/", a / b)
#undef KFUSE_ARITHMETIC_OP

struct Minimum {
  static constexpr const char* symbol = "min";
  static constexpr bool infix = false;
  template <class T>
  using result = T;
  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};
struct Maximum {
  static constexpr const char* symbol = "max";
  static constexpr bool infix = false;
  template <class T>
  using result = T;
  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};
struct PowReal {
  static constexpr const char* symbol = "pow";
  static constexpr bool infix = false;
  template <class T>
  using result = floating_of<T>;
  template <class T>
  KOKKOS_INLINE_FUNCTION floating_of<T> apply(const T& a, const T& b) const {
    return math::pow(static_cast<floating_of<T>>(a), static_cast<floating_of<T>>(b));
  }
};

#define KFUSE_COMPARISON_OP(NAME, SYMBOL, EXPR)                       \
  struct NAME {                                                       \
    static constexpr const char* symbol = SYMBOL;                     \
    static constexpr bool infix = true;                               \
    template <class T>                                                \
    using result = bool;                                              \
    template <class T>                                                \
    KOKKOS_INLINE_FUNCTION bool apply(const T& a, const T& b) const { \
      return EXPR;                                                    \
    }                                                                 \
  };
KFUSE_COMPARISON_OP(Less, "<", a < b)
KFUSE_COMPARISON_OP(LessEqual, "<=", a <= b)
KFUSE_COMPARISON_OP(Greater, ">", a > b)
KFUSE_COMPARISON_OP(GreaterEqual, ">=", a >= b)
KFUSE_COMPARISON_OP(Equal, "==", a == b)
KFUSE_COMPARISON_OP(NotEqual, "!=", a != b)
KFUSE_COMPARISON_OP(LogicalAnd, "&&", (a && b))
KFUSE_COMPARISON_OP(LogicalOr, "||", a || b)
#undef KFUSE_COMPARISON_OP

struct Negate {
  static constexpr const char* symbol = "-";
  static constexpr bool infix = true;  // written before its operand: "-a"
  template <class T>
  using result = T;
  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(const T& a) const {
    return -a;
  }
};
struct LogicalNot {
  static constexpr const char* symbol = "!";
  static constexpr bool infix = true;
  template <class T>
  using result = bool;
  template <class T>
  KOKKOS_INLINE_FUNCTION bool apply(const T& a) const {
    return !a;
  }
};

#define KFUSE_MATH_OP(NAME, SYMBOL, FUNCTION)                       \
  struct NAME {                                                     \
    static constexpr const char* symbol = SYMBOL;                   \
    template <class T>                                              \
    using result = floating_of<T>;                                  \
    template <class T>                                              \
    KOKKOS_INLINE_FUNCTION floating_of<T> apply(const T& a) const { \
      return FUNCTION(static_cast<floating_of<T>>(a));              \
    }                                                               \
  };
KFUSE_MATH_OP(Exp, "exp", kernel_exp)  // vectorisable on host CPUs (vector_math.hpp)
KFUSE_MATH_OP(Log, "log", kernel_log)
KFUSE_MATH_OP(Sqrt, "sqrt", math::sqrt)
KFUSE_MATH_OP(Sin, "sin", math::sin)
KFUSE_MATH_OP(Cos, "cos", math::cos)
#undef KFUSE_MATH_OP

struct Absolute {
  static constexpr const char* symbol = "abs";
  template <class T>
  using result = T;
  /// fabs for floating point: one mask of the sign bit, where a select (a < 0 ? -a :
  /// a) let GCC duplicate what follows into both arms (1 / (1 + |d|): two divisions).
  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(const T& a) const {
    if constexpr (std::is_floating_point_v<T>)
      return math::fabs(a);
    else
      return a < T(0) ? T(-a) : a;
  }
};

/// a^n by repeated squaring (a division first for negative n), out of line
/// on CPUs: a loop inside the kernel's loop would keep it scalar.
template <class T>
KFUSE_NOINLINE KOKKOS_FUNCTION T pow_by_squaring(T a, int n) {
  T base = n < 0 ? T(1) / a : a, out = T(1);
  for (n = n < 0 ? -n : n; n > 0; n >>= 1) {
    if (n & 1) out *= base;
    base *= base;
  }
  return out;
}

/// e^n for an integer n, by repeated multiplication (exact for small n).
struct PowInt {
  static constexpr const char* symbol = "pow";
  int exponent;
  template <class T>
  using result = T;
  /// n = 1, 2, 3: the exponents small_power covers.
  KOKKOS_INLINE_FUNCTION bool small() const { return static_cast<unsigned>(exponent) - 1u < 3u; }
  /// The same products as pow_by_squaring for small n, chosen by selects:
  /// branch-free, so a loop of them vectorises.
  template <class T>
  KOKKOS_INLINE_FUNCTION T small_power(const T& a) const {
    const T square = a * a, cube = square * a;
    return exponent == 1 ? a : exponent == 2 ? square : cube;
  }
  /// n = 2, known: no select (GCC turns small_power's into a branch in the
  /// loop, around which a reduction's lanes stay in memory).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T square(const T& a) {
    return a * a;
  }
  KOKKOS_INLINE_FUNCTION bool is_square() const { return exponent == 2; }
  /// Any n. The test on n is the same at every point, but compilers move it
  /// out of a kernel's loop only when the loop is small (GCC: 50
  /// instructions), so host launches run kernels whose powers are all small
  /// at points whose type says so, and Unary calls small_power directly.
  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(const T& a) const {
    return small() ? small_power(a) : pow_by_squaring(a, exponent);
  }
};

template <class To>
struct Cast {
  static constexpr const char* symbol = "cast";
  template <class T>
  using result = To;
  template <class T>
  KOKKOS_INLINE_FUNCTION To apply(const T& a) const {
    return static_cast<To>(a);
  }
};

// ---- nodes ----------------------------------------------------------------

template <class E, class = void>
struct runs_own_loop_flag : std::false_type {};
template <class E>
struct runs_own_loop_flag<E, std::void_t<decltype(E::runs_loop)>>
    : std::bool_constant<E::runs_loop> {};
/// Whether evaluating node E at a point runs a loop of its own (`static constexpr bool
/// runs_loop = true`: a sparse product's row).
template <class E>
using runs_own_loop = runs_own_loop_flag<E>;
/// Whether evaluating E at a point runs a loop (a node of E runs its own): a constant that
/// device code may read, where nvcc does not let a __host__ __device__ function call
/// holds_node, a host constexpr function.
template <class E>
inline constexpr bool runs_loop_v = holds_node<runs_own_loop, E>();

template <class Op, class E>
struct Unary : ExprTag {
  using arg_type = typename expr_traits<E>::value_type;
  using value_type = typename Op::template result<arg_type>;
  static constexpr bool strict = std::is_same_v<value_type, bool> ? false : expr_traits<E>::strict;
  static constexpr int domain = expr_traits<E>::domain;
  Op op;
  E arg;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, R& r) const {
    if constexpr (std::is_same_v<Op, PowInt> && P::facts::squares)
      return PowInt::square(static_cast<arg_type>(arg.eval(p, r)));
    else if constexpr (std::is_same_v<Op, PowInt> && P::facts::small_powers)
      return op.small_power(static_cast<arg_type>(arg.eval(p, r)));
    else
      return op.apply(static_cast<arg_type>(arg.eval(p, r)));
  }
};

template <class Op, class L, class R>
struct Binary : ExprTag {
  using operand_type = typename common_value<L, R>::type;
  using value_type = typename Op::template result<operand_type>;
  static constexpr bool strict =
      std::is_same_v<value_type, bool> ? false : common_value<L, R>::strict;
  static constexpr int domain = domain::combine(expr_traits<L>::domain, expr_traits<R>::domain);
  Op op;
  L lhs;
  R rhs;
  /// The operands in the order an expert's loop computes them: the left one first, as C++
  /// compilers evaluate `a / b` on numbers, but a sparse product's row before what it is
  /// combined with (`b(i) - sum` after the row's loop). As a call's two arguments GCC
  /// evaluated the right operand first, and Black-Scholes' fused loop began with its
  /// divisor's square root, about 2% slower (docs/benchmarks-log.md). The same values either way.
  template <class P, class Regs>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, Regs& r) const {
    if constexpr (runs_loop_v<R> && !runs_loop_v<L>) {
      const auto b = static_cast<operand_type>(rhs.eval(p, r));
      return op.apply(static_cast<operand_type>(lhs.eval(p, r)), b);
    } else {
      const auto a = static_cast<operand_type>(lhs.eval(p, r));
      return op.apply(a, static_cast<operand_type>(rhs.eval(p, r)));
    }
  }
};

// The node protocol (expr/walk.hpp): children(node) names a node's children,
// rebuild(node, children...) makes the same node over other children.
template <class Op, class E>
auto children(const Unary<Op, E>& u) {
  return child_refs(u.arg);
}
template <class Op, class E, class C>
auto rebuild(const Unary<Op, E>& u, const C& arg) {
  return Unary<Op, C>{{}, u.op, arg};
}
template <class Op, class L, class R>
auto children(const Binary<Op, L, R>& b) {
  return child_refs(b.lhs, b.rhs);
}
template <class Op, class L, class R, class A, class B>
auto rebuild(const Binary<Op, L, R>& b, const A& lhs, const B& rhs) {
  return Binary<Op, A, B>{{}, b.op, lhs, rhs};
}

/// Checks shared by every operator, so each misuse has one clear message.
template <class... E>
constexpr bool check_operands() {
  static_assert(!(std::is_base_of_v<ReductionTag, std::decay_t<E>> || ...),
                "kfuse: a reduction (sum, dot, norm2, reduce_max, reduce_min) is not a value "
                "inside an expression; reduce it into a kfuse::Scalar with kfuse::reduce (or "
                "kfuse::eval) and use the Scalar");
  return true;
}

template <class L, class R>
constexpr bool check_binary() {
  using LN = node_t<L>;
  using RN = node_t<R>;
  static_assert(!common_value<LN, RN>::mismatch,
                "kfuse: operands have different element types (e.g. float and double arrays); "
                "convert one side with kfuse::cast<T>(e)");
  static_assert(domain::compatible(expr_traits<LN>::domain, expr_traits<RN>::domain),
                "kfuse: operands live on different domains (arrays of different ranks, or a grid "
                "array and a sparse vector); combine arrays of one kind only");
  return true;
}

template <class Op, class L, class R>
auto make_binary(const L& l, const R& r, Op op = {}) {
  static_assert(check_operands<L, R>() && check_binary<L, R>());
  if constexpr (std::is_arithmetic_v<L> || std::is_arithmetic_v<R>)
    return Binary<Op, node_t<L>, node_t<R>>{{}, op, as_node(l), as_node(r)};
  else
    return Binary<Op, L, R>{{}, op, l, r};  // no as_node: a function less per operand type
}

template <class Op, class E>
auto make_unary(const E& e, Op op = {}) {
  static_assert(check_operands<E>());
  return Unary<Op, node_t<E>>{{}, op, as_node(e)};
}

/// Operators apply when one side is an expression and the other an
/// expression or an arithmetic value; reductions are let in to be rejected.
template <class E>
inline constexpr bool is_operator_arg_v =
    is_operand_v<E> || std::is_base_of_v<ReductionTag, std::decay_t<E>>;
// clang-format reads `is_operator_arg_v<L> &&` as an rvalue reference.
// clang-format off
template <class L, class R>
inline constexpr bool enable_binary_v =
    is_operator_arg_v<L> && is_operator_arg_v<R> &&
    (is_expr_v<L> || is_expr_v<R> || std::is_base_of_v<ReductionTag, std::decay_t<L>> ||
     std::is_base_of_v<ReductionTag, std::decay_t<R>>);
// clang-format on

}  // namespace kfuse::detail

namespace kfuse {

#define KFUSE_BINARY_OPERATOR(OPERATOR, OP)                                            \
  template <class L, class R, class = std::enable_if_t<detail::enable_binary_v<L, R>>> \
  auto operator OPERATOR(const L& l, const R& r) {                                     \
    return detail::make_binary<detail::OP>(l, r);                                      \
  }
KFUSE_BINARY_OPERATOR(+, Add)
KFUSE_BINARY_OPERATOR(-, Subtract)
KFUSE_BINARY_OPERATOR(*, Multiply)
KFUSE_BINARY_OPERATOR(/, Divide)
KFUSE_BINARY_OPERATOR(<, Less)
KFUSE_BINARY_OPERATOR(<=, LessEqual)
KFUSE_BINARY_OPERATOR(>, Greater)
KFUSE_BINARY_OPERATOR(>=, GreaterEqual)
KFUSE_BINARY_OPERATOR(==, Equal)
KFUSE_BINARY_OPERATOR(!=, NotEqual)
KFUSE_BINARY_OPERATOR(&&, LogicalAnd)
KFUSE_BINARY_OPERATOR(||, LogicalOr)
#undef KFUSE_BINARY_OPERATOR

template <class E, class = std::enable_if_t<detail::is_expr_v<E>>>
auto operator-(const E& e) {
  return detail::make_unary<detail::Negate>(e);
}
template <class E, class = std::enable_if_t<detail::is_expr_v<E>>>
auto operator!(const E& e) {
  return detail::make_unary<detail::LogicalNot>(e);
}

}  // namespace kfuse
