#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "mpi_counter.hpp"
#include "timer.hpp"

namespace kfuse::bench {

namespace {

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  if (patterns.empty()) return true;
  for (const auto& p : patterns)
    if (std::regex_match(name, std::regex(p))) return true;
  return false;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string seconds_text(double s) {
  char buf[32];
  const long whole = std::lround(s);  // rounded once: 299.6 s is "5 min 00 s", not "4 min 60 s"
  if (whole < 90)
    std::snprintf(buf, sizeof buf, "%ld s", whole);
  else
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", whole / 60, whole % 60);
  return buf;
}

/// What the build recorded for a file name (benchmarks/compile-timer.sh).
CompileCost compile_cost(const std::string& dir, const std::string& file) {
  CompileCost cost{file};
  double wall = 0;
  std::ifstream in(dir + "/" + file + ".seconds");
  if (dir.empty() || file.empty() || !(in >> cost.cpu_s >> wall)) return {file};
  if (!(in >> cost.peak_mib)) cost.peak_mib = 0;  // recorded without GNU time
  return cost;
}

std::string file_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

/// The file holding a variant's program: the hand-written file for `kokkos`
/// variants; for the kfuse ones the workload file's part of that variant
/// (fused.cpp -> fused.fused.cpp, see framework/bench.hpp), else its `rest`
/// part, else the whole file; none for library peers.
CompileCost variant_compile_cost(const std::string& dir, const Workload& w,
                                 const std::string& variant) {
  if (variant.rfind("kokkos", 0) == 0)
    return variant == "kokkos_kernels" ? CompileCost{}
                                       : compile_cost(dir, file_name(w.kokkos_source));
  if (variant.rfind("fused", 0) != 0 && variant != "per_statement" && variant != "unfused")
    return {};
  const std::string whole = file_name(w.source);
  const std::string stem = whole.substr(0, whole.rfind('.'));
  for (const std::string& file : {stem + "." + variant + ".cpp", stem + ".rest.cpp", whole}) {
    CompileCost cost = compile_cost(dir, file);
    if (cost.cpu_s >= 0) return cost;
  }
  return {};
}

/// Largest relative difference of `got` from `ref` over the fields (each
/// normalised by the reference field's largest magnitude). NaN or a missing
/// field gives infinity.
double compare(const Fields& got, const Fields& ref, std::string& worst) {
  double result = 0;
  for (const Field& r : ref) {
    auto it = std::find_if(got.begin(), got.end(), [&](const Field& f) { return f.name == r.name; });
    double rel = HUGE_VAL;
    if (it != got.end() && it->values.size() == r.values.size()) {
      double scale = 0, diff = 0;
      for (std::size_t k = 0; k < r.values.size(); ++k) {
        scale = std::max(scale, std::abs(r.values[k]));
        const double d = std::abs(it->values[k] - r.values[k]);
        diff = std::isnan(d) ? HUGE_VAL : std::max(diff, d);
      }
      rel = diff == 0 ? 0 : diff / std::max(scale, 1e-300);
    }
    if (!(rel <= result)) {
      result = rel;
      worst = r.name;
    }
  }
  return result;
}

void progress(const Comm& comm, const char* format, const std::string& a, const std::string& b) {
  if (comm.rank() != 0) return;
  std::fprintf(stderr, format, a.c_str(), b.c_str());
  std::fflush(stderr);
}

/// Whether a workload's size grows with the cache (memory-bound, no --size).
bool grows(const Workload& w, const Options& options, std::int64_t cache_bytes) {
  return options.size <= 0 && w.memory_bound && w.working_set && cache_bytes > 0;
}

/// The size knob: --size, else the default, grown (memory-bound workloads) in
/// steps of an eighth, rounded to multiples of 64, until the working set is
/// beyond the cache, but not past `memory` bytes a node for all the variants
/// (`per_working_set` bytes each working-set byte, measured) and the results
/// gathered (one working set more), with a quarter to spare.
std::int64_t size_of(const Workload& w, const Options& options, Setup setup, double node_share,
                     std::int64_t cache_bytes, double per_working_set, double memory) {
  if (options.size > 0) return options.size;
  setup.size = w.default_size;
  if (!grows(w, options, cache_bytes)) return setup.size;
  auto fits = [&](std::int64_t size) {
    Setup s = setup;
    s.size = size;
    return w.working_set(s) * node_share * (per_working_set + 1) <= 0.75 * memory;
  };
  while (!beyond_cache(w.working_set(setup), node_share, cache_bytes)) {
    const std::int64_t next = (setup.size + setup.size / 8 + 63) / 64 * 64;
    if (!fits(next)) break;
    setup.size = next;
  }
  return setup.size;
}

/// Gives the heap's free memory back to the system (glibc's malloc_trim), so that
/// the free memory the next size is judged by includes what earlier workloads freed.
void release_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

/// Memory held through one placement, taken before its variants are made: a pseudo-random
/// whole number of 2 MiB pages, 1 to 32 (each rank its own), written so that the system backs
/// it. The system hands freed pages out again in about the order they came back, so variants
/// made again on memory given back landed where the previous set had been: without the shift,
/// a process's per-round ratios mostly stayed on one side of 1 through all its placements
/// (docs/benchmarks.md, "Placements"). None where the memory left is short (the variants come
/// first) or where the variants' arrays are not in host memory.
class PageShift {
 public:
  void next() {
    held_ = std::vector<char>();  // given back first: each shift is drawn on the same memory
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, detail::MemSpace>::accessible)
      return;
    constexpr std::size_t page = std::size_t{2} << 20;
    const std::size_t wanted = (std::size_t(draw_() % 32) + 1) * page;
    if (wanted * 16 > detail::available_host_bytes()) return;
    held_.assign(wanted, 1);
  }

