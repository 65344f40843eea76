#!/usr/bin/env python3
"""Where steps 00-09 (and common/) assume a 32-lane warp: chapter 10's audit table.

    wave_audit.py            print the table; exit 1 when docs/10_hip.md's copy differs or
                             step 10 has a width assumption outside portable.hpp's one line
    wave_audit.py --write    rewrite the table in docs/10_hip.md
    wave_audit.py --scan F   the findings in file F (tests use it on a mutated copy)

A finding is a line of code (comments and strings left out) that matches one of the kinds
below. The table lists each with its file:line, so a new literal 32 mask, tile or lane index
changes the table and fails the host test until the chapter says where it is.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHAPTER = os.path.join(ROOT, "docs", "10_hip.md")
BEGIN, END = "<!-- wave-audit: scripts/maintainer/wave_audit.py --write -->", "<!-- /wave-audit -->"
# The one place step 10 writes the width: CUDA's branch of the portability header (after its
# `#else`; the same line in the HIP branch would be a finding).
ALLOWED = ("portable.hpp", "constexpr int kWaveSize = 32;")

# kind: (regex, what it assumes)
KINDS = {
    "wave-size": (r"\b(kWaveSize|warpSize|kWarpSize)\s*=\s*\d+", "the width as a number"),
    "mask": (r"0x[fF]{8}u?\b.*_sync|kFullMask\s*=\s*0x[fF]{8}|_sync\(\s*0x[fF]{8}", "a 32-bit lane mask"),
    "shuffle-16": (r"offset\s*=\s*(16\b|32\s*/\s*2\b)", "a shuffle tree that starts at 16 lanes apart"),
    "tile-32": (r"(tiled_partition|thread_block_tile)<32>", "a 32-thread tile as the warp"),
    "lane-index": (r"threadIdx\.x\)?\s*(/\s*32\b|%\s*32\b|&\s*31\b|>>\s*5\b|<\s*32\b|&\s*\(\s*32\s*-\s*1\s*\))",
                   "warp and lane numbers from 32"),
    "per-warp-slots": (r"__shared__.*\[\s*(kThreads\s*/\s*)?32\s*\]", "one slot per 32 threads"),
    "warps-per-block": (r"(blockDim\.x|kThreads)\s*/\s*32\b|\b16\s*\*\s*32\b", "a block's warp count from 32"),
    "lockstep-32": (r"tid\s*<\s*32\b|tid\s*\+\s*32\b|offset\s*=\s*32\b(?!\s*/)|stride\s*>\s*32\b",
                    "step 01's last 32 threads as one warp"),
    "stride-32": (r"\+=\s*32\b|,\s*32\)\s*;", "a warp's 32 lanes as a loop stride"),
}


def code_only(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)  # strings
    return line.split("//")[0]


def scan(path):
    rel = os.path.relpath(path, ROOT)
    found = []
    after_else = False
    with open(path) as f:
        for number, line in enumerate(f, 1):
            code = code_only(line)
            after_else |= code.strip() == "#else"
            kinds = [k for k, (rx, _) in KINDS.items() if re.search(rx, code)]
            if kinds and not (after_else and (os.path.basename(path), code.strip()) == ALLOWED):
                found.append((rel, number, code.strip(), kinds))
    return found


def ladder_files():
    files = []
    for pattern in ("steps/step0*/*.cu", "steps/step0*/*.cuh", "common/*.cuh"):
        files += glob.glob(os.path.join(ROOT, pattern))
    return sorted(files)


def table():
    rows = ["| where | code | assumes |", "|---|---|---|"]
    for path in ladder_files():
        for rel, number, code, kinds in scan(path):
            code = code if len(code) <= 70 else code[:67] + "..."
            rows.append(f"| [`{rel}:{number}`](../{rel}#L{number}) | `{code.replace('|', '&#124;')}` | {', '.join(kinds)} |")
    return "\n".join(rows)


def chapter_parts():
    with open(CHAPTER) as f:
        text = f.read()
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text, a, b


def main():
    if sys.argv[1:2] == ["--scan"]:
        for rel, number, code, kinds in scan(sys.argv[2]):
            print(f"{rel}:{number}: {', '.join(kinds)}: {code}")
        return 0
    fresh = table()
    text, a, b = chapter_parts()
    if sys.argv[1:2] == ["--write"]:
        with open(CHAPTER, "w") as f:
            f.write(text[:a] + "\n" + fresh + "\n" + text[b:])
        return 0
    status = 0
    if text[a:b].strip() != fresh.strip():
        print("docs/10_hip.md: the wave audit table is stale (a width assumption was added, moved or removed); "
              "fix: python3 scripts/maintainer/wave_audit.py --write")
        status = 1
    step10 = glob.glob(os.path.join(ROOT, "steps", "step10_hip", "*"))
    for path in step10:
        for rel, number, code, kinds in scan(path):
            print(f"{rel}:{number}: step 10 assumes a width ({', '.join(kinds)}): {code}")
            status = 1
    print(fresh if status == 0 else "", end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
