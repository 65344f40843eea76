#!/usr/bin/env python3
"""Reads the measured CSV files and turns them into tables.

Plain Python, no matplotlib, so the docs tools and tests can use it anywhere.
    results.py summary FILE.csv [...] [--n N]   the ladder as a table, best variant per step,
                                                then the latency of those variants at small n
    results.py compare FILE.csv [...] --device D --dtype int|float --keys STEP/VARIANT,...
               [--batch B] [--shape S]          median and min-max per size of the contenders
                                                named, and whether the timer can order them

The schema, one row per (program run, step, variant, dtype, n):
    device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified,x_cub,x_floor,shape,ms_min,ms_max,batch
Every step program times, interleaved rep by rep in the same run, CUB (step=cub,
variant=cub), the floor (step=floor: a kernel that moves what the problem moves and
nothing else; variant=read for a sum, read_write where it also writes an output of another
size than its input (step 06's row sums, its kept elements), copy where the output is as large
as the input; its gbps counts its own bytes) and its own variants. x_cub = CUB's median
ms / this row's median ms (higher is faster; 1 on the cub row); x_floor = this row's
median ms / the floor's median ms (lower is better, about 1 at best; 1 on the floor row).
0 in x_cub or x_floor means "not measured" (plots/migrate_csv.py writes it for files from
before the floor existed); the tables print "-" for it.
ms is the median time per launch over the reps, ms_min and ms_max their spread (empty: not
measured, in rows from before these columns); batch is how many launches ran back to back
between one pair of timing events (1: each launch alone, the sweeps' method; B > 1: the
harness's --batch B, for differences below what one event pair resolves, about 0.5 us).
Files of the 13-column schema (up to shape) are read as they are, without a spread and with
batch 1; plots/migrate_csv.py converts them and the 10-column files.
"""
import csv
import math
import os
import re
import statistics
import sys
from collections import defaultdict

COLUMNS = ["device", "cuda", "step", "variant", "dtype", "n", "ms", "gbps", "pct_peak", "verified", "x_cub", "x_floor",
           "shape", "ms_min", "ms_max", "batch"]
ARRAY = "array"  # shape of a whole-array reduction (n elements -> one value); other steps: "cols=16", ...
OLD_COLUMNS = COLUMNS[:10]  # before x_cub and x_floor; plots/migrate_csv.py converts
NO_SPREAD_COLUMNS = COLUMNS[:13]  # before ms_min, ms_max and batch: read as no spread, batch 1
SWEEP_BATCH = 1  # the sweeps time each launch alone; tables and figures use only such rows
FLOAT_FIELDS = ("ms", "gbps", "pct_peak", "x_cub", "x_floor")
RATIO_FIELDS = ("x_cub", "x_floor")
NOT_MEASURED = 0.0

# Rows every step program writes beside its own variants: step -> the one variant name.
CUB, FLOOR = ("cub", "cub"), ("floor", "read")
# The floor of a problem that also writes an array is read_write (step 06's segmented sum
# and filter) or a copy (step 07's normalization: as many written as read).
# Step 08 (several GPUs) times CUB three ways: on one GPU over the whole array (the x_cub
# reference), on every GPU's shard at once, and the sum of the shards' single-GPU times.
REFERENCES = {"cub": ("cub", "cub_1gpu", "cub_each_gpu", "cub_sum_of_shards"), "floor": ("read", "read_write", "copy")}
SELF_REFERENCES = {("cub", "cub"): "x_cub", ("cub", "cub_1gpu"): "x_cub",
                   ("floor", "read"): "x_floor", ("floor", "read_write"): "x_floor", ("floor", "copy"): "x_floor"}
CUB_LABEL, FLOOR_LABEL = "CUB DeviceReduce::Sum", "floor (plain read)"
FLOOR_VARIANT_LABELS = {"read": "plain read", "read_write": "read + write", "copy": "plain copy"}  # in the tables


class SchemaError(ValueError):
    pass


