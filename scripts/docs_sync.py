#!/usr/bin/env python3
"""Keeps the code excerpts and result tables in the markdown files true to their sources.

    docs_sync.py            check: exit 1 and say where a block differs from its source
    docs_sync.py --write    rewrite every block from its source

Blocks in README.md and docs/*.md:

    <!-- excerpt: steps/step00_baseline/step00_baseline.cu#block-tree -->
    ```cuda
    ...the lines between `// [docs:block-tree]` and `// [/docs:block-tree]`...
    ```
    <!-- /excerpt -->

    <!-- excerpt: docs/logs/racecheck_step01_volatile.log#lines=1-8 -->   (a line range)

    <!-- table: ladder device="NVIDIA H200" dtype=int n=2^30 [steps=step00,step05] [variants=all] -->
    <!-- table: sizes device="NVIDIA H200" dtype=int sizes=2^20,2^24,2^30 steps=step03,step04 [wrong=show] -->
    <!-- table: latency device="NVIDIA H200" dtype=int sizes=2^10,2^16,2^20 [steps=step03,step05] [variants=all] -->
    ...generated from plots/data/<gpu>/step*.csv, then a blank line and the command that measures it:
    Reproduce (in the build directory): ./step03 --n 2^20,2^24,2^30 --dtype int --reps 50; ./step04 ...
    <!-- /table -->

ladder: GB/s, % of peak, x CUB and x floor at one n (see plots/results.py ladder_table);
sizes: 'GB/s (x CUB)' per size; latency: median microseconds per size. x CUB is always
the row's own ratio to CUB timed in the same run.
"""
import glob
import io
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
        body = results.shapes_table(rows, device, dtype, args["step"], shapes, args["cub"])
        flags = {"cols": "--cols", "pass": "--pass-rate"}
        key = shapes[0].split("=", 1)[0]
        values = ",".join(v.split("=", 1)[1].rstrip("%") for v in shapes)
        return (body + "\n\nReproduce (in the build directory): " +
                f"./{args['step'][:6]} --problem {args['problem']} --n {args['n']} {flags[key]} {values} "
                f"--dtype {dtype} --reps {SWEEP_REPS}\n")
    else:
        raise ValueError(f"unknown table kind '{kind}'")
    return body + "\n\n" + reproduce_line(listed_steps(body), sizes, dtype) + "\n"


def listed_steps(body):
    """The programs a generated table has rows for, in order, as a learner types them in the
    build directory: ./step05 for a step (steps/<name>/ exists), the full name for a second
    program of a step (step07_normalize). CUB and the floor are timed by every program."""
    found = re.findall(r"^\| (step\d\d_\w+) \|", body, flags=re.M)
    names = [n[:6] if os.path.isdir(os.path.join(ROOT, "steps", n)) else n for n in found]
    return list(dict.fromkeys(names))


def reproduce_line(steps, sizes, dtype):
    """One command per step program; each run times CUB and the floor beside its variants.
    The blank line before it keeps markdown from reading it as a table row."""
    if not steps:
        raise ValueError("the table lists no step, so no command reproduces it")
    n = ",".join(pow2(s) for s in sizes)
    return "Reproduce (in the build directory): " + "; ".join(
        f"./{s} --n {n} --dtype {dtype} --reps {SWEEP_REPS}" for s in steps)


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
        rows += results.parse(io.StringIO(text), path)
    return rows


def markdown_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def sync(paths, write, rows=None):
    """Returns a list of problems (empty when every block matches its source)."""
    if rows is None:
        rows = load_measurements(sorted(glob.glob(os.path.join(ROOT, "plots", "data", "*", "step*.csv"))))
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
        if write and updated != text:
            with open(path, "w") as f:
                f.write(updated)
    return problems


if __name__ == "__main__":
    write = "--write" in sys.argv[1:]
    problems = sync(markdown_files(), write)
    for p in problems:
        print(p)
    if write:
        print("rewrote blocks" + (f"; {len(problems)} were stale or broken" if problems else ": all were current"))
        sys.exit(1 if any("differs" not in p for p in problems) else 0)
    if problems:
        print("run: python3 scripts/docs_sync.py --write   (then review the diff)")
    sys.exit(1 if problems else 0)
