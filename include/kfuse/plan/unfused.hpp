// The Unfused policy's rewrite: every operation of every statement becomes
// its own statement writing a fresh temporary (positions First, First+1,
// ...), so the program runs one kernel per operation and materialises every
// intermediate, like an array library without fusion.
//
// Like an array program that names a sub-expression once (`d1 = ...`) and
// uses it twice, an operation that occurs again (the same type: the same
// operations over the same parameters) is computed once, as long as nothing
// it reads has been written since; later occurrences read its temporary. So
// a program written with `auto d1 = ...` reused in many places costs one
// kernel per distinct operation, not one per copy in the expression trees.
// Two occurrences of one type may still hold different constants (`2 * x`,
// `3 * x`): a later occurrence becomes a SharedOr node, which reads the
// temporary where its values equal the first occurrence's (decided when the
// program is made) and else evaluates its own tree in place.
//
// The rewrite is two passes. At the type level, a walk of every statement,
// children before parents, keeps the set of operations held in temporaries
// (Held<E, position, path of the first occurrence>), adds each operation
// not held yet, and after each statement drops those reading what it wrote.
// Its instantiations nest as deep as the trees, not as long as the program.
// At run time each statement becomes the statements of the operations it
// added (their first occurrences, children replaced by temporaries) and
// itself, its root's children replaced the same way.
#pragma once

#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/append.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/tuple.hpp>

#include "kfuse/expr/literal.hpp"
#include "kfuse/expr/walk.hpp"
#include "kfuse/plan/access.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class E>
struct is_constant : std::false_type {};
template <class T>
struct is_constant<Constant<T>> : std::true_type {};
template <char... C>
struct is_constant<Literal<C...>> : std::true_type {};