def load(paths):
    """All rows of the given CSV files, typed; raises SchemaError on anything off-schema."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += parse(f, path)
    return rows


def parse(lines, source):
    """Typed rows of one CSV text (an iterable of lines); `source` names it in errors."""
    reader = csv.reader(lines)
    columns = check_header(next(reader, None), source)
    return [typed_row(fields, f"{source}:{lineno}", columns) for lineno, fields in enumerate(reader, start=2)]


def check_header(header, source):
    """The columns of a file's rows: the current schema's, or the 13 before the spread."""
    if header == OLD_COLUMNS:
        raise SchemaError(f"{source}: old 10-column schema (no x_cub, x_floor); convert it with "
                          f"python3 plots/migrate_csv.py OLD.csv NEW.csv, or measure again")
    if header not in (COLUMNS, NO_SPREAD_COLUMNS):
        raise SchemaError(f"{source}: header {header} is not {COLUMNS}")
    return header


def typed_row(fields, where, columns=COLUMNS):
    if len(fields) != len(columns):
        raise SchemaError(f"{where}: {len(fields)} fields, expected {len(columns)}")
    r = dict(zip(columns, fields))
    if columns == NO_SPREAD_COLUMNS:
        r.update(ms_min="", ms_max="", batch=str(SWEEP_BATCH))
    if not r["device"].strip():
        raise SchemaError(f"{where}: empty device name")
    if r["verified"] not in ("true", "false") or r["dtype"] not in ("int", "float"):
        raise SchemaError(f"{where}: bad verified/dtype field")
    try:
        r["n"] = int(r["n"])
        for k in FLOAT_FIELDS:
            r[k] = float(r[k])
        for k in ("ms_min", "ms_max"):  # empty: not measured
            r[k] = float(r[k]) if r[k] != "" else None
        if not re.fullmatch(r"[0-9]+", r["batch"]):
            raise ValueError(f"batch '{r['batch']}' is not a whole number")
        r["batch"] = int(r["batch"])
    except ValueError as e:
        raise SchemaError(f"{where}: {e}") from None
    r["verified"] = r["verified"] == "true"
    if not re.fullmatch(r"[A-Za-z0-9_=.%:-]+", r["shape"]):
        raise SchemaError(f"{where}: bad shape field '{r['shape']}'")
    check_values(r, where)
    return r


def check_values(r, where):
    """What the harness guarantees; a row that breaks it was paired or written wrongly."""
    if not all(math.isfinite(r[k]) and r[k] >= 0 for k in FLOAT_FIELDS):
        raise SchemaError(f"{where}: a negative or non-finite number")
    if r["batch"] < 1:
        raise SchemaError(f"{where}: batch must be at least 1")
    if (r["ms_min"] is None) != (r["ms_max"] is None):
        raise SchemaError(f"{where}: ms_min and ms_max are measured together or not at all")
    if r["ms_min"] is not None and not (math.isfinite(r["ms_max"]) and 0 <= r["ms_min"] <= r["ms"] <= r["ms_max"]):
        raise SchemaError(f"{where}: the median ms {r['ms']} is not within [ms_min, ms_max] = "
                          f"[{r['ms_min']}, {r['ms_max']}]")
    step = r["step"]
    if step in REFERENCES and r["variant"] not in REFERENCES[step]:
        raise SchemaError(f"{where}: step '{step}' must have variant {' or '.join(REFERENCES[step])}")
    # the reference's own ratio is its time over itself; 0 is allowed as "not measured"
    field = SELF_REFERENCES.get((step, r["variant"]))
    if field and r[field] != NOT_MEASURED and abs(r[field] - 1) > 5e-5:
        raise SchemaError(f"{where}: the {step} row must have {field} 1.0000, not {r[field]}")


def slug(device):
    """'NVIDIA H100 80GB HBM3' -> 'h100_80gb_hbm3' (file names of results and plots)."""
    s = re.sub(r"[^a-z0-9]+", "_", device.lower()).strip("_")
    return s[len("nvidia_"):] if s.startswith("nvidia_") else s


def short(step):
    return step.split("_")[0]  # step05_vectorized -> step05


def is_reference(step):
    return step in REFERENCES


def curves(rows, device, dtype, include_wrong=False, field="gbps", shape=ARRAY, batch=SWEEP_BATCH):
    """{(step, variant): {n: median of `field`}} over verified rows (all rows with include_wrong).
    Every step program times CUB and the floor once per size, so all CUB rows of the device
    pool into one ('cub', 'cub') curve and all floor rows into one ('floor', 'read') curve.
    For x_cub and x_floor, rows with 0 ("not measured") are left out. Only rows of one problem
    shape take part (whole-array reductions unless `shape` says otherwise), and of one timing
    method: launches timed alone (the sweeps'), unless `batch` names another."""
    acc = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if (r["device"] != device or r["dtype"] != dtype or r["shape"] != shape or r["batch"] != batch
                or not (r["verified"] or include_wrong)):
            continue
        if field in RATIO_FIELDS and r[field] == NOT_MEASURED:
            continue
        acc[(r["step"], r["variant"])][r["n"]].append(r[field])
    return {k: {n: statistics.median(v) for n, v in sorted(by_n.items())} for k, by_n in acc.items()}


def spreads(rows, device, dtype, shape=ARRAY, batch=SWEEP_BATCH):
    """{(step, variant): {n: (min ms, max ms)}} over the verified rows that curves() pools:
    the lowest ms_min and the highest ms_max of them. A size where any of those rows has no
    spread (measured before ms_min and ms_max existed) is left out: it has none to show."""
    acc = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if (r["device"] == device and r["dtype"] == dtype and r["shape"] == shape and r["batch"] == batch
                and r["verified"]):
            acc[(r["step"], r["variant"])][r["n"]].append((r["ms_min"], r["ms_max"]))
    return {k: {n: (min(lo for lo, _ in v), max(hi for _, hi in v)) for n, v in sorted(by_n.items())
                if all(lo is not None for lo, _ in v)} for k, by_n in acc.items()}


def within_noise(a, b):
    """Whether the timer cannot order two contenders, from their (min, max) ranges over the
    reps (any one unit). True when the ranges overlap: a text comparing the two must say
    "within noise". False when they are apart: every rep of one was faster than every rep of
    the other. None when either range was not measured: nothing can be claimed either way."""
    if a is None or b is None or None in a or None in b:
        return None
    (a_lo, a_hi), (b_lo, b_hi) = a, b
    if a_lo > a_hi or b_lo > b_hi:
        raise ValueError(f"not a (min, max) range: {a}, {b}")
    return a_lo <= b_hi and b_lo <= a_hi


def noise_verdict(contenders):
    """What the timer can say about [(label, median, (min, max) or None)]: the fastest by
    median "faster" (of two) or "fastest" when its range is apart from every other's, "within
    noise" when it overlaps them all, else the fastest and those within noise of it."""
    present = [c for c in contenders if c[1] is not None]
    if len(present) < 2:
        return "-"
    fast = min(present, key=lambda c: c[1])
    others = [c for c in present if c is not fast]
    overlaps = [within_noise(fast[2], c[2]) for c in others]
    if None in overlaps:
        return "spread not measured"
    tied = [c[0] for c, o in zip(others, overlaps) if o]
    if not tied:
        return f"{fast[0]} {'faster' if len(present) == 2 else 'fastest'}"
    if len(tied) == len(others):
        return "within noise"
    return f"{fast[0]} fastest; within noise of it: {', '.join(tied)}"


def peak(rows, device):
    # pct_peak has two decimals: the fastest row gives the most exact peak
    best = max((r for r in rows if r["device"] == device and r["pct_peak"] > 0), key=lambda r: r["pct_peak"], default=None)
    return best["gbps"] * 100.0 / best["pct_peak"] if best else float("nan")


def best_variants(rows, device, dtype, n):
    """[(step, variant, gbps)] one per step: the fastest verified variant at size n, step
    order. CUB and the floor are references, not steps, and are never listed."""
    best = {}
    for (step, variant), by_n in curves(rows, device, dtype).items():
        if not is_reference(step) and n in by_n and (step not in best or by_n[n] > best[step][2]):
            best[step] = (step, variant, by_n[n])
    return [best[s] for s in sorted(best)]


def largest_n(rows, device, dtype):
    return max((r["n"] for r in rows if r["device"] == device and r["dtype"] == dtype), default=None)


def plotted_variants(rows, device, dtype):
    """[(step, variant)]: per step the variant fastest at the largest n measured (the one
    the bandwidth and latency figures draw)."""
    n = largest_n(rows, device, dtype)
    return [(s, v) for s, v, _ in best_variants(rows, device, dtype, n)] if n else []


def ratio(x):
    """A same-run ratio as the tables print it; '-' where it was not measured."""
    return "-" if x is None or x == NOT_MEASURED else f"{x:.2f}"


def ladder_table(rows, device, dtype, n, steps=None, all_variants=False):
    """Markdown table at size n: step, variant, GB/s, % of peak, x CUB, x floor, and beside each
    step the GB/s of CUB and of the floor in that step's own runs (its GB/s / x CUB and its
    GB/s x x floor). x CUB and x floor are the rows' own same-run ratios (median over the rows
    of that step and variant). No pooled CUB or floor line: CUB and the floor are timed in
    every program's run, and their speed from run to run differs by more than the gaps
    between the leading steps, so a figure is only set beside those of its own run."""
    c = curves(rows, device, dtype)
    x_cub, x_floor = curves(rows, device, dtype, field="x_cub"), curves(rows, device, dtype, field="x_floor")
    pk = peak(rows, device)
    if all_variants:
        entries = [(s, v, by_n[n]) for (s, v), by_n in sorted(c.items()) if not is_reference(s) and n in by_n]
    else:
        entries = best_variants(rows, device, dtype, n)
    if steps is not None:
        entries = [e for e in entries if short(e[0]) in steps]

    def line(label, variant, key, g):
        xc, xf = x_cub.get(key, {}).get(n), x_floor.get(key, {}).get(n)
        cub = f"{g / xc:.0f}" if xc else "-"
        floor = f"{g * xf:.0f}" if xf else "-"
        return f"| {label} | {variant} | {g:.0f} | {100 * g / pk:.1f}% | {ratio(xc)} | {ratio(xf)} | {cub} | {floor} |"

    lines = ["| step | variant | GB/s | % of peak | x CUB | x floor | CUB GB/s, same run | floor GB/s, same run |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    lines += [line(s, v, (s, v), g) for s, v, g in entries]
    return "\n".join(lines)


def pow2(n):
    e = n.bit_length() - 1
    return f"2^{e}" if n == 1 << e else str(n)


def program(step):
    """What a learner types for a step's program: step05 for steps/step05_vectorized's own, the
    full name for a step's second program (step07_normalize)."""
    steps_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "steps")
    return short(step) if os.path.isdir(os.path.join(steps_dir, step)) else step


def sizes_table(rows, device, dtype, sizes, steps=None, show_wrong=False, shape=ARRAY,
                cub_label="DeviceReduce::Sum"):
    """Markdown table, one column per size: every variant of the given steps as
    'GB/s (x CUB)', x CUB the row's own same-run ratio. CUB and the floor follow each step's
    rows as they ran in that step's own program ("CUB, step05's run": rows that carry a 'run',
    the CSV they come from, as docs_sync loads them), so a step's GB/s over CUB's in the row
    below gives the bracket's ratio. Rows without a 'run' (results.load) cannot be told apart
    by program: then one CUB and one floor line close the table, each the median of its rows
    of all the programs' runs, and say so ("(all runs)").
    show_wrong: also variants whose sum was wrong, marked '(wrong sum)'. `shape` picks the
    problem (array -> one sum by default; "normalize" for step 07's array -> array)."""
    c = curves(rows, device, dtype, include_wrong=show_wrong, shape=shape)
    x_cub = curves(rows, device, dtype, include_wrong=show_wrong, field="x_cub", shape=shape)
    wrong = {(r["step"], r["variant"]) for r in rows if not r["verified"] and r["device"] == device}

    def cells(key, with_ratio=True, c=c, x_cub=x_cub):
        by_n, xs = c.get(key, {}), (x_cub.get(key, {}) if with_ratio else {})
        return [("-" if n not in by_n else f"{by_n[n]:.0f} GB/s" + (f" ({xs[n]:.2f}x)" if n in xs else ""))
                for n in sizes]

    def references(label, c=c, x_cub=x_cub):
        out = [f"| CUB{label} | {cub_label} | " + " | ".join(cells(CUB, False, c, x_cub)) + " |"]
        for key in sorted(k for k in c if k[0] == FLOOR[0]):
            if any(n in c[key] for n in sizes):
                out.append(f"| floor{label} | {FLOOR_VARIANT_LABELS[key[1]]} | " + " | ".join(cells(key, True, c, x_cub)) + " |")
        return out

    lines = ["| step | variant | " + " | ".join(f"n = {pow2(n)}" for n in sizes) + " |",
             "|---|---|" + "---:|" * len(sizes)]
    shown = [(s, v) for s, v in sorted(c) if not is_reference(s) and not (steps and short(s) not in steps)]
    per_run = bool(shown) and all("run" in r for r in rows)
    for i, (step, variant) in enumerate(shown):
        label = f"{variant} (wrong sum)" if (step, variant) in wrong else variant
        lines.append(f"| {step} | {label} | " + " | ".join(cells((step, variant))) + " |")
        if per_run and (i + 1 == len(shown) or shown[i + 1][0] != step):
            runs = {r["run"] for r in rows if r["step"] == step and r["device"] == device}
            own = [r for r in rows if r["step"] in (CUB[0], FLOOR[0]) and r["run"] in runs]
            lines += references(f", {program(step)}'s run",
                                curves(own, device, dtype, shape=shape),
                                curves(own, device, dtype, field="x_cub", shape=shape))
    if not per_run:
        lines += references(" (all runs)")
    return "\n".join(lines)


def shapes_table(rows, device, dtype, step, shapes, cub_label, n=None):
    """Markdown table for a step whose problem has another shape than array -> one sum
    (step 06's rows of `cols` elements, its filter's pass rates): one column per shape,
    every verified variant of the step as 'GB/s (x CUB)' with the rows' own same-run
    ratios, then CUB and the floor as measured in that step's runs (rows that carry a 'run',
    the CSV they come from: only the step's own; another program that times the same shapes,
    step 09's rows, does not move them). Only rows of `n` elements when it is given. '-': not
    run there."""
    gbps, x_cub = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["step"] in (CUB[0], FLOOR[0]) and r.get("run", step) != step:
            continue
        if n is not None and r["n"] != n:
            continue
        if (r["device"] == device and r["dtype"] == dtype and r["shape"] in shapes and r["verified"]
                and r["batch"] == SWEEP_BATCH and r["step"] in (step, CUB[0], FLOOR[0])):
            gbps[(r["step"], r["variant"])][r["shape"]].append(r["gbps"])
            x_cub[(r["step"], r["variant"])][r["shape"]].append(r["x_cub"])

    def cells(key, with_ratio=True):
        out = []
        for sh in shapes:
            if sh not in gbps[key]:
                out.append("-")
                continue
            text = f"{statistics.median(gbps[key][sh]):.0f} GB/s"
            out.append(text + (f" ({statistics.median(x_cub[key][sh]):.2f}x)" if with_ratio else ""))
        return out

    lines = ["| step | variant | " + " | ".join(shapes) + " |", "|---|---|" + "---:|" * len(shapes)]
    for key in sorted(k for k in gbps if k[0] == step):
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells(key)) + " |")
    lines.append(f"| CUB (all runs) | {cub_label} | " + " | ".join(cells(CUB, with_ratio=False)) + " |")
    for key in sorted(k for k in gbps if k[0] == FLOOR[0]):
        lines.append(f"| floor (all runs) | {FLOOR_VARIANT_LABELS[key[1]]} | " + " | ".join(cells(key)) + " |")
    return "\n".join(lines)


