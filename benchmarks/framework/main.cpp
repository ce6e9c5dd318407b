// kfuse-bench: the benchmark suite's driver (see docs/benchmarks.md).
//
//   mpirun -np 2 kfuse-bench [--workload REGEX[,REGEX...]] [--variant ...] [--size N]
//                            [--iterations K] [--repetitions R] [--placements P] [--nit M]
//                            [--cache-size BYTES]
//                            [--json FILE] [--list]
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "report.hpp"
#include "runner.hpp"
#include "stream.hpp"

#ifndef KFUSE_BENCH_COMPILE_TIMES_DIR
#define KFUSE_BENCH_COMPILE_TIMES_DIR ""
#endif

namespace {

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream in(item);
    std::string part;
    while (std::getline(in, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

int run(int argc, char** argv) {
  kfuse::Environment env(argc, argv);
  const kfuse::Comm comm = env.comm();
  kfuse::bench::Options options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
  options.compile_times_dir = KFUSE_BENCH_COMPILE_TIMES_DIR;

  CLI::App app{"kfuse-bench: fused vs per-statement vs unfused vs hand-written Kokkos"};
  std::vector<std::string> workloads, variants;
  bool list = false;
  app.add_option("-w,--workload", workloads,
                 "workloads to run: regular expressions matching whole names, comma-separated "
                 "(default: all)");
  app.add_option("--variant", variants,
                 "variants to run, same syntax (the hand-written `kokkos` one always runs: it is "
                 "the reference)");
  app.add_option("-s,--size", options.size,
                 "size knob for every workload (N options; n for n x n grids); default: each "
                 "workload's own")
      ->check(CLI::PositiveNumber);
  app.add_option("-i,--iterations", options.iterations,
                 "iterations per timed repetition (default: each workload's own)")
      ->check(CLI::PositiveNumber);
  app.add_option("-r,--repetitions", options.repetitions,
                 "timed rounds of each workload (default: at least 20, more for a quick "
                 "workload: as many as fill 30 s, at most 100)")
      ->check(CLI::PositiveNumber);
  app.add_option("--placements", options.placements,
                 "times each workload's variants are made anew on fresh memory, the repetitions "
                 "shared out among them (at most one repetition each)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--nit", options.nit, "cfd: pressure-Poisson sweeps per time step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--cache-size", options.cache_bytes,
                 "last-level cache on each node, e.g. 32MiB (default: sysfs; where sysfs does "
                 "not say, measured with the triad)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber);
  app.add_option("--stream-size", options.stream_elements,
                 "STREAM triad: doubles per array and rank (default: the fewest, at least 2^23, "
                 "that put the three arrays at 4x the last-level cache)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", options.json, "write the rows as JSON to this file");
  app.add_option("--compile-times", options.compile_times_dir,
                 "folder of <source>.seconds files left by the build")
      ->capture_default_str();
  app.add_flag("--kernel-times", options.kernel_times,
               "after the timing, run each variant once more with a fence around every kernel and "
               "print where an iteration's time goes, kernel by kernel (rank 0)");
  app.add_flag("--list", list, "list the workloads and their variants, then exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = comm.rank() == 0 ? app.exit(e) : (e.get_exit_code());
    return code;
  }
  options.workloads = split_commas(workloads);
  options.variants = split_commas(variants);

  const auto chosen = kfuse::bench::selected_workloads(options);
  if (list) {
    if (comm.rank() == 0)
      for (const auto& w : kfuse::bench::workloads()) {
        std::printf("%-16s %s (default size %lld, %d iterations)\n  variants:", w.name.c_str(),
                    w.description.c_str(), static_cast<long long>(w.default_size),
                    w.default_iterations);
        for (const auto& v : kfuse::bench::variants_of(w.name)) std::printf(" %s", v.name.c_str());
        std::printf("\n");
      }
    return 0;
  }
  if (chosen.empty()) {
    if (comm.rank() == 0) std::fprintf(stderr, "kfuse-bench: no workload matches --workload\n");
    return 2;
  }

  if (comm.rank() == 0) std::fprintf(stderr, "[kfuse-bench] STREAM triad on %d rank(s)\n", comm.size());
  const auto cache = kfuse::bench::last_level_cache(comm, options.cache_bytes);
  if (comm.rank() == 0)
    std::fprintf(stderr, "[kfuse-bench] last-level cache: %.0f MiB a node (%s)\n",
                 double(cache.bytes) / (1 << 20), cache.source.c_str());
  const kfuse::bench::StreamTriad triad(comm, options.stream_elements, cache);
  auto stream = triad.measure(options.stream_repetitions);
  stream.update_gbps = triad.measure_update(options.stream_repetitions);
  stream.streamed_gbps = triad.measure_streamed(options.stream_repetitions);
  if (comm.rank() == 0)
    std::fprintf(stderr,
                 "[kfuse-bench] STREAM triad: %.1f GB/s, in-place update: %.1f GB/s, triad with "
                 "streaming stores: %.1f GB/s\n",
                 stream.gbps, stream.update_gbps, stream.streamed_gbps);

  const auto rows = kfuse::bench::run_suite(options, comm, stream, triad);
  int failed = 0;
  for (const auto& r : rows) failed += r.status == "ok" ? 0 : 1;
  if (comm.rank() == 0) {
    kfuse::bench::write_markdown(std::cout, rows, stream, options);
    std::cout.flush();
    if (!options.json.empty()) kfuse::bench::write_json(options.json, rows, options);
    if (failed)
      std::fprintf(stderr, "kfuse-bench: %d variant(s) disagree with the hand-written result\n",
                   failed);
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kfuse-bench: %s\n", e.what());
    return 1;
  }
}
