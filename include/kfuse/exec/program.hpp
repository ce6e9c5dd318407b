// kfuse::fuse and Program: a deferred program built once, run many times.
//
// fuse(args..., lambda) calls the generic lambda once with one placeholder
// per argument (ArrayParam<0, T, N>, ScalarParam<1, T>, ...); the statements
// it returns carry the whole task graph in their types, so the Plan (groups,
// kernel_count, ...) is a compile-time constant. The Program keeps those
// statements (with the constants they captured) and the binding: handles of
// the arguments, plus storage for temporaries that cannot live in registers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/core/to.hpp>
#include <boost/hana/filter.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/unpack.hpp>

#include "kfuse/core/static_for.hpp"
#include "kfuse/exec/ghost_imports.hpp"
#include "kfuse/exec/group.hpp"
#include "kfuse/exec/space.hpp"
#include "kfuse/plan/plan.hpp"
#include "kfuse/plan/unfused.hpp"

namespace kfuse {

/// Argument of kfuse::fuse for an array the program owns: kfuse::temporary<T>
/// (docs/user-guide.md, Temporaries).
template <class T>
struct TemporaryTag {
  using value_type = T;
};
template <class T>
inline constexpr TemporaryTag<T> temporary{};

}  // namespace kfuse

namespace kfuse::detail {

template <int I, class A>
struct param_for {
  static_assert(sizeof(A) == 0,
                "kfuse::fuse(args..., lambda): each argument must be a kfuse::Array, "
                "kfuse::Vector, kfuse::CsrMatrix, kfuse::Scalar or kfuse::temporary<T>, and the "
                "lambda comes last");
};
template <int I, class T, int N>
struct param_for<I, Array<T, N>> {
  using type = ArrayParam<I, T, N>;
};
template <int I, class T>
struct param_for<I, Vector<T>> {
  using type = ArrayParam<I, T, domain::row_map>;
};
template <int I, class T>
struct param_for<I, CsrMatrix<T>> {
  using type = MatrixParam<I, T>;
};
template <int I, class T>
struct param_for<I, Scalar<T>> {
  using type = ScalarParam<I, T>;
};
template <int I, class T>
struct param_for<I, TemporaryTag<T>> {
  using type = TempParam<I, T>;
};

/// Binding slot of a temporary kept in registers: nothing to store.
struct RegisterTemporary {};

template <class Plan, int I, class A>
struct slot_for {
  using type = A;  // Array and Scalar handles
};
template <class Plan, int I, class T>
struct slot_for<Plan, I, TemporaryTag<T>> {
  static constexpr int domain = Plan::temporary_domain(I);
  static constexpr bool in_memory = !Plan::in_register(I);
  static_assert(!in_memory || has_space(domain),
                "kfuse::fuse: a temporary that must live in memory is never written by an array "
                "statement, so its rank is unknown; assign it from an expression with arrays");
  using container = typename space_traits<has_space(domain) ? domain : 1>::template container<T>;
  using type = std::conditional_t<in_memory, std::optional<container>, RegisterTemporary>;
};

template <class T>
struct is_temporary_tag : std::false_type {};
template <class T>
struct is_temporary_tag<TemporaryTag<T>> : std::true_type {};

/// What an argument bound to a parameter of type A stores its values in
/// (arrays and vectors: their storage; scalars: their handle's), so that two
/// parameters bound to one object show as one identity; nullptr for
/// temporaries (the program's own) and matrices (never written). A named
/// function: nvcc does not discard `if constexpr` branches inside generic
/// lambdas the way g++ does.
template <class A, class X>
const void* argument_storage(const X& x) {
  if constexpr (is_temporary_tag<A>::value || is_matrix_operand<A>::value) {
    (void)x;
    return nullptr;
  } else {
    return x.storage_id();
  }
}

/// Reach of x in A * x: it lives on A's columns, checked against A instead
/// of the group's index space.
inline constexpr int sparse_reach = -1;

/// Calls f(position, reach) for every array read or written by a statement
/// (reach: the largest |offset| of a stencil read, 0 for pointwise,
/// sparse_reach for x of A * x).
template <class E, class F>
void for_each_array_access(const E& e, F&& f) {
  for_each_leaf(e, [&](const auto& leaf) {
    using L = std::decay_t<decltype(leaf)>;
    if constexpr (is_array_param<L>::value) {
      f(hana::int_c<L::index>, 0);
    } else if constexpr (is_shifted<L>::value) {
      if constexpr (is_array_param<typename L::leaf_type>::value)
        f(hana::int_c<L::leaf_type::index>, L::reach);
    } else if constexpr (is_sparse_product<L>::value) {
      if constexpr (is_array_param<decltype(leaf.x)>::value)
        f(hana::int_c<decltype(leaf.x)::index>, sparse_reach);
    }
  });
}
/// Calls f(expression) for the expression of a statement.
template <class Target, class E, class F>
void with_statement_expr(const Assign<Target, E>& s, F&& f) {
  f(s.expr);
}
template <class Target, class R, class F>
void with_statement_expr(const Reduce<Target, R>& s, F&& f) {
  f(s.reduction.arg);
}
template <class Target, class E, class F>
void with_statement_expr(const ScalarAssign<Target, E>&, F&&) {}
template <class Target, class E, class F>
void for_each_statement_array(const Assign<Target, E>& s, F&& f) {
  if constexpr (is_array_param<Target>::value) f(hana::int_c<Target::index>, 0);
  for_each_array_access(s.expr, f);
}
template <class Target, class R, class F>
void for_each_statement_array(const Reduce<Target, R>& s, F&& f) {
  for_each_array_access(s.reduction.arg, f);
}
template <class Target, class E, class F>
void for_each_statement_array(const ScalarAssign<Target, E>&, F&&) {}

template <class A>
struct is_optional_array : std::false_type {};
template <class T, int N>
struct is_optional_array<std::optional<Array<T, N>>> : std::true_type {};
template <class T>
struct is_optional_array<std::optional<Vector<T>>> : std::true_type {};

}  // namespace kfuse::detail

