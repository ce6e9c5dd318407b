// A program's plan as text (Program::explain) and as a Graphviz graph (Program::to_dot):
// groups, their kernels' labels, exchanges, reductions, memory traffic and temporaries.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "kfuse/core/static_for.hpp"
#include "kfuse/exec/space.hpp"
#include "kfuse/plan/statement.hpp"

namespace kfuse::detail {

template <class Plan, class Statements, class Binding>
std::string explain_program(const Statements& statements, const Binding& binding,
                            const std::vector<std::string>& labels) {
  std::ostringstream out;
  auto names = [&](int i) { return binding.name_of(i); };
  out << "kfuse program: " << Plan::statement_count << " statements -> " << Plan::kernel_count
      << " kernel(s), " << Plan::allreduce_count << " allreduce(s), " << Plan::exchange_count
      << " exchange point(s) per run\n";
  Plan::for_each_group([&](const auto& group) {
    using G = std::decay_t<decltype(group)>;
    constexpr int g = G::index;
    if constexpr (G::kernel) {
      constexpr int domain = Plan::group_domains[g];
      out << "group " << g << ": kernel \"" << labels[g] << "\" over "
          << (domain == domain::row_map
                  ? std::string("the row map")
                  : "the " + std::to_string(domain::rank_of(domain)) + "-D grid")
          << "\n";
      std::string exchanged;
      for_each_index(group.neighbour_reads,
                     [&](auto i) { exchanged += (exchanged.empty() ? "" : ", ") + names(i); });
      if constexpr (domain == domain::row_map) {
        if (!exchanged.empty())
          out << "  import the ghost values of " << exchanged
              << " (when stale); overlapped: rows without ghost columns run while they fly, "
                 "then the other rows (\""
              << labels[g]
              << ":boundary\"); the matrix adds its "
                 "values and 32-bit column indices per nonzero\n";
      } else if constexpr (has_space(domain)) {
        if (!exchanged.empty())
          out << "  exchange halos of " << exchanged << " (when stale)"
              << (binding.template space_of_group<g>()->overlap()
                      ? "; overlapped: interior points run while messages fly, then the "
                        "boundary strips (\"" +
                            labels[g] + ":boundary\")"
                      : "; not overlapped (GridOptions::overlap = false)")
              << "\n";
      }
    } else {
      out << "group " << g << ": scalar statements on the host (no kernel)\n";
    }
    for_each_index(group.members, [&](auto i) {
      out << "  " << statement_text(statement_at<i>(statements), names) << "\n";
    });
    if (G::reductions > 0)
      out << "  " << G::reductions << " reduction(s), combined in one MPI_Allreduce\n";
    if constexpr (G::kernel) {
      constexpr auto t = Binding::group_traffic()[g];
      out << "  memory traffic: " << t.read + t.written << " bytes/point (" << t.read << " read, "
          << t.written << " written)\n";
    }
  });
  static_for<Binding::size>([&](auto i) {
    if constexpr (Binding::template is_temporary<i>)
      out << "temporary " << names(i) << ": "
          << (Plan::in_register(i) ? "register (never stored)" : "memory (allocated at fuse)")
          << "\n";
  });
  out << "moved statements: none\n";
  return out.str();
}

template <class Plan, class Statements, class Binding>
std::string program_dot(const Statements& statements, const Binding& binding,
                        const std::vector<std::string>& labels) {
  std::ostringstream out;
  auto names = [&](int i) { return binding.name_of(i); };
  out << "digraph kfuse {\n  node [shape=box];\n";
  Plan::for_each_group([&](const auto& group) {
    const int g = std::decay_t<decltype(group)>::index;
    out << "  subgraph cluster_" << g << " {\n    label=\""
        << (labels[g].empty() ? "host" : labels[g]) << "\";\n";
    for_each_index(group.members, [&](auto i) {
      std::string text = statement_text(statement_at<i>(statements), names);
      for (auto& c : text)
        if (c == '"') c = '\'';
      out << "    s" << int(i) << " [label=\"" << text << "\"];\n";
    });
    out << "  }\n";
  });
  // Edges: each read depends on the latest earlier writer of that parameter.
  const auto& facts = Plan::statement_facts;
  for (int j = 0; j < Plan::statement_count; ++j) {
    const auto reads = facts[j].pointwise | facts[j].neighbour_reads | facts[j].scalar_reads;
    for (int p = 0; p < Binding::size; ++p) {
      if (!reads.test(p)) continue;
      for (int i = j - 1; i >= 0; --i)
        if ((facts[i].writes | facts[i].scalar_writes).test(p)) {
          out << "  s" << i << " -> s" << j << " [label=\"" << names(p)
              << (facts[j].neighbour_reads.test(p) ? " (offset)" : "") << "\"];\n";
          break;
        }
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace kfuse::detail
