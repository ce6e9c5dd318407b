// The kfuse benchmark framework, as a workload file sees it.
//
// A workload is registered once (name, description, default size, tolerance)
// and has variants, each registered by name with a factory. A variant is one
// way of computing the same thing: the kfuse policies (fused, per_statement,
// unfused: one class template over the policy, registered with
// register_policies), the hand-written Kokkos version (kokkos), and later the
// library peers (kokkos_kernels, petsc). The runner (runner.hpp) times the
// variants interleaved, counts their kernels with kfuse::KernelCounter and
// compares every result with the `kokkos` variant's.
//
// Adding a workload: a folder benchmarks/workloads/<name>/ whose <name>.cpp
// registers the workload and its kfuse variants, <name>_kokkos.cpp the
// hand-written variant (the build globs workloads/*/*.cpp; nothing else to edit).
//
// Parts: kfuse-bench compiles a kfuse workload file listed in
// benchmarks/CMakeLists.txt once per variant it names, each a translation
// unit of its own, so that the compile table shows what each program costs
// alone (a user's file holds one). KFUSE_BENCH_PART says which part is being
// compiled: the fused, per_statement or unfused variant, or the rest (the
// workload's registration and any other variant); undefined, the whole file.
// The file guards each part with `#if KFUSE_BENCH_COMPILES(FUSED)` and the
// like; register_policies does it itself. Test builds (KFUSE_BENCH_SPLIT_PARTS
// off) compile whole files, but for the fused programs the compile_cost test
// times: those alone, and the rest of their file as one part (BUT_FUSED).
#pragma once

#define KFUSE_BENCH_WHOLE 0
#define KFUSE_BENCH_FUSED 1
#define KFUSE_BENCH_PER_STATEMENT 2
#define KFUSE_BENCH_UNFUSED 3
#define KFUSE_BENCH_REST 4
#define KFUSE_BENCH_BUT_FUSED 5
#ifndef KFUSE_BENCH_PART
#define KFUSE_BENCH_PART KFUSE_BENCH_WHOLE
#endif
/// Whether compiling part `compiled` compiles part `part` (both KFUSE_BENCH_ values).
#define KFUSE_BENCH_PART_HOLDS(compiled, part)                \
  ((compiled) == KFUSE_BENCH_WHOLE || (compiled) == (part) || \
   ((compiled) == KFUSE_BENCH_BUT_FUSED && (part) != KFUSE_BENCH_FUSED))
#define KFUSE_BENCH_COMPILES(part) KFUSE_BENCH_PART_HOLDS(KFUSE_BENCH_PART, KFUSE_BENCH_##part)

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <kfuse/kfuse.hpp>

namespace kfuse::bench {

/// What every variant of a workload is built from (the same for all of them).
struct Setup {
  Comm comm;
  std::int64_t size = 0;  ///< the workload's size knob: N (1-D) or n for an n x n grid
  int nit = 50;           ///< inner iterations (cfd: pressure-Poisson sweeps per step)
  /// Iterations per timed repetition (steps between two reset() calls). Solvers
  /// run a Krylov solve of exactly this many iterations per repetition.
  int iterations = 10;

  /// What the workload's variants share, made by the first that asks for `key` (a solver
  /// workload's matrix: seconds to assemble on the host at GPU sizes, once per variant
  /// before); dropped with the Setup, before Kokkos is finalized. Handles such as
  /// CsrMatrix share their data: the variants only read it.
  template <class T, class Make>
  T shared(const std::string& key, Make make) const {
    std::shared_ptr<void>& slot = (*made)[key];
    if (!slot) slot = std::make_shared<T>(make());
    return *std::static_pointer_cast<T>(slot);
  }
  std::shared_ptr<std::map<std::string, std::shared_ptr<void>>> made =
      std::make_shared<std::map<std::string, std::shared_ptr<void>>>();
};

/// Per-iteration figures a variant declares from its plan (kfuse: the
/// programs' static members) or by construction (hand-written code). The
/// runner counts kernels and allreduces itself and reports both.
struct Figures {
  double kernels = 0;     ///< compute kernels (predicted)
  double allreduces = 0;  ///< combined MPI_Allreduce calls
  double exchanges = 0;   ///< halo exchange points
  double bytes = 0;       ///< model memory traffic, all ranks (see docs/benchmarks.md)