namespace kfuse {

/// Args: every parameter's argument type, in position order: the user's
/// arguments (UserCount of them) and then the Unfused rewrite's temporaries.
template <class Policy, class Statements, class Args, int UserCount>
class Program;

template <class Policy, class Statements, class... Args, int UserCount>
class Program<Policy, Statements, std::tuple<Args...>, UserCount> {
  static constexpr bool unfused = std::is_same_v<Policy, Unfused>;
  using PlanPolicy = std::conditional_t<std::is_same_v<Policy, Fused>, Fused, PerStatement>;
  using ArgTuple = std::tuple<Args...>;

 public:
  using plan = detail::Plan<PlanPolicy, Statements, unfused, int(sizeof...(Args))>;
  static constexpr int kernel_count = plan::kernel_count;
  static constexpr int allreduce_count = plan::allreduce_count;
  static constexpr int exchange_count = plan::exchange_count;

  /// Memory traffic of a run in bytes a point, summed over its kernels as explain()
  /// prints them (STREAM's convention): what a benchmark multiplies by the points.
  static constexpr std::size_t bytes_per_point() {
    std::size_t total = 0;
    for (const Traffic& t : group_traffic()) total += t.read + t.written;
    return total;
  }

  Program(const Statements& statements, const ArgTuple& args)
      : statements_(statements) {
    bind(args);
  }

  /// Runs the program on the current binding; returns when done.
  void operator()() {
    Kokkos::Profiling::pushRegion("kfuse:program");
    detail::static_for<plan::group_count>(
        [&](auto g) { run_group<g>(typename plan::template group<g>{}, labels_[g]); });
    detail::ExecSpace().fence();  // on a device, the last kernel may still run otherwise
    Kokkos::Profiling::popRegion();
  }

  /// Binds new arguments and runs. Pass what was given to kfuse::fuse
  /// (without the lambda) in order, or only the non-temporary arguments.
  /// The binding stays; if a check fails it is left unchanged.
  template <class... A>
  void operator()(const A&... args) {
    rebind(args...);
    (*this)();
  }

  template <class... A>
  void rebind(const A&... args) {
    constexpr bool all = sizeof...(A) == UserCount;
    static_assert(all || sizeof...(A) == handle_count(),
                  "kfuse::Program(args...): pass the arguments given to kfuse::fuse (without the "
                  "lambda), in order; temporaries may be left out");
    const auto given = std::forward_as_tuple(args...);
    bind(expand<all>(given, std::index_sequence_for<Args...>{}));
  }

  std::string explain() const;
  std::string to_dot() const;

  /// Kokkos label of each group's kernel ("" for a scalar-only group).
  const std::vector<std::string>& kernel_labels() const { return labels_; }

 private:
  template <std::size_t... I>
  static auto binding_type(std::index_sequence<I...>)
      -> std::tuple<typename detail::slot_for<plan, static_cast<int>(I), Args>::type...>;
  using Binding = decltype(binding_type(std::index_sequence_for<Args...>{}));

  template <std::size_t I>
  static constexpr bool is_temporary = detail::is_temporary_tag<std::tuple_element_t<I, ArgTuple>>::value;

