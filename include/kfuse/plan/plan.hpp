// The compile-time plan of a program: statements are grouped into kernels by
// the fusion rules (docs/user-guide.md §7), folding over the statements in order with
// Boost.Hana sets of parameter positions:
//   a statement joins the current group unless
//   1. (domain)      it iterates another kind of domain,
//   2. (true dep.)   it reads at an offset / through A*x an array the group writes,
//   3. (anti dep.)   it writes an array the group reads at an offset / through A*x,
//   4. (reduction)   it reads a Scalar that a reduction of the group produces.
// Scalar-only statements form groups without a kernel. The plan's figures
// (kernel_count, allreduce_count, exchange_count) and the register/memory
// decision for each program temporary follow from the groups.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <boost/hana/append.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/back.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/intersection.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/range.hpp>
#include <boost/hana/union.hpp>

#include "kfuse/plan/policy.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

/// What one statement writes and reads, for the fusion rules.
template <class S>
struct StatementInfo;

template <class Target, class E>
struct StatementInfo<Assign<Target, E>> {
  static constexpr bool kernel = true;
  static constexpr int domain = domain::combine(Target::domain, expr_traits<E>::domain);
  static constexpr int reductions = 0;
  static constexpr auto writes = hana::make_set(hana::int_c<Target::index>);
  static constexpr auto pointwise = Access<E>::pointwise;
  static constexpr auto offset = Access<E>::offset;
  static constexpr auto scalar_reads = Access<E>::scalars;
  static constexpr auto scalar_writes = hana::make_set();
  static constexpr bool array_handles = Access<E>::array_handles;
};

template <class Target, class R>
struct StatementInfo<Reduce<Target, R>> {
  static constexpr bool kernel = true;
  static constexpr int domain = R::domain;
  static constexpr int reductions = 1;
  static constexpr auto writes = hana::make_set();
  static constexpr auto pointwise = Access<R>::pointwise;
  static constexpr auto offset = Access<R>::offset;
  static constexpr auto scalar_reads = Access<R>::scalars;
  static constexpr auto scalar_writes = hana::make_set(hana::int_c<Target::index>);
  static constexpr bool array_handles = Access<R>::array_handles;
};

template <class Target, class E>
struct StatementInfo<ScalarAssign<Target, E>> {
  static constexpr bool kernel = false;
  static constexpr int domain = domain::scalar;
  static constexpr int reductions = 0;
  static constexpr auto writes = hana::make_set();
  static constexpr auto pointwise = hana::make_set();
  static constexpr auto offset = hana::make_set();
  static constexpr auto scalar_reads = Access<E>::scalars;
  static constexpr auto scalar_writes = hana::make_set(hana::int_c<Target::index>);
  static constexpr bool array_handles = false;
};

/// A group of statements that runs as one kernel (or, kernel = false, a run
/// of scalar-only statements on the host).
template <bool Kernel, int Domain, int Reductions, class Members, class Writes, class Offsets,
          class Reduced>
struct Group {
  static constexpr bool kernel = Kernel;
  static constexpr int domain = Domain;
  static constexpr int reductions = Reductions;
  Members members;  ///< hana::tuple of statement positions
  Writes writes;    ///< arrays written
  Offsets offsets;  ///< arrays read at an offset or through a sparse product
  Reduced reduced;  ///< Scalars produced by reductions
};

template <bool K, int D, int R, class M, class W, class O, class Rd>
constexpr auto make_group(M m, W w, O o, Rd r) {
  return Group<K, D, R, M, W, O, Rd>{m, w, o, r};
}

template <class Statements, int I>
using statement_at = std::decay_t<decltype(hana::at_c<I>(std::declval<Statements>()))>;

template <class Info, class I>
constexpr auto group_of_one(I i) {
  return make_group<Info::kernel, Info::domain, Info::reductions>(
      hana::make_tuple(i), Info::writes, Info::offset, Info::scalar_writes);
}

template <class A, class B>
constexpr bool overlaps(const A& a, const B& b) {
  return decltype(hana::length(hana::intersection(a, b)))::value != 0;
}