/// Whether E combines constants only (-1.5_kf, sqrt(2.0)): a number, computed in place.
template <class E>
constexpr bool of_constants_only();
template <class Children, std::size_t... I>
constexpr bool children_of_constants_only(std::index_sequence<I...>) {
  return (true && ... && of_constants_only<std::decay_t<std::tuple_element_t<I, Children>>>());
}
template <class E>
constexpr bool of_constants_only() {
  if constexpr (is_leaf_node_v<E>) {
    return is_constant<E>::value;
  } else {
    using Children = children_t<E>;
    return children_of_constants_only<Children>(
        std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

/// What the rewrite materialises: every node with children (expr/walk.hpp) but those of
/// constants only, and A * x.
template <class E>
constexpr bool is_operation_v =
    (!is_leaf_node_v<E> && !of_constants_only<E>()) || is_sparse_product<E>::value;

// ---- SharedOr: a later occurrence of an operation held in a temporary ---------------

/// Reads Temp (the value of this occurrence's first one) where `shared`, else evaluates
/// its own tree: the branch is the same at every point.
template <class Temp, class E>
struct SharedOr : ExprTag {
  using value_type = typename expr_traits<E>::value_type;
  static constexpr bool strict = expr_traits<E>::strict;
  static constexpr int domain = expr_traits<E>::domain;
  Temp temp;
  E own;
  bool shared;
  template <class P, class R>
  KOKKOS_INLINE_FUNCTION value_type eval(const P& p, R& r) const {
    return shared ? static_cast<value_type>(temp.eval(p, r)) : own.eval(p, r);
  }
};
template <class Temp, class E>
auto children(const SharedOr<Temp, E>& s) {
  return child_refs(s.temp, s.own);
}
template <class Temp, class E, class T, class X>
auto rebuild(const SharedOr<Temp, E>& s, const T& temp, const X& own) {
  return SharedOr<T, X>{{}, temp, own, s.shared};
}
/// Its own tree runs only where constants differ: not in the traffic model.
template <class Temp, class E>
struct fallback_from<SharedOr<Temp, E>> : std::integral_constant<std::size_t, 1> {};
template <class Temp, class E, class Names>
std::string describe(const SharedOr<Temp, E>& s, const Names& names) {
  return s.shared ? describe(s.temp, names) : describe(s.own, names);
}

// ---- comparing two trees of one type ------------------------------------------------

template <class N, class = void>
struct has_op : std::false_type {};
template <class N>
struct has_op<N, std::void_t<decltype(std::declval<N>().op)>> : std::true_type {};

/// The node kinds whose data is their children and an `op` (compared by same_operation):
/// only their repeats are compared, and shared. Another node kind is never "the same".
template <class E>
struct holds_children_and_op : std::false_type {};
template <class Op, class E>
struct holds_children_and_op<Unary<Op, E>> : std::true_type {};
template <class Op, class L, class R>
struct holds_children_and_op<Binary<Op, L, R>> : std::true_type {};
template <class C, class A, class B>
struct holds_children_and_op<Where<C, A, B>> : std::true_type {};

/// Whether every tree of type E holds the same values: no constants, no operation with
/// data, no handles.
template <class E>
constexpr bool stateless();
template <class Children, std::size_t... I>
constexpr bool stateless_children(std::index_sequence<I...>) {
  return (true && ... && stateless<std::decay_t<std::tuple_element_t<I, Children>>>());
}
template <class E>
constexpr bool stateless() {
  if constexpr (is_shifted<E>::value) {
    return stateless<typename E::leaf_type>();
  } else if constexpr (is_sparse_product<E>::value) {
    return std::is_empty_v<decltype(std::declval<E>().matrix)> &&
           stateless<decltype(std::declval<E>().x)>();
  } else if constexpr (is_leaf_node_v<E>) {
    return std::is_empty_v<E>;
  } else if constexpr (!holds_children_and_op<E>::value) {
    return false;
  } else {
    using Children = children_t<E>;
    bool op_empty = true;
    if constexpr (has_op<E>::value) op_empty = std::is_empty_v<decltype(std::declval<E>().op)>;
    return op_empty &&
           stateless_children<Children>(std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

template <class Op>
bool same_operation(const Op&, const Op&) {
  return std::is_empty_v<Op>;  // an operation with data it cannot compare: never the same
}
inline bool same_operation(const PowInt& a, const PowInt& b) { return a.exponent == b.exponent; }

template <class E>
bool same_value(const E& a, const E& b);
template <class Children, std::size_t... I>
bool same_children(const Children& a, const Children& b, std::index_sequence<I...>) {
  return (true && ... && same_value(child<I>(a), child<I>(b)));
}

/// Whether two trees of one type compute the same values: their constants have the same
/// bits (0.0 and -0.0 differ), their operations the same data. Handles (an Array captured
/// by the lambda) never compare equal: such an occurrence is evaluated in place.
template <class E>
bool same_value(const E& a, const E& b) {
  if constexpr (stateless<E>()) {
    return true;
  } else if constexpr (is_constant<E>::value) {
    return std::memcmp(&a.value, &b.value, sizeof(a.value)) == 0;
  } else if constexpr (is_shifted<E>::value) {
    return same_value(a.leaf, b.leaf);
  } else if constexpr (is_sparse_product<E>::value) {
    bool matrix = true;  // a placeholder: the same parameter (programs never write matrices)
    if constexpr (!std::is_empty_v<decltype(a.matrix)>)  // a captured CsrMatrix: the same one
      matrix = a.matrix.storage_id() == b.matrix.storage_id();
    return matrix && same_value(a.x, b.x);
  } else if constexpr (is_leaf_node_v<E> || !holds_children_and_op<E>::value) {
    return false;
  } else {
    using Children = children_t<E>;
    bool op = true;
    if constexpr (has_op<E>::value) op = same_operation(a.op, b.op);
    return op && same_children(children(a), children(b),
                               std::make_index_sequence<std::tuple_size_v<Children>>{});
  }
}

// ---- the type-level pass ------------------------------------------------------------

/// Where a node lies: its statement's index, then the child index at each level.
template <int... P>
using TreePath = std::integer_sequence<int, P...>;
template <class Path, int I>
struct path_append;
template <int... P, int I>
struct path_append<TreePath<P...>, I> {
  using type = TreePath<P..., I>;
};

/// Operation E is held in temporary Position, computed from its first occurrence at Path.
template <class E, int Position, class Path>
struct Held {
  using type = E;
  static constexpr int position = Position;
  using path = Path;
};
/// The operations held at a point of the walk (each type at most once).
template <class... H>
struct HeldSet : H... {};
template <class... A, class... B>
HeldSet<A..., B...> operator+(HeldSet<A...>, HeldSet<B...>);

/// The entry of type E in a HeldSet, or void.
template <class E, int P, class Path>
Held<E, P, Path> held_entry(const Held<E, P, Path>*);
template <class E>
void held_entry(const void*);
template <class E, class Set>
using held_t = decltype(held_entry<E>(static_cast<const Set*>(nullptr)));

/// The entry at position P of a HeldSet.
template <int P, class E, class Path>
Held<E, P, Path> held_at(const Held<E, P, Path>*);
template <class Set, int P>
using held_at_t = decltype(held_at<P>(static_cast<const Set*>(nullptr)));

template <class Set, int Next>
struct WalkState {
  using set = Set;
  static constexpr int next = Next;
};

template <class State, class Path, class E,
          bool Add = (is_operation_v<E> && std::is_void_v<held_t<E, typename State::set>>)>
struct Visit {  // a leaf, or an operation held already
  using type = State;
};
template <class State, class Path, class Children, std::size_t I = 0,
          bool More = (I < std::tuple_size_v<Children>)>
struct VisitChildren {
  using type = State;
};
template <class State, class Path, class Children, std::size_t I>
struct VisitChildren<State, Path, Children, I, true> {
  using child = std::decay_t<std::tuple_element_t<I, Children>>;
  using after = typename Visit<State, typename path_append<Path, int(I)>::type, child>::type;
  using type = typename VisitChildren<after, Path, Children, I + 1>::type;
};
/// A new operation: its children first, then itself, at the next free position.
template <class State, class Path, class E>
struct Visit<State, Path, E, true> {
  using inner = typename VisitChildren<State, Path, children_t<E>>::type;
  using type = WalkState<decltype(typename inner::set{} + HeldSet<Held<E, inner::next, Path>>{}),
                         inner::next + 1>;
};

template <class Statement>
using statement_expr_t = std::decay_t<decltype(statement_expr(std::declval<const Statement&>()))>;

struct ReadOf {
  int position;
  bool found = false;
  constexpr void operator()(int p, Read read, bool) {
    found = found || p == position || read == Read::array_handle;
  }
};
/// Whether a held operation may read what a statement writes: a position it reads, or
/// an Array handle (the plan cannot tell one from the written parameter).
template <class Entry, class Statement>
constexpr bool reads_written() {
  using Info = StatementInfo<Statement>;
  ReadOf search{Info::array_target >= 0 ? Info::array_target : Info::scalar_target};
  for_each_read<typename Entry::type>(search);
  return search.found;
}
/// The set after statement S wrote its target; a host statement forgets everything.
template <class Set, class Statement>
struct Forget;
template <class... H, class Statement>
struct Forget<HeldSet<H...>, Statement> {
  using type = std::conditional_t<
      StatementInfo<Statement>::kernel,
      decltype((HeldSet<>{} + ... +
                std::conditional_t<reads_written<H, Statement>(), HeldSet<>, HeldSet<H>>{})),
      HeldSet<>>;
};

template <class Statements, int First, int S>
struct StatementWalk;
/// The walk's state before statement S.
template <class Statements, int First, int S>
struct StateBefore {
  using last = StatementWalk<Statements, First, S - 1>;
  using type = WalkState<typename Forget<typename last::after::set, typename last::statement>::type,
                         last::after::next>;
};
template <class Statements, int First>
struct StateBefore<Statements, First, 0> {
  using type = WalkState<HeldSet<>, First>;
};
/// Statement S's walk: the root stays in the statement, its children are visited.
template <class Statements, int First, int S>
struct StatementWalk {
  using statement = statement_at_t<Statements, S>;
  using before = typename StateBefore<Statements, First, S>::type;
  template <bool Kernel = StatementInfo<statement>::kernel, class = void>
  struct walk {
    using type =
        typename VisitChildren<before, TreePath<S>, children_t<statement_expr_t<statement>>>::type;
  };
  template <class Unused>
  struct walk<false, Unused> {
    using type = before;
  };
  using after = typename walk<>::type;
};

// ---- the run-time pass --------------------------------------------------------------
// Its functions take neither the HeldSet nor the program's type as template arguments:
// their names would grow with the square of the program's size.

/// The node at a path below e.
template <class E>
const E& node_below(const E& e, TreePath<>) {
  return e;
}
template <class E, int C, int... Rest>
const auto& node_below(const E& e, TreePath<C, Rest...>) {
  return node_below(child<C>(children(e)), TreePath<Rest...>{});
}
template <class Path>
struct path_in_statement;
template <int S, int... C>
struct path_in_statement<TreePath<S, C...>> {
  using type = TreePath<C...>;
};

/// The first occurrence of each held operation, by position, as the rewrite meets them
/// (statement by statement), for later occurrences to compare themselves with.
using FirstOccurrences = std::vector<const void*>;

template <class Entry>
using temp_of = TempParam<Entry::position, typename Entry::type::value_type, Entry::type::strict>;

/// Child c (at Path) of an operation, in the rewritten program: itself if a leaf, else
/// the temporary of its entry (Entry), or a SharedOr if it is a later occurrence whose
/// values may differ from the first's.
template <class Entry, class Path, class C>
auto replacement(const C& c, const FirstOccurrences& first) {
  if constexpr (std::is_void_v<Entry>) {
    return c;
  } else if constexpr (std::is_same_v<typename Entry::path, Path> || stateless<C>()) {
    return temp_of<Entry>{};
  } else {
    const bool shared = same_value(c, *static_cast<const C*>(first[Entry::position]));
    return SharedOr<temp_of<Entry>, C>{{}, temp_of<Entry>{}, c, shared};
  }
}

/// The entry of each child of an operation of type E, in a HeldSet (void for leaves).
template <class Set, class E, class = std::make_index_sequence<std::tuple_size_v<children_t<E>>>>
struct child_entries;
template <class Set, class E, std::size_t... I>
struct child_entries<Set, E, std::index_sequence<I...>> {
  template <class C>
  using entry = std::conditional_t<is_operation_v<C>, held_t<C, Set>, void>;
  using type = std::tuple<entry<std::decay_t<std::tuple_element_t<I, children_t<E>>>>...>;
};
template <class Set, class E>
using child_entries_t = typename child_entries<Set, E>::type;

template <class Entries, class Path, class E, std::size_t... I>
auto over_temporaries(const E& e, const FirstOccurrences& first, std::index_sequence<I...>) {
  const auto c = children(e);
  return rebuild(
      e, replacement<std::tuple_element_t<I, Entries>, typename path_append<Path, int(I)>::type>(
             child<I>(c), first)...);
}
/// Operation e at Path with its children replaced (Entries: theirs, child_entries_t).
template <class Entries, class Path, class E>
auto with_temporaries(const E& e, const FirstOccurrences& first) {
  if constexpr (is_leaf_node_v<E>)
    return e;
  else
    return over_temporaries<Entries, Path>(
        e, first, std::make_index_sequence<std::tuple_size_v<children_t<E>>>{});
}

/// What to make of an operation a statement adds: its entry and its children's.
template <class Entry, class ChildEntries>
struct Added {
  using entry = Entry;
  using children = ChildEntries;
};
/// The operations held at positions [From, To) of Set, in order.
template <class Set, int From, class = std::make_integer_sequence<int, 0>>
struct added_in;
template <class Set, int From, int... K>
struct added_in<Set, From, std::integer_sequence<int, K...>> {
  using type = std::tuple<Added<held_at_t<Set, From + K>,
                                child_entries_t<Set, typename held_at_t<Set, From + K>::type>>...>;
};

/// `t = op(...)` for an operation a statement adds, from its first occurrence in `root`.
template <class A, class Root>
auto held_statement(const Root& root, FirstOccurrences& first) {
  using Entry = typename A::entry;
  const auto& node = node_below(root, typename path_in_statement<typename Entry::path>::type{});
  first[Entry::position] = &node;
  auto e = with_temporaries<typename A::children, typename Entry::path>(node, first);
  return Assign<temp_of<Entry>, decltype(e)>{temp_of<Entry>{}, e};
}
template <class AddedList, class Root, std::size_t... K>
auto held_statements(const Root& root, FirstOccurrences& first, std::index_sequence<K...>) {
  // In position order: an operation's children come before it (braced: in this order).
  return hana::tuple<decltype(held_statement<std::tuple_element_t<K, AddedList>>(root, first))...>{
      held_statement<std::tuple_element_t<K, AddedList>>(root, first)...};
}

/// Statement S, split: the statements of the operations it adds, then itself.
template <int First, int S, class Statements>
auto split_statement(const Statements& statements, FirstOccurrences& first) {
  using Walk = StatementWalk<Statements, First, S>;
  const auto& s = statement_at<S>(statements);
  if constexpr (StatementInfo<typename Walk::statement>::kernel) {
    using Set = typename Walk::after::set;
    constexpr int from = Walk::before::next, to = Walk::after::next;
    using AddedList =
        typename added_in<Set, from, std::make_integer_sequence<int, to - from>>::type;
    const auto& root = statement_expr(s);
    auto added = held_statements<AddedList>(root, first, std::make_index_sequence<to - from>{});
    using RootEntries = child_entries_t<Set, statement_expr_t<typename Walk::statement>>;
    return hana::append(added,
                        with_expr(s, with_temporaries<RootEntries, TreePath<S>>(root, first)));
  } else {  // a host statement runs as it is
    return hana::make_tuple(s);
  }
}

template <int First, class Statements, std::size_t... S>
auto split_all(const Statements& statements, FirstOccurrences& first, std::index_sequence<S...>) {
  // Braced: the statements are split in order (a later one compares with earlier ones).
  using Parts = hana::tuple<decltype(split_statement<First, int(S)>(statements, first))...>;
  return hana::flatten(Parts{split_statement<First, int(S)>(statements, first)...});
}

/// All statements, split: (statements, next free position). The rewrite's temporaries are
/// numbered from `first`.
template <class Statements, class First>
auto split_operations(const Statements& statements, First) {
  constexpr int count = statement_count<Statements>::value;
  constexpr int total = StatementWalk<Statements, First::value, count - 1>::after::next;
  FirstOccurrences first(total);
  return hana::make_tuple(
      split_all<First::value>(statements, first, std::make_index_sequence<count>{}),
      hana::int_c<total>);
}

}  // namespace kfuse::detail
