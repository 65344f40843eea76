#!/usr/bin/env python3
"""Draws the figures the docs embed from measured CSV files.

    plot.py --out DIR FILE.csv [FILE.csv ...]

For every device found in the files it writes, into DIR:
    bandwidth_<gpu>.png    GB/s vs n, best variant of every step, CUB and the floor (int and float)
    segmented_<gpu>.png    step 06: GB/s against the row length, every variant, CUB, the floor
    latency_<gpu>.png      median microseconds vs n, log-log, the same curves (int and float)
    ladder_<gpu>.png       every step and variant at the largest n, CUB and the floor, with % of peak
    warp_unroll_<gpu>.png  step00, step01's three variants, step02 at 2^24 and 2^30
    scaling_<gpu>.png      step 08 (several GPUs): GB/s vs n per GPU, one line per (variant, GPUs)
    normalize_<gpu>.png    step 07's normalization: median microseconds vs n, log-log, every
                           variant, CUB (DeviceReduce::Max + a scale kernel) and the copy floor
    clusters_<gpu>.png     step 09 (int): left, the segmented sum's GB/s against the row length
                           (auto, cluster_row, CUB DeviceSegmentedReduce, the floor); right, the
                           whole-array sum's median microseconds per launch vs n, log-log, from
                           batched_step09_clusters.csv (last_block, cluster_4, cluster_16,
                           one_cluster, the floor)
and headline.png: int GB/s vs n with the same curves, one panel per device (the README's figure).
"Best variant" is the variant of the step that is fastest at the largest n. The floor is a
plain vectorized read of the same n elements, timed in every run: the reference each x floor
divides by, not a proven bound (read_probe and step 09's packed_rows measured faster).
Every program times CUB and the floor: a figure of one program takes them from that program's
run (the rows' "run", see load). The figures show launches timed alone (batch 1), except the
clusters figure's right panel: for it a file's batched_<name>.csv beside it (100 launches back
to back per event pair) is read too, whether or not it is named.
"""
import argparse
import concurrent.futures
import functools
from collections import defaultdict
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

STEP_COLORS = {"step00": "#8c564b", "step01": "#e377c2", "step02": "#7f7f7f", "step03": "#bcbd22",
               "step04": "#17becf", "step05": "#d62728", "step06": "#9467bd", "step07": "#2ca02c",
               "step08": "#ff7f0e", "step09": "#8B008B", "step10": "#bc8f8f", "cub": "#1f77b4", "floor": "black"}
# The two references every run times: how the curves draw them.
REFERENCE_STYLE = {results.CUB: dict(label=results.CUB_LABEL, color=STEP_COLORS["cub"], lw=2.5, ls="--"),
                   results.FLOOR: dict(label=results.FLOOR_LABEL, color=STEP_COLORS["floor"], lw=1.5, ls="--")}


BATCHED_PREFIX = "batched_"  # results/<gpu>/batched_<program>.csv: the harness's --batch rows


def with_runs(rows):
    """The rows (copies) with "run": the program whose run timed the row. A program's own row
    is its step; CUB's and the floor's rows, which every program writes just before its own
    rows of the same size, belong to the next program row in file order (or the last one
    before them, if none follows). A row that has "run" already keeps it."""
    out = [dict(r) for r in rows]
    program = None
    for r in reversed(out):
        if not results.is_reference(r["step"]):
            program = r["step"]
        r.setdefault("run", r["step"] if not results.is_reference(r["step"]) else program)
    program = None
    for r in out:
        if r["run"] is None:
            r["run"] = program
        elif not results.is_reference(r["step"]):
            program = r["step"]
    return out


def load(paths):
    """results.load of each file, its rows tagged with their program's "run" (with_runs, file
    by file: one file may hold several programs' runs, as run_all.sh's does)."""
    return [r for path in paths for r in with_runs(results.load([path]))]


