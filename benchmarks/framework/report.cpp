#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

namespace kfuse::bench {

namespace {

std::string format(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ratio(double v) { return v > 0 ? format("%.2fx", v) : "—"; }

std::string mebibytes(double bytes) { return format("%.0f MiB", bytes / (1024.0 * 1024.0)); }

/// % STREAM where the working set is beyond the cache, `cache` where not.
std::string pct_stream(const Row& r) {
  if (r.bytes_per_iter <= 0) return "—";
  return r.beyond_cache ? format("%.0f%%", r.pct_stream) : "cache";
}

std::string count(double v) {
  return v == std::floor(v) ? format("%.0f", v) : format("%.2f", v);
}

/// Counted kernels per iteration; the declared number in parentheses where
/// none was counted but the variant declares some (library peers).
std::string kernels(const Row& r, bool& declared) {
  if (r.kernels_per_iter > 0 || r.declared.kernels <= 0) return count(r.kernels_per_iter);
  declared = true;
  return "(" + count(r.declared.kernels) + ")";
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / double(v.size()));
}

/// "20 repetitions", or each workload's count where they differ.
std::string repetitions_text(const std::vector<Row>& rows) {
  std::map<std::string, int> of;  // by workload, in name order
  for (const Row& r : rows) of[r.workload] = r.repetitions;
  bool same = true;
  for (const auto& [workload, reps] : of) same = same && reps == of.begin()->second;
  if (of.empty() || same)
    return std::to_string(of.empty() ? 0 : of.begin()->second) + " repetitions";
  std::string text = "each workload's repetitions (";
  for (const auto& [workload, reps] : of)
    text += (text.back() == '(' ? "" : ", ") + workload + " " + std::to_string(reps);
  return text + ")";
}

std::string cost_text(const CompileCost& c) {
  if (c.cpu_s < 0) return "—";
  return format("%.1f", c.cpu_s) + (c.peak_mib > 0 ? format(" (%.0f)", c.peak_mib) : "");
}

/// Each workload's kfuse programs and hand-written twin, one translation unit
/// each, and the compile samples (benchmarks/compile/).
void write_compile_table(std::ostream& out, const std::vector<Row>& rows,
                         const std::vector<CompileCost>& recorded) {
  if (recorded.empty()) return;
  out << "\nCompile cost: CPU seconds of the compiler (peak MiB), one translation unit each, "
         "as kfuse-bench was built\n\n"
         "| workload | fused | per_statement | unfused | kokkos | fused / kokkos |\n"
         "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (k > 0 && rows[k].workload == rows[k - 1].workload) continue;
    std::map<std::string, CompileCost> of;
    for (const Row& r : rows)
      if (r.workload == rows[k].workload) of[r.variant] = r.compile;
    const double fused = of["fused"].cpu_s, hand = of["kokkos"].cpu_s;
    out << "| " << rows[k].workload << " | " << cost_text(of["fused"]) << " | "
        << cost_text(of["per_statement"]) << " | " << cost_text(of["unfused"]) << " | "
        << cost_text(of["kokkos"]) << " | " << ratio(fused > 0 && hand > 0 ? fused / hand : 0)
        << " |\n";
  }
  const std::string samples = KFUSE_BENCH_COMPILE_SAMPLES;
  std::string listed;
  for (const CompileCost& c : recorded)
    if (("," + samples + ",").find("," + c.file + ",") != std::string::npos)
      listed += (listed.empty() ? "" : ", ") + c.file + " " + cost_text(c);
  if (!listed.empty())
    out << "\nCompile samples (benchmarks/compile/, files as a user writes them, built with the "
           "same flags): "
        << listed << ".\n";
}

/// --kernel-times: per workload and variant, each kernel's share of a fenced iteration.
void write_kernel_times(std::ostream& out, const std::vector<Row>& rows) {
  bool any = false;
  for (const Row& r : rows) any = any || r.fenced_time_per_iter_s > 0;
  if (!any) return;
  out << "\nWhere the time goes (--kernel-times): rank 0, every kernel fenced before and after, "
         "so launches do not overlap; `outside kernels` is the rest of the fenced iteration "
         "(host work, MPI, launch gaps).\n";
  const std::string* workload = nullptr;  // whose table is open
  for (const Row& r : rows) {
    if (r.fenced_time_per_iter_s <= 0) continue;  // not timed kernel by kernel
    if (!workload || r.workload != *workload) {
      workload = &r.workload;
      out << "\n### " << r.workload << " (" << r.size << ")\n\n"
          << "| variant | kernel | launches/iter | us/launch | ms/iter | share |\n"
             "| --- | --- | ---: | ---: | ---: | ---: |\n";
    }
    const double iter = r.fenced_time_per_iter_s, n = r.iterations;
    double in_kernels = 0;
    for (const KernelTime& t : r.kernel_times) {
      in_kernels += t.seconds / n;
      out << "| " << r.variant << " | " << t.label << " | " << count(double(t.launches) / n)
          << " | " << format("%.1f", 1e6 * t.seconds / double(t.launches)) << " | "
          << format("%.3f", 1e3 * t.seconds / n) << " | "
          << format("%.0f%%", 100 * t.seconds / n / iter) << " |\n";
    }
    out << "| " << r.variant << " | outside kernels | | | "
        << format("%.3f", 1e3 * (iter - in_kernels)) << " | "
        << format("%.0f%%", 100 * (iter - in_kernels) / iter) << " |\n";
  }
}

}  // namespace

