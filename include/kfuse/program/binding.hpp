// A program's binding: what each parameter position holds (program/arguments.hpp's slots),
// and its checks, made when a program is built and at every rebind. Per kernel group: one
// grid (or row map) for all its arrays, shifts within the halo, each product's vector on its
// matrix's columns; memory temporaries allocated on their first group's space (kept across
// rebinds on the same spaces); no array bound to two parameters of which one is written. A
// check failing on any rank throws on every rank (docs/architecture.md §11), and the
// previous binding stays.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "kfuse/core/pack.hpp"
#include "kfuse/core/static_for.hpp"
#include "kfuse/dist/comm.hpp"
#include "kfuse/exec/exchange.hpp"
#include "kfuse/exec/lower.hpp"
#include "kfuse/exec/space.hpp"
#include "kfuse/plan/statement.hpp"
#include "kfuse/program/arguments.hpp"

namespace kfuse::detail {

/// The communicator a binding's checks agree on (Binding::agreement_comm): that of the
/// first distributed argument, and an error in `error` (if still empty) when another was
/// made on a different one.
struct CommAgreement {
  std::optional<Comm> comm;
  std::string first;
  std::string* error;

  template <class A>
  void note_argument(const A& arg) {
    if constexpr (is_matrix_operand<A>::value) note(arg.range().base_comm(), arg.label());
    if constexpr (is_space_handle<A>::value) note(space_of(arg).base_comm(), arg.label());
  }
  void note(const Comm& base, const std::string& label) {
    if (!comm) {
      comm = base;
      first = label;
    } else if (base != *comm && error->empty()) {
      *error = error_message("kfuse::fuse: arguments '", first, "' and '", label,
                             "' live on grids or row maps made on different communicators; "
                             "bind arguments of one communicator");
    }
  }
};

/// Args: every parameter's argument type, in position order: the user's arguments
/// (UserCount of them) and then the Unfused rewrite's temporaries.
template <class Plan, class Args, int UserCount>
class Binding;

template <class Plan, class... Args, int UserCount>
class Binding<Plan, Pack<Args...>, UserCount> {
  template <std::size_t... I>
  static auto slots_type(std::index_sequence<I...>)
      -> Pack<typename slot_for<Plan, int(I), Args>::type...>;
  using Slots = decltype(slots_type(std::index_sequence_for<Args...>{}));

 public:
  using ArgTuple = Pack<Args...>;
  static constexpr int size = int(sizeof...(Args));

  /// Whether each position holds a program temporary (kfuse::temporary or the Unfused
  /// rewrite's).
  static constexpr std::array<bool, sizeof...(Args)> temporary_at{
      {is_temporary_tag<Args>::value...}};
  template <int I>
  static constexpr bool is_temporary = temporary_at[I];

  /// Checks `args` and binds them; `previous` (the binding being replaced, if any) lends
  /// its memory temporaries when the arrays live where they did. Collective.
  template <class Statements>
  static Binding make(const Statements& statements, const ArgTuple& args, const Binding* previous) {
    std::optional<Binding> binding;
    std::string error;
    try {
      binding.emplace(Binding(statements, args, previous));
    } catch (const Error& e) {
      error = e.what();
    }
    if (const auto comm = agreement_comm(args, error))
      comm->agree_or_throw(error);
    else if (!error.empty())
      throw Error(error);
    return std::move(*binding);
  }

  /// The object at position I: the bound handle or the allocated temporary (nullptr: a
  /// register temporary, or one not allocated yet).
  template <int I>
  const auto* find() const {
    return slot_object(pack_get<I>(slots_));
  }
  template <int I>
  const auto& argument() const {
    return *find<I>();
  }

  /// The argument's label ("temporary3" for a kfuse::temporary, "t12" for the Unfused
  /// rewrite's), for labels, explain() and messages.
  std::string name_of(int position) const {
    if (temporary_at[position])
      return (position < UserCount ? "temporary" : "t") + std::to_string(position);
    return label_at(position, std::index_sequence_for<Args...>{});
  }