  Figures& operator+=(const Figures& o) {
    kernels += o.kernels, allreduces += o.allreduces, exchanges += o.exchanges, bytes += o.bytes;
    return *this;
  }
  friend Figures operator+(Figures a, const Figures& b) { return a += b; }
  friend Figures operator*(Figures a, double runs) {
    a.kernels *= runs, a.allreduces *= runs, a.exchanges *= runs, a.bytes *= runs;
    return a;
  }
};

/// A named result of a variant (an array gathered in global row-major order,
/// or a reduced value), compared field by field with the reference.
struct Field {
  std::string name;
  std::vector<double> values;
};
using Fields = std::vector<Field>;

class Variant {
 public:
  virtual ~Variant() = default;
  /// Back to the initial state (collective, not timed).
  virtual void reset() = 0;
  /// One iteration (collective, timed).
  virtual void step() = 0;
  /// The result after the iterations run since reset(), on every rank (collective).
  virtual Fields result() const = 0;
  /// Declared per-iteration figures.
  virtual Figures figures() const = 0;
  /// How a library peer was built (PETSc: version, optimisation, BLAS), for
  /// the table's footnotes and the JSON; empty for kfuse and hand-written code.
  virtual std::map<std::string, std::string> build() const { return {}; }
};

using Factory = std::function<std::unique_ptr<Variant>(const Setup&)>;

struct Workload {
  std::string name;
  std::string description;
  std::int64_t default_size = 0;
  int default_iterations = 10;
  /// Largest accepted relative difference of any field from the `kokkos` variant's.
  double tolerance = 1e-12;
  /// "2048x2048", "4194304 options", ...
  std::function<std::string(const Setup&)> size_label;
  /// Compulsory memory traffic per iteration, all ranks (reads and writes of
  /// every array that must be touched; the same for every variant).
  std::function<double(const Setup&)> min_bytes;
  /// Source file of the kfuse variants and of the hand-written one (compile times).
  std::string source, kokkos_source;
  /// Distinct bytes an iteration touches, all ranks (each array once, the
  /// matrices once). % STREAM is printed only where this is at least 4x the
  /// last-level cache of each node; other rows say `cache`.
  std::function<double(const Setup&)> working_set;
  /// Memory-bound workloads: without --size, the size grows from default_size
  /// until the working set is that large. Others keep default_size.
  bool memory_bound = false;
};

struct VariantEntry {
  std::string name;
  Factory factory;
};

// ---- registration (at static initialisation; see KFUSE_BENCH_* below) ---------

bool register_workload(Workload workload);
bool register_variant(const std::string& workload, const std::string& variant, Factory factory);

/// Registers `fused`, `per_statement` and `unfused` from one class template over the policy.
/// Only the part being compiled instantiates its policy (see Parts above);
/// `Part` is a template argument so that each part's instantiation is a
/// function of its own (the parts of one file are linked together).
template <template <class> class V, int Part = KFUSE_BENCH_PART>
bool register_policies(const std::string& workload) {
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_FUSED))
    register_variant(workload, "fused",
                     [](const Setup& s) { return std::make_unique<V<kfuse::Fused>>(s); });
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_PER_STATEMENT))
    register_variant(workload, "per_statement",
                     [](const Setup& s) { return std::make_unique<V<kfuse::PerStatement>>(s); });
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_UNFUSED))
    register_variant(workload, "unfused",
                     [](const Setup& s) { return std::make_unique<V<kfuse::Unfused>>(s); });
  return true;
}

/// Registers `per_statement`, `unfused` and `fused_steps` (in the `rest` part)
/// from `make(policy, setup)`, a generic factory of a solver iteration written
/// with kfuse::fuse; as register_policies, only the part being compiled
/// instantiates its policy.
template <int Part = KFUSE_BENCH_PART, class Make>
bool register_steps(const std::string& workload, Make make) {
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_PER_STATEMENT))
    register_variant(workload, "per_statement",
                     [make](const Setup& s) { return make(kfuse::PerStatement{}, s); });
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_UNFUSED))
    register_variant(workload, "unfused",
                     [make](const Setup& s) { return make(kfuse::Unfused{}, s); });
  if constexpr (KFUSE_BENCH_PART_HOLDS(Part, KFUSE_BENCH_REST))
    register_variant(workload, "fused_steps",
                     [make](const Setup& s) { return make(kfuse::Fused{}, s); });
  return true;
}

/// Registers one variant class constructible from a Setup.
template <class V>
bool register_variant_class(const std::string& workload, const std::string& variant) {
  return register_variant(workload, variant, [](const Setup& s) { return std::make_unique<V>(s); });
}

/// Every workload, in registration-independent order (sorted by name).
std::vector<Workload> workloads();
/// The variants of a workload in report order (fused, per_statement, unfused,
/// kokkos, kokkos_kernels, petsc, then others by name).
std::vector<VariantEntry> variants_of(const std::string& workload);

// ---- helpers for variants ----------------------------------------------------------

/// Declared figures of one run of a kfuse program over `points` grid points.
template <class Program>
Figures program_figures(const Program& /*program*/, double points) {
  Figures f;
  f.kernels = Program::kernel_count;
  f.allreduces = Program::allreduce_count;
  f.exchanges = Program::exchange_count;
  f.bytes = double(Program::bytes_per_point()) * points;
  return f;
}

/// Label of a hand-written kernel. It starts with "kfuse:" so that
/// kfuse::KernelCounter counts it as a compute kernel, like kfuse's own.
inline std::string hand_label(const std::string& what) { return "kfuse:hand[" + what + "]"; }

/// The array as a result field (collective).
template <class T, int N>
Field field_of(const std::string& name, const Array<T, N>& a) {
  std::vector<T> g = a.gather();
  return Field{name, std::vector<double>(g.begin(), g.end())};
}
inline Field field_of(const std::string& name, double value) { return Field{name, {value}}; }

}  // namespace kfuse::bench

#define KFUSE_BENCH_CONCAT_IMPL(a, b) a##b
#define KFUSE_BENCH_CONCAT(a, b) KFUSE_BENCH_CONCAT_IMPL(a, b)
/// Runs a registration expression at static initialisation.
#define KFUSE_BENCH_REGISTER(expression)                                                     \
  [[maybe_unused]] static const bool KFUSE_BENCH_CONCAT(kfuse_bench_registered_, __LINE__) = \
      (expression)
