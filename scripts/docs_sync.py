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
    ...generated from plots/data/*.csv...
    <!-- /table -->
"""
import glob
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import results  # noqa: E402

BLOCK = re.compile(r"<!-- (excerpt|table): (.*?) -->\n(.*?)<!-- /\1 -->", re.S)


def size(text):
    m = re.fullmatch(r"2\^(\d+)", text)
    return 1 << int(m.group(1)) if m else int(text)


def pow2(n):
    e = n.bit_length() - 1
    return f"2^{e}" if n == 1 << e else str(n)


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
    kind, *rest = shlex.split(spec)
    args = dict(a.split("=", 1) for a in rest)
    device, dtype = args["device"], args["dtype"]
    if device not in results.devices(rows):
        raise ValueError(f"no rows for device '{device}'")
    steps = args["steps"].split(",") if "steps" in args else None
    if kind == "ladder":
        body = results.ladder_table(rows, device, dtype, size(args["n"]), steps, args.get("variants") == "all")
    elif kind == "sizes":
        sizes = [size(s) for s in args["sizes"].split(",")]
        c = results.curves(rows, device, dtype, include_wrong=args.get("wrong") == "show")
        wrong = {(r["step"], r["variant"]) for r in rows if not r["verified"] and r["device"] == device}
        cub = c.get(("cub", "cub"), {})
        lines = ["| step | variant | " + " | ".join(f"n = {pow2(n)}" for n in sizes) + " |",
                 "|---|---|" + "---:|" * len(sizes)]
        for (step, variant), by_n in sorted(c.items()):
            if step == "cub" or (steps and results.short(step) not in steps):
                continue
            cells = [f"{by_n[n]:.0f} GB/s ({by_n[n] / cub[n]:.2f}x)" if n in by_n and n in cub else "-" for n in sizes]
            label = f"{variant} (wrong sum)" if (step, variant) in wrong else variant
            lines.append(f"| {step} | {label} | " + " | ".join(cells) + " |")
        lines.append("| CUB | DeviceReduce::Sum | " + " | ".join(f"{cub[n]:.0f} GB/s" if n in cub else "-" for n in sizes) + " |")
        body = "\n".join(lines)
    else:
        raise ValueError(f"unknown table kind '{kind}'")
    return body + "\n"


def markdown_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def sync(paths, write, rows=None):
    """Returns a list of problems (empty when every block matches its source)."""
    if rows is None:
        rows = results.load(sorted(glob.glob(os.path.join(ROOT, "plots", "data", "*.csv"))))
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