  /// What lowering sees (exec/lower.hpp): the arguments and the group's index space.
  template <int D>
  struct Context {
    const Binding* binding;
    const space_t<D>* space;
    // The slot itself, not binding->argument<I>(): a function less per position.
    template <int I>
    const auto& argument() const {
      return *slot_object(pack_get<I>(binding->slots_));
    }
    template <int I>
    auto scalar() const {  // a Scalar handle, which a reduction's result is assigned to
      return argument<I>();
    }
    template <int I>
    static constexpr bool in_register = is_temporary<I>&& Plan::in_register(I);
    index_t index_offset(int d) const { return detail::index_offset(*space, d); }
  };
  template <int D>
  Context<D> context(const space_t<D>* space) const {
    return {this, space};
  }

  /// The index space (grid or row map) of kernel group G, found by check_group_spaces: that
  /// of its arrays, or the rows of its first matrix when it reads only products, e.g.
  /// reduce(s, sum(A * x)). It lives in the arguments' shared state, so it outlasts moves.
  template <int G>
  const auto* space_of_group() const {
    return static_cast<const space_t<Plan::group_domains[G]>*>(group_spaces_[G]);
  }

  struct Traffic {
    std::size_t read = 0, written = 0;
  };
  /// Each group's memory traffic in bytes a point (none for a group without a kernel), as
  /// STREAM counts it: an array read from memory once, an array written once more; a value
  /// the kernel wrote before reading it is in a register, not read from memory; reads in
  /// a fallback (plan/access.hpp) are not counted.
  static constexpr std::array<Traffic, Plan::group_count> group_traffic() {
    std::array<Traffic, Plan::group_count> traffic{};
    constexpr std::array<std::size_t, sizeof...(Args)> sizes =
        value_sizes(std::index_sequence_for<Args...>{});
    for (std::size_t g = 0; g < traffic.size(); ++g) {
      typename Plan::Mask reads, writes;
      for (int i = Plan::group_facts[g].first; i < Plan::group_facts[g].end; ++i) {
        const auto& f = Plan::statement_facts[i];
        reads |= f.modelled_reads & ~writes;
        writes |= f.writes;
      }
      if (Plan::group_facts[g].kernel)
        for (std::size_t p = 0; p < sizes.size(); ++p) {
          if (reads.test(int(p))) traffic[g].read += sizes[p];
          if (writes.test(int(p))) traffic[g].written += sizes[p];
        }
    }
    return traffic;
  }

 private:
  template <class Statements>
  Binding(const Statements& statements, const ArgTuple& args, const Binding* previous);

  /// Bytes of one value of each parameter's array (0 for a register temporary).
  template <std::size_t I>
  static constexpr std::size_t value_size() {
    if constexpr (std::is_same_v<pack_element_t<I, Slots>, RegisterTemporary>)
      return 0;
    else
      return sizeof(typename std::decay_t<decltype(std::declval<const Binding&>()
                                                       .template argument<int(I)>())>::value_type);
  }
  template <std::size_t... I>
  static constexpr std::array<std::size_t, sizeof...(I)> value_sizes(std::index_sequence<I...>) {
    return {value_size<I>()...};
  }

  /// Per position, how far a kernel group reaches the array there: the largest |offset|
  /// it reads or writes it at, sparse_reach when it reads it only as a product's x, and
  /// not_accessed. A compile-time table from a walk over the statements' types (shared by
  /// every program with the same trees), so that the checks on it are one run-time loop per
  /// program rather than code per group, node and position.
  using Reaches = std::array<int, sizeof...(Args)>;
  static constexpr int not_accessed = sparse_reach - 1;
  struct NoteReach {
    Reaches reaches;
    constexpr void operator()(int position, int reach) {
      int& r = reaches[std::size_t(position)];
      r = reach > r ? reach : r;
    }
  };
  template <int G, class Statements, int... S>
  static constexpr Reaches group_reaches(std::integer_sequence<int, S...>) {
    NoteReach note{};
    for (int& r : note.reaches) r = not_accessed;
    (for_each_statement_array<statement_at_t<Statements, S>>(note), ...);
    return note.reaches;
  }

  /// Per position, the index space of its array if that has domain D (nullptr for other
  /// arguments and for temporaries not allocated yet).
  template <int D, std::size_t... I>
  std::array<const space_t<D>*, sizeof...(I)> spaces_in(std::index_sequence<I...>) const {
    return {slot_space<D>(pack_get<I>(slots_))...};
  }

