// kfuse::SolverWorkspace: the vectors kfuse's solvers work in, kept between
// solves as PETSc's KSP keeps its work vectors. Without one a solve
// allocates them on every call, and fresh memory is zero-filled page by
// page: for a system beyond the cache that costs about as much as an
// iteration per vector.
#pragma once

#include <any>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kfuse/core/view.hpp"
#include "kfuse/exec/space.hpp"

namespace kfuse {

namespace detail {
class WorkVectors;
}

/// Set SolverOptions::workspace to one and repeated solves keep their work
/// vectors (GMRES also its Krylov basis) in it: a solve on the index space of
/// the previous one allocates nothing; one on another space (or GMRES with
/// another restart) replaces what it needs. A solve that finds it in use (a
/// preconditioner solving with the same options) works in vectors of its
/// own. Set on every rank or on none (the ranks agree on it as on every
/// option): a built-in preconditioner stays bound to the last solve's vectors,
/// and rebinding is collective. Holds Kokkos memory: clear or destroy it
/// before Kokkos is finalized, as any kfuse::Vector.
class SolverWorkspace {
 public:
  SolverWorkspace() = default;
  SolverWorkspace(const SolverWorkspace&) = delete;
  SolverWorkspace& operator=(const SolverWorkspace&) = delete;

  /// Frees what it holds.
  void clear() { entries_.clear(); }
  /// How many vectors (or bases) it holds.
  std::size_t size() const { return entries_.size(); }

 private:
  friend class detail::WorkVectors;
  std::vector<std::pair<std::string, std::any>> entries_;
  bool in_use_ = false;
};

namespace detail {

/// A solve's work vectors: from SolverOptions::workspace when one is set and
/// free, else from a workspace of the solve's own (freed when it returns).
class WorkVectors {
 public:
  explicit WorkVectors(SolverWorkspace* shared)
      : workspace_(shared != nullptr && !shared->in_use_ ? shared : &own_) {
    workspace_->in_use_ = true;
  }
  ~WorkVectors() { workspace_->in_use_ = false; }
  WorkVectors(const WorkVectors&) = delete;
  WorkVectors& operator=(const WorkVectors&) = delete;

  /// The handle held under `name` if it is a W and fits(it), else make()'s,
  /// held from then on. Not collective: callers allocate in Comm::agree_on.
  template <class W, class Fits, class Make>
  W get(const std::string& name, const Fits& fits, const Make& make) {
    for (auto& [key, value] : workspace_->entries_) {
      if (key != name) continue;
      if (const W* held = std::any_cast<W>(&value); held != nullptr && fits(*held)) return *held;
      value.reset();  // free it before its replacement is allocated
      value = make();
      return std::any_cast<W>(value);
    }
    workspace_->entries_.emplace_back(name, make());
    return std::any_cast<W>(workspace_->entries_.back().second);
  }

  /// Collective: Vectors or Arrays of `space`, one per name (handles: they
  /// share the held storage); memory that cannot be had is a kfuse::Error on
  /// every rank. Zero when new; a reused one holds what the last solve left.
  template <class V, class Space>
  std::vector<V> vectors(const Space& space, std::initializer_list<const char*> names) {
    std::vector<V> held;
    space.base_comm().agree_on([&] {
      for (const std::string name : names)
        held.push_back(get<V>(
            name, [&](const V& v) { return space_of(v) == space; },
            [&] { return V(space, name, local_errors); }));
    });
    return held;
  }

 private:
  SolverWorkspace own_;
  SolverWorkspace* workspace_;
};

}  // namespace detail
}  // namespace kfuse
