#!/usr/bin/env python3
"""Keeps the code excerpts, result tables and measured numbers in the markdown files true to their sources.

    docs_sync.py            check: exit 1 and say where a block differs from its source
    docs_sync.py --write    rewrite every block from its source
    docs_sync.py [--write] FILE...   the same for these markdown files only
    docs_sync.py --help     this text

Blocks in README.md and docs/*.md:

    <!-- excerpt: steps/step00_baseline/step00_baseline.cu#block-tree -->
    ```cuda
    ...the lines between `// [docs:block-tree]` and `// [/docs:block-tree]`...
    ```
    <!-- /excerpt -->

    <!-- excerpt: results/logs/racecheck_step01_volatile.log#lines=1-8 -->   (a line range)

    <!-- table: ladder device="NVIDIA H200" dtype=int n=2^30 [steps=step00,step05] [variants=all] -->
    <!-- table: sizes device="NVIDIA H200" dtype=int sizes=2^20,2^24,2^30 steps=step03,step04 [wrong=show] -->
    <!-- table: latency device="NVIDIA H200" dtype=int sizes=2^10,2^16,2^20 [steps=step03,step05] [variants=all] -->
    ...generated from results/<gpu>/step*.csv, then a blank line and the command that measures it:
    Reproduce (in the build directory): ./step03 --n 2^20,2^24,2^30 --dtype int --reps 50; ./step04 ...
    <!-- /table -->

ladder: GB/s, % of peak, x CUB and x floor at one n (see plots/results.py ladder_table);
sizes: 'GB/s (x CUB)' per size; latency: median microseconds per size. x CUB is always
the row's own ratio to CUB timed in the same run.

Inline numbers: every measured number in prose is a block whose comment (hidden when the
markdown is rendered) states the query that computes it from a committed CSV or log; the
check recomputes it and fails when the text differs, --write puts the computed text in.
To convert a sentence, wrap the number (any value will do) and run --write, then read the
sentence again: if the claim around the number no longer holds, rewrite the claim. Numbers
from papers and blogs are not blocks: they carry their citation. A block is one line:

    step 05 runs at <!-- num: csv device=h200 step=step05 variant=v4_batch4 dtype=int n=2^30 col=gbps -->4640<!-- /num --> GB/s
    ahead (<!-- num: csv device=* step=step05 variant=v4_batch4 dtype=* n=2^13..2^21 col=x_cub range -->1.22-1.40<!-- /num -->x)
    a gain of <!-- num: csv device=* step=step01 variant=volatile dtype=int n=2^30 col=gbps over="step=step00 variant=tree" op=change fmt=+.0% range -->+32%<!-- /num -->
    costs <!-- num: csv file=results/h200/grid_sync_cost.csv threads=1024 blocks_per_sm=1 col=us_per_sync fmt=.2f -->1.00<!-- /num --> us
    take <!-- num: log results/logs/step03_repeat_results.txt re="^float .*-> (\d+) distinct" -->5<!-- /num --> values
    all <!-- num: log results/logs/racecheck_summary.txt re="^step02_\w+ .*PASS" count -->4<!-- /num --> pass
    in <!-- num: log results/logs/racecheck_summary.txt,results/logs/h200/racecheck_summary.txt re="^step01_volatile +\S+ +\d+ +(\d+)" range -->10<!-- /num --> reports

The query is read like a shell line (shlex): quote values with spaces; inside re="..." a
backslash stays as written (\d, \S, \n) except before " and \; in over="..." quote a
regex with single quotes (over="re='^int (\d+)'").

csv (rows of results/*/step*.csv, read like the tables, through results.py's loader):
  filters, each KEY=VALUE; VALUE is one value, a comma list (a,b), a range of numbers
  (2^13..2^21, both ends included) or * (any); every listed value and range must match at
  least one row, and a query that matches no row is an error, never an empty number:
    device   the full name ("NVIDIA H100 80GB HBM3", quoted) or its file slug (h100_80gb_hbm3, h200)
    step     step05_vectorized or step05 (a prefix before '_'), cub, floor
    variant  a variant name, or best: per (device, step, dtype, n, shape) the variant
             with the highest median GB/s (the one the ladder tables pick)
    dtype    int | float
    n        2^20, 2^31+5, 1048576, 2^15..2^22
    shape    default array (a whole-array sum); step 06-08 rows need theirs:
             shape=cols=16, shape=pass=50%, shape=normalize, shape=gpus=2, shape=* for any
    verified default true; false (the rows whose result was wrong, e.g. step01 plain) or *
    batch    default 1 (each launch timed alone, as in the sweeps and the tables); B for rows
             timed as B launches back to back in one event pair (the harness's --batch)
    run      the CSV file the row comes from (run=step05_vectorized): CUB and the floor are
             timed by every program; without run= their rows of all programs are pooled
  Rows of one series (device, step, variant, dtype, n, shape, batch) are pooled by their
  median, as the tables pool them. col= names the number: gbps, pct_peak, x_cub, x_floor,
  ms, ms_min, ms_max (the spread), us, us_min, us_max (the same x 1000), or peak (the
  device's theoretical GB/s, as results.peak derives it from gbps / pct_peak); 0 in a ratio
  column and an empty spread ("not measured") are left out, and a series with nothing left
  is an error.
  file=PATH reads another committed CSV (e.g. grid_sync_cost.csv) with Python's csv module
  instead: every column is a filter key, every row its own series, col= any column.

log PATH (a committed text file, e.g. a file under results/logs/; or several: a comma
  list or a glob, each of which must match at least once; e.g. the H100's and the H200's log):
  re="REGEX" (Python, multi-line: ^ and $ match at each line); the number is the first
  capture group of each match (the whole match without a group); count: how many matches.

Turning values into one number (both kinds):
  one value must remain, unless one of: range (min-max over the values, printed once when
  both ends print alike), min, max, count (how many values), nth=K (the K-th, from 1).
  over="KEY=VALUE ..." (csv): divide each value by that of the same series with these keys
  (or col=) replaced, which must match exactly one series (verified= and run= stay as in
  the query unless over= names them); op=ratio (default), change
  (ratio - 1, e.g. fmt=+.0% -> +32%) or diff (value - other). A log's over="re=REGEX
  [file=PATH]" pairs the values with the captures of a second regex (same file by default),
  in order.
  scale=EXPR multiplies by a constant made of numbers, 2^k, * and / (scale=1e6/2^22:
  ms per 2^22 atomics in ns). fmt= a Python format spec (default by col: gbps .0f,
  pct_peak .1f, x_cub/x_floor/ratio .2f, ms .3f, us .1f, change .0%; a log value without
  fmt is the captured text as it is). sep= the range's separator (default -; sep=" to "
  where the values can be negative or carry a sign).
Units and the 'x' of a ratio go after the block, in the prose. A block never starts a line
(in CommonMark a line that starts with <!-- opens an HTML block and ends the paragraph):
keep a word before it; the check says where one does.
"""
import csv
import glob
import io
import os
import re
import shlex
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import migrate_csv  # noqa: E402
import results  # noqa: E402