 private:
  std::minstd_rand draw_{std::random_device{}()};
  std::vector<char> held_;
};

/// Bytes this process holds from the heap (glibc's mallinfo2: in use, mapped
/// chunks included), else its resident memory (/proc/self/statm): a workload's
/// arrays (Kokkos, PETSc) come from malloc. Resident memory alone misses
/// allocations that reuse what an earlier workload freed.
double held_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return double(m.uordblks) + double(m.hblkhd);
#else
  unsigned long long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu %llu", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return double(resident) * double(sysconf(_SC_PAGESIZE));
#endif
}

}  // namespace

std::vector<Workload> selected_workloads(const Options& options) {
  std::vector<Workload> out;
  for (auto& w : workloads())
    if (matches_any(options.workloads, w.name)) out.push_back(w);
  return out;
}

bool selected_variant(const Options& options, const std::string& name) {
  return name == "kokkos" || matches_any(options.variants, name);
}

namespace {

/// A workload's timed rounds: --repetitions; without it at least 20, and more where
/// rounds are quick, as many as fill 30 s (a round as long as the warm-up's), at most 100.
/// The ratios are medians of per-round ratios, which spread by 5-7% on a 2-core VM: a
/// median of 20 moved by about 2% between runs, one of 60 by about 1%.
int repetitions_for(const Options& options, double round_seconds) {
  if (options.repetitions > 0) return options.repetitions;
  constexpr int least = 20, most = 100;
  constexpr double budget_seconds = 30;
  if (!(round_seconds > 0)) return least;
  return int(std::clamp(std::ceil(budget_seconds / round_seconds), double(least), double(most)));
}

/// The order in which a round runs `n` variants (the report's order): the report's, with
/// the hand-written reference (index `reference`) moved next to `fused`, after it or
/// (`reference_first`) before it; -1: not run. A shared machine's speed drifts, so the
/// ratio of neighbouring runs should spread less (in run 31 on the AMD EPYC VM, about half
/// as much on cfd and swe; whole runs since have spread as much as before:
/// docs/benchmarks.md, Metrics).
std::vector<std::size_t> run_order(std::size_t n, int fused, int reference, bool reference_first) {
  std::vector<std::size_t> order;
  for (std::size_t v = 0; v < n; ++v) {
    if (fused < 0 || reference < 0 || (int(v) != fused && int(v) != reference))
      order.push_back(v);
    else if (int(v) == fused)
      order.insert(order.end(), {std::size_t(reference_first ? reference : fused),
                                 std::size_t(reference_first ? fused : reference)});
  }
  return order;
}

/// Sets up every selected variant of `workload` at `setup.size`, variant `first` first
/// and the others after it in turn (a later placement's variants land on memory that
/// others held), and runs each once, counting its kernels and allreduces (the warm-up):
/// fills `names`, `variants`, `local` (their rows, in report order) and `warm` (each one's
/// seconds). Returns the size's label.
std::string build_and_count(const Workload& workload, const Options& options, const Setup& setup,
                            std::size_t first, double node_share, const StreamResult& stream,
                            std::vector<std::string>& names,
                            std::vector<std::unique_ptr<Variant>>& variants,
                            std::vector<Row>& local, std::vector<double>& warm) {
  const Comm& comm = setup.comm;
  const int iterations = setup.iterations;
  const std::string label = workload.size_label(setup);
  const double working_set = workload.working_set ? workload.working_set(setup) : 0;
  const bool in_memory = beyond_cache(working_set, node_share, stream.cache.bytes);
  // Build the variants.
  std::vector<VariantEntry> entries;
  for (const auto& entry : variants_of(workload.name))
    if (selected_variant(options, entry.name)) entries.push_back(entry);
  const std::size_t n = entries.size();
  names.resize(n);
  variants.resize(n);
  local.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = (first + k) % n;
    const VariantEntry& entry = entries[v];
    progress(comm, "[kfuse-bench] %s: setting up %s\n", workload.name, entry.name);
    Row& row = local[v];
    row.workload = workload.name;
    row.variant = entry.name;
    row.size = label;
    row.size_knob = setup.size;
    row.nit = setup.nit;
    row.ranks = comm.size();
    row.iterations = iterations;
    row.stream_gbps = stream.gbps;
    row.stream_update_gbps = stream.update_gbps;
    row.stream_streamed_gbps = stream.streamed_gbps;
    row.min_bytes_per_iter = workload.min_bytes ? workload.min_bytes(setup) : 0;
    row.working_set_bytes = working_set;
    row.cache_bytes = stream.cache.bytes;
    row.cache_source = stream.cache.source;
    row.beyond_cache = in_memory;
    row.compile = variant_compile_cost(options.compile_times_dir, workload, entry.name);
    names[v] = entry.name;
    variants[v] = entry.factory(setup);
    row.declared = variants[v]->figures();
    row.build = variants[v]->build();
    row.exchanges_per_iter = row.declared.exchanges;
    row.bytes_per_iter = row.declared.bytes;
  }