def batched_companions(paths):
    """The batched_<name>.csv files beside the given <name>.csv files, those not given."""
    given = {os.path.realpath(p) for p in paths}
    found = []
    for p in paths:
        name = os.path.basename(p)
        if name.startswith(BATCHED_PREFIX):
            continue
        q = os.path.join(os.path.dirname(p), BATCHED_PREFIX + name)
        if os.path.isfile(q) and os.path.realpath(q) not in given:
            given.add(os.path.realpath(q))
            found.append(q)
    return found


def log2_label(n):
    e = n.bit_length() - 1
    return f"2^{e}" if n == 1 << e else str(n)


def curve_style(step, variant):
    """Line label and style: a step's variant solid in its step's colour, CUB and the floor dashed."""
    if (step, variant) in REFERENCE_STYLE:
        return REFERENCE_STYLE[(step, variant)]
    return dict(label=f"{results.short(step)} {variant}", color=STEP_COLORS.get(results.short(step)), lw=1.5, ls="-")


def draw_curves(ax, c, keys, scale=1.0):
    """One line per key of the curves c that has data, values multiplied by scale."""
    for key in keys:
        if key in c:
            by_n = c[key]
            ax.plot(list(by_n), [scale * v for v in by_n.values()], marker="o", ms=3, **curve_style(*key))


def drawn_keys(rows, device, dtype):
    """The bandwidth and latency figures' curves: each step's best variant, CUB, the floor."""
    return results.plotted_variants(rows, device, dtype) + [results.CUB, results.FLOOR]


def draw_bandwidth(ax, rows, device, dtype):
    """GB/s against n: for every step the variant that is fastest at the largest n, CUB and the floor."""
    c = results.curves(rows, device, dtype)
    n_max = max(max(by_n) for by_n in c.values())
    draw_curves(ax, c, drawn_keys(rows, device, dtype))
    pk = results.peak(rows, device)
    ax.axhline(pk, color="black", lw=0.8, ls=":")
    ax.text(n_max, pk * 1.01, f"theoretical peak {pk:.0f} GB/s",
            fontsize=8, va="bottom", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"n ({dtype} elements)")
    ax.set_ylabel("GB/s (n x 4 B / median time)")
    ax.set_ylim(0, pk * 1.1)
    ax.grid(alpha=0.3)
    ax.set_title(f"{device}, {dtype}")