# How scripts/gpu_check.sh measured the committed CSVs (its sweep: --reps 50, 2^10..2^30)
SWEEP_REPS = 50

BLOCK = re.compile(r"<!-- (excerpt|table): (.*?) -->\n(.*?)<!-- /\1 -->", re.S)


def size(text):
    m = re.fullmatch(r"2\^(\d+)", text)
    return 1 << int(m.group(1)) if m else int(text)


pow2 = results.pow2


def excerpt(spec):
    path, _, region = spec.partition("#")
    with open(os.path.join(ROOT, path)) as f:
        lines = f.read().split("\n")
    if region.startswith("lines="):
        a, b = (int(x) for x in region[len("lines="):].split("-"))
        body, lang = lines[a - 1:b], "text"
    else:
        begin = [i for i, l in enumerate(lines) if l.strip() == f"// [docs:{region}]"]
        end = [i for i, l in enumerate(lines) if l.strip() == f"// [/docs:{region}]"]
        if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
            raise ValueError(f"{path}: region '{region}' not marked exactly once")
        body, lang = lines[begin[0] + 1:end[0]], "cuda"
    return f"```{lang}\n" + "\n".join(body) + "\n```\n"


def table(spec, rows):
    """The markdown of one <!-- table: ... --> directive, ending with its reproduce line."""
    kind, *rest = shlex.split(spec)
    args = dict(a.split("=", 1) for a in rest)
    device, dtype = args["device"], args["dtype"]
    if device not in results.devices(rows):
        raise ValueError(f"no rows for device '{device}'")
    steps = args["steps"].split(",") if "steps" in args else None
    if kind == "ladder":
        sizes = [size(args["n"])]
        body = results.ladder_table(rows, device, dtype, sizes[0], steps, args.get("variants") == "all")
    elif kind == "sizes":
        sizes = [size(s) for s in args["sizes"].split(",")]
        body = results.sizes_table(rows, device, dtype, sizes, steps, show_wrong=args.get("wrong") == "show",
                                   shape=args.get("shape", results.ARRAY),
                                   cub_label=args.get("cub", "DeviceReduce::Sum"))
    elif kind == "latency":
        sizes = [size(s) for s in args["sizes"].split(",")]
        body = results.latency_table(rows, device, dtype, sizes, steps, args.get("variants") == "all")
    elif kind == "shapes":  # <!-- table: shapes device=... dtype=int step=step06_x problem=segmented shapes=cols=1,cols=16 n=2^26 cub="..." -->
        shapes = args["shapes"].split(",")
        body = results.shapes_table(rows, device, dtype, args["step"], shapes, args["cub"],
                                    n=size(args["n"]) if "n" in args else None)
        flags = {"cols": "--cols", "pass": "--pass-rate"}
        key = shapes[0].split("=", 1)[0]
        values = ",".join(v.split("=", 1)[1].rstrip("%") for v in shapes)
        return (body + "\n\nReproduce (in the build directory): " +
                f"./{results.program(args['step'])} --n {args['n']} {flags[key]} {values} --dtype {dtype} --reps {SWEEP_REPS}\n")
    else:
        raise ValueError(f"unknown table kind '{kind}'")
    return body + "\n\n" + reproduce_line(listed_steps(body), sizes, dtype) + "\n"