void write_markdown(std::ostream& out, const std::vector<Row>& rows, const StreamResult& stream,
                    const Options& options) {
  const int ranks = rows.empty() ? 1 : rows.front().ranks;
  out << "\n## kfuse-bench: " << ranks << " rank(s), STREAM triad " << format("%.1f", stream.gbps)
      << " GB/s (" << stream.elements_per_rank << " doubles per array and rank), last-level cache "
      << mebibytes(double(stream.cache.bytes)) << " (" << stream.cache.source << ")\n\n";
  out << "| workload | size | variant | time/iter (ms) | kernels/iter | allreduces/iter | "
         "exchanges/iter | GB/s | % STREAM | vs unfused | vs kokkos | vs petsc | max rel diff | "
         "compile (s) | status |\n";
  out << "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
         "---: | --- |\n";
  bool declared_kernels = false;
  for (const Row& r : rows) {
    out << "| " << r.workload << " | " << r.size << " | " << r.variant << " | "
        << format("%.3f", r.time_per_iter_s * 1e3) << " | " << kernels(r, declared_kernels) << " | "
        << count(r.allreduces_per_iter) << " | " << count(r.exchanges_per_iter) << " | "
        << (r.bytes_per_iter > 0 ? format("%.1f", r.gbps) : "—") << " | " << pct_stream(r) << " | "
        << ratio(r.speedup_vs_unfused) << " | " << ratio(r.speedup_vs_kokkos) << " | "
        << ratio(r.speedup_vs_petsc) << " | " << format("%.1e", r.max_rel_diff) << " | "
        << (r.compile.cpu_s >= 0 ? format("%.1f", r.compile.cpu_s) : "—") << " | " << r.status
        << " |\n";
  }

  out << "\nGB/s: model bytes per iteration (reads and writes counted separately, as STREAM "
         "does) over the time. % STREAM: only where the working set (the distinct bytes an "
         "iteration touches) is at least 4x the last-level cache on each node, `cache` elsewhere (";
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (k == 0 || rows[k].workload != rows[k - 1].workload)
      out << (k ? ", " : "") << rows[k].workload << " " << mebibytes(rows[k].working_set_bytes);
  out << "); the median over the repetitions of the variant's GB/s over the triad run right "
         "after that repetition (GB/s of those triads, median:";
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (k == 0 || rows[k].workload != rows[k - 1].workload)
      out << (k ? ", " : " ") << rows[k].workload << " "
          << format("%.1f", rows[k].stream_gbps_alongside);
  out << ")";
  if (stream.update_gbps > 0)
    out << ". On a CPU, kernels that update arrays in place (`x += a p`) skip the triad's "
           "write-allocate read and may exceed 100%: the in-place update `a += s c`, counted "
           "alike, ran at "
        << format("%.1f", stream.update_gbps) << " GB/s, "
        << format("%.2f", stream.update_gbps / stream.gbps) << "x the triad, at the start";
  if (stream.streamed_gbps > 0)
    out << "; stencils that store arrays they do not read stream them (no write-allocate read, "
           "docs/user-guide.md) and may exceed it too: the triad with streaming stores ran at "
        << format("%.1f", stream.streamed_gbps) << " GB/s, "
        << format("%.2f", stream.streamed_gbps / stream.gbps) << "x";
  out << ".\n";

  // Library peers' builds: one footnote per distinct build, naming its variants.
  std::map<std::string, std::string> variants_of_build;  // build text -> "`a`, `b`"
  for (const Row& r : rows) {
    if (r.build.empty()) continue;
    std::string text;
    for (const auto& [key, value] : r.build)
      text += (text.empty() ? "" : "; ") + key + ": " + value;
    std::string& names = variants_of_build[text];
    const std::string name = "`" + r.variant + "`";
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
  }
  for (const auto& [text, names] : variants_of_build)
    out << "\n" << names << " built as: " << text << ".\n";

  if (declared_kernels)
    out << "\n(n): kernels per iteration as the variant declares them; its launches are not "
           "labelled `kfuse:` (Kokkos Kernels, PETSc), so none were counted.\n";

  // Summary: geometric means over workloads of the fused variant's ratios.
  std::vector<double> vs_unfused, vs_kokkos, vs_petsc;
  for (const Row& r : rows) {
    if (r.variant != "fused") continue;
    if (r.speedup_vs_unfused > 0) vs_unfused.push_back(r.speedup_vs_unfused);
    if (r.speedup_vs_kokkos > 0) vs_kokkos.push_back(r.speedup_vs_kokkos);
    if (r.speedup_vs_petsc > 0) vs_petsc.push_back(r.speedup_vs_petsc);
  }
  out << "\nfused, geometric mean over " << vs_unfused.size() << " workload(s): "
      << ratio(geomean(vs_unfused)) << " vs unfused, " << ratio(geomean(vs_kokkos))
      << " vs hand-written Kokkos (time ratio kokkos/fused)";
  if (!vs_petsc.empty()) out << ", " << ratio(geomean(vs_petsc)) << " vs PETSc";
  out << ".\nTimes: median over " << repetitions_text(rows)
      << " of the slowest rank's time per iteration; ratios: medians of "
         "per-repetition ratios (variants interleaved, each round starting one variant later; "
         "the variants made anew on fresh memory "
      << (rows.empty() ? 0 : rows.front().placements) << " time(s), the repetitions shared out).\n";
  if (!options.command_line.empty()) out << "Command: `" << options.command_line << "`\n";
  write_compile_table(out, rows, compile_costs(options.compile_times_dir));
  write_kernel_times(out, rows);
  for (const Row& r : rows)
    if (r.status != "ok") out << "\nFAIL: " << r.message << "\n";
}

