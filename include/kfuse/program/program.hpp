// Program: a deferred program built once by kfuse::fuse, run many times.
//
// The statements the program lambda returned carry the whole task graph in their types, so
// the Plan (groups, kernel_count, ...) is a compile-time constant. The Program keeps those
// statements (with the constants they captured) and the binding (program/binding.hpp): the
// handles of the arguments, plus storage for temporaries that cannot live in registers. A
// run lowers each group onto the binding and hands it to exec's runner.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kfuse/core/pack.hpp"
#include "kfuse/core/static_for.hpp"
#include "kfuse/exec/group.hpp"
#include "kfuse/plan/plan.hpp"
#include "kfuse/plan/policy.hpp"
#include "kfuse/program/binding.hpp"
#include "kfuse/program/explain.hpp"

namespace kfuse {

/// Args: every parameter's argument type, in position order: the user's arguments
/// (UserCount of them) and then the Unfused rewrite's temporaries.
template <class Policy, class Statements, class Args, int UserCount>
class Program;

template <class Policy, class Statements, class... Args, int UserCount>
class Program<Policy, Statements, detail::Pack<Args...>, UserCount> {
  static constexpr bool unfused = std::is_same_v<Policy, Unfused>;
  using PlanPolicy = std::conditional_t<std::is_same_v<Policy, Fused>, Fused, PerStatement>;
  using ArgTuple = detail::Pack<Args...>;

 public:
  using plan = detail::Plan<PlanPolicy, Statements, unfused, int(sizeof...(Args))>;
  static constexpr int kernel_count = plan::kernel_count;
  static constexpr int allreduce_count = plan::allreduce_count;
  static constexpr int exchange_count = plan::exchange_count;

 private:
  using Binding = detail::Binding<plan, ArgTuple, UserCount>;

 public:
  /// Memory traffic of a run in bytes a point, summed over its kernels as explain()
  /// prints them (STREAM's convention): what a benchmark multiplies by the points.
  static constexpr std::size_t bytes_per_point() {
    std::size_t total = 0;
    for (const auto& t : Binding::group_traffic()) total += t.read + t.written;
    return total;
  }

  Program(const Statements& statements, const ArgTuple& args) : statements_(statements) {
    bind(args);
  }

  /// Runs the program on the current binding; returns when done.
  void operator()() {
    Kokkos::Profiling::pushRegion("kfuse:program");
    detail::static_for<plan::group_count>(
        [&](auto g) { run_group(typename plan::template group<g>{}, labels_[g]); });
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
    const auto given = detail::make_pack<const A&...>(args...);
    bind(expand<all>(given, std::index_sequence_for<Args...>{}));
  }

  std::string explain() const {
    return detail::explain_program<plan>(statements_, *binding_, labels_);
  }
  std::string to_dot() const { return detail::program_dot<plan>(statements_, *binding_, labels_); }

  /// Kokkos label of each group's kernel ("" for a scalar-only group).
  const std::vector<std::string>& kernel_labels() const { return labels_; }

 private:
  /// Arguments that are handles (not temporaries) among the user's.
  static constexpr std::size_t handle_count() {
    std::size_t n = 0;
    for (bool t : Binding::temporary_at) n += t ? 0 : 1;
    return n;
  }
  static constexpr std::size_t handles_before(std::size_t position) {
    std::size_t n = 0, k = 0;
    for (bool t : Binding::temporary_at) {
      if (k++ == position) break;
      n += t ? 0 : 1;
    }
    return n;
  }
  /// The full argument tuple from the given arguments (all user arguments,
  /// or only the handles); temporaries are tags.
  template <bool All, class Given, std::size_t... I>
  ArgTuple expand(const Given& given, std::index_sequence<I...>) const {
    return ArgTuple{{{pick<All, I>(given)}...}};
  }
  template <bool All, std::size_t I, class Given>
  static auto pick(const Given& given) {
    using A = detail::pack_element_t<I, ArgTuple>;
    if constexpr (detail::is_temporary_tag<A>::value) {
      return A{};
    } else {
      constexpr std::size_t source = All ? I : handles_before(I);
      using G = std::decay_t<detail::pack_element_t<source, Given>>;
      static_assert(std::is_same_v<G, A>,
                    "kfuse::Program(args...): an argument's type differs from the one given to "
                    "kfuse::fuse at that position");
      return detail::pack_get<source>(given);
    }
  }

  /// Checks and installs a binding; on an error (thrown on every rank) the binding stays.
  void bind(const ArgTuple& args) {
    auto binding = Binding::make(statements_, args, binding_ ? &*binding_ : nullptr);
    // emplace, not assignment: Array::operator= copies values, a rebind swaps handles.
    binding_.emplace(std::move(binding));
    labels_ = make_labels();
  }

  std::vector<std::string> make_labels() const {
    std::vector<std::string> labels;
    auto names = [this](int i) { return binding_->name_of(i); };
    plan::for_each_group([&](const auto& group) {
      std::string label;
      if constexpr (std::decay_t<decltype(group)>::kernel) {
        detail::for_each_index(group.members, [&](auto i) {
          label += (label.empty() ? "kfuse:group[" : "|") +
                   detail::statement_label(detail::statement_at<i>(statements_), names);
        });
        label += "]";
      }
      labels.push_back(label);
    });
    return labels;
  }

  template <class G>
  void run_group(const G& group, const std::string& label);

  Statements statements_;
  std::optional<Binding> binding_;  // always engaged after construction
  std::vector<std::string> labels_;
};

template <class Policy, class Statements, class... Args, int UserCount>
template <class G>
void Program<Policy, Statements, detail::Pack<Args...>, UserCount>::run_group(
    const G& group, const std::string& label) {
  if constexpr (!G::kernel) {
    detail::run_host_group(statements_, group, binding_->template context<1>(nullptr));
  } else {
    constexpr int D = plan::group_domains[G::index];
    static_assert(detail::has_space(D),
                  "kfuse::fuse: a kernel's statements read only temporaries and indices, so "
                  "their rank is unknown; involve an array of the grid");
    if constexpr (detail::has_space(D)) {
      const auto* space = binding_->template space_of_group<G::index>();
      detail::run_group<D>(label, *space, statements_, group, binding_->template context<D>(space));
    }
  }
}

}  // namespace kfuse