def listed_steps(body):
    """The programs a generated table has rows for, in order, as a learner types them in the
    build directory: ./step05 for a step (steps/<name>/ exists), the full name for a second
    program of a step (step07_normalize). CUB and the floor are timed by every program."""
    found = re.findall(r"^\| (step\d\d_\w+) \|", body, flags=re.M)
    return list(dict.fromkeys(results.program(n) for n in found))


def reproduce_line(steps, sizes, dtype):
    """One command per step program; each run times CUB and the floor beside its variants.
    The blank line before it keeps markdown from reading it as a table row."""
    if not steps:
        raise ValueError("the table lists no step, so no command reproduces it")
    n = ",".join(pow2(s) for s in sizes)
    return "Reproduce (in the build directory): " + "; ".join(
        f"./{s} --n {n} --dtype {dtype} --reps {SWEEP_REPS}" for s in steps)


NUM = re.compile(r"<!-- num: (.*?) -->(.*?)<!-- /num -->")  # one line: an inline number
SERIES = ("device", "step", "variant", "dtype", "n", "shape", "batch")  # what the tables pool by median
CSV_FILTERS = SERIES + ("verified", "run")
COLS = {"gbps": ".0f", "pct_peak": ".1f", "x_cub": ".2f", "x_floor": ".2f", "ms": ".3f", "us": ".1f", "peak": ".0f",
        "ms_min": ".3f", "ms_max": ".3f", "us_min": ".1f", "us_max": ".1f"}
IN_US = {"us": "ms", "us_min": "ms_min", "us_max": "ms_max"}  # microseconds: the ms column x 1000
AGGREGATES = ("range", "min", "max", "count")


