// Running one group: lower its statements against a binding context, build
// the functor, exchange stale halos, launch, combine reductions over ranks,
// store them, and mark written arrays' halos stale. Shared by programs
// (kfuse::fuse) and eager statements (Array::operator=, kfuse::eval).
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kfuse/exec/exchange.hpp"
#include "kfuse/exec/kernel.hpp"
#include "kfuse/exec/lower.hpp"
#include "kfuse/exec/space.hpp"
#include "kfuse/exec/statements.hpp"
#include "kfuse/plan/plan.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class Seq, int I>
struct append;
template <int... S, int I>
struct append<std::integer_sequence<int, S...>, I> {
  using type = std::integer_sequence<int, S..., I>;
};
template <class Seq, int I>
using append_t = typename append<Seq, I>::type;

/// A list of slot types, each once, in order of first appearance (`void`: no slot).
template <class... Slot>
struct SlotList {};

template <class List, class Slot>
struct add_slot;
template <class... S, class Slot>
struct add_slot<SlotList<S...>, Slot> {
  using type = std::conditional_t<(std::is_same_v<S, Slot> || ...) || std::is_void_v<Slot>,
                                  SlotList<S...>, SlotList<S..., Slot>>;
};
template <class List, class... Slot>
struct add_slots {
  using type = List;
};
template <class List, class Slot, class... Rest>
struct add_slots<List, Slot, Rest...> : add_slots<typename add_slot<List, Slot>::type, Rest...> {};

/// File<slots...>, or Empty when there are none.
template <template <class...> class File, class Empty, class Slots>
struct slot_file;
template <template <class...> class File, class Empty>
struct slot_file<File, Empty, SlotList<>> {
  using type = Empty;
};
template <template <class...> class File, class Empty, class... S>
struct slot_file<File, Empty, SlotList<S...>> {
  using type = File<S...>;
};

/// The register file / accumulator file types a statement list needs (a
/// target stored twice in the group has one slot).
template <template <class> class SlotOf, template <class...> class File, class Empty, class... S>
using slot_file_t =
    typename slot_file<File, Empty,
                       typename add_slots<SlotList<>, typename SlotOf<S>::type...>::type>::type;

inline StatementList<> make_statement_list() { return {}; }
template <class S, class... Rest>
auto make_statement_list(const S& s, const Rest&... rest) {
  return prepend(s, make_statement_list(rest...));
}

template <int J, bool Forward, class Stored, class Statements, class Ctx>
auto lower_members(const Statements&, const Ctx&) {
  return StatementList<>{};
}
template <int J, bool Forward, class Stored, class Statements, class Ctx, class I, class... Rest>
auto lower_members(const Statements& statements, const Ctx& ctx, I i, Rest... rest) {
  using S = statement_at_t<Statements, i>;
  constexpr int next = J + StatementInfo<S>::reductions;
  constexpr int stored = Forward ? forwarded_position<S>::value : -1;
  using NextStored = std::conditional_t<(stored < 0), Stored, append_t<Stored, stored>>;
  auto head =
      lower_statement<J, Forward>(statement_at<i>(statements), Forwarding<Ctx, Stored>(ctx));
  return prepend(head, lower_members<next, Forward, NextStored>(statements, ctx, rest...));
}

// ---- kernel slots: a group's positions renumbered ----------------------------------

/// The index of `position` among P (-1: not there).
template <int... P>
constexpr int index_in(int position) {
  int k = 0;
  for (int p : std::array<int, sizeof...(P)>{{P...}}) {
    if (p == position) return k;
    ++k;
  }
  return -1;
}

/// Position I's kernel slot: its index among a group's positions P.
template <int I, int... P>
constexpr int slot_among() {
  constexpr int k = index_in<P...>(I);
  static_assert(k >= 0, "kfuse: a group's kernel names a position its statements do not");
  return k;
}

/// Seq with position I appended, unless it holds I already.
template <class Seq, int I>
struct add_position;
template <int... P, int I>
struct add_position<std::integer_sequence<int, P...>, I> {
  using type = std::conditional_t<((P == I) || ...), std::integer_sequence<int, P...>,
                                  std::integer_sequence<int, P..., I>>;
};

