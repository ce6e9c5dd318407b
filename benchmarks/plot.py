#!/usr/bin/env python3
"""Charts of a kfuse-bench run (Debian's python3-matplotlib, Agg backend).

    benchmarks/plot.py results/bench.json results/

Writes into the output folder:
  speedup.png      time ratio unfused/variant per workload and variant (log scale), with
                   Diffuse's published geo-mean (1.86x over unfused) as a reference line
  stream.png       achieved bandwidth of each variant as % of the STREAM triad measured
                   in the same run (roofline-style: 100% is the memory-bandwidth bound)
  kernels.png      kernels per iteration (counted), log scale
  compile.png      compile time (CPU seconds) of each workload's kfuse and hand-written file
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

VARIANT_ORDER = ["fused", "per_statement", "unfused", "kokkos", "kokkos_kernels", "petsc"]
COLOURS = {
    "fused": "#1f77b4",
    "per_statement": "#ff7f0e",
    "unfused": "#7f7f7f",
    "kokkos": "#2ca02c",
    "kokkos_kernels": "#9467bd",
    "petsc": "#d62728",
}
DIFFUSE_GEOMEAN_OVER_UNFUSED = 1.86


def load(path):
    with open(path) as f:
        rows = json.load(f)
    if isinstance(rows, dict):  # tolerate {"rows": [...]}
        rows = rows.get("rows", [])
    return rows


def grouped(rows, key):
    workloads = []
    for r in rows:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    variants = [v for v in VARIANT_ORDER if any(r["variant"] == v for r in rows)]
    variants += sorted({r["variant"] for r in rows} - set(variants))
    table = {(r["workload"], r["variant"]): r.get(key) for r in rows}
    return workloads, variants, table


def bars(ax, workloads, variants, table, log=False):
    width = 0.8 / max(1, len(variants))
    for k, v in enumerate(variants):
        xs, ys = [], []
        for i, w in enumerate(workloads):
            y = table.get((w, v))
            if isinstance(y, (int, float)) and y is not None and (y > 0 or not log):
                xs.append(i + (k - (len(variants) - 1) / 2) * width)
                ys.append(y)
        ax.bar(xs, ys, width, label=v, color=COLOURS.get(v))
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.3g}", (x, y), ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads, rotation=15)
    if log:
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def title(rows, what):
    ranks = rows[0].get("ranks", "?") if rows else "?"
    stream = rows[0].get("stream_gbps", 0) if rows else 0
    return f"kfuse-bench: {what} ({ranks} rank(s), STREAM triad {stream:.1f} GB/s)"


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = load(argv[1])
    out = argv[2]
    os.makedirs(out, exist_ok=True)
    if not rows:
        print("plot.py: no rows", file=sys.stderr)
        return 1

    workloads, variants, table = grouped(rows, "speedup_vs_unfused")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    bars(ax, workloads, variants, table, log=True)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(DIFFUSE_GEOMEAN_OVER_UNFUSED, color="#d62728", linestyle="--", linewidth=0.8,
               label="Diffuse geo-mean 1.86x")
    fused = [table[(w, "fused")] for w in workloads if table.get((w, "fused"))]
    if fused:
        geo = math.exp(sum(math.log(x) for x in fused) / len(fused))
        ax.axhline(geo, color=COLOURS["fused"], linestyle=":", linewidth=0.8,
                   label=f"fused geo-mean {geo:.2f}x")
    ax.legend(fontsize=8)
    ax.set_ylabel("speedup over unfused (time ratio)")
    ax.set_title(title(rows, "speedup over unfused"), fontsize=10)
    save(fig, out, "speedup.png")

    workloads, variants, table = grouped(rows, "pct_stream")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    bars(ax, workloads, variants, table)
    ax.axhline(100.0, color="black", linestyle="--", linewidth=0.8)
    ax.set_ylabel("achieved GB/s, % of STREAM triad")
    ax.set_title(title(rows, "bandwidth vs STREAM (model bytes / time)"), fontsize=10)
    save(fig, out, "stream.png")

    workloads, variants, table = grouped(rows, "kernels_per_iter")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    bars(ax, workloads, variants, table, log=True)
    ax.set_ylabel("kernels per iteration (counted)")
    ax.set_title(title(rows, "kernels per iteration"), fontsize=10)
    save(fig, out, "kernels.png")

    compile_rows = [r for r in rows if r.get("variant") in ("fused", "kokkos") and r.get("compile_s")]
    if compile_rows:
        for r in compile_rows:
            r["compile_label"] = "kfuse file" if r["variant"] == "fused" else "hand-written file"
        workloads, _, table = grouped(compile_rows, "compile_s")
        table = {(w, "kfuse file" if v == "fused" else "hand-written file"): s
                 for (w, v), s in table.items()}
        fig, ax = plt.subplots(figsize=(9, 4.8))
        bars(ax, workloads, ["kfuse file", "hand-written file"], table)
        ax.set_ylabel("compile time, CPU seconds")
        ax.set_title(title(rows, "compile time per source file"), fontsize=10)
        save(fig, out, "compile.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