def number(text):
    """'2^20' -> 1048576, '2^31+5', '1e6', '0.5', '1048576'; None if not a number."""
    m = re.fullmatch(r"\s*2\^(\d+)\s*([+-]\s*\d+)?\s*", text)
    if m:
        return (1 << int(m.group(1))) + int((m.group(2) or "0").replace(" ", ""))
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def constant(expr):
    """scale=: numbers and 2^k joined by * and /, left to right: '1e6/2^22'."""
    parts = re.split(r"\s*([*/])\s*", expr.strip())
    factors = [number(p) for p in parts[::2]]
    if None in factors:
        raise ValueError(f"scale={expr}: only numbers, 2^k, * and /")
    value = factors[0]
    for op, x in zip(parts[1::2], factors[1:]):
        value = value * x if op == "*" else value / x
    return value


class Atom:
    """One listed value of a filter: exact (number or text) or a range of numbers a..b."""

    def __init__(self, key, text):
        self.key, self.text = key, text
        lo, sep, hi = text.partition("..")
        self.range = (number(lo), number(hi)) if sep else None
        if sep and None in self.range:
            raise ValueError(f"{key}={text}: a range needs numbers at both ends")
        self.value = number(text)

    def __call__(self, field):
        if isinstance(field, bool):
            field = "true" if field else "false"
        if self.range:
            x = number(str(field))
            return x is not None and self.range[0] <= x <= self.range[1]
        if self.key == "device":
            return field == self.text or results.slug(field) == self.text
        if self.key == "step":
            return field == self.text or results.short(field) == self.text
        if self.value is not None and number(str(field)) is not None:
            return number(str(field)) == self.value
        return str(field) == self.text


def parse_num_spec(spec):
    """'csv k=v ... flag' -> (kind, path, filters {key: text}, options {key: text or True})."""
    words = shlex.split(spec)
    if not words or words[0] not in ("csv", "log"):
        raise ValueError("a num block starts with csv or log")
    kind, path, words = words[0], None, words[1:]
    if kind == "log":
        if not words or "=" in words[0]:
            raise ValueError("log needs a file: num: log results/logs/<file> re=\"...\"")
        path, words = words[0], words[1:]
    filters, options = {}, {}
    for w in words:
        key, eq, value = w.partition("=")
        if not eq:
            if key not in AGGREGATES:
                raise ValueError(f"unknown flag '{key}' (flags: {', '.join(AGGREGATES)})")
            options[key] = True
        elif key in ("col", "fmt", "scale", "sep", "over", "op", "nth", "re", "file"):
            options[key] = value
        else:
            filters[key] = value
    if kind == "log" and filters:
        raise ValueError(f"log blocks take no filter ({', '.join(filters)})")
    if kind == "log" and "re" not in options:
        raise ValueError("log needs re=\"REGEX\"")
    if sum(k in options for k in AGGREGATES + ("nth",)) > 1:
        raise ValueError("at most one of range, min, max, count, nth")
    return kind, path, filters, options


def select(rows, filters, keys, where):
    """The rows that pass every filter; each listed value must match at least one of them."""
    atoms = {}
    for key, text in filters.items():
        if key not in keys:
            raise ValueError(f"unknown key '{key}' (keys: {', '.join(keys)})")
        atoms[key] = [] if text == "*" else [Atom(key, t) for t in text.split(",")]
    chosen = [r for r in rows if all(not a or any(x(r[k]) for x in a) for k, a in atoms.items())]
    if not chosen:
        raise ValueError(f"no row of {where} matches " + " ".join(f"{k}={v}" for k, v in filters.items()))
    for key, listed in atoms.items():
        for atom in listed:
            if not any(atom(r[key]) for r in chosen):
                raise ValueError(f"{key}={atom.text} matches no row of {where} (with the other keys)")
    return chosen


