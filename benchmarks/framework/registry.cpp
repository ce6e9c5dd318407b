// The workload registry: filled at static initialisation by the workload files.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "bench.hpp"

namespace kfuse::bench {

namespace {

struct Registry {
  std::map<std::string, Workload> workloads;
  std::map<std::string, std::vector<VariantEntry>> variants;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

int variant_rank(const std::string& name) {
  static const char* const order[] = {"fused",  "per_statement",  "unfused",
                                      "kokkos", "kokkos_kernels", "petsc"};
  for (int i = 0; i < 6; ++i)
    if (name == order[i]) return i;
  return 6;
}

}  // namespace

bool register_workload(Workload workload) {
  auto& r = registry();
  if (r.workloads.count(workload.name)) {
    std::fprintf(stderr, "kfuse-bench: workload '%s' is registered twice\n", workload.name.c_str());
    std::abort();
  }
  const std::string name = workload.name;
  r.workloads.emplace(name, std::move(workload));
  return true;
}

bool register_variant(const std::string& workload, const std::string& variant, Factory factory) {
  auto& list = registry().variants[workload];
  for (const auto& v : list)
    if (v.name == variant) {
      std::fprintf(stderr, "kfuse-bench: variant '%s' of '%s' is registered twice\n",
                   variant.c_str(), workload.c_str());
      std::abort();
    }
  list.push_back(VariantEntry{variant, std::move(factory)});
  return true;
}

std::vector<Workload> workloads() {
  std::vector<Workload> out;
  for (const auto& [name, w] : registry().workloads) out.push_back(w);
  return out;
}

std::vector<VariantEntry> variants_of(const std::string& workload) {
  auto it = registry().variants.find(workload);
  if (it == registry().variants.end()) return {};
  std::vector<VariantEntry> out = it->second;
  std::sort(out.begin(), out.end(), [](const VariantEntry& a, const VariantEntry& b) {
    const int ra = variant_rank(a.name), rb = variant_rank(b.name);
    return ra != rb ? ra < rb : a.name < b.name;
  });
  return out;
}

}  // namespace kfuse::bench