  /// Arguments that are handles (not temporaries) among the user's.
  static constexpr std::size_t handle_count() {
    std::size_t n = 0;
    for (bool t : {detail::is_temporary_tag<Args>::value...}) n += t ? 0 : 1;
    return n;
  }

  /// The full argument tuple from the given arguments (all user arguments,
  /// or only the handles); temporaries are tags.
  template <bool All, class Given, std::size_t... I>
  ArgTuple expand(const Given& given, std::index_sequence<I...>) const {
    return ArgTuple{pick<All, I>(given)...};
  }
  template <bool All, std::size_t I, class Given>
  static auto pick(const Given& given) {
    using A = std::tuple_element_t<I, ArgTuple>;
    if constexpr (detail::is_temporary_tag<A>::value) {
      return A{};
    } else {
      constexpr std::size_t source = All ? I : handles_before(I);
      using G = std::decay_t<std::tuple_element_t<source, Given>>;
      static_assert(std::is_same_v<G, A>,
                    "kfuse::Program(args...): an argument's type differs from the one given to "
                    "kfuse::fuse at that position");
      return std::get<source>(given);
    }
  }
  static constexpr std::size_t handles_before(std::size_t position) {
    std::size_t n = 0, k = 0;
    for (bool t : {detail::is_temporary_tag<Args>::value...}) {
      if (k++ == position) break;
      n += t ? 0 : 1;
    }
    return n;
  }

  // ---- binding and its checks ---------------------------------------------

  template <std::size_t... I>
  Binding make_binding(const ArgTuple& args, std::index_sequence<I...>) const;

  /// Checks and installs a binding. A check failing on any rank throws on
  /// every rank (collectively agreed), and the binding stays as it was.
  void bind(const ArgTuple& args) {
    std::optional<Binding> binding;
    std::string error;
    try {
      binding.emplace(make_binding(args, std::index_sequence_for<Args...>{}));
    } catch (const Error& e) {
      error = e.what();
    }
    if (const auto comm = agreement_comm(args, error)) comm->agree_or_throw(error);
    else if (!error.empty()) throw Error(error);
    // emplace, not assignment: Array::operator= copies values, a rebind swaps handles.
    binding_.emplace(std::move(*binding));
    labels_ = make_labels();
  }

  /// The communicator the binding's checks agree on, if any argument is
  /// distributed: the one the grids and row maps of the arguments were made
  /// on (base_comm). Not a grid's own Cartesian communicator: a rank whose
  /// argument lives on another grid would enter the agreement on another
  /// communicator than the others and wait forever. Arguments made on
  /// different communicators are an error (`error`, if still empty).
  static std::optional<Comm> agreement_comm(const ArgTuple& args, std::string& error) {
    std::optional<Comm> comm;
    std::string first;
    auto visit = [&](const Comm& base, const std::string& label) {
      if (!comm) {
        comm = base;
        first = label;
      } else if (base != *comm && error.empty()) {
        error = detail::error_message("kfuse::fuse: arguments '", first, "' and '", label,
                                      "' live on grids or row maps made on different "
                                      "communicators; bind arguments of one communicator");
      }
    };
    detail::static_for<int(sizeof...(Args))>([&](auto i) {
      using A = std::tuple_element_t<i, ArgTuple>;
      const auto& arg = std::get<i>(args);
      if constexpr (detail::is_matrix_operand<A>::value)
        visit(arg.range().base_comm(), arg.label());
      if constexpr (detail::is_space_handle<A>::value)
        visit(detail::space_of(arg).base_comm(), arg.label());
    });
    return comm;
  }

  /// Whether every array argument lives where the current binding's does, so
  /// memory temporaries can be kept (allocated once, at fuse()).
  bool same_spaces(const ArgTuple& args) const {
    if (!binding_) return false;
    bool same = true;
    detail::static_for<int(sizeof...(Args))>([&](auto i) {
      using A = std::tuple_element_t<i, ArgTuple>;
      if constexpr (detail::is_space_handle<A>::value)
        same = same && detail::space_of(std::get<i>(args)) == detail::space_of(std::get<i>(*binding_));
    });
    return same;
  }

