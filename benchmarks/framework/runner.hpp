// The runner: for each selected workload, builds its variants, counts their
// kernels and allreduces per iteration (one untimed pass, which also warms
// up), times them interleaved (A B C A B C ...) with a STREAM triad after
// each round, builds them again on fresh memory for the next share of the
// repetitions (placements), compares every variant's result with the
// hand-written `kokkos` one, and returns one Row per variant. With
// --kernel-times, one more pass per variant times each kernel
// (kernel_times.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

#include "bench.hpp"
#include "kernel_times.hpp"
#include "stream.hpp"

namespace kfuse::bench {

struct Options {
  std::vector<std::string> workloads;  ///< regexes (any matches the whole name); empty: all
  std::vector<std::string> variants;   ///< same for variants; `kokkos` always runs (reference)
  std::int64_t size = 0;               ///< 0: each workload's default
  int iterations = 0;                  ///< 0: each workload's default
  /// Timed rounds of each workload; 0: at least 20, more for a quick workload
  /// (repetitions_for in runner.cpp).
  int repetitions = 0;
  /// Times a workload's variants are set up anew on fresh memory, the repetitions shared out
  /// among them (at most one each): the same loop runs up to 20% faster or slower on one
  /// set of pages than on another (docs/benchmarks.md, "Placements")
  int placements = 10;
  int nit = 50;
  std::int64_t cache_bytes = 0;      ///< --cache-size; 0: read or measured (last_level_cache)
  std::int64_t stream_elements = 0;  ///< per rank; 0: beyond the cache (stream.hpp)
  int stream_repetitions = 10;
  int stream_repetitions_alongside = 3;  ///< triads after each timed repetition of a workload
  bool kernel_times = false;  ///< after the timed repetitions, one pass timing each kernel
  std::string json;
  std::string compile_times_dir;  ///< where the build left <source>.seconds files
  std::string command_line;
};

/// What the build recorded for one source file (benchmarks/compile-timer.sh).
struct CompileCost {
  std::string file;     ///< the file name, e.g. cfd.fused.cpp (a part) or cfd_kokkos.cpp
  double cpu_s = -1;    ///< user + system seconds of the compiler; < 0: not recorded
  double peak_mib = 0;  ///< its largest resident set; 0: not recorded
};

/// Every file the build recorded in `dir`, by name.
std::vector<CompileCost> compile_costs(const std::string& dir);

struct Row {
  std::string workload, variant, size, status = "ok", message;
  int ranks = 1, iterations = 0, repetitions = 0, placements = 1, nit = 0;
  std::int64_t size_knob = 0;
  double time_per_iter_s = 0, time_min_s = 0, time_max_s = 0;
  std::vector<double> times_s;  ///< the slowest rank's time per iteration, repetition by repetition
  double kernels_per_iter = 0;   ///< counted compute kernels
  double halo_kernels_per_iter = 0;  ///< counted pack/unpack kernels
  double allreduces_per_iter = 0;    ///< counted (MPI builds) or declared
  bool allreduces_counted = false;
  double exchanges_per_iter = 0;
  Figures declared;
  double bytes_per_iter = 0, gbps = 0;
  double pct_stream = 0;  ///< median over repetitions of gbps / the triad measured alongside
  double min_bytes_per_iter = 0, effective_gbps = 0;
  double working_set_bytes = 0;  ///< distinct bytes an iteration touches (Workload::working_set)
  std::int64_t cache_bytes = 0;  ///< the last-level cache of each node
  std::string cache_source;      ///< where that figure comes from (CacheSize::source)
  bool beyond_cache = false;     ///< working set >= 4x the cache on each node: % STREAM applies
  double speedup_vs_unfused = 0, speedup_vs_kokkos = 0, speedup_vs_petsc = 0;  ///< 0: n/a
  double max_rel_diff = 0;
  std::string worst_field;
  std::map<std::string, std::string> build;  ///< Variant::build()
  CompileCost compile;  ///< of the file holding the variant's program (none: cpu_s < 0)
  double stream_gbps = 0;            ///< the suite's triad (at the start)
  double stream_update_gbps = 0;     ///< the suite's in-place update (StreamResult::update_gbps)
  double stream_streamed_gbps =
      0;  ///< its triad with streaming stores (StreamResult::streamed_gbps)
  double stream_gbps_alongside = 0;  ///< median of the triads alongside this workload's repetitions
  /// --kernel-times: rank 0's kernels over `iterations` fenced steps, and those steps' seconds
  std::vector<KernelTime> kernel_times;
  double fenced_time_per_iter_s = 0;
};

/// Workloads selected by the options (in name order).
std::vector<Workload> selected_workloads(const Options& options);
bool selected_variant(const Options& options, const std::string& name);

/// Runs every selected workload; rows in report order. `stream`: the suite's
/// triad rate; `triad` measures it again alongside each timed repetition.
std::vector<Row> run_suite(const Options& options, const Comm& comm, const StreamResult& stream,
                           const StreamTriad& triad);

}  // namespace kfuse::bench