/// The parameter positions an expression's lowered form names (ParamRead, RegisterRead), in
/// order of first appearance, appended to Found: its array parameters, shifted or not, but
/// not a product's x (read through the product's own views).
template <class E, class Found>
struct collect_positions : fold_children<collect_positions, children_t<E>, Found> {};
template <int I, class T, int D, class Found>
struct collect_positions<ArrayParam<I, T, D>, Found> : add_position<Found, I> {};
template <int I, class T, bool S, class Found>
struct collect_positions<TempParam<I, T, S>, Found> : add_position<Found, I> {};
template <class Leaf, int... O, class Found>
struct collect_positions<Shifted<Leaf, O...>, Found> : collect_positions<Leaf, Found> {};
template <class M, class X, class Found>
struct collect_positions<SparseProduct<M, X>, Found> {
  using type = Found;
};

/// ... of a group's statements in order: each one's array target (a stored or register
/// temporary), then what it reads.
template <class Found, class... S>
struct collect_statement_positions {
  using type = Found;
};
template <class Found, class S, class... Rest>
struct collect_statement_positions<Found, S, Rest...> {
  using Info = StatementInfo<S>;
  using WithTarget =
      std::conditional_t<(Info::array_target >= 0),
                         typename add_position<Found, Info::array_target>::type, Found>;
  using type = typename collect_statement_positions<
      typename collect_positions<typename Info::reads, WithTarget>::type, Rest...>::type;
};

/// A group's lowering context: `Ctx` whose kernel-side trees name parameter position I as
/// slot<I>, its index among the positions the group names (`Positions`, in order of first
/// appearance; kernel_position<K> maps back). Kernels of one shape then have one type
/// wherever their parameters sit, and compile once: the Unfused rewrite's `t7 = u * v`
/// and `t9 = h * u` are one kernel.
template <class Ctx, class Positions>
struct SlotContext;
template <class Ctx, int... P>
struct SlotContext<Ctx, std::integer_sequence<int, P...>> : Ctx {
  explicit SlotContext(const Ctx& base) : Ctx(base) {}
  template <int I>
  static constexpr int slot = slot_among<I, P...>();
  template <int K>
  static constexpr int kernel_position = std::array<int, sizeof...(P)>{{P...}}[K];
};

/// The positions kernel group G (plan::group<g>) of Statements names.
template <class Statements, int First, int... K>
auto positions_of_statements(std::integer_sequence<int, K...>) ->
    typename collect_statement_positions<std::integer_sequence<int>,
                                         statement_at_t<Statements, First + K>...>::type;
template <class Statements, class G>
using group_positions_t = decltype(positions_of_statements<Statements, G::facts.first>(
    std::make_integer_sequence<int, G::facts.end - G::facts.first>{}));

/// Lowered statements of a group, in order, with reduction slots numbered.
template <class Statements, class Members, class Ctx>
auto lower_group(const Statements& statements, Members members, const Ctx& ctx) {
  return apply_indices(members, [&](auto... i) {
    // A captured Array/Vector handle may be a written parameter too: keep
    // such groups' stores in order (Access::array_handles).
    constexpr bool forward = !(StatementInfo<statement_at_t<Statements, i>>::array_handles || ...);
    return lower_members<0, forward, std::integer_sequence<int>>(statements, ctx, i...);
  });
}

template <class List>
struct files_of;
template <class... S>
struct files_of<StatementList<S...>> {
  using registers = slot_file_t<register_slot_of, RegisterFile, NoRegisters, S...>;
  using accumulators = slot_file_t<accumulator_slot_of, AccumulatorFile, NoAccumulators, S...>;
};

// The view slots a lowered statement list reads through (its ParamRead leaves), each
// once, collected at the type level by a walk over children_t (expr/walk.hpp).
template <class E, class Found>
struct collect_view_slots : fold_children<collect_view_slots, children_t<E>, Found> {};
template <int K, class T, int N, class O, class Found>
struct collect_view_slots<ParamRead<K, T, N, O>, Found> : add_slot<Found, ViewSlot<K, T, N>> {};

