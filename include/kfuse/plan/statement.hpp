// Statements of a fused program and the calls that build them:
//   kfuse::assign(target, e)  — array (or temporary) = expression, or
//                               Scalar = scalar-only expression
//   kfuse::reduce(s, r)       — Scalar = reduction over an array expression
//   kfuse::seq(s1, s2, ...)   — the program, in order
// Misuse that the placeholder types reveal is a static_assert here.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>

#include "kfuse/core/pack.hpp"
#include "kfuse/plan/access.hpp"
#include "kfuse/plan/describe.hpp"

namespace kfuse::detail {

namespace hana = boost::hana;

// Each statement kind says here, once, what the plan and the front end need of it:
//   StatementInfo<S>       kernel (or host), domain, reductions, targets, what it reads
//                          (`reads`, for access_of), whether it reads eager handles, and
//                          its verb in labels ("assign", "reduce")
//   statement_expr(s)      a kernel statement's array expression (what it reads at each
//                          point), and with_expr(s, e) the statement with e instead: the
//                          Unfused rewrite splits that expression (plan/unfused.hpp)
//   statement_text(s, n)   its text in explain() ("assign v = u + 1")
// and exec/statements.hpp says how it runs. A new statement kind is a section in each.

template <class S>
struct StatementInfo;

// ---- Assign: an array (or temporary) = expression, at every point --------------

template <class Target, class E>
struct Assign {
  Target target;
  E expr;
};
template <class Target, class E>
struct StatementInfo<Assign<Target, E>> {
  static constexpr bool kernel = true;
  static constexpr int domain = domain::combine(Target::domain, expr_traits<E>::domain);
  static constexpr int reductions = 0;
  static constexpr int array_target = Target::index, scalar_target = -1;
  using reads = E;
  static constexpr bool array_handles = reads_array_handles<E>();
  static constexpr const char* verb = "assign";
};
template <class Target, class E>
const E& statement_expr(const Assign<Target, E>& s) {
  return s.expr;
}
template <class Target, class E, class X>
Assign<Target, X> with_expr(const Assign<Target, E>& s, const X& e) {
  return {s.target, e};
}
template <class Target, class E, class Names>
std::string statement_text(const Assign<Target, E>& s, const Names& names) {
  return "assign " + describe(s.target, names) + " = " + describe(s.expr, names);
}

// ---- Reduce: a Scalar = reduction over the points ------------------------------

template <class Target, class R>
struct Reduce {
  Target target;
  R reduction;
};
template <class Target, class R>
struct StatementInfo<Reduce<Target, R>> {
  static constexpr bool kernel = true;
  static constexpr int domain = R::domain;
  static constexpr int reductions = 1;
  static constexpr int array_target = -1, scalar_target = Target::index;
  using reads = R;
  static constexpr bool array_handles = reads_array_handles<R>();
  static constexpr const char* verb = "reduce";
};
template <class Target, class R>
const auto& statement_expr(const Reduce<Target, R>& s) {
  return s.reduction.arg;
}
template <class Target, class R, class X>
auto with_expr(const Reduce<Target, R>& s, const X& e) {
  auto reduction = rebuild(s.reduction, e);
  return Reduce<Target, decltype(reduction)>{s.target, reduction};
}
template <class Target, class R, class Names>
std::string statement_text(const Reduce<Target, R>& s, const Names& names) {
  return "reduce " + describe(s.target, names) + " = " + describe(s.reduction, names);
}

// ---- ScalarAssign: a Scalar = scalar-only expression, once, on the host --------

template <class Target, class E>
struct ScalarAssign {
  Target target;
  E expr;
};
template <class Target, class E>
struct StatementInfo<ScalarAssign<Target, E>> {
  static constexpr bool kernel = false;
  static constexpr int domain = domain::scalar;
  static constexpr int reductions = 0;
  static constexpr int array_target = -1, scalar_target = Target::index;
  using reads = E;
  static constexpr bool array_handles = false;
  static constexpr const char* verb = "assign";
};
template <class Target, class E, class Names>
std::string statement_text(const ScalarAssign<Target, E>& s, const Names& names) {
  return "assign " + describe(s.target, names) + " = " + describe(s.expr, names);
}

// ---- the program and what is written once for every kind -----------------------

template <class... S>
struct Seq {
  Pack<S...> statements;
};

template <class S, class = void>
struct is_statement : std::false_type {};
template <class S>
struct is_statement<S, std::void_t<decltype(StatementInfo<S>::kernel)>> : std::true_type {};

/// The statements a program lambda returned, as a Pack (a program's statements: a plain
/// aggregate, whose statement I is one small function away, pack_get<I>).
template <class... S>
Pack<S...> program_statements(const Seq<S...>& seq) {
  return seq.statements;
}
template <class S>
Pack<S> program_statements(const S& s) {
  static_assert(is_statement<S>::value,
                "kfuse::fuse: the lambda must return kfuse::seq(...) or a single statement "
                "(kfuse::assign / kfuse::reduce)");
  return make_pack<S>(s);
}

/// Statement I of a program's statements: a Pack (what fuse builds) or a hana::tuple (the
/// Unfused rewrite's), for the walks over a group's members (Plan::group<G>::members).
template <int I, class... S>
const auto& statement_at(const Pack<S...>& statements) {
  return pack_get<std::size_t(I)>(statements);
}
template <int I, class... S>
const auto& statement_at(const hana::tuple<S...>& statements) {
  return hana::at_c<std::size_t(I)>(statements);
}
/// Its type.
template <class Statements, int I>
using statement_at_t = std::decay_t<decltype(statement_at<I>(std::declval<const Statements&>()))>;
/// How many statements.
template <class Statements>
struct statement_count;
template <class... S>
struct statement_count<Pack<S...>> : std::integral_constant<int, int(sizeof...(S))> {};
template <class... S>
struct statement_count<hana::tuple<S...>> : std::integral_constant<int, int(sizeof...(S))> {};

/// "assign v" / "reduce res": the short form used in kernel labels.
template <class S, class Names>
std::string statement_label(const S& s, const Names& names) {
  return std::string(StatementInfo<S>::verb) + " " + describe(s.target, names);
}

/// Reach of x in A * x, for for_each_array_access: x lives on A's columns, checked against A
/// instead of the group's index space.
inline constexpr int sparse_reach = -1;

template <class E, class F>
constexpr void for_each_array_access(F& f);
template <class Children, class F, std::size_t... I>
constexpr void for_each_child_access(F& f, std::index_sequence<I...>) {
  (for_each_array_access<std::decay_t<std::tuple_element_t<I, Children>>>(f), ...);
}

/// Calls f(position, reach) for every array parameter a tree of type E reads (reach: the
/// largest |offset| of a stencil read, 0 for pointwise, sparse_reach for x of A * x), at
/// compile time: a walk over types, shared by every program with the same trees.
template <class E, class F>
constexpr void for_each_array_access(F& f) {
  if constexpr (is_array_param<E>::value) {
    f(E::index, 0);
  } else if constexpr (is_shifted<E>::value) {
    if constexpr (is_array_param<typename E::leaf_type>::value) f(E::leaf_type::index, E::reach);
  } else if constexpr (is_sparse_product<E>::value) {
    using X = std::decay_t<decltype(std::declval<const E&>().x)>;
    if constexpr (is_array_param<X>::value) f(X::index, sparse_reach);
  } else if constexpr (!is_leaf_node_v<E>) {
    using Children = children_t<E>;
    for_each_child_access<Children>(f, std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

/// Calls f(expression) for a kernel statement's array expression (none for a host one).
template <class S, class F>
void with_statement_expr(const S& s, F&& f) {
  if constexpr (StatementInfo<S>::kernel) f(statement_expr(s));
}

/// Calls f(position, reach) for every array parameter a statement of type S writes or
/// reads (at compile time).
template <class S, class F>
constexpr void for_each_statement_array(F& f) {
  using Info = StatementInfo<S>;
  if constexpr (Info::array_target >= 0) f(Info::array_target, 0);
  if constexpr (Info::kernel)
    for_each_array_access<std::decay_t<decltype(statement_expr(std::declval<const S&>()))>>(f);
}

}  // namespace kfuse::detail

namespace kfuse {

/// target = e, at every owned point (array target) or once (Scalar target).
template <class Target, class E>
auto assign(const Target& target, const E& e) {
  constexpr bool array_target = detail::is_array_param<Target>::value;
  constexpr bool scalar_target = detail::is_scalar_param<Target>::value;
  static_assert(array_target || scalar_target,
                "kfuse::assign(target, e): the target must be a parameter of the program lambda "
                "(an array, a kfuse::temporary or a Scalar); outside kfuse::fuse write `a = e;`");
  static_assert(!detail::is_reduction<E>::value || !array_target,
                "kfuse::assign(array, reduction): a reduction gives one value, not an array; "
                "reduce it into a Scalar with kfuse::reduce(s, ...) and use the Scalar");
  static_assert(!detail::is_reduction<E>::value || array_target,
                "kfuse::assign(scalar, reduction): write kfuse::reduce(s, reduction)");
  static_assert(detail::is_operand_v<E>,
                "kfuse::assign(target, e): e must be an expression or a number");
  if constexpr (!detail::is_reduction<E>::value && detail::is_operand_v<E> &&
                (array_target || scalar_target)) {
    using N = detail::node_t<E>;
    using TT = detail::expr_traits<Target>;
    using ET = detail::expr_traits<N>;
    static_assert(!ET::strict || std::is_same_v<typename TT::value_type, typename ET::value_type>,
                  "kfuse::assign(target, e): e's element type differs from the target's; convert "
                  "it with kfuse::cast<T>(e)");
    if constexpr (array_target) {
      static_assert(detail::domain::compatible(TT::domain, ET::domain),
                    "kfuse::assign(target, e): e iterates another domain than the target (arrays "
                    "of different ranks, or a grid array and a sparse vector)");
      static_assert(!detail::reads_neighbours<N>(Target::index),
                    "kfuse::assign(u, e): e reads u at a non-zero offset (a stencil on the "
                    "target) while u is written, which would race; write to another array or a "
                    "kfuse::temporary, then copy back");
      return detail::Assign<Target, N>{target, detail::as_node(e)};
    } else {
      static_assert(ET::domain == detail::domain::scalar,
                    "kfuse::assign(scalar, e): e reads arrays, so it has a value per point; "
                    "reduce it with kfuse::reduce(s, kfuse::sum(e)) (or dot, norm2, ...)");
      return detail::ScalarAssign<Target, N>{target, detail::as_node(e)};
    }
  }
}

/// s = reduction (sum, dot, norm2, reduce_max, reduce_min) over all points.
template <class Target, class R>
auto reduce(const Target& s, const R& r) {
  static_assert(detail::is_scalar_param<Target>::value,
                "kfuse::reduce(s, r): s must be a Scalar parameter of the program lambda");
  static_assert(detail::is_reduction<R>::value,
                "kfuse::reduce(s, r): r must be a reduction (kfuse::sum, dot, norm2, reduce_max, "
                "reduce_min)");
  if constexpr (detail::is_scalar_param<Target>::value && detail::is_reduction<R>::value) {
    static_assert(std::is_same_v<typename Target::value_type, typename R::value_type>,
                  "kfuse::reduce(s, r): the Scalar's type differs from the reduction's "
                  "(reductions accumulate in the element type; counts of comparisons in "
                  "kfuse::index_t)");
    return detail::Reduce<Target, R>{s, r};
  }
}

/// The program: statements in order.
template <class... S>
auto seq(const S&... s) {
  static_assert((detail::is_statement<S>::value && ...),
                "kfuse::seq(...): every argument must be a statement (kfuse::assign or "
                "kfuse::reduce)");
  return detail::Seq<S...>{detail::make_pack<S...>(s...)};
}

}  // namespace kfuse