  template <std::size_t... I>
  std::string label_at(int position, std::index_sequence<I...>) const {
    const std::string* label = nullptr;
    ((int(I) == position ? void(label = slot_label(pack_get<I>(slots_))) : void()), ...);
    return label != nullptr ? *label : std::string();
  }

  /// What messages call the argument at `position`.
  std::string quoted(int position) const {
    if (temporary_at[position])
      return position < UserCount ? "kfuse::temporary" : "an intermediate";
    return "'" + name_of(position) + "'";
  }

  /// The slots of `args`; temporaries are kept from `previous` when every array lives
  /// where the previous binding's did, else allocated by check_group_spaces.
  template <std::size_t... I>
  static Slots make_slots(const ArgTuple& args, const Binding* previous,
                          std::index_sequence<I...>) {
    const bool keep = previous != nullptr &&
                      (same_space(pack_get<I>(args), pack_get<I>(previous->slots_)) && ...);
    return Slots{
        {{make_slot(pack_get<I>(args), keep ? &pack_get<I>(previous->slots_) : nullptr)}...}};
  }

  /// The communicator the checks agree on, if any argument is distributed: the one the
  /// grids and row maps of the arguments were made on (base_comm). Not a grid's own
  /// Cartesian communicator: a rank whose argument lives on another grid would enter the
  /// agreement on another communicator than the others and wait forever. Arguments made
  /// on different communicators are an error (`error`, if still empty).
  static std::optional<Comm> agreement_comm(const ArgTuple& args, std::string& error) {
    return agreement_comm(args, error, std::index_sequence_for<Args...>{});
  }
  template <std::size_t... I>
  static std::optional<Comm> agreement_comm(const ArgTuple& args, std::string& error,
                                            std::index_sequence<I...>) {
    CommAgreement agreement{{}, {}, &error};
    (agreement.note_argument(pack_get<I>(args)), ...);
    return agreement.comm;
  }

  /// Each argument's storage identity (argument_storage), by position.
  template <std::size_t... I>
  std::array<const void*, sizeof...(I)> storage_ids(std::index_sequence<I...>) const {
    return {argument_storage<pack_element_t<I, ArgTuple>>(pack_get<I>(slots_))...};
  }

  template <class Statements>
  void check_group_spaces(const Statements& statements);
  template <int D>
  const space_t<D>* check_arrays_space(const Reaches& reaches) const;
  template <int D, std::size_t... I>
  void allocate_temporaries(const Reaches& reaches, const space_t<D>* space,
                            std::index_sequence<I...>);
  template <int D, class S>
  void allocate_temporary(S& slot, int position, int reach, const space_t<D>* space);
  void check_aliasing() const;