/// The view file type of a statement list (NoViews when it reads none).
template <class List>
using views_t = typename slot_file<ViewFile, NoViews,
                                   typename collect_view_slots<List, SlotList<>>::type>::type;

template <int... K, class... T, int... N, class Ctx>
ViewFile<ViewSlot<K, T, N>...> make_views(ViewFile<ViewSlot<K, T, N>...>*, const Ctx& ctx) {
  return {ViewSlot<K, T, N>{ctx.template argument<Ctx::template kernel_position<K>>().view()}...};
}
template <class Ctx>
NoViews make_views(NoViews*, const Ctx&) {
  return {};
}
/// The arrays a lowered group reads through ParamRead, from its SlotContext.
template <class List, class Ctx>
views_t<List> group_views(const List&, const Ctx& ctx) {
  return make_views(static_cast<views_t<List>*>(nullptr), ctx);
}

template <int N, class List, class Views = NoViews>
struct KernelTypes {
  using Registers = typename files_of<List>::registers;
  using Accumulators = typename files_of<List>::accumulators;
  using Kernel = GroupKernel<N, Registers, Accumulators, List, Views>;
};

/// Joins the accumulators of a group's second launch into the first's.
template <class Accumulators>
void join_launches(Accumulators& into, const Accumulators& from) {
  if constexpr (!std::is_same_v<Accumulators, NoAccumulators>) into.join(from);
}

/// Whether every sparse product of a lowered body multiplies by the matrix
/// whose column indices are `columns`: its interior rows then are interior
/// for the whole body (only owned columns, PointFacts::owned_columns).
template <class Body>
bool products_all_read(const Body& body, const int* columns) {
  return every_node<is_sparse_row_read>(
      body, [columns](const auto& node) { return node.columns.data() == columns; });
}

/// Whether no sparse product of a lowered body reads a ghost column (its
/// matrix has none: one rank, or a block without off-rank couplings).
template <class Body>
bool reads_no_ghosts(const Body& body) {
  return every_node<is_sparse_row_read>(
      body, [](const auto& node) { return node.ghosts.extent(0) == 0; });
}

/// Runs a lowered statement list as one kernel over `box` of a rank-N grid.
/// Returns the combined accumulators (NoAccumulators without reductions).
template <int N, class List, class Views = NoViews>
auto run_kernel(const std::string& label, const Box<N>& box, const List& list, const Comm& comm,
                const Views& views = {}) {
  using K = KernelTypes<N, List, Views>;
  typename K::Accumulators acc{};
  const typename K::Kernel kernel{list, views};
  if constexpr (K::Kernel::reads_sparse_rows) {  // the types run_rows_overlapped launches
    if (reads_no_ghosts(kernel.body))
      launch<N>(label, box, kernel.assuming_owned_columns(), &acc);
    else
      launch<N>(label, box, over_rows(kernel), &acc);
  } else {
    launch<N>(label, box, kernel, &acc);
  }
  if constexpr (!std::is_same_v<typename K::Accumulators, NoAccumulators>)
    comm.allreduce_joined(acc);
  return acc;
}

/// Cells in from each face of a box (per dimension: low side, high side).
template <int N>
using FaceMargins = std::array<std::array<index_t, 2>, N>;

/// `box` without `margin` cells in from each face.
template <int N>
Box<N> shrink(Box<N> box, const FaceMargins<N>& margin) {
  for (int d = 0; d < N; ++d) box.lo[d] += margin[d][0], box.hi[d] -= margin[d][1];
  return box;
}

/// The boxes that cover `box` minus `shrink(box, margin)`: a slab per face
/// with a margin, disjoint (dimensions before d are already trimmed to the
/// interior, dimensions after d span the whole box).
template <int N>
std::vector<Box<N>> boundary_slabs(const Box<N>& box, const FaceMargins<N>& margin) {
  std::vector<Box<N>> slabs;
  for (int d = 0; d < N; ++d) {
    for (int side = 0; side < 2; ++side) {
      Box<N> slab = box;
      for (int e = 0; e < d; ++e) slab.lo[e] += margin[e][0], slab.hi[e] -= margin[e][1];
      if (side == 0)
        slab.hi[d] = std::min(box.hi[d], box.lo[d] + margin[d][0]);
      else
        slab.lo[d] = std::max(box.lo[d] + margin[d][0], box.hi[d] - margin[d][1]);
      if (slab.size() > 0) slabs.push_back(slab);
    }
  }
  return slabs;
}

