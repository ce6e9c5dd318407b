#!/usr/bin/env python3
"""Nsight Compute's raw CSV of one kfuse-bench run as a markdown table, a row per kernel.

Usage: ncu-table.py WORKLOAD CSV   (scripts/gpu-check.sh writes the CSV: ncu --csv --page raw
--print-units base --log-file CSV ...). Rows in order of first launch; a kernel launched more
than once shows its mean. A kernel is named by its kind (a kfuse group kernel: its stores, sums
and sparse products; a hand-written one: its functor), as kfuse-bench --kernel-times labels
cannot be read from the kernel's name; its time tells the two tables' rows apart.
"""
import csv
import re
import sys

METRICS = {
    "us": "gpu__time_duration.sum",
    "read": "dram__bytes_read.sum",
    "write": "dram__bytes_write.sum",
    "l2_hit": "lts__t_sector_hit_rate.pct",
    "occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "issue": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "registers": "launch__registers_per_thread",
}
# Functors of the hand-written code's loops that wrap the one that names the kernel.
WRAPPERS = {"PointSums", "SumsOf", "Sums", "Chunked", "RowSums", "RowsFrom", "ListedRows", "Csr"}


def template_part(name):
    """The name without its trailing parameter list, which repeats the template arguments."""
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i]
    return name


def kernel_tag(name):
    name = template_part(name)
    kind = "reduce" if "ParallelReduce" in name else "for"
    if "GroupKernel" in name:
        parts = [f"{name.count('StoreView<')} stores"]
        sums = name.count("Accumulate<")
        if sums:
            parts.append(f"{sums} sums")
        if "SparseRowRead" in name:
            parts.append(f"{name.count('SparseRowRead<')} A*x")
        if "OffsetRead<" in name:
            parts.append("stencil")
        if "RowListKernel<" in name:
            parts.append("listed rows")
        return f"kfuse {kind} ({', '.join(parts)})"
    for functor in re.findall(r"kfuse::bench::(?:(?:\w+|\(anonymous namespace\))::)*(\w+)", name):
        if functor not in WRAPPERS and functor != "hand":
            return f"hand {kind} {functor}"
    return f"{kind} {name[:60]}"


def main():
    workload, path = sys.argv[1], sys.argv[2]
    with open(path, newline="", errors="replace") as f:
        lines = [line for line in f if not line.startswith("==")]
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"ncu-table: no kernel rows in {path}")
    reader = csv.DictReader(lines[start:])
    rows = [r for r in reader if r.get("ID", "").isdigit()]  # the units row has no ID
    if not rows:
        sys.exit(f"ncu-table: no kernel rows in {path}")

    def value(row, key):
        try:
            return float(row[METRICS[key]].replace(",", ""))
        except (KeyError, ValueError):
            return None

    kernels = {}  # full name -> [tag, launches, block, grid, sums of each metric]
    for r in rows:
        name = r.get("Kernel Name", "?")
        k = kernels.setdefault(name, {"tag": kernel_tag(name), "n": 0, "grid": r.get("Grid Size", ""),
                                      "block": r.get("Block Size", ""), "sum": {}})
        k["n"] += 1
        for key in METRICS:
            v = value(r, key)
            if v is not None:
                k["sum"][key] = k["sum"].get(key, 0.0) + v

    def mean(k, key, scale=1.0, digits=0):
        if key not in k["sum"]:
            return "-"
        return f"{k['sum'][key] / k['n'] * scale:.{digits}f}"

    print(f"### {workload}: Nsight Compute, a repetition of 2 iterations\n")
    print("| kernel | launches | grid x block | registers | us | DRAM read MB | DRAM write MB | "
          "GB/s | L2 hit | occupancy | issue |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in kernels.values():
        s, n = k["sum"], k["n"]
        gbps = "-"
        if s.get("us"):
            gbps = f"{(s.get('read', 0) + s.get('write', 0)) / s['us']:.0f}"  # bytes / ns
        print(f"| {k['tag']} | {n} | {k['grid']} x {k['block']} | {mean(k, 'registers')} | "
              f"{mean(k, 'us', 1e-3, 1)} | {mean(k, 'read', 1e-6, 1)} | {mean(k, 'write', 1e-6, 1)} | "
              f"{gbps} | {mean(k, 'l2_hit')}% | {mean(k, 'occupancy')}% | {mean(k, 'issue')}% |")
    print()


if __name__ == "__main__":
    main()
