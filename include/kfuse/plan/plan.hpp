// The compile-time plan of a program: statements are grouped into kernels by
// the fusion rules (docs/user-guide.md §7), in order, with constexpr masks of
// parameter positions (plan/access.hpp):
//   a statement joins the current group unless
//   1. (domain)      it iterates another kind of domain,
//   2. (true dep.)   it reads at other points (stencil, A*x) an array the group writes,
//   3. (anti dep.)   it writes an array the group reads at other points,
//   4. (reduction)   it reads a Scalar that a reduction of the group produces.
// Scalar-only statements form groups without a kernel. The plan's figures
// (kernel_count, allreduce_count, exchange_count) and the register/memory
// decision for each program temporary follow from the groups. Everything is a
// constexpr value computed by loops over arrays; only the per-group view
// (Plan::group<G>) turns a group's members and masks into integer sequences,
// for the code that walks them at compile time.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "kfuse/core/static_for.hpp"
#include "kfuse/plan/policy.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

/// One statement's facts: what it writes and reads, as masks, and its group.
template <int Words>
struct StatementFacts {
  bool kernel = false;
  int domain = 0, reductions = 0, group = 0;
  PositionMask<Words> writes, pointwise, neighbour_reads, scalar_reads, scalar_writes;
  PositionMask<Words> modelled_reads;  ///< what the memory traffic model counts as read
};

template <int Words, class S>
constexpr StatementFacts<Words> facts_of() {
  using Info = StatementInfo<S>;
  constexpr Access<Words> reads = access_of<Words, typename Info::reads>();
  StatementFacts<Words> f;
  f.kernel = Info::kernel;
  f.domain = Info::domain;
  f.reductions = Info::reductions;
  if (Info::array_target >= 0) f.writes.set(Info::array_target);
  if (Info::scalar_target >= 0) f.scalar_writes.set(Info::scalar_target);
  f.pointwise = reads.pointwise;
  f.neighbour_reads = reads.neighbour_reads;
  f.scalar_reads = reads.scalars;
  f.modelled_reads = reads.modelled;
  return f;
}

/// A group of consecutive statements [first, end) that runs as one kernel (or, kernel =
/// false, a run of scalar-only statements on the host).
template <int Words>
struct GroupFacts {
  bool kernel = false;
  int domain = 0, reductions = 0, first = 0, end = 0;
  PositionMask<Words> writes;           ///< arrays written
  PositionMask<Words> neighbour_reads;  ///< arrays read by a stencil or a sparse product
  PositionMask<Words> reduced;          ///< Scalars produced by reductions

  static constexpr GroupFacts of_one(const StatementFacts<Words>& s, int index) {
    GroupFacts g;
    g.kernel = s.kernel;
    g.domain = s.domain;
    g.first = index;
    return g.add(s, index);
  }
  constexpr GroupFacts add(const StatementFacts<Words>& s, int index) const {
    GroupFacts g = *this;
    g.domain = domain::combine(g.domain, s.domain);
    g.reductions += s.reductions;
    g.end = index + 1;
    g.writes |= s.writes;
    g.neighbour_reads |= s.neighbour_reads;
    g.reduced |= s.scalar_writes;
    return g;
  }

  /// Fusion rules 1-4 (Fused policy).
  constexpr bool joins(const StatementFacts<Words>& s) const {
    if (!kernel && !s.kernel) return true;  // consecutive scalar-only statements: one host group
    if (!kernel || !s.kernel) return false;
    const bool same_domain = domain::compatible(domain, s.domain);
    const bool true_dep = (s.neighbour_reads & writes).any();
    const bool anti_dep = (s.writes & neighbour_reads).any();
    const bool reads_reduction = (s.scalar_reads & reduced).any();
    return same_domain && !true_dep && !anti_dep && !reads_reduction;
  }
};

/// The first N positions of a mask, in order.
template <std::size_t N, int Words>
constexpr std::array<int, N> positions_in(const PositionMask<Words>& mask) {
  std::array<int, N> out{};
  std::size_t n = 0;
  for (int p = 0; p < 64 * Words; ++p)
    if (mask.test(p) && n != N) out[n++] = p;
  return out;
}

template <int Words, class Statements, std::size_t... I>
constexpr std::array<StatementFacts<Words>, sizeof...(I)> facts_of_statements(
    std::index_sequence<I...>) {
  return {facts_of<Words, statement_at_t<Statements, int(I)>>()...};
}

/// A group's member statements and the positions it writes and reads at an offset, as
/// std::integer_sequence values, for walks at compile time:
/// `for_each_index(group.members, ...)`, `if constexpr (G::kernel)`.
template <class P, int G>
struct PlannedGroup {
  static constexpr int index = G;
  static constexpr auto facts = P::group_facts[G];
  static constexpr bool kernel = facts.kernel;
  static constexpr int reductions = facts.reductions;
  static constexpr index_range_t<facts.first, facts.end> members{};

  template <bool NeighbourReads, std::size_t... K>
  static constexpr auto positions(std::index_sequence<K...>) {
    [[maybe_unused]] constexpr auto list =
        positions_in<sizeof...(K)>(NeighbourReads ? facts.neighbour_reads : facts.writes);
    return std::integer_sequence<int, list[K]...>{};
  }
  static constexpr auto writes = positions<false>(std::make_index_sequence<facts.writes.count()>{});
  static constexpr auto neighbour_reads =
      positions<true>(std::make_index_sequence<facts.neighbour_reads.count()>{});
};