/// Fusion rules 1-4 (Fused policy).
template <class G, class Info>
constexpr bool joins() {
  if constexpr (!G::kernel && !Info::kernel) {
    return true;  // consecutive scalar-only statements: one host group
  } else if constexpr (!G::kernel || !Info::kernel) {
    return false;
  } else {
    constexpr bool same_domain = domain::compatible(G::domain, Info::domain);
    constexpr bool true_dep = overlaps(Info::offset, G{}.writes);
    constexpr bool anti_dep = overlaps(Info::writes, G{}.offsets);
    constexpr bool reads_reduction = overlaps(Info::scalar_reads, G{}.reduced);
    return same_domain && !true_dep && !anti_dep && !reads_reduction;
  }
}

template <class Policy, class Statements>
struct GroupStep {
  template <class Groups, class I>
  constexpr auto operator()(Groups groups, I i) const {
    using Info = StatementInfo<statement_at<Statements, I::value>>;
    if constexpr (decltype(hana::length(groups))::value == 0) {
      // (append to the empty tuple rather than make_tuple: nvcc warns #550-D when `groups`
      // is not used)
      return hana::append(groups, group_of_one<Info>(i));
    } else {
      using Last = std::decay_t<decltype(hana::back(groups))>;
      if constexpr (std::is_same_v<Policy, Fused> && joins<Last, Info>()) {
        const Last last = hana::back(groups);
        auto merged = make_group<Last::kernel, domain::combine(Last::domain, Info::domain),
                                 Last::reductions + Info::reductions>(
            hana::append(last.members, i), hana::union_(last.writes, Info::writes),
            hana::union_(last.offsets, Info::offset),
            hana::union_(last.reduced, Info::scalar_writes));
        return hana::append(hana::drop_back(groups), merged);
      } else {
        return hana::append(groups, group_of_one<Info>(i));
      }
    }
  }
};

/// A set of parameter positions as bits: position p is bit p % 64 of word p / 64. A plan
/// takes as many words as its program has positions, so a program has no parameter limit.
template <int Words>
struct PositionMask {
  std::uint64_t word[Words] = {};

  constexpr bool test(int p) const { return (word[p / 64] >> (p % 64)) & 1u; }
  constexpr void set(int p) { word[p / 64] |= std::uint64_t{1} << (p % 64); }
  constexpr bool any() const {
    for (std::uint64_t w : word)
      if (w != 0) return true;
    return false;
  }
  constexpr PositionMask& operator|=(const PositionMask& other) {
    for (int k = 0; k < Words; ++k) word[k] |= other.word[k];
    return *this;
  }
  friend constexpr PositionMask operator|(PositionMask a, const PositionMask& b) { return a |= b; }
  friend constexpr PositionMask operator&(PositionMask a, const PositionMask& b) {
    for (int k = 0; k < Words; ++k) a.word[k] &= b.word[k];
    return a;
  }
  friend constexpr PositionMask operator~(PositionMask a) {
    for (std::uint64_t& w : a.word) w = ~w;
    return a;
  }
};

/// The mask of a hana set of positions (for the small analyses below).
template <int Words, class Set>
constexpr PositionMask<Words> mask_of(Set set) {
  return hana::fold_left(hana::to_tuple(set), PositionMask<Words>{}, [](auto m, auto i) {
    static_assert(decltype(i)::value < 64 * Words,
                  "kfuse: internal: a parameter position beyond the plan's Positions");
    m.set(decltype(i)::value);
    return m;
  });
}

/// Plan of a program with statements `Statements` (a hana::tuple type).
/// `MemoryTemporaries`: every temporary is materialised (Unfused policy). `Positions`: the
/// program's parameter positions (every placeholder index is below it).
template <class Policy, class Statements, bool MemoryTemporaries = false, int Positions = 64>
struct Plan {
  static constexpr int mask_words = Positions > 64 ? (Positions + 63) / 64 : 1;
  using Mask = PositionMask<mask_words>;
  static constexpr int statement_count = decltype(hana::length(std::declval<Statements>()))::value;
  static constexpr auto groups =
      hana::fold_left(hana::make_range(hana::int_c<0>, hana::int_c<statement_count>),
                      hana::make_tuple(), GroupStep<Policy, Statements>{});
  static constexpr int group_count = decltype(hana::length(groups))::value;
  using groups_type = std::decay_t<decltype(groups)>;