  Slots slots_;
  std::array<const void*, Plan::group_count> group_spaces_{};  // space_of_group's
};

template <class Plan, class... Args, int UserCount>
template <class Statements>
Binding<Plan, Pack<Args...>, UserCount>::Binding(const Statements& statements, const ArgTuple& args,
                                                 const Binding* previous)
    : slots_(make_slots(args, previous, std::index_sequence_for<Args...>{})) {
  check_group_spaces(statements);
  check_aliasing();
}

/// Per kernel group: one grid (or row map) for all its arrays, shifts within the halo, each
/// product's vector on its matrix's columns; allocates the memory temporaries not kept.
template <class Plan, class... Args, int UserCount>
template <class Statements>
void Binding<Plan, Pack<Args...>, UserCount>::check_group_spaces(const Statements& statements) {
  Plan::for_each_group([&](const auto& group) {
    using G = std::decay_t<decltype(group)>;
    constexpr int D = Plan::group_domains[G::index];
    if constexpr (G::kernel && has_space(D)) {
      constexpr Reaches reaches = group_reaches<G::index, Statements>(G::members);
      const space_t<D>* space = check_arrays_space<D>(reaches);
      if constexpr (D == domain::row_map) {  // A * x: x on A's columns, rows A's rows
        for_each_index(group.members, [&](auto s) {
          with_statement_expr(statement_at<s>(statements), [&](const auto& e) {
            for_each_sparse_product(e, [&](const auto& product) {
              const auto& A = matrix_of(product.matrix, context<D>(nullptr));
              using X = std::decay_t<decltype(product.x)>;
              if constexpr (is_array_param<X>::value) {
                if (const auto* x = find<X::index>())
                  GhostRefresh::check("kfuse::fuse", A, *x, space);
              } else {
                GhostRefresh::check("kfuse::fuse", A, product.x, space);
              }
              if (space == nullptr) space = &A.range();
            });
          });
        });
      }
      allocate_temporaries<D>(reaches, space, std::index_sequence_for<Args...>{});
      group_spaces_[G::index] = space;
    }
  });
}

/// The space of the arrays a group reaches (not as products' x), checked to be one, with
/// each reach within its halo; nullptr when the group reaches none that is allocated.
template <class Plan, class... Args, int UserCount>
template <int D>
const space_t<D>* Binding<Plan, Pack<Args...>, UserCount>::check_arrays_space(
    const Reaches& reaches) const {
  const auto spaces = spaces_in<D>(std::index_sequence_for<Args...>{});
  const space_t<D>* space = nullptr;
  int first = -1;
  for (int i = 0; i < size; ++i) {
    const space_t<D>* own = spaces[i];
    if (own == nullptr || reaches[i] <= sparse_reach) continue;  // products: checked apart
    if (space == nullptr) {
      space = own;
      first = i;
    } else if (*own != *space) {
      throw Error(error_message("kfuse::fuse: parameters ", first, " (", quoted(first), ", ",
                                describe_space(*space), ") and ", i, " (", quoted(i), ", ",
                                describe_space(*own), ") are used in one kernel but live on ",
                                "different ", D == domain::row_map ? "row maps" : "grids"));
    }
    if constexpr (D != domain::row_map)
      if (reaches[i] > own->halo())
        throw Error(error_message("kfuse::fuse: parameter ", i, " (", quoted(i),
                                  ") is read at offset ", reaches[i],
                                  " but its grid's halo is only ", own->halo(),
                                  "; use GridOptions{", reaches[i], "} or a narrower stencil"));
  }
  return space;
}

/// Allocates on `space` the memory temporaries a group reaches that have no storage yet.
template <class Plan, class... Args, int UserCount>
template <int D, std::size_t... I>
void Binding<Plan, Pack<Args...>, UserCount>::allocate_temporaries(const Reaches& reaches,
                                                                   const space_t<D>* space,
                                                                   std::index_sequence<I...>) {
  (allocate_temporary<D>(pack_get<I>(slots_), int(I), reaches[I], space), ...);
}
template <class Plan, class... Args, int UserCount>
template <int D, class S>
void Binding<Plan, Pack<Args...>, UserCount>::allocate_temporary(S& slot, int position, int reach,
                                                                 const space_t<D>* space) {
  if constexpr (is_optional_array<S>::value) {
    if constexpr (domain_of<typename S::value_type>::value == D) {  // others: not in D groups
      if (reach != not_accessed && !slot) {
        if (space == nullptr)
          throw Error(
              "kfuse::fuse: a kernel reads only temporaries and indices, so its grid is "
              "unknown; use an array of the grid in that statement");
        slot.emplace(*space, name_of(position), local_errors);  // make() agrees
      }
    }
  }
}

/// One array bound to two parameters while one of them is written. A run time loop over the
/// parameters' storage: a compile-time one over pairs instantiated a function per pair, the
/// largest cost of compiling a big program (docs/architecture.md §12).
template <class Plan, class... Args, int UserCount>
void Binding<Plan, Pack<Args...>, UserCount>::check_aliasing() const {
  typename Plan::Mask written;
  for (const auto& f : Plan::statement_facts) written |= f.writes | f.scalar_writes;
  const auto storage = storage_ids(std::index_sequence_for<Args...>{});
  for (std::size_t i = 0; i < storage.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (storage[i] != nullptr && storage[i] == storage[j] &&
          (written.test(int(i)) || written.test(int(j)))) {
        throw Error(error_message(
            "kfuse::fuse: parameters ", int(j), " and ", int(i), " are both bound to ",
            quoted(int(i)),
            ", and the program writes one of them, so it relies on them being distinct; pass "
            "different arrays (or copy one first)"));
      }
}

}  // namespace kfuse::detail
