#!/usr/bin/env python3
"""Step 10's kernel source for the wavefront model, as the model compiles it.

    prepare_source.py OUT_DIR [--step10 FILE] [--portable FILE]

Writes OUT_DIR/step10_kernels.inc: step10_hip.cu up to the line `#if !PORT_HIP` (the kernels
and their launchers; the two mains after it are left out), with one change: a launch
`kernel<<<grid, block, shared, stream>>>(args)` becomes
`::wave_model::launch(kernel, grid, block, shared, stream)(args)`, because the chevrons are
not C++ (hipcc's front end reads them). And OUT_DIR/portable.hpp, a copy, which the source's
`#include "portable.hpp"` finds beside it: its HIP branch, with the model's <hip/...> headers.
Nothing else is changed; the mutation test (mutants.py) passes edited copies.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STEP10 = os.path.join(HERE, "..", "..", "steps", "step10_hip")
CUT = "#if !PORT_HIP"
CHEVRON = re.compile(r"([A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(", re.S)


def kernel_source(text):
    lines = text.splitlines(keepends=True)
    cut = [i for i, line in enumerate(lines) if line.strip() == CUT]
    if len(cut) != 1:
        raise SystemExit(f"prepare_source.py: expected one line '{CUT}' in step10_hip.cu (before its mains), found {len(cut)}")
    body = "".join(lines[:cut[0]])
    return CHEVRON.sub(lambda m: f"::wave_model::launch({m.group(1)}, {m.group(2)})(", body)


def write(out_dir, step10_text, portable_text):
    os.makedirs(out_dir, exist_ok=True)
    source = kernel_source(step10_text)
    if "<<<" in source:
        raise SystemExit("prepare_source.py: a launch the model cannot rewrite is left in step10_hip.cu")
    for name, text in (("step10_kernels.inc", source), ("portable.hpp", portable_text)):
        path = os.path.join(out_dir, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:  # unchanged files keep their time stamp (no needless rebuild)
            with open(path, "w") as f:
                f.write(text)
    with open(os.path.join(out_dir, "prepared.stamp"), "w") as f:  # the build's record that this ran
        f.write("")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    a = p.parse_args()
    with open(os.path.join(STEP10, "step10_hip.cu")) as f, open(os.path.join(STEP10, "portable.hpp")) as g:
        write(a.out_dir, f.read(), g.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