  template <int I>
  const auto& array() const {
    return *array_in<I>(*binding_);
  }
  /// Bytes of one value of each parameter's array (0 for a register
  /// temporary, never in memory), for explain()'s memory traffic.
  template <std::size_t I>
  static constexpr std::size_t value_size() {
    using Slot = std::tuple_element_t<I, Binding>;
    if constexpr (std::is_same_v<Slot, detail::RegisterTemporary>)
      return 0;
    else
      return sizeof(typename std::decay_t<decltype(*array_in<int(I)>(
                        std::declval<const Binding&>()))>::value_type);
  }
  template <std::size_t... I>
  static constexpr std::array<std::size_t, sizeof...(I)> value_sizes(std::index_sequence<I...>) {
    return {value_size<I>()...};
  }
  struct Traffic {
    std::size_t read = 0, written = 0;
  };
  /// Each group's memory traffic in bytes a point (none for a group without a kernel), as
  /// STREAM counts it: an array read from memory once, an array written once more; a value
  /// the kernel wrote before reading it is in a register, not read from memory.
  static constexpr std::array<Traffic, plan::group_count> group_traffic() {
    std::array<Traffic, plan::group_count> traffic{};
    constexpr auto sizes = value_sizes(std::index_sequence_for<Args...>{});
    for (std::size_t g = 0; g < traffic.size(); ++g) {
      typename plan::Mask reads, writes;
      for (int i = plan::group_facts[g].first; i < plan::group_facts[g].end; ++i) {
        const auto& f = plan::statement_facts[i];
        reads |= (f.pointwise | f.offset) & ~writes;
        writes |= f.writes;
      }
      if (plan::group_facts[g].kernel)
        for (std::size_t p = 0; p < sizes.size(); ++p) {
          if (reads.test(int(p))) traffic[g].read += sizes[p];
          if (writes.test(int(p))) traffic[g].written += sizes[p];
        }
    }
    return traffic;
  }
  /// The Array at position I of a binding (nullptr: register or unallocated).
  template <int I>
  static const auto* array_in(const Binding& b) {
    const auto& slot = std::get<I>(b);
    using S = std::decay_t<decltype(slot)>;
    if constexpr (detail::is_optional_array<S>::value)
      return slot ? &*slot : nullptr;
    else if constexpr (std::is_same_v<S, detail::RegisterTemporary>)
      return static_cast<const Array<double, 1>*>(nullptr);
    else
      return &slot;
  }

  /// What lowering sees: this binding and the group's index space.
  template <int D>
  struct Context {
    const Binding* binding;
    const detail::space_t<D>* grid;
    template <int I>
    const auto& array() const {
      return *array_in<I>(*binding);
    }
    template <int I>
    auto scalar() const {
      return std::get<I>(*binding);
    }
    template <int I>
    static constexpr bool in_register = is_temporary<I> && plan::in_register(I);
    index_t index_offset(int d) const { return detail::index_offset(*grid, d); }
  };

  std::string name_of(int position) const;
  std::vector<std::string> make_labels() const;

  template <int Index, class G>
  void run_group(const G& group, const std::string& label);

  /// The index space (grid or row map) of kernel group Index: that of its first array.
  template <int Index>
  const auto* grid_of() const {
    constexpr int D = plan::group_domains[Index];
    const detail::space_t<D>* grid = nullptr;
    detail::hana::for_each(plan::template group<Index>::members, [&](auto s) {
      detail::for_each_statement_array(detail::hana::at(statements_, s), [&](auto i, int reach) {
        const auto* a = array_in<i>(*binding_);
        if constexpr (detail::domain_of<std::decay_t<decltype(*a)>>::value == D)
          if (grid == nullptr && a != nullptr && reach != detail::sparse_reach)
            grid = &detail::space_of(*a);
      });
    });
    if constexpr (D == detail::domain::row_map) {
      if (grid == nullptr)  // only products, e.g. reduce(s, sum(A * x)): A's rows
        detail::hana::for_each(plan::template group<Index>::members, [&](auto s) {
          detail::with_statement_expr(detail::hana::at(statements_, s), [&](const auto& e) {
            detail::for_each_sparse_product(e, [&](const auto& product) {
              if (grid == nullptr) grid = &detail::matrix_of(product.matrix, Context<D>{&*binding_, nullptr}).range();
            });
          });
        });
    }
    return grid;
  }
  /// Whether group g's exchange overlaps its interior points.
  bool overlapped(int g) const {
    bool result = false;
    detail::static_for<plan::group_count>([&](auto index) {
      constexpr int N = plan::group_domains[index];
      if constexpr (N >= 1 && N <= 3)
        if (int(index) == g) result = grid_of<index>()->overlap();
    });
    return result;
  }

  Statements statements_;
  std::optional<Binding> binding_;  // always engaged after construction
  std::vector<std::string> labels_;
};

}  // namespace kfuse

// ---- implementation ------------------------------------------------------------