def latency_table(rows, device, dtype, sizes, steps=None, all_variants=False):
    """Markdown table of median microseconds, one column per size: the variant of each
    step that the figures draw (all variants with all_variants), then CUB and the floor.
    Where launch and latency dominate (small n) GB/s hides what time shows. Where the rows
    have a spread, the cell shows it beside the median: "4.2 µs (4.1-4.4)"."""
    us = {k: {n: 1000 * ms for n, ms in by_n.items()} for k, by_n in curves(rows, device, dtype, field="ms").items()}
    spread = spreads(rows, device, dtype)
    keys = sorted(k for k in us if not is_reference(k[0])) if all_variants else plotted_variants(rows, device, dtype)
    keys = [k for k in keys if steps is None or short(k[0]) in steps]

    def cell(key, n):
        if n not in us.get(key, {}):
            return "-"
        lo_hi = spread.get(key, {}).get(n)
        return f"{us[key][n]:.1f} µs" + (f" ({1000 * lo_hi[0]:.1f}-{1000 * lo_hi[1]:.1f})" if lo_hi else "")

    def line(step, variant, key):
        return f"| {step} | {variant} | " + " | ".join(cell(key, n) for n in sizes) + " |"

    lines = ["| step | variant | " + " | ".join(f"n = {pow2(n)}" for n in sizes) + " |",
             "|---|---|" + "---:|" * len(sizes)]
    lines += [line(s, v, (s, v)) for s, v in keys]
    lines.append(line("CUB (all runs)", "DeviceReduce::Sum", CUB))
    if FLOOR in us:
        lines.append(line("floor (all runs)", "plain read", FLOOR))
    return "\n".join(lines)


