#!/usr/bin/env python3
"""Draws the figures the docs embed from measured CSV files.

    plot.py --out DIR FILE.csv [FILE.csv ...]

For every device found in the files it writes, into DIR:
    bandwidth_<gpu>.png    GB/s vs n, best variant of every step and CUB (int and float)
    ladder_<gpu>.png       every step and variant at the largest n, with % of peak
    warp_unroll_<gpu>.png  step00, step01's three variants, step02 at 2^24 and 2^30
and headline.png: int GB/s vs n, one panel per device (the README's figure).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

STEP_COLORS = {"step00": "#8c564b", "step01": "#e377c2", "step02": "#7f7f7f", "step03": "#bcbd22",
               "step04": "#17becf", "step05": "#d62728", "step06": "#9467bd", "step07": "#2ca02c",
               "step08": "#ff7f0e", "cub": "#1f77b4"}


def log2_label(n):
    e = n.bit_length() - 1
    return f"2^{e}" if n == 1 << e else str(n)


def draw_bandwidth(ax, rows, device, dtype):
    """GB/s against n: for every step the variant that is fastest at the largest n, and CUB."""
    c = results.curves(rows, device, dtype)
    n_max = max(max(by_n) for by_n in c.values())
    picked = [(s, v) for s, v, _ in results.best_variants(rows, device, dtype, n_max)] + [("cub", "cub")]
    for step, variant in picked:
        if (step, variant) not in c:
            continue
        by_n = c[(step, variant)]
        is_cub = step == "cub"
        ax.plot(list(by_n), list(by_n.values()), marker="o", ms=3,
                label="CUB DeviceReduce::Sum" if is_cub else f"{results.short(step)} {variant}",
                color=STEP_COLORS.get(results.short(step)), lw=2.5 if is_cub else 1.5, ls="--" if is_cub else "-")
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


def bandwidth_figure(rows, device, path):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, dtype in zip(axes, ("int", "float")):
        draw_bandwidth(ax, rows, device, dtype)
    axes[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ladder_figure(rows, device, path, dtype="int"):
    c = results.curves(rows, device, dtype)
    n = max(max(by_n) for by_n in c.values())
    entries = [(s, v, by_n[n]) for (s, v), by_n in sorted(c.items()) if s != "cub" and n in by_n]
    cub = c.get(("cub", "cub"), {}).get(n)
    if cub:
        entries.append(("cub", "DeviceReduce::Sum", cub))
    pk = results.peak(rows, device)
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(entries) + 2), 5))
    labels = [f"{results.short(s)}\n{v}" if s != "cub" else "CUB\nSum" for s, v, _ in entries]
    bars = ax.bar(range(len(entries)), [g for *_, g in entries],
                  color=[STEP_COLORS.get(results.short(s)) for s, *_ in entries])
    for bar, (_, _, g) in zip(bars, entries):
        ax.text(bar.get_x() + bar.get_width() / 2, g, f"{g:.0f}\n{100 * g / pk:.0f}%", ha="center", va="bottom", fontsize=7)
    ax.axhline(pk, color="black", lw=0.8, ls=":")
    ax.set_xticks(range(len(entries)), labels, fontsize=7)
    ax.set_ylabel("GB/s")
    ax.set_ylim(0, pk * 1.15)
    ax.set_title(f"The ladder at n = {log2_label(n)} {dtype}, {device} (peak {pk:.0f} GB/s, dotted)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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


def headline_figure(rows, path):
    devs = results.devices(rows)
    fig, axes = plt.subplots(1, len(devs), figsize=(6.5 * len(devs), 5), squeeze=False)
    for ax, dev in zip(axes[0], devs):
        draw_bandwidth(ax, rows, dev, "int")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the PNG files")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args(argv)
    rows = results.load(a.csv)
    if not rows:
        sys.exit("plot.py: no rows in " + ", ".join(a.csv))
    os.makedirs(a.out, exist_ok=True)
    written = []
    for dev in results.devices(rows):
        s = results.slug(dev)
        for name, fn in (("bandwidth", bandwidth_figure), ("ladder", ladder_figure)):
            p = os.path.join(a.out, f"{name}_{s}.png")
            fn(rows, dev, p)
            written.append(p)
        p = os.path.join(a.out, f"warp_unroll_{s}.png")
        if warp_unroll_figure(rows, dev, p):
            written.append(p)
    p = os.path.join(a.out, "headline.png")
    headline_figure(rows, p)
    written.append(p)
    print("wrote " + " ".join(written))
    return written


if __name__ == "__main__":
    main()