def dtype_figure(path, draw, title=None):
    """One figure of two panels, int and float, each drawn by draw(ax, dtype); the legend in
    the first panel."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, dtype in zip(axes, ("int", "float")):
        draw(ax, dtype)
    axes[0].legend(fontsize=8, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def log_log_time_axes(ax, xlabel, title):
    """Median microseconds against n, both axes logarithmic."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("median time (µs, log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(title)


def bandwidth_figure(rows, device, path):
    dtype_figure(path, lambda ax, dtype: draw_bandwidth(ax, rows, device, dtype))
    return True


def draw_latency(ax, rows, device, dtype):
    """Median microseconds against n, log-log: the curves of the bandwidth figure. Where
    GB/s is tiny (small n) this shows what each launch really costs."""
    c = results.curves(rows, device, dtype, field="ms")
    draw_curves(ax, c, drawn_keys(rows, device, dtype), scale=1000.0)
    log_log_time_axes(ax, f"n ({dtype} elements)", f"{device}, {dtype}")


def latency_figure(rows, device, path):
    dtype_figure(path, lambda ax, dtype: draw_latency(ax, rows, device, dtype),
                 f"Latency: median time per call vs n, log-log ({device})")
    return True


def ladder_figure(rows, device, path, dtype="int"):
    c = results.curves(rows, device, dtype)
    n = max(max(by_n) for by_n in c.values())
    entries = [(s, v, by_n[n]) for (s, v), by_n in sorted(c.items()) if not results.is_reference(s) and n in by_n]
    entries += [(s, v, c[(s, v)][n]) for s, v in (results.CUB, results.FLOOR) if n in c.get((s, v), {})]
    pk = results.peak(rows, device)
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(entries) + 2), 5))
    names = {results.CUB: "CUB\nSum", results.FLOOR: "floor\nplain read"}
    labels = [names.get((s, v), f"{results.short(s)}\n{v}") for s, v, _ in entries]
    bars = ax.bar(range(len(entries)), [g for *_, g in entries],
                  color=[STEP_COLORS.get(results.short(s)) for s, *_ in entries])
    for bar, (_, _, g) in zip(bars, entries):
        ax.text(bar.get_x() + bar.get_width() / 2, g, f"{g:.0f}\n{100 * g / pk:.0f}%", ha="center", va="bottom", fontsize=7)
    ax.axhline(pk, color="black", lw=0.8, ls=":")
    ax.set_xticks(range(len(entries)), labels, fontsize=7)
    ax.set_ylabel("GB/s (n x 4 B / median time)")
    ax.set_ylim(0, pk * 1.15)
    ax.set_title(f"The ladder at n = {log2_label(n)} {dtype}, {device} (peak {pk:.0f} GB/s, dotted)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def warp_unroll_figure(rows, device, path, sizes=(1 << 24, 1 << 30), dtype="int"):
    """Bandwidth of step00, step01's variants (plain drawn hatched: its sum is wrong) and step02."""
    by_key = {}
    for r in rows:
        if r["device"] == device and r["dtype"] == dtype and r["n"] in sizes and r["step"][:6] in ("step00", "step01", "step02"):
            by_key.setdefault((r["step"], r["variant"]), {}).setdefault(r["n"], []).append(r)
    keys = sorted(k for k in by_key if k[0][:6] != "step02") + sorted(k for k in by_key if k[0][:6] == "step02")
    if not keys:
        return False
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(sizes)
    for j, n in enumerate(sizes):
        xs, ys, hatches = [], [], []
        for i, k in enumerate(keys):
            rs = by_key[k].get(n, [])
            if rs:
                xs.append(i + (j - (len(sizes) - 1) / 2) * width)
                ys.append(sorted(r["gbps"] for r in rs)[len(rs) // 2])
                hatches.append("//" if not all(r["verified"] for r in rs) else "")
        bars = ax.bar(xs, ys, width, label=f"n = {log2_label(n)}")
        for b, h, y in zip(bars, hatches, ys):
            b.set_hatch(h)
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(keys)), [f"{results.short(s)}\n{v}" for s, v in keys], fontsize=8)
    ax.set_ylabel("GB/s")
    ax.set_title(f"Unrolling the last warp, {dtype}, {device} (hatched: wrong sum)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# Step 08's curves in the scaling figure: (variant, colour); gpus=1 dashed, gpus=2 solid.
SCALING_VARIANTS = (("cub_1gpu", STEP_COLORS["cub"]), ("peer_atomic", "#2ca02c"), ("peer_barrier", "#d62728"),
                    ("nccl", "#9467bd"), ("nccl_mp", "#ff7f0e"))


def is_multi_gpu(row):
    return row["shape"].startswith("gpus=")


def scaling_figure(rows, device, path):
    """Step 08: aggregate GB/s (total n x 4 B / median) against n per GPU (total n / K),
    one line per (variant, number of GPUs), int and float panels; dotted: one and two
    GPUs' theoretical peak. Returns False (and writes nothing) without step 08 rows."""
    mine = [r for r in rows if r["device"] == device and is_multi_gpu(r) and r["verified"]]
    if not mine:
        return False
    # One GPU's peak from the one-GPU rows (% of peak is of K x one GPU's peak).
    one = max((r for r in mine if r["shape"] == "gpus=1" and r["pct_peak"] > 0), key=lambda r: r["pct_peak"], default=None)
    pk = one["gbps"] * 100.0 / one["pct_peak"] if one else None
    shapes = sorted({r["shape"] for r in mine}, key=lambda s: int(s.split("=", 1)[1]))
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, dtype in zip(axes, ("int", "float")):
        for shape in shapes:
            k = int(shape.split("=", 1)[1])
            c = results.curves(mine, device, dtype, shape=shape)
            for variant, color in SCALING_VARIANTS:
                for (step, v), by_n in sorted(c.items()):
                    if v != variant:
                        continue
                    ax.plot([n / k for n in by_n], list(by_n.values()), marker="o", ms=3, color=color,
                            ls="-" if k > 1 else "--", lw=1.8 if k > 1 else 1.2,
                            label=f"{variant}, {k} GPU{'s' if k > 1 else ''}")
        if pk:
            xmin = min(line.get_xdata()[0] for line in ax.get_lines()) if ax.get_lines() else 1
            for k in (1, 2):
                ax.axhline(k * pk, color="black", lw=0.8, ls=":")
                ax.text(xmin, k * pk * 1.01,
                        f"{k} x theoretical peak ({k * pk:.0f} GB/s)", fontsize=8, va="bottom")
            ax.set_ylim(0, 2 * pk * 1.1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"n per GPU ({dtype} elements; total n / number of GPUs)")
        ax.set_ylabel("aggregate GB/s (total n x 4 B / median time)")
        ax.grid(alpha=0.3)
        ax.set_title(f"{device}, {dtype}")
    axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, 0.93))
    fig.suptitle(f"Step 08: one sum over several GPUs, strong and weak scaling ({device}; dashed: 1 GPU, solid: 2 GPUs)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


STEP06 = "step06_cooperative_groups"


def segmented_figure(rows, device, path):
    """Step 06's sum per row: GB/s (matrix read + row sums written, over the median time)
    against the row length, one line per variant, CUB's DeviceSegmentedReduce and the floor;
    int and float panels. Only the 2^26-element sweep (the blog's 2^29 shape is a table), and
    CUB and the floor of step 06's own run (step 09's segmented sum times them at the same shapes)."""
    seg = [r for r in with_runs(rows) if r["device"] == device and r["shape"].startswith("cols=") and r["n"] == 1 << 26
           and r["verified"] and r["run"] == STEP06 and r["step"] in (STEP06, "cub", "floor")]
    if not seg:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, dtype in zip(axes, ("int", "float")):
        lines = defaultdict(dict)
        for r in seg:
            if r["dtype"] == dtype:
                lines[(r["step"], r["variant"])][int(r["shape"].split("=", 1)[1])] = r["gbps"]
        for (step, variant), by_cols in sorted(lines.items()):
            xs = sorted(by_cols)
            ref = step in ("cub", "floor")
            label = {"cub": "CUB DeviceSegmentedReduce::Sum",
                     "floor": f"floor ({results.FLOOR_VARIANT_LABELS.get(variant, variant)})"}.get(step, variant)
            ax.plot(xs, [by_cols[x] for x in xs], marker="o", ms=3, label=label, lw=2.5 if ref else 1.5,
                    ls="--" if ref else "-", color="black" if step == "floor" else None)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("row length (elements per row; 2^26 elements in all)")
        ax.set_ylabel("GB/s (matrix + row sums / median time)")
        ax.grid(alpha=0.3, which="both")
        ax.set_title(f"{device}, {dtype}")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Step 06: one sum per row, every variant and CUB ({device})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


NORMALIZE = "normalize"  # shape of step07_normalize's rows: an array in, an array out
NORMALIZE_REFERENCES = {("cub", "cub"): dict(label="CUB DeviceReduce::Max + scale", color=STEP_COLORS["cub"], lw=2.5, ls="--"),
                        ("floor", "copy"): dict(label="floor (plain copy)", color=STEP_COLORS["floor"], lw=1.5, ls="--")}
NORMALIZE_STYLES = {"two_pass": ":", "grid_sync": "-.", "stateful": "-", "stateful_slots": "-"}


def normalize_figure(rows, device, path):
    """Step 07's normalization (rows of shape 'normalize'): median microseconds against n,
    log-log, int and float panels, one line per variant beside CUB and the copy floor.
    Returns False (and draws nothing) when the device has no such rows."""
    if not any(r["device"] == device and r["shape"] == NORMALIZE for r in rows):
        return False

    def draw(ax, dtype):
        c = results.curves(rows, device, dtype, field="ms", shape=NORMALIZE)
        for key in sorted(c, key=lambda k: (k in NORMALIZE_REFERENCES, k)):
            style = NORMALIZE_REFERENCES.get(key) or dict(label=key[1], color=STEP_COLORS["step07"], lw=1.5,
                                                          ls=NORMALIZE_STYLES.get(key[1], "-"),
                                                          alpha=1.0 if key[1] == "stateful_slots" else 0.6)
            by_n = c[key]
            ax.plot(list(by_n), [1000.0 * v for v in by_n.values()], marker="o", ms=3, **style)
        log_log_time_axes(ax, f"n ({dtype} elements in, n floats out)", f"{device}, {dtype}")

    dtype_figure(path, draw, f"Normalization out = x / max|x|: median time vs n ({device})")
    return True


STEP09, STEP09_ROWS = "step09_clusters", "step09_cluster_rows"
SEGMENTED_N = 1 << 26  # the segmented sums' sweep: 2^26 elements in all, every row length
# The clusters figure's curves: (step, variant) -> style. CUB and the floor: REFERENCE_STYLE's.
CLUSTER_ROW_STYLES = {(STEP09_ROWS, "auto"): dict(label="auto (packed rows, a warp or a cluster per row)",
                                                  color=STEP_COLORS["step09"], lw=2, ls="-"),
                      (STEP09_ROWS, "cluster_row"): dict(label="cluster_row (a cluster of C blocks per row)",
                                                         color="#ff7f0e", lw=1.5, ls="-"),
                      results.CUB: dict(REFERENCE_STYLE[results.CUB], label="CUB DeviceSegmentedReduce::Sum"),
                      ("floor", "read_write"): dict(REFERENCE_STYLE[results.FLOOR], label="floor (read + write)")}
CLUSTER_STYLES = {(STEP09, "last_block"): dict(label="last_block (step 07's, no cluster)", color=STEP_COLORS["step07"],
                                               lw=2, ls="-"),
                  (STEP09, "cluster_4"): dict(label="cluster_4", color="#ff7f0e", lw=1.5, ls="-"),
                  (STEP09, "cluster_16"): dict(label="cluster_16", color=STEP_COLORS["step09"], lw=1.5, ls="-"),
                  (STEP09, "one_cluster"): dict(label="one_cluster (16 blocks, no partials)", color="#d62728",
                                                lw=1.5, ls="-."),
                  results.FLOOR: REFERENCE_STYLE[results.FLOOR]}


def no_data(ax, what):
    ax.text(0.5, 0.5, f"no {what} measured", transform=ax.transAxes, ha="center", va="center", fontsize=9)


def clusters_figure(rows, device, path, dtype="int"):
    """Step 09, two panels. Left: step09_cluster_rows, GB/s against the row length at 2^26
    elements, auto and cluster_row beside CUB's DeviceSegmentedReduce and the read + write
    floor of that same run. Right: step09_clusters, median microseconds per launch against n,
    log-log, from its batched rows (warm launches back to back; the largest batch measured,
    or the launches timed alone without such rows): last_block, cluster_4, cluster_16,
    one_cluster and the floor of that run. Returns False (and writes nothing) when the device
    has neither program's rows."""
    mine = [r for r in with_runs(rows) if r["device"] == device and r["dtype"] == dtype and r["verified"]]
    seg = [r for r in mine if r["run"] == STEP09_ROWS and r["shape"].startswith("cols=") and r["n"] == SEGMENTED_N
           and r["batch"] == results.SWEEP_BATCH]
    arr = [r for r in mine if r["run"] == STEP09 and r["shape"] == results.ARRAY]
    if not seg and not arr:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    lines = defaultdict(dict)
    for r in seg:
        lines[(r["step"], r["variant"])][int(r["shape"].split("=", 1)[1])] = r["gbps"]
    for key, style in CLUSTER_ROW_STYLES.items():
        if key in lines:
            xs = sorted(lines[key])
            left.plot(xs, [lines[key][x] for x in xs], marker="o", ms=3, **style)
    if not any(k in lines for k in CLUSTER_ROW_STYLES):
        no_data(left, f"{STEP09_ROWS} rows")
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel(f"row length (elements per row; {log2_label(SEGMENTED_N)} elements in all)")
    left.set_ylabel("GB/s (matrix + row sums / median time)")
    left.grid(alpha=0.3, which="both")
    left.set_title(f"Segmented sum ({STEP09_ROWS}), {dtype}", fontsize=10)
    left.legend(fontsize=8, loc="lower right")
    batch = max((r["batch"] for r in arr), default=results.SWEEP_BATCH)
    c = results.curves(arr, device, dtype, field="ms", batch=batch)
    draw_keys = [k for k in CLUSTER_STYLES if k in c]
    for key in draw_keys:
        by_n = c[key]
        right.plot(list(by_n), [1000.0 * v for v in by_n.values()], marker="o", ms=3, **CLUSTER_STYLES[key])
    if not draw_keys:
        no_data(right, f"{STEP09} rows")
    how = f"{batch} warm launches back to back per timing" if batch > 1 else "each launch timed alone"
    log_log_time_axes(right, f"n ({dtype} elements)", f"Whole-array sum ({STEP09}), {dtype}: {how}")
    right.title.set_fontsize(10)
    right.set_ylabel("median time per launch (µs, log scale)")
    right.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Step 09: thread block clusters, a sum per row and one sum of the array ({device})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def headline_figure(rows, path):
    devs = results.devices(rows)
    fig, axes = plt.subplots(1, len(devs), figsize=(6.5 * len(devs), 5), squeeze=False)
    for ax, dev in zip(axes[0], devs):
        draw_bandwidth(ax, rows, dev, "int")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def draw(figure):
    return figure()


def figure(fn, rows, device, folder, name):
    """A job of main(): the PNG's path and the figure function bound to its rows and device."""
    path = os.path.join(folder, name)
    return path, functools.partial(fn, rows, device, path)


def main(argv=None, in_process=False):
    """Draws every figure the rows allow; returns the paths written. in_process: draw here, one
    after the other (a test that inspects the figures), not one process per figure."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the PNG files")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args(argv)
    # The figures show the sweeps' method, each launch timed alone: rows timed in batches
    # (--batch B) answer other questions, in tables that say so (results.noise_table), and in
    # the clusters figure's right panel (all_rows: also the batched_*.csv beside the files).
    all_rows = load(a.csv + batched_companions(a.csv))
    rows = [r for r in all_rows if r["batch"] == results.SWEEP_BATCH]
    if not rows:
        sys.exit("plot.py: no rows in " + ", ".join(a.csv))
    os.makedirs(a.out, exist_ok=True)
    # (path, the figure bound to its rows and device): each figure returns whether it drew
    # (one with nothing to show draws nothing).
    jobs = []
    # The one-GPU figures never see step 08's rows: their n (up to 2^32 in total) and their
    # % of peak (of K GPUs) would otherwise pick the largest n and the peak of these figures.
    single = [r for r in rows if not is_multi_gpu(r)]
    for dev in results.devices(rows):
        s = results.slug(dev)
        if dev in results.devices(single):
            for name, fn in (("bandwidth", bandwidth_figure), ("latency", latency_figure), ("ladder", ladder_figure)):
                jobs.append(figure(fn, single, dev, a.out, f"{name}_{s}.png"))
            jobs.append(figure(warp_unroll_figure, single, dev, a.out, f"warp_unroll_{s}.png"))
        for name, fn in (("segmented", segmented_figure), ("scaling", scaling_figure), ("normalize", normalize_figure)):
            jobs.append(figure(fn, rows, dev, a.out, f"{name}_{s}.png"))
        jobs.append(figure(clusters_figure, all_rows, dev, a.out, f"clusters_{s}.png"))
    if single:
        path = os.path.join(a.out, "headline.png")
        jobs.append((path, functools.partial(headline_figure, single, path)))
    # One figure per process: matplotlib draws on one core, and the main command waits for them.
    figures = [f for _, f in jobs]
    if in_process:
        drew = [draw(f) for f in figures]
    else:
        with concurrent.futures.ProcessPoolExecutor() as pool:
            drew = list(pool.map(draw, figures))
    written = [path for (path, _), ok in zip(jobs, drew) if ok]
    print("wrote " + " ".join(written))
    return written


if __name__ == "__main__":
    main()