def noise_table(rows, device, dtype, keys, sizes=None, batch=SWEEP_BATCH, shape=ARRAY):
    """Markdown table for a choice that rests on small differences (step 07's one-block
    threshold, a rewrite of a block sum): a line per size; for each contender (step, variant)
    in `keys` its median and (min-max) in microseconds over the rows timed with `batch`
    launches per event pair; then what the timer can say (noise_verdict). Sizes: every size
    measured for any of the keys, unless given."""
    med = curves(rows, device, dtype, field="ms", shape=shape, batch=batch)
    spread = spreads(rows, device, dtype, shape=shape, batch=batch)
    if sizes is None:
        sizes = sorted(set().union(*(med.get(k, {}).keys() for k in keys)))
    one_step = len({s for s, _ in keys}) == 1
    labels = [v if one_step else f"{s}/{v}" for s, v in keys]
    digits = 3 if batch > 1 else 2  # a batch resolves to the nanosecond, one event pair to ~0.5 µs

    def cell(key, n):
        if n not in med.get(key, {}):
            return "-"
        lo_hi = spread.get(key, {}).get(n)
        return (f"{1000 * med[key][n]:.{digits}f} " +
                (f"({1000 * lo_hi[0]:.{digits}f}-{1000 * lo_hi[1]:.{digits}f})" if lo_hi else "(no spread)"))

    lines = ["| n | " + " | ".join(f"{label}, µs" for label in labels) + " | the timer says |",
             "|---:|" + "---:|" * len(keys) + "---|"]
    for n in sizes:
        named = [(label, med.get(k, {}).get(n), spread.get(k, {}).get(n)) for label, k in zip(labels, keys)]
        lines.append(f"| {pow2(n)} | " + " | ".join(cell(k, n) for k in keys) + f" | {noise_verdict(named)} |")
    return "\n".join(lines)