  template <int G>
  using group = std::decay_t<decltype(hana::at_c<G>(groups))>;

  template <class F>
  static constexpr int count_groups(F predicate) {
    int n = 0;
    hana::for_each(groups, [&](auto g) { n += predicate(g) ? 1 : 0; });
    return n;
  }
  static constexpr int kernel_count = count_groups([](auto g) { return decltype(g)::kernel; });
  static constexpr int allreduce_count =
      count_groups([](auto g) { return decltype(g)::reductions > 0; });
  static constexpr int exchange_count = count_groups([](auto g) {
    return decltype(g)::kernel && mask_of<mask_words>(decltype(g){}.offsets).any();
  });

  /// Per statement: its group, and the masks of what it touches.
  struct StatementFacts {
    int group = 0;
    Mask writes, pointwise, offset, scalar_reads, scalar_writes;
    int domain = 0;
  };
  static constexpr std::array<StatementFacts, statement_count> facts() {
    std::array<StatementFacts, statement_count> out{};
    int g = 0;
    hana::for_each(groups, [&](auto group) {
      hana::for_each(group.members, [&](auto i) { out[decltype(i)::value].group = g; });
      ++g;
    });
    hana::for_each(hana::make_range(hana::int_c<0>, hana::int_c<statement_count>), [&](auto i) {
      using Info = StatementInfo<statement_at<Statements, decltype(i)::value>>;
      out[i].writes = mask_of<mask_words>(Info::writes);
      out[i].pointwise = mask_of<mask_words>(Info::pointwise);
      out[i].offset = mask_of<mask_words>(Info::offset);
      out[i].scalar_reads = mask_of<mask_words>(Info::scalar_reads);
      out[i].scalar_writes = mask_of<mask_words>(Info::scalar_writes);
      out[i].domain = Info::domain;
    });
    return out;
  }
  static constexpr auto statement_facts = facts();

  /// Each group's grid rank. A group that touches only temporaries and
  /// indices takes the rank of the group that first wrote one of them.
  static constexpr std::array<int, group_count> resolve_domains() {
    std::array<int, group_count> out{};
    std::array<Mask, group_count> touched{}, written{};
    int g = 0;
    hana::for_each(groups, [&](auto group) {
      out[g] = decltype(group)::domain;
      hana::for_each(group.members, [&](auto i) {
        touched[g] |= statement_facts[i].writes | statement_facts[i].pointwise | statement_facts[i].offset;
        written[g] |= statement_facts[i].writes;
      });
      ++g;
    });
    for (int k = 0; k < group_count; ++k) {
      for (int e = 0; e < k && out[k] == domain::any; ++e)
        if ((touched[k] & written[e]).any()) out[k] = out[e];
    }
    return out;
  }
  static constexpr auto group_domains = resolve_domains();

  /// A temporary lives in a register when it is written before it is read,
  /// and only read pointwise, all within one group; otherwise in memory.
  static constexpr bool in_register(int position) {
    if (MemoryTemporaries) return false;
    int group = -1;
    bool written = false;
    for (const auto& s : statement_facts) {
      const bool reads = (s.pointwise | s.offset).test(position), writes = s.writes.test(position);
      if (!reads && !writes) continue;
      if (s.offset.test(position)) return false;
      if (group == -1) group = s.group;
      if (s.group != group) return false;
      if (reads && !written) return false;  // reads last run's value: needs memory
      written = written || writes;
    }
    return true;
  }

  /// Rank of a memory temporary: the domain of the first group writing it.
  static constexpr int temporary_domain(int position) {
    int result = domain::any, index = 0;
    hana::for_each(groups, [&](auto g) {
      bool writes = false;
      hana::for_each(g.members,
                     [&](auto i) { writes |= statement_facts[i].writes.test(position); });
      if (writes && result == domain::any) result = group_domains[index];
      ++index;
    });
    return result;
  }
};

}  // namespace kfuse::detail