/// Plan of a program with statements `Statements` (a Pack or hana::tuple type).
/// `MemoryTemporaries`: every temporary is materialised (Unfused policy). `Positions`: the
/// program's parameter positions (every placeholder index is below it).
template <class Policy, class Statements, bool MemoryTemporaries = false, int Positions = 64>
struct Plan {
  static constexpr int mask_words = Positions > 64 ? (Positions + 63) / 64 : 1;
  using Mask = PositionMask<mask_words>;
  using Facts = StatementFacts<mask_words>;
  using Group = GroupFacts<mask_words>;
  static constexpr int statement_count = detail::statement_count<Statements>::value;

  /// The fold of the fusion rules over the statements in order: each statement's facts
  /// with its group, and the groups (the first `count` entries).
  struct Fold {
    std::array<Facts, statement_count> statements{};
    std::array<Group, statement_count> groups{};
    int count = 0;
  };
  static constexpr Fold fold() {
    Fold f{facts_of_statements<mask_words, Statements>(
        std::make_index_sequence<std::size_t(statement_count)>{})};
    for (int i = 0; i < statement_count; ++i) {
      Facts& s = f.statements[i];
      if (f.count > 0 && std::is_same_v<Policy, Fused> && f.groups[f.count - 1].joins(s))
        f.groups[f.count - 1] = f.groups[f.count - 1].add(s, i);
      else
        f.groups[f.count++] = Group::of_one(s, i);
      s.group = f.count - 1;
    }
    return f;
  }
  static constexpr Fold folded = fold();
  /// Per statement: what it touches, and its group.
  static constexpr auto statement_facts = folded.statements;
  static constexpr int group_count = folded.count;

  static constexpr std::array<Group, group_count> make_groups() {
    std::array<Group, group_count> out{};
    for (int g = 0; g < group_count; ++g) out[g] = folded.groups[g];
    return out;
  }
  static constexpr auto group_facts = make_groups();

  template <int G>
  using group = PlannedGroup<Plan, G>;

  /// Calls f(group<G>{}) for every group, in order.
  template <class F>
  static constexpr void for_each_group(F&& f) {
    for_each_group_in(f, std::make_index_sequence<std::size_t(group_count)>{});
  }

  template <class F>
  static constexpr int count_groups(F predicate) {
    int n = 0;
    for (const Group& g : group_facts) n += predicate(g) ? 1 : 0;
    return n;
  }
  static constexpr int kernel_count = count_groups([](const Group& g) { return g.kernel; });
  static constexpr int allreduce_count =
      count_groups([](const Group& g) { return g.reductions > 0; });
  static constexpr int exchange_count =
      count_groups([](const Group& g) { return g.kernel && g.neighbour_reads.any(); });

  /// Each group's domain. A group that touches only temporaries and indices (domain::any)
  /// takes the domain of the earliest group before it that wrote one of them and has one.
  /// One pass over the groups, keeping for each position that earliest writer, visiting set
  /// bits only: linear in the program's size, which Unfused's rewrite makes large (a search
  /// over pairs of groups ran out of GCC's constexpr budget, docs/architecture.md §15).
  static constexpr std::array<int, group_count> resolve_domains() {
    std::array<int, group_count> out{};
    std::array<int, Mask::positions> first_writer{};  // a group; -1: none with a domain yet
    for (int& g : first_writer) g = -1;
    for (int g = 0; g < group_count; ++g) {
      Mask touched, written;
      for (int i = group_facts[g].first; i < group_facts[g].end; ++i) {
        const Facts& s = statement_facts[i];
        touched |= s.writes | s.pointwise | s.neighbour_reads;
        written |= s.writes;
      }
      out[g] = group_facts[g].domain;
      if (out[g] == domain::any) {
        int earliest = g;
        touched.for_each_set([&](int p) {
          if (first_writer[p] >= 0 && first_writer[p] < earliest) earliest = first_writer[p];
        });
        if (earliest < g) out[g] = out[earliest];
      }
      if (out[g] != domain::any)
        written.for_each_set([&](int p) {
          if (first_writer[p] < 0) first_writer[p] = g;
        });
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
      const bool reads = (s.pointwise | s.neighbour_reads).test(position);
      const bool writes = s.writes.test(position);
      if (!reads && !writes) continue;
      if (s.neighbour_reads.test(position)) return false;
      if (group == -1) group = s.group;
      if (s.group != group) return false;
      if (reads && !written) return false;  // reads last run's value: needs memory
      written = written || writes;
    }
    return true;
  }

  /// Domain of a memory temporary: that of the first group writing it.
  static constexpr int temporary_domain(int position) {
    int result = domain::any;
    for (int g = 0; g < group_count; ++g)
      if (group_facts[g].writes.test(position) && result == domain::any) result = group_domains[g];
    return result;
  }

 private:
  template <class F, std::size_t... G>
  static constexpr void for_each_group_in(F& f, std::index_sequence<G...>) {
    (f(group<int(G)>{}), ...);
  }
};

}  // namespace kfuse::detail