def csv_series(rows, filters, col):
    """{series key: value} of the measurement CSVs: the median of `col` over each series."""
    defaults = {"shape": results.ARRAY, "verified": "true"}
    if rows and "batch" in rows[0]:
        defaults["batch"] = str(results.SWEEP_BATCH)  # launches timed alone, as the tables take them
    filters = {**defaults, **filters}
    field = {**IN_US, "peak": "gbps"}.get(col, col)
    if col not in COLS:
        raise ValueError(f"col={col}: one of {', '.join(COLS)}")
    best = filters.get("variant") == "best"
    if best:
        filters = {k: v for k, v in filters.items() if k != "variant"}
    chosen = select(rows, filters, CSV_FILTERS, "results/*/step*.csv")
    by_series = {}
    for r in chosen:
        by_series.setdefault(tuple(r.get(k) for k in SERIES), []).append(r)
    if best:  # per (device, step, dtype, n, shape): the variant of the highest median GB/s
        fastest = {}
        for key, rs in by_series.items():
            if results.is_reference(key[1]):
                continue
            place = key[:2] + key[3:]
            g = statistics.median(r["gbps"] for r in rs)
            if place not in fastest or g > fastest[place][0]:
                fastest[place] = (g, key)
        if not fastest:
            raise ValueError("variant=best: the query matches only CUB and floor rows")
        by_series = {key: by_series[key] for _, key in fastest.values()}
    values = {}
    for key, rs in by_series.items():
        xs = [r[field] for r in rs if r.get(field) is not None
              and not (field in results.RATIO_FIELDS and r[field] == results.NOT_MEASURED)]
        if not xs:
            raise ValueError(f"{col} was not measured for {' '.join(str(k) for k in key)}")
        values[key] = results.peak(rows, key[0]) if col == "peak" else statistics.median(xs) * (1000 if col in IN_US else 1)
    return values


def file_series(path, filters, col):
    """{row number: value} of another committed CSV: every column filters, every row is a series."""
    with open(os.path.join(ROOT, path), newline="") as f:
        table_rows = list(csv.DictReader(f))
    if not table_rows or col not in table_rows[0]:
        raise ValueError(f"{path} has no column '{col}'")
    chosen = select(table_rows, filters, list(table_rows[0]), path)
    values = {}
    for r in chosen:
        x = number(r[col])
        if x is None:
            raise ValueError(f"{path}: {col}='{r[col]}' is not a number")
        values[tuple(r[k] for k in r)] = x
    return values, list(table_rows[0])


def csv_values(filters, options, rows):
    """The numbers of a csv num block, one per series, after over=/op=."""
    col, path = options.get("col", "gbps"), options.get("file")
    if path:
        values, columns = file_series(path, filters, col)
        identity = list(filters)  # a row pairs with the row that has its values in these columns
    else:
        values, columns, identity = csv_series(rows, filters, col), SERIES, SERIES
    if "over" not in options:
        if "op" in options:
            raise ValueError("op= needs over=")
        return [(key, value) for key, value in values.items()]
    changes = dict(w.split("=", 1) for w in shlex.split(options["over"]))
    other_col = changes.pop("col", col)
    op = options.get("op", "ratio")
    out = []
    for key, value in values.items():
        mine = dict(zip(columns, key))
        other = {k: str(mine[k]) for k in identity}
        other.update(changes)
        if not path:  # what the series key does not hold comes from this query unless over= changes it
            other["verified"] = changes.get("verified", filters.get("verified", "true"))
            if "run" in filters or "run" in changes:
                other["run"] = changes.get("run", filters.get("run"))
        found = (file_series(path, other, other_col)[0] if path else csv_series(rows, other, other_col))
        if len(found) != 1:
            raise ValueError(f"over: {len(found)} series match {other}, not one")
        (base,) = found.values()
        out.append((key, combine(value, base, op)))
    return out


def combine(value, base, op):
    if op not in ("ratio", "change", "diff"):
        raise ValueError(f"op={op}: ratio, change or diff")
    if op == "diff":
        return value - base
    if base == 0:
        raise ValueError("over: division by 0")
    return value / base - (op == "change")