namespace kfuse {

template <class Policy, class Statements, class... Args, int UserCount>
std::string Program<Policy, Statements, std::tuple<Args...>, UserCount>::name_of(int position) const {
  std::string name;
  detail::static_for<int(sizeof...(Args))>([&](auto i) {
    if (int(i) != position) return;
    using A = std::tuple_element_t<i, ArgTuple>;
    if constexpr (detail::is_temporary_tag<A>::value)
      name = (int(i) < UserCount ? "temporary" : "t") + std::to_string(int(i));
    else
      name = std::get<i>(*binding_).label();
  });
  return name;
}

template <class Policy, class Statements, class... Args, int UserCount>
std::vector<std::string>
Program<Policy, Statements, std::tuple<Args...>, UserCount>::make_labels() const {
  std::vector<std::string> labels;
  auto names = [this](int i) { return name_of(i); };
  plan::for_each_group([&](const auto& group) {
    using G = std::decay_t<decltype(group)>;
    if constexpr (!G::kernel) {
      labels.emplace_back();
    } else {
      std::string label = "kfuse:group[";
      bool first = true;
      detail::hana::for_each(group.members, [&](auto i) {
        label += (first ? "" : "|") + detail::statement_label(detail::hana::at(statements_, i), names);
        first = false;
      });
      labels.push_back(label + "]");
    }
  });
  return labels;
}

template <class Policy, class Statements, class... Args, int UserCount>
template <std::size_t... I>
auto Program<Policy, Statements, std::tuple<Args...>, UserCount>::make_binding(
    const ArgTuple& args, std::index_sequence<I...>) const -> Binding {
  const bool keep_temporaries = same_spaces(args);
  auto slot = [&](auto i) {
    using S = std::tuple_element_t<i, Binding>;
    if constexpr (detail::is_temporary_tag<std::tuple_element_t<i, ArgTuple>>::value)
      return keep_temporaries ? S(std::get<i>(*binding_)) : S{};
    else
      return S(std::get<i>(args));
  };
  Binding b{slot(detail::hana::size_c<I>)...};
  auto label = [&](auto i) {
    if constexpr (is_temporary<i>)
      return std::string(int(i) < UserCount ? "kfuse::temporary" : "an intermediate");
    else
      return "'" + std::get<i>(b).label() + "'";
  };

  // Per kernel group: one grid (or row map) for all its arrays, shifts within
  // the halo; memory temporaries are allocated on their first group's grid.
  plan::for_each_group([&](const auto& group) {
    using G = std::decay_t<decltype(group)>;
    constexpr int D = plan::group_domains[G::index];
    if constexpr (G::kernel && detail::has_space(D)) {
      std::optional<detail::space_t<D>> grid;
      int grid_position = -1;
      std::string grid_label;
      auto visit = [&](auto i, int reach) {
        const auto* a = array_in<i>(b);
        if (a == nullptr || reach == detail::sparse_reach) return;  // products: checked at run
        if constexpr (detail::domain_of<std::decay_t<decltype(*a)>>::value == D) {
          const auto& space = detail::space_of(*a);
          if (!grid) {
            grid = space;
            grid_position = int(i);
            grid_label = label(i);
          } else if (space != *grid) {
            throw Error(detail::error_message(
                "kfuse::fuse: parameters ", grid_position, " (", grid_label, ", ",
                detail::describe_space(*grid), ") and ", int(i), " (", label(i), ", ",
                detail::describe_space(space), ") are used in one kernel but live on different ",
                D == detail::domain::row_map ? "row maps" : "grids"));
          }
          if constexpr (D != detail::domain::row_map)
            if (reach > space.halo())
              throw Error(detail::error_message("kfuse::fuse: parameter ", int(i), " (", label(i),
                                                ") is read at offset ", reach,
                                                " but its grid's halo is only ", space.halo(),
                                                "; use GridOptions{", reach, "} or a narrower stencil"));
        }
      };
      detail::hana::for_each(group.members, [&](auto s) {
        detail::for_each_statement_array(detail::hana::at(statements_, s), visit);
      });
      if constexpr (D == detail::domain::row_map) {  // A * x: x on A's columns, rows A's rows
        const Context<D> ctx{&b, nullptr};
        detail::hana::for_each(group.members, [&](auto s) {
          detail::with_statement_expr(detail::hana::at(statements_, s), [&](const auto& e) {
            detail::for_each_sparse_product(e, [&](const auto& product) {
              const auto& A = detail::matrix_of(product.matrix, ctx);
              using X = std::decay_t<decltype(product.x)>;
              if constexpr (detail::is_array_param<X>::value) {
                if (const auto* x = array_in<X::index>(b))
                  detail::GhostImports::check("kfuse::fuse", A, *x, grid ? &*grid : nullptr);
              } else {
                detail::GhostImports::check("kfuse::fuse", A, product.x, grid ? &*grid : nullptr);
              }
              if (!grid) grid = A.range();
            });
          });
        });
      }
      detail::hana::for_each(group.members, [&](auto s) {
        detail::for_each_statement_array(detail::hana::at(statements_, s), [&](auto i, int) {
          using Slot = std::decay_t<decltype(std::get<i>(b))>;
          if constexpr (detail::is_optional_array<Slot>::value) {
            if (!std::get<i>(b)) {
              if (!grid)
                throw Error("kfuse::fuse: a kernel reads only temporaries and indices, so its grid "
                            "is unknown; use an array of the grid in that statement");
              std::get<i>(b).emplace(*grid, name_of(i), detail::local_errors);  // bind() agrees
            }
          }
        });
      });
    }
  });

  // One array bound to two parameters while one of them is written. A run
  // time loop over the parameters' storage: a compile-time one over pairs
  // instantiated a function per pair, the largest cost of compiling a big
  // program (docs/architecture.md §12).
  typename plan::Mask written;
  for (const auto& f : plan::statement_facts) written |= f.writes | f.scalar_writes;
  const std::array<const void*, sizeof...(I)> storage{
      detail::argument_storage<std::tuple_element_t<I, ArgTuple>>(std::get<I>(b))...};
  for (std::size_t i = 0; i < storage.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (storage[i] != nullptr && storage[i] == storage[j] &&
          (written.test(int(i)) || written.test(int(j)))) {
        const std::array<std::string, sizeof...(I)> labels{label(detail::hana::size_c<I>)...};
        throw Error(detail::error_message(
            "kfuse::fuse: parameters ", int(j), " and ", int(i), " are both bound to ", labels[i],
            ", and the program writes one of them, so it relies on them being "
            "distinct; pass different arrays (or copy one first)"));
      }
  return b;
}

template <class Policy, class Statements, class... Args, int UserCount>
template <int Index, class G>
void Program<Policy, Statements, std::tuple<Args...>, UserCount>::run_group(
    const G& group, const std::string& label) {
  namespace hana = detail::hana;
  if constexpr (!G::kernel) {
    // Scalar-only statements: evaluated on the host, in order.
    hana::for_each(group.members, [&](auto i) {
      const auto& s = hana::at(statements_, i);
      Context<1> ctx{&*binding_, nullptr};
      auto expr = detail::lower(s.expr, ctx);
      detail::NoRegisters none;
      auto target = std::get<decltype(s.target)::index>(*binding_);
      target = static_cast<typename decltype(s.target)::value_type>(expr.eval(detail::Point<1>{{0}}, none));
    });
  } else {
    constexpr int D = plan::group_domains[Index];
    static_assert(detail::has_space(D),
                  "kfuse::fuse: a kernel's statements read only temporaries and indices, so "
                  "their rank is unknown; involve an array of the grid");
    const auto* grid = grid_of<Index>();
    Context<D> ctx{&*binding_, grid};
    const auto list = detail::lower_group(statements_, group.members, ctx);
    const auto views = detail::group_views(list, ctx);
    const auto acc = [&] {
      detail::exchange_t<D> exchange(*grid);
      if constexpr (D == detail::domain::row_map) {
        // Ghost imports of the products whose vectors are stale for their matrix.
        hana::for_each(group.members, [&](auto s) {
          detail::with_statement_expr(hana::at(statements_, s), [&](const auto& e) {
            detail::collect_imports("kfuse::fuse", e, ctx, grid, exchange);
          });
        });
      } else {
        // Halo exchange for the arrays this group reads at an offset, if stale.
        hana::for_each(group.offsets, [&](auto i) {
          const auto& a = array<i>();
          if (a.halo_stale()) exchange.add(a);
        });
      }
      return detail::run_exchanged<D>(label, *grid, list, exchange, true, views);
    }();
    hana::unpack(group.members, [&](auto... i) {
      detail::store_reductions<0>(statements_, ctx, acc, i...);
    });
    hana::for_each(hana::to_tuple(group.writes), [&](auto i) {
      if constexpr (!Context<D>::template in_register<i>) array<i>().mark_halo_stale();
    });
  }
}

}  // namespace kfuse

namespace kfuse {

template <class Policy, class Statements, class... Args, int UserCount>
std::string Program<Policy, Statements, std::tuple<Args...>, UserCount>::explain() const {
  namespace hana = detail::hana;
  std::ostringstream out;
  auto names = [this](int i) { return name_of(i); };
  out << "kfuse program: " << plan::statement_count << " statements -> " << kernel_count
      << " kernel(s), " << allreduce_count << " allreduce(s), " << exchange_count
      << " exchange point(s) per run\n";
  int g = 0;
  plan::for_each_group([&](const auto& group) {
    using G = std::decay_t<decltype(group)>;
    if constexpr (G::kernel) {
      const int domain = plan::group_domains[g];
      out << "group " << g << ": kernel \"" << labels_[g] << "\" over "
          << (domain == detail::domain::row_map ? std::string("the row map")
                                                : "the " + std::to_string(domain) + "-D grid")
          << "\n";
      std::string exchanged;
      hana::for_each(hana::to_tuple(group.offsets),
                     [&](auto i) { exchanged += (exchanged.empty() ? "" : ", ") + name_of(i); });
      if (!exchanged.empty() && domain == detail::domain::row_map)
        out << "  import the ghost values of " << exchanged
            << " (when stale); overlapped: rows without ghost columns run while they fly, then "
               "the other rows (\"" << labels_[g] << ":boundary\"); the matrix adds its values "
               "and 32-bit column indices per nonzero\n";
      else if (!exchanged.empty())
        out << "  exchange halos of " << exchanged << " (when stale)"
            << (overlapped(g) ? "; overlapped: interior points run while messages fly, then the "
                                "boundary strips (\"" + labels_[g] + ":boundary\")"
                              : "; not overlapped (GridOptions::overlap = false)")
            << "\n";
    } else {
      out << "group " << g << ": scalar statements on the host (no kernel)\n";
    }
    hana::for_each(group.members, [&](auto i) {
      out << "  " << detail::statement_text(hana::at(statements_, i), names) << "\n";
    });
    if (G::reductions > 0)
      out << "  " << G::reductions << " reduction(s), combined in one MPI_Allreduce\n";
    if (G::kernel) {
      constexpr auto traffic = group_traffic();
      const Traffic& t = traffic[std::size_t(g)];
      out << "  memory traffic: " << t.read + t.written << " bytes/point (" << t.read << " read, "
          << t.written << " written)\n";
    }
    ++g;
  });
  detail::static_for<int(sizeof...(Args))>([&](auto i) {
    if constexpr (is_temporary<i>)
      out << "temporary " << name_of(i) << ": "
          << (plan::in_register(i) ? "register (never stored)" : "memory (allocated at fuse)")
          << "\n";
  });
  out << "moved statements: none\n";
  return out.str();
}

template <class Policy, class Statements, class... Args, int UserCount>
std::string Program<Policy, Statements, std::tuple<Args...>, UserCount>::to_dot() const {
  namespace hana = detail::hana;
  std::ostringstream out;
  auto names = [this](int i) { return name_of(i); };
  out << "digraph kfuse {\n  node [shape=box];\n";
  int g = 0;
  plan::for_each_group([&](const auto& group) {
    out << "  subgraph cluster_" << g << " {\n    label=\"" << (labels_[g].empty() ? "host" : labels_[g])
        << "\";\n";
    hana::for_each(group.members, [&](auto i) {
      std::string text = detail::statement_text(hana::at(statements_, i), names);
      for (auto& c : text)
        if (c == '"') c = '\'';
      out << "    s" << int(i) << " [label=\"" << text << "\"];\n";
    });
    out << "  }\n";
    ++g;
  });
  // Edges: each read depends on the latest earlier writer of that parameter.
  const auto& facts = plan::statement_facts;
  for (int j = 0; j < plan::statement_count; ++j) {
    const auto reads = facts[j].pointwise | facts[j].offset | facts[j].scalar_reads;
    for (int p = 0; p < int(sizeof...(Args)); ++p) {
      if (!reads.test(p)) continue;
      for (int i = j - 1; i >= 0; --i)
        if ((facts[i].writes | facts[i].scalar_writes).test(p)) {
          out << "  s" << i << " -> s" << j << " [label=\"" << name_of(p)
              << (facts[j].offset.test(p) ? " (offset)" : "") << "\"];\n";
          break;
        }
    }
  }
  out << "}\n";
  return out.str();
}

namespace detail {

template <class Statement>
struct extra_temporary_tag {
  using type = void;
};
template <int I, class T, bool S, class E>
struct extra_temporary_tag<Assign<TempParam<I, T, S>, E>> {
  using type = TemporaryTag<T>;
};

template <class Policy, int UserCount, class Statements, class UserArgs>
auto make_program(const Statements& statements, const UserArgs& args) {
  if constexpr (std::is_same_v<Policy, Unfused>) {
    auto split = split_operations(statements, hana::int_c<UserCount>);
    auto rewritten = hana::at_c<0>(split);
    constexpr int total = std::decay_t<decltype(hana::at_c<1>(split))>::value;
    // The rewrite's temporaries are the targets of statements past the user's positions.
    auto extra = hana::filter(rewritten, [](const auto& s) {
      using S = std::decay_t<decltype(s)>;
      using Tag = typename extra_temporary_tag<S>::type;
      if constexpr (!std::is_void_v<Tag>)
        return hana::bool_c<(decltype(s.target)::index >= UserCount)>;
      else
        return hana::false_c;
    });
    static_assert(decltype(hana::length(extra))::value == total - UserCount);
    auto tags = hana::unpack(extra, [](const auto&... s) {
      return std::tuple<typename extra_temporary_tag<std::decay_t<decltype(s)>>::type...>{};
    });
    auto all = std::tuple_cat(args, tags);
    return Program<Policy, decltype(rewritten), decltype(all), UserCount>(rewritten, all);
  } else {
    return Program<Policy, Statements, UserArgs, UserCount>(statements, args);
  }
}

/// Whether `Lambda` can be called with the first K placeholders of `Params`.
template <class Lambda, class Params, std::size_t... K>
constexpr bool callable_with_first(std::index_sequence<K...>) {
  return std::is_invocable_v<const Lambda&, std::tuple_element_t<K, Params>...>;
}

/// How many of the placeholders `Params` the lambda takes: the largest K it can be called
/// with the first K of, or -1 (it takes more, or a parameter no placeholder binds to).
/// Only a call whose arity matches instantiates the lambda's body, with the placeholders
/// its parameters get from fuse.
template <class Lambda, class Params, std::size_t K = std::tuple_size_v<Params>>
constexpr int parameters_taken() {
  if constexpr (callable_with_first<Lambda, Params>(std::make_index_sequence<K>{}))
    return int(K);
  else if constexpr (K == 0)
    return -1;
  else
    return parameters_taken<Lambda, Params, K - 1>();
}

/// fuse's check of its lambda's parameters; the numbers show in the compiler's message.
template <int Arguments, int LambdaParameters>
struct FuseLambdaTakes {
  static_assert(Arguments == LambdaParameters,
                "kfuse::fuse(args..., lambda): the lambda must take one `auto` parameter per "
                "argument before it; see FuseLambdaTakes<arguments, parameters> in this "
                "message (-1: more parameters than arguments, or one a placeholder cannot bind "
                "to)");
  static constexpr bool value = Arguments == LambdaParameters;
};

template <class Policy, class Tuple, std::size_t... I>
auto fuse_impl(const Tuple& all, std::index_sequence<I...>) {
  constexpr std::size_t count = sizeof...(I);
  using Lambda = std::decay_t<std::tuple_element_t<count, Tuple>>;
  using UserArgs = std::tuple<std::decay_t<std::tuple_element_t<I, Tuple>>...>;
  using Params = std::tuple<
      typename param_for<static_cast<int>(I), std::tuple_element_t<I, UserArgs>>::type...>;
  constexpr bool takes_all =
      FuseLambdaTakes<int(count), parameters_taken<Lambda, Params>()>::value;
  if constexpr (takes_all) {
    using Result = std::invoke_result_t<const Lambda&, std::tuple_element_t<I, Params>...>;
    static_assert(!std::is_void_v<Result>,
                  "kfuse::fuse(args..., lambda): the lambda returns nothing; end it with "
                  "`return kfuse::seq(...);` or `return` one statement");
    if constexpr (!std::is_void_v<Result>) {
      UserArgs args{std::get<I>(all)...};
      auto statements = statement_tuple(std::get<count>(all)(std::tuple_element_t<I, Params>{}...));
      return make_program<Policy, static_cast<int>(count)>(statements, args);
    }
  }
}

}  // namespace detail

/// Builds a program: fuse(args..., [](auto a, auto b, ...) { return kfuse::seq(...); }).
/// The Policy (Fused, PerStatement, Unfused) decides how statements become kernels.
template <class Policy = Fused, class... A>
auto fuse(const A&... args) {
  static_assert(sizeof...(A) >= 1, "kfuse::fuse(args..., lambda): the lambda is missing");
  static_assert(std::is_same_v<Policy, Fused> || std::is_same_v<Policy, PerStatement> ||
                    std::is_same_v<Policy, Unfused>,
                "kfuse::fuse<Policy>: Policy must be kfuse::Fused, kfuse::PerStatement or "
                "kfuse::Unfused");
  return detail::fuse_impl<Policy>(std::forward_as_tuple(args...),
                                   std::make_index_sequence<sizeof...(A) - 1>{});
}

}  // namespace kfuse
