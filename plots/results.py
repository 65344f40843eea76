#!/usr/bin/env python3
"""Reads the measured CSV files (schema of DESIGN.md) and turns them into tables.

Plain Python, no matplotlib, so the docs tools and tests can use it anywhere.
    results.py summary FILE.csv [...] [--n N]   the ladder as a table, best variant per step
"""
import csv
import re
import statistics
import sys
from collections import defaultdict

COLUMNS = ["device", "cuda", "step", "variant", "dtype", "n", "ms", "gbps", "pct_peak", "verified"]


class SchemaError(ValueError):
    pass


def load(paths):
    """All rows of the given CSV files, typed; raises SchemaError on anything off-schema."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != COLUMNS:
                raise SchemaError(f"{path}: header {header} is not {COLUMNS}")
            for lineno, fields in enumerate(reader, start=2):
                if len(fields) != len(COLUMNS):
                    raise SchemaError(f"{path}:{lineno}: {len(fields)} fields, expected {len(COLUMNS)}")
                r = dict(zip(COLUMNS, fields))
                if not r["device"].strip():
                    raise SchemaError(f"{path}:{lineno}: empty device name")
                if r["verified"] not in ("true", "false") or r["dtype"] not in ("int", "float"):
                    raise SchemaError(f"{path}:{lineno}: bad verified/dtype field")
                try:
                    r["n"] = int(r["n"])
                    for k in ("ms", "gbps", "pct_peak"):
                        r[k] = float(r[k])
                except ValueError as e:
                    raise SchemaError(f"{path}:{lineno}: {e}") from None
                r["verified"] = r["verified"] == "true"
                rows.append(r)
    return rows


def slug(device):
    """'NVIDIA H100 80GB HBM3' -> 'h100_80gb_hbm3' (file names of plots/data and plots)."""
    s = re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")
    return s[len("nvidia_"):] if s.startswith("nvidia_") else s


def short(step):
    return step.split("_")[0]  # step05_vectorized -> step05


def curves(rows, device, dtype, include_wrong=False):
    """{(step, variant): {n: median GB/s}} over verified rows (all rows with include_wrong);
    every CUB row of the device (each step program times CUB once per size) feeds one
    ('cub', 'cub') curve."""
    acc = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["device"] == device and r["dtype"] == dtype and (r["verified"] or include_wrong):
            acc[(r["step"], r["variant"])][r["n"]].append(r["gbps"])
    return {k: {n: statistics.median(v) for n, v in sorted(by_n.items())} for k, by_n in acc.items()}


def peak(rows, device):
    # pct_peak has two decimals: the fastest row gives the most exact peak
    best = max((r for r in rows if r["device"] == device and r["pct_peak"] > 0), key=lambda r: r["pct_peak"], default=None)
    return best["gbps"] * 100.0 / best["pct_peak"] if best else float("nan")


def best_variants(rows, device, dtype, n):
    """[(step, variant, gbps)] one per step: the fastest verified variant at size n, step order."""
    best = {}
    for (step, variant), by_n in curves(rows, device, dtype).items():
        if step != "cub" and n in by_n and (step not in best or by_n[n] > best[step][2]):
            best[step] = (step, variant, by_n[n])
    return [best[s] for s in sorted(best)]


def ladder_table(rows, device, dtype, n, steps=None, all_variants=False):
    """Markdown table: step, variant, GB/s, % of peak, x CUB at size n."""
    c = curves(rows, device, dtype)
    cub = c.get(("cub", "cub"), {}).get(n)
    pk = peak(rows, device)
    if all_variants:
        entries = [(s, v, by_n[n]) for (s, v), by_n in sorted(c.items()) if s != "cub" and n in by_n]
    else:
        entries = best_variants(rows, device, dtype, n)
    if steps is not None:
        entries = [e for e in entries if short(e[0]) in steps]
    lines = ["| step | variant | GB/s | % of peak | x CUB |", "|---|---|---:|---:|---:|"]
    for step, variant, g in entries:
        ratio = f"{g / cub:.2f}" if cub else "-"
        lines.append(f"| {step} | {variant} | {g:.0f} | {100 * g / pk:.1f}% | {ratio} |")
    if cub:
        lines.append(f"| CUB DeviceReduce::Sum | - | {cub:.0f} | {100 * cub / pk:.1f}% | 1.00 |")
    return "\n".join(lines)


def devices(rows):
    return sorted({r["device"] for r in rows})


def summary(paths, n=None):
    rows = load(paths)
    out = []
    for dev in devices(rows):
        for dtype in ("int", "float"):
            sizes = sorted({r["n"] for r in rows if r["device"] == dev and r["dtype"] == dtype})
            if not sizes:
                continue
            size = n if n in sizes else sizes[-1]
            out.append(f"\n{dev}, {dtype}, n = {size} (theoretical peak {peak(rows, dev):.0f} GB/s)")
            out.append(ladder_table(rows, dev, dtype, size))
    failed = [r for r in rows if not r["verified"] and not (r["step"].startswith("step01") and r["variant"] == "plain")]
    if failed:
        out.append(f"\n{len(failed)} row(s) failed verification, e.g. {failed[0]}")
    return "\n".join(out)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "summary" or len(args) < 2:
        sys.exit(__doc__)
    n = None
    if "--n" in args:
        i = args.index("--n")
        n = int(args[i + 1])
        del args[i:i + 2]
    print(summary(args[1:], n))