  // Count kernels and allreduces (this pass also warms up).
  warm.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    progress(comm, "[kfuse-bench] %s: counting kernels of %s\n", workload.name, names[v]);
    variants[v]->reset();
    comm.barrier();
    const double start = wall_time();
    const std::int64_t calls = AllreduceCounter::calls();
    KernelCounts counts;
    {
      KernelCounter counter;
      for (int it = 0; it < iterations; ++it) variants[v]->step();
      Kokkos::fence();
      counts = counter.counts();
    }
    const std::int64_t reduced = AllreduceCounter::calls() - calls;
    warm[v] = wall_time() - start;
    Row& row = local[v];
    row.kernels_per_iter = double(counts.compute) / iterations;
    row.halo_kernels_per_iter = double(counts.exchange) / iterations;
    row.allreduces_counted = AllreduceCounter::counting();
    row.allreduces_per_iter =
        row.allreduces_counted ? double(reduced) / iterations : row.declared.allreduces;
  }
  return label;
}

}  // namespace

std::vector<Row> run_suite(const Options& options, const Comm& comm, const StreamResult& stream,
                           const StreamTriad& triad) {
  std::vector<Row> rows;
  const auto chosen = selected_workloads(options);
  const double node_share = double(ranks_on_node(comm)) / comm.size();  // collective: once
  for (std::size_t w = 0; w < chosen.size(); ++w) {
    const Workload& workload = chosen[w];
    const int iterations = options.iterations > 0 ? options.iterations : workload.default_iterations;
    Setup setup{comm, 0, options.nit, iterations};
    std::vector<std::string> names;
    std::vector<std::unique_ptr<Variant>> variants;
    std::vector<Row> local;
    std::vector<double> warm;
    std::string label;
    auto drop = [&] {
      names.clear(), variants.clear(), local.clear(), warm.clear();
      setup.made->clear();  // what the variants shared
      release_freed_memory();
    };
    release_freed_memory();  // the previous workload's
    // What the variants take at the default size, all of them on a node, per byte of the
    // working set: how far the size may grow (every variant lives through the rounds).
    double per_working_set = 0;
    if (grows(workload, options, stream.cache.bytes)) {
      setup.size = workload.default_size;
      progress(comm, "[kfuse-bench] %s: measuring its memory at size %s\n", workload.name,
               std::to_string(setup.size));
      const double before = comm.node_allreduce(held_bytes(), ReduceOp::sum);
      build_and_count(workload, options, setup, 0, node_share, stream, names, variants, local,
                      warm);
      const double taken = comm.node_allreduce(held_bytes(), ReduceOp::sum) - before;
      per_working_set =
          comm.allreduce(taken / (workload.working_set(setup) * node_share), ReduceOp::max);
      drop();
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f", per_working_set);
      progress(comm, "[kfuse-bench] %s: its variants take %s working sets\n", workload.name, ratio);
    }
    const double memory = comm.allreduce(double(detail::available_host_bytes()), ReduceOp::min);
    setup.size =
        size_of(workload, options, setup, node_share, stream.cache.bytes, per_working_set, memory);
    const std::string left = w + 1 < chosen.size()
                                 ? std::to_string(chosen.size() - w - 1) + " workload(s) after it"
                                 : "the last one";
    // Where the measure falls short (a kfuse allocation refused for want of memory: a
    // kfuse::Error on every rank; or less memory left than the working set, which the
    // results, whole arrays gathered on every rank, need), all are dropped and the
    // workload starts again an eighth smaller. Not with --size: the user chose it.
    for (;;) {
      try {
        label = build_and_count(workload, options, setup, 0, node_share, stream, names, variants,
                                local, warm);
        const double needed = workload.working_set ? workload.working_set(setup) * node_share : 0;
        const double left_over =
            comm.allreduce(double(detail::available_host_bytes()), ReduceOp::min);
        if (options.size > 0 || left_over >= needed) break;
      } catch (const Error& e) {
        if (options.size > 0 || std::string(e.what()).find("cannot allocate") == std::string::npos)
          throw;
      }
      const std::int64_t smaller = (setup.size - setup.size / 8) / 64 * 64;
      if (smaller < 64) throw Error("kfuse-bench: " + workload.name + " does not fit in memory");
      drop();
      if (comm.rank() == 0) {
        std::fprintf(stderr, "[kfuse-bench] %s: size %lld does not fit in memory; trying %lld\n",
                     workload.name.c_str(), static_cast<long long>(setup.size),
                     static_cast<long long>(smaller));
        std::fflush(stderr);
      }
      setup.size = smaller;
    }
    const std::size_t n = variants.size();

    double per_rep = 0;
    for (double t : warm) per_rep += t;
    per_rep = comm.allreduce(per_rep, ReduceOp::max);  // the same on every rank, and so reps
    const int reps = repetitions_for(options, per_rep);

    // Timed repetitions, variants interleaved, each round followed by a triad. Round r
    // starts with variant r mod n of the run order: the variant run right after a triad
    // measured 2-5% slower than in other positions (cfd, whose arrays stay in cache), so
    // no variant may always take that place. The run order puts fused and the reference
    // next to each other (run_order), fused first in one cycle of n rounds and the
    // reference in the next. The rounds are shared out among the placements: before
    // each share but the first, the variants are made again on memory given back to the
    // system, the next one first and behind a PageShift, so that no variant keeps the pages
    // it started on.
    auto index_of = [&](const std::string& name) -> int {
      for (std::size_t v = 0; v < n; ++v)
        if (names[v] == name) return int(v);
      return -1;
    };
    const int ref = index_of("kokkos"), fused = index_of("fused");
    const std::vector<std::size_t> orders[2] = {run_order(n, fused, ref, false),
                                                run_order(n, fused, ref, true)};
    std::vector<std::vector<double>> times(n);
    std::vector<double> triads;
    const int placements = std::clamp(options.placements, 1, reps);
    PageShift shift;
    for (int placement = 0, r = 0; placement < placements; ++placement) {
      if (placement > 0) {
        drop();
        shift.next();
        progress(comm, "[kfuse-bench] %s: placement %s, its variants made again\n", workload.name,
                 std::to_string(placement + 1) + "/" + std::to_string(placements));
        build_and_count(workload, options, setup, std::size_t(placement) % n, node_share, stream,
                        names, variants, local, warm);
      }
      for (const int end = reps * (placement + 1) / placements; r < end; ++r) {
        if (comm.rank() == 0) {
          std::fprintf(stderr, "[kfuse-bench] %s (%s): repetition %d/%d, ~%s left in it; %s\n",
                       workload.name.c_str(), label.c_str(), r + 1, reps,
                       seconds_text(per_rep * (reps - r)).c_str(), left.c_str());
          std::fflush(stderr);
        }
        for (std::size_t k = 0; k < n; ++k) {
          const std::size_t v = orders[std::size_t(r) / n % 2][(std::size_t(r) + k) % n];
          variants[v]->reset();
          const double seconds = timed_max_over_ranks(comm, [&] {
            for (int it = 0; it < iterations; ++it) variants[v]->step();
          });
          times[v].push_back(seconds / iterations);
        }
        triads.push_back(triad.measure(options.stream_repetitions_alongside).gbps);
      }
    }

    // Where the time goes, kernel by kernel: after the timing, which the fences would disturb.
    if (options.kernel_times) {
      for (std::size_t v = 0; v < n; ++v) {
        progress(comm, "[kfuse-bench] %s: timing the kernels of %s\n", workload.name, names[v]);
        variants[v]->reset();
        KernelTimer timer;
        const double seconds = timed_max_over_ranks(comm, [&] {
          for (int it = 0; it < iterations; ++it) variants[v]->step();
        });
        local[v].kernel_times = timer.times();
        local[v].fenced_time_per_iter_s = seconds / iterations;
      }
    }

    // Results against the hand-written reference, one variant's gathered fields at a
    // time (each holds whole arrays on every rank).
    const int unfused = index_of("unfused"), petsc = index_of("petsc");
    const Fields reference = ref >= 0 ? variants[std::size_t(ref)]->result() : Fields{};
    auto speedup = [&](int base, std::size_t v) {
      if (base < 0) return 0.0;
      std::vector<double> ratios;
      for (int r = 0; r < reps; ++r) ratios.push_back(times[base][r] / times[v][r]);
      return median(ratios);
    };
    for (std::size_t v = 0; v < n; ++v) {
      Row& row = local[v];
      row.repetitions = reps;
      row.placements = placements;
      row.times_s = times[v];
      row.time_per_iter_s = median(times[v]);
      row.time_min_s = *std::min_element(times[v].begin(), times[v].end());
      row.time_max_s = *std::max_element(times[v].begin(), times[v].end());
      row.gbps = row.bytes_per_iter / row.time_per_iter_s / 1e9;
      row.effective_gbps = row.min_bytes_per_iter / row.time_per_iter_s / 1e9;
      std::vector<double> fractions;
      for (int r = 0; r < reps; ++r)
        fractions.push_back(row.bytes_per_iter / times[v][r] / 1e9 / triads[r]);
      row.pct_stream = 100.0 * median(fractions);
      row.stream_gbps_alongside = median(triads);
      row.speedup_vs_unfused = speedup(unfused, v);
      row.speedup_vs_kokkos = speedup(ref, v);
      row.speedup_vs_petsc = speedup(petsc, v);
      if (ref < 0) {
        row.status = "FAIL";
        row.message = "no hand-written `kokkos` variant to compare with";
        continue;
      }
      row.max_rel_diff =
          compare(int(v) == ref ? reference : variants[v]->result(), reference, row.worst_field);
      if (!(row.max_rel_diff <= workload.tolerance)) {
        row.status = "FAIL";
        std::ostringstream m;
        m << workload.name << "/" << row.variant << ": field '" << row.worst_field
          << "' differs from the hand-written result by " << row.max_rel_diff
          << " (relative), more than the tolerance " << workload.tolerance;
        row.message = m.str();
      }
    }
    rows.insert(rows.end(), local.begin(), local.end());
  }
  return rows;
}

std::vector<CompileCost> compile_costs(const std::string& dir) {
  std::vector<CompileCost> costs;
  std::error_code error;
  if (dir.empty()) return costs;
  const std::string suffix = ".seconds";
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    CompileCost cost = compile_cost(dir, name.substr(0, name.size() - suffix.size()));
    if (cost.cpu_s >= 0) costs.push_back(cost);
  }
  std::sort(costs.begin(), costs.end(),
            [](const CompileCost& a, const CompileCost& b) { return a.file < b.file; });
  return costs;
}

}  // namespace kfuse::bench