void write_json(const std::string& path, const std::vector<Row>& rows, const Options& options) {
  nlohmann::json all = nlohmann::json::array();
  auto optional = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const Row& r : rows) {
    nlohmann::json j;
    j["workload"] = r.workload;
    j["variant"] = r.variant;
    j["ranks"] = r.ranks;
    j["size"] = r.size;
    j["size_knob"] = r.size_knob;
    j["nit"] = r.nit;
    j["iterations"] = r.iterations;
    j["repetitions"] = r.repetitions;
    j["placements"] = r.placements;
    j["time_per_iter_s"] = r.time_per_iter_s;
    j["time_min_s"] = r.time_min_s;
    j["time_max_s"] = r.time_max_s;
    j["times_s"] = r.times_s;
    j["kernels_per_iter"] = r.kernels_per_iter;
    j["kernels_declared"] = r.declared.kernels;
    j["halo_kernels_per_iter"] = r.halo_kernels_per_iter;
    j["allreduces_per_iter"] = r.allreduces_per_iter;
    j["allreduces_counted"] = r.allreduces_counted;
    j["allreduces_declared"] = r.declared.allreduces;
    j["exchanges_per_iter"] = r.exchanges_per_iter;
    j["bytes_per_iter"] = r.bytes_per_iter;
    j["gbps"] = r.gbps;
    j["pct_stream"] = r.beyond_cache && r.bytes_per_iter > 0 ? nlohmann::json(r.pct_stream)
                                                             : nlohmann::json(nullptr);
    j["working_set_bytes"] = r.working_set_bytes;
    j["cache_bytes"] = r.cache_bytes;
    j["cache_source"] = r.cache_source;
    j["beyond_cache"] = r.beyond_cache;
    j["min_bytes_per_iter"] = r.min_bytes_per_iter;
    j["effective_gbps"] = r.effective_gbps;
    j["stream_gbps"] = r.stream_gbps;
    j["stream_update_gbps"] = r.stream_update_gbps;
    j["stream_streamed_gbps"] = r.stream_streamed_gbps;
    j["stream_gbps_alongside"] = r.stream_gbps_alongside;
    j["speedup_vs_unfused"] = optional(r.speedup_vs_unfused);
    j["speedup_vs_kokkos"] = optional(r.speedup_vs_kokkos);
    j["speedup_vs_petsc"] = optional(r.speedup_vs_petsc);
    j["max_rel_diff"] = std::isfinite(r.max_rel_diff) ? nlohmann::json(r.max_rel_diff)
                                                      : nlohmann::json("inf");
    j["worst_field"] = r.worst_field;
    j["compile_s"] =
        r.compile.cpu_s >= 0 ? nlohmann::json(r.compile.cpu_s) : nlohmann::json(nullptr);
    j["compile_peak_mib"] =
        r.compile.peak_mib > 0 ? nlohmann::json(r.compile.peak_mib) : nlohmann::json(nullptr);
    j["compile_file"] = r.compile.file;
    j["status"] = r.status;
    if (!r.message.empty()) j["message"] = r.message;
    if (!r.build.empty()) j["build"] = r.build;
    if (r.fenced_time_per_iter_s > 0) {
      j["kernel_times"] = nlohmann::json::array();  // a library peer may launch none
      j["fenced_time_per_iter_s"] = r.fenced_time_per_iter_s;
      for (const KernelTime& t : r.kernel_times)
        j["kernel_times"].push_back({{"label", t.label},
                                     {"launches_per_iter", double(t.launches) / r.iterations},
                                     {"seconds_per_iter", t.seconds / r.iterations}});
    }
    j["command"] = options.command_line;
    all.push_back(j);
  }
  nlohmann::json compile = nlohmann::json::array();
  for (const CompileCost& c : compile_costs(options.compile_times_dir))
    compile.push_back(
        {{"file", c.file},
         {"cpu_s", c.cpu_s},
         {"peak_mib", c.peak_mib > 0 ? nlohmann::json(c.peak_mib) : nlohmann::json(nullptr)}});
  std::ofstream out(path);
  out << nlohmann::json{{"rows", all}, {"compile", compile}}.dump(2) << "\n";
  if (!out) throw std::runtime_error("kfuse-bench: cannot write " + path);
}

}  // namespace kfuse::bench