def log_values(paths, options):
    """The captures of re= in one or more committed text files (a comma list or a glob)."""
    files = []
    for path in paths.split(","):
        found = sorted(glob.glob(os.path.join(ROOT, path)))
        if not found:
            raise ValueError(f"no file {path}")
        files += found
    values = []
    for full in files:
        with open(full) as f:
            text = f.read()
        matches = list(re.finditer(options["re"], text, flags=re.M))
        if not matches:
            raise ValueError(f"re=\"{options['re']}\" matches nothing in {os.path.relpath(full, ROOT)}")
        values += [(f"{os.path.relpath(full, ROOT)}:{text[:m.start()].count(chr(10)) + 1}",
                    m.group(1) if m.re.groups else m.group(0)) for m in matches]
    if options.get("count"):
        return [("matches", len(values))]
    if "over" not in options:
        if "op" in options:
            raise ValueError("op= needs over=")
        return values
    other = dict(w.split("=", 1) for w in shlex.split(options["over"]))
    if "re" not in other or set(other) - {"re", "file"}:
        raise ValueError('a log\'s over= takes re="REGEX" and optionally file=PATH (default: the same file)')
    bases = log_values(other.get("file", paths), {"re": other["re"]})
    if len(bases) != len(values):
        raise ValueError(f"over: {len(values)} values over {len(bases)}; they pair in order, so the counts must match")
    out = []
    for (label, v), (_, b) in zip(values, bases):
        x, y = number(v), number(b)
        if x is None or y is None:
            raise ValueError(f"over: '{v}' / '{b}' are not numbers")
        out.append((label, combine(x, y, options.get("op", "ratio"))))
    return out


def inline_number(spec, rows):
    """The text an <!-- num: ... --> block must hold."""
    kind, path, filters, options = parse_num_spec(spec)
    if kind == "csv":
        labelled = csv_values(filters, options, rows)
        col = options.get("col", "gbps")
        default = {"ratio": ".2f", "change": ".0%", "diff": COLS.get(col, "g")}[options.get("op", "ratio")] \
            if "over" in options else COLS.get(col, "g")
        if options.get("count"):
            return str(len(labelled))
    else:  # count: one value, the number of matches; a captured text is shown as it is
        labelled = log_values(path, options)
        default = {"ratio": ".2f", "change": ".0%", "diff": "g"}[options.get("op", "ratio")] if "over" in options else None
    values = [v for _, v in labelled]
    fmt = options.get("fmt", default)
    scale = constant(options["scale"]) if "scale" in options else None

    def shown(v):
        if fmt is None and scale is None:
            return str(v)
        x = number(str(v)) if isinstance(v, str) else v
        if x is None:
            raise ValueError(f"'{v}' is not a number (fmt=/scale= need one)")
        return format(x * (scale if scale is not None else 1), fmt or "g")

    if "nth" in options:
        k = int(options["nth"])
        if not 1 <= k <= len(values):
            raise ValueError(f"nth={k}: there are {len(values)} values")
        return shown(values[k - 1])
    if len(values) > 1 and not any(options.get(a) for a in ("range", "min", "max")):
        listed = "; ".join(" ".join(str(x) for x in label) if isinstance(label, tuple) else label
                           for label, _ in labelled[:4])
        raise ValueError(f"{len(values)} values match ({listed}{'; ...' if len(values) > 4 else ''}): "
                         f"narrow the query or add range, min, max, count or nth=K")
    as_number = [number(str(v)) if isinstance(v, str) else v for v in values]
    if len(values) > 1 and None in as_number:
        raise ValueError("range/min/max need numbers")
    order = sorted(range(len(values)), key=lambda i: as_number[i])
    lo, hi = shown(values[order[0]]), shown(values[order[-1]])
    if options.get("min"):
        return lo
    if options.get("max"):
        return hi
    return lo if lo == hi else f"{lo}{options.get('sep', '-')}{hi}"