/// Like run_kernel, while `exchange` is in flight: the interior runs first,
/// the box less `halo` cells in from each face whose halo is not ready
/// before the exchange finishes (faces toward other ranks, mirrored faces;
/// not faces this rank sends to itself or fixed boundaries:
/// HaloExchange::ready_after_start()), so it reads no halo in flight. After
/// the exchange finishes, the boundary slabs run as the group's second
/// launch, labelled `<label>:boundary` (one launch per slab).
template <int N, class List, class Exchange, class Views = NoViews>
auto run_kernel_overlapped(const std::string& label, const Box<N>& box, const List& list,
                           const Comm& comm, Exchange& exchange, index_t halo,
                           const Views& views = {}) {
  using K = KernelTypes<N, List, Views>;
  const typename K::Kernel kernel{list, views};
  FaceMargins<N> margin;
  for (int d = 0; d < N; ++d)
    for (int side = 0; side < 2; ++side)
      margin[d][side] = exchange.ready_after_start(d, side) ? 0 : halo;
  const Box<N> interior = shrink<N>(box, margin);
  if (interior.size() == 0) {  // too thin to split: exchange, then one launch
    exchange.run();
    return run_kernel<N>(label, box, list, comm, views);
  }
  typename K::Accumulators acc{};
  exchange.start();
  launch<N>(label, interior, kernel, &acc);
  exchange.finish();
  for (const Box<N>& slab : boundary_slabs<N>(box, margin)) {
    typename K::Accumulators part{};
    launch<N>(label + ":boundary", slab, kernel, &part);
    join_launches(acc, part);
  }
  if constexpr (!std::is_same_v<typename K::Accumulators, NoAccumulators>)
    comm.allreduce_joined(acc);
  return acc;
}

/// Like run_kernel over a row map, while `imports` (one ghost import) is in
/// flight: the interior rows first (as a range when they are consecutive,
/// else through their list), then, after the import, the boundary rows as
/// the group's second launch (`<label>:boundary`). Three kernel types, as in
/// run_kernel: the interior range under PointFacts::owned_columns (the hot
/// one: neither a row list nor a test per row), a row list under it, and
/// rows without it (RowListKernel: a list, or a range as a rare fallback).
template <class List, class Imports, class Views = NoViews>
auto run_rows_overlapped(const std::string& label, const List& list, const Comm& comm,
                         Imports& imports, const Views& views = {}) {
  using K = KernelTypes<1, List, Views>;
  const typename K::Kernel kernel{list, views};
  const auto boundary = imports.boundary_rows();
  typename K::Accumulators acc{}, part{};
  const bool owned_columns = products_all_read(kernel.body, imports.matrix_columns());
  imports.start();
  if (const auto& range = imports.interior_range()) {  // consecutive rows: no list to read
    const Box<1> rows{{range->first}, {range->second}};
    if (owned_columns)
      launch<1>(label, rows, kernel.assuming_owned_columns(), &acc);
    else
      launch<1>(label, rows, over_rows(kernel), &acc);
  } else {
    const RowList interior = imports.interior_rows();
    const Box<1> rows{{0}, {index_t(interior.extent(0))}};
    if (owned_columns)
      launch<1>(label, rows, over_rows(kernel.assuming_owned_columns(), interior), &acc);
    else
      launch<1>(label, rows, over_rows(kernel, interior), &acc);
  }
  imports.finish();
  launch<1>(label + ":boundary", Box<1>{{0}, {index_t(boundary.extent(0))}},
            over_rows(kernel, boundary), &part);
  join_launches(acc, part);
  if constexpr (!std::is_same_v<typename K::Accumulators, NoAccumulators>)
    comm.allreduce_joined(acc);
  return acc;
}