def devices(rows):
    return sorted({r["device"] for r in rows})


LATENCY_SIZES = [1 << e for e in (10, 14, 17, 20, 24)]


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
            small = [s for s in LATENCY_SIZES if s in sizes]
            if small:
                out.append(f"\n{dev}, {dtype}, latency")
                out.append(latency_table(rows, dev, dtype, small))
    failed = [r for r in rows if not r["verified"] and not (r["step"].startswith("step01") and r["variant"] == "plain")]
    if failed:
        out.append(f"\n{len(failed)} row(s) failed verification, e.g. {failed[0]}")
    return "\n".join(out)


def compare(argv):
    """results.py compare: noise_table over the files given, from the command line."""
    import argparse
    ap = argparse.ArgumentParser(prog="results.py compare")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--device", required=True)
    ap.add_argument("--dtype", required=True, choices=("int", "float"))
    ap.add_argument("--keys", required=True, help="STEP/VARIANT,STEP/VARIANT,... (e.g. cub/cub)")
    ap.add_argument("--batch", type=int, default=SWEEP_BATCH, help="the rows' launches per event pair")
    ap.add_argument("--shape", default=ARRAY)
    a = ap.parse_args(argv)
    keys = [tuple(k.split("/", 1)) for k in a.keys.split(",")]
    if any(len(k) != 2 for k in keys):
        ap.error("--keys: each one is STEP/VARIANT")
    return noise_table(load(a.csv), a.device, a.dtype, keys, batch=a.batch, shape=a.shape)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["compare"]:
        try:
            print(compare(args[1:]))
        except SchemaError as e:
            sys.exit(f"results.py: {e}")
        sys.exit(0)
    if not args or args[0] != "summary" or len(args) < 2:
        sys.exit(__doc__)
    n = None
    if "--n" in args:
        i = args.index("--n")
        n = int(args[i + 1])
        del args[i:i + 2]
    try:
        print(summary(args[1:], n))
    except SchemaError as e:
        sys.exit(f"results.py: {e}")