def load_measurements(paths):
    """Rows of the measurement CSVs. A file still in the old 10-column schema is read
    through migrate_csv (in memory, x floor "not measured") so that the check keeps
    working until the sweep is run again; results.load itself stays strict."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            text = f.read()
        if text.split("\n", 1)[0].strip() == ",".join(results.OLD_COLUMNS):
            print(f"docs_sync: {os.path.relpath(path, ROOT)} is in the old schema; read through "
                  f"plots/migrate_csv.py (no floor)", file=sys.stderr)
            text = migrate_csv.migrate_text(text, path)
        for r in results.parse(io.StringIO(text), path):
            r["run"] = os.path.splitext(os.path.basename(path))[0]  # which program's CSV (num blocks' run=)
            rows.append(r)
    return rows


def markdown_files():
    """README.md, CONTRIBUTING.md, the chapters and docs/evidence/*.md (the evidence pages)."""
    top = [os.path.join(ROOT, name) for name in ("README.md", "CONTRIBUTING.md")]
    return ([p for p in top if os.path.exists(p)] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
            + sorted(glob.glob(os.path.join(ROOT, "docs", "evidence", "*.md"))))


def sync(paths, write, rows=None):
    """Returns a list of problems (empty when every block matches its source)."""
    if rows is None:
        rows = load_measurements(sorted(glob.glob(os.path.join(ROOT, "results", "*", "step*.csv"))))
    problems = []
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()

        def fresh(m):
            kind, spec, old = m.group(1), m.group(2), m.group(3)
            try:
                new = excerpt(spec) if kind == "excerpt" else table(spec, rows)
            except (OSError, ValueError, KeyError) as e:
                problems.append(f"{os.path.relpath(path, ROOT)}: {kind} '{spec}': {e}")
                return m.group(0)
            if new != old:
                line = text[:m.start()].count("\n") + 1
                problems.append(f"{os.path.relpath(path, ROOT)}:{line}: {kind} '{spec}' differs from its source")
            return f"<!-- {kind}: {spec} -->\n{new}<!-- /{kind} -->"

        updated = BLOCK.sub(fresh, text)

        def fresh_number(m):
            spec, old = m.group(1), m.group(2)
            where = f"{os.path.relpath(path, ROOT)}:{updated[:m.start()].count(chr(10)) + 1}"
            try:
                new = inline_number(spec, rows)
            except (OSError, ValueError, KeyError, re.error) as e:
                problems.append(f"{where}: num '{spec}': {e}")
                return m.group(0)
            if new != old:
                problems.append(f"{where}: num '{spec}' differs from its source: the text says {old}, "
                                f"the source {new}")
            return f"<!-- num: {spec} -->{new}<!-- /num -->"

        updated = NUM.sub(fresh_number, updated)
        whole = [m.span() for m in NUM.finditer(updated)]
        for m in re.finditer(r"<!-- /?num\b", updated):  # every piece of a num block belongs to a whole one
            if not any(a <= m.start() < b for a, b in whole):
                problems.append(f"{os.path.relpath(path, ROOT)}:{updated[:m.start()].count(chr(10)) + 1}: a broken "
                                f"num block (it must be <!-- num: QUERY -->VALUE<!-- /num --> on one line)")
        for m in re.finditer(r"^[ \t>]*<!-- num:", updated, flags=re.M):
            # CommonMark: a line that starts with <!-- opens an HTML block, even inside a paragraph
            problems.append(f"{os.path.relpath(path, ROOT)}:{updated[:m.start()].count(chr(10)) + 1}: a num block "
                            f"starts the line, which would break the paragraph: put a word before it")
        if write and updated != text:
            with open(path, "w") as f:
                f.write(updated)
    return problems


if __name__ == "__main__":
    if set(sys.argv[1:]) & {"-h", "--help"}:
        print(__doc__)
        sys.exit(0)
    write = "--write" in sys.argv[1:]
    only = [os.path.abspath(a) for a in sys.argv[1:] if not a.startswith("--")]  # FILE...: just these
    problems = sync(only or markdown_files(), write)
    for p in problems:
        print(p)
    if write:
        print("rewrote blocks" + (f"; {len(problems)} were stale or broken" if problems else ": all were current"))
        sys.exit(1 if any("differs" not in p for p in problems) else 0)
    if problems:
        print("run: python3 scripts/maintainer/docs_sync.py --write   (then review the diff)")
    sys.exit(1 if problems else 0)