/// Runs a group's lowered statements over the owned points of `space` (a grid or a row
/// map) after `exchange` (exchange_t<D>) has brought the neighbour data they read up to
/// date: while the interior points run, where `Overlap` and the space allow it (the
/// space's GridOptions::overlap on grids, a single import on row maps), else before the
/// launch. The one runner of programs and eager statements alike. `Overlap` is a
/// template argument so that a kernel that never overlaps (an eager statement, a group
/// without neighbour reads) compiles no overlapped launch.
template <int D, bool Overlap, class List, class Exchange, class Views = NoViews>
auto run_exchanged(const std::string& label, const space_t<D>& space, const List& list,
                   Exchange& exchange, const Views& views = {}) {
  if (!exchange.empty()) {
    if constexpr (Overlap && D == domain::row_map) {
      // Only products import ghosts: no overlapped kernels for the other groups.
      if constexpr (holds_node<is_sparse_row_read, List>())
        if (exchange.can_overlap())
          return run_rows_overlapped(label, list, space.comm(), exchange, views);
    } else if constexpr (Overlap) {
      if (space.overlap())
        return run_kernel_overlapped<kernel_rank<D>>(label, owned_box(space), list, space.comm(),
                                                     exchange, space.halo(), views);
    }
    exchange.run();
  }
  return run_kernel<kernel_rank<D>>(label, owned_box(space), list, space.comm(), views);
}

/// Stores what each statement of a group produced (its reductions: store_result), J
/// numbering the reductions in statement order.
template <int J, class Statements, class Ctx, class Acc>
void store_results(const Statements&, const Ctx&, const Acc&) {}
template <int J, class Statements, class Ctx, class Acc, class I, class... Rest>
void store_results(const Statements& statements, const Ctx& ctx, const Acc& acc, I, Rest... rest) {
  const auto& s = statement_at<I::value>(statements);
  store_result<J>(s, ctx, acc);
  constexpr int next = J + StatementInfo<std::decay_t<decltype(s)>>::reductions;
  store_results<next>(statements, ctx, acc, rest...);
}

/// Runs a host group (scalar-only statements) in order.
template <class Statements, class G, class Ctx>
void run_host_group(const Statements& statements, const G& group, const Ctx& ctx) {
  for_each_index(group.members, [&](auto i) { run_on_host(statement_at<i>(statements), ctx); });
}

/// Runs kernel group `group` (plan::group<g>) of `statements` over `space`, lowered
/// through `ctx`: refreshes the neighbour data it reads where stale (the halos of the
/// arrays it reads at an offset, the ghosts of its products' vectors), overlapped with
/// the interior points where the space allows, stores its reductions into their Scalars
/// and marks the arrays it wrote stale.
template <int D, class Statements, class G, class Ctx>
void run_group(const std::string& label, const space_t<D>& space, const Statements& statements,
               const G& group, const Ctx& ctx) {
  const SlotContext<Ctx, group_positions_t<Statements, G>> slots(ctx);
  const auto list = lower_group(statements, group.members, slots);
  const auto views = group_views(list, slots);
  exchange_t<D> exchange(space);
  if constexpr (D == domain::row_map) {
    for_each_index(group.members, [&](auto s) {
      with_statement_expr(statement_at<s>(statements), [&](const auto& e) {
        collect_imports("kfuse::fuse", e, ctx, &space, exchange);
      });
    });
  } else {
    for_each_index(group.neighbour_reads,
                   [&](auto i) { exchange.add(ctx.template argument<i>()); });
  }
  // Overlapped where neighbour data may arrive: stencil reads on grids, products on row
  // maps (run_exchanged's own test).
  constexpr bool overlap = D == domain::row_map || G::facts.neighbour_reads.any();
  const auto acc = run_exchanged<D, overlap>(label, space, list, exchange, views);
  apply_indices(group.members, [&](auto... i) { store_results<0>(statements, ctx, acc, i...); });
  for_each_index(group.writes, [&](auto i) {
    if constexpr (!Ctx::template in_register<i>) ctx.template argument<i>().mark_halo_stale();
  });
}

}  // namespace kfuse::detail
