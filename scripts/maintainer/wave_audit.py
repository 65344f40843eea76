#!/usr/bin/env python3
"""Where the ladder assumes a 32-lane warp: chapter 10's audit, read from the code itself.

    wave_audit.py            print the findings; exit 1 when a generated table in the docs
                             differs, or step 10 has a finding
    wave_audit.py --write    rewrite the generated tables (docs/10_hip.md: one row per kind;
                             docs/evidence/10_hip.md: every finding)
    wave_audit.py --scan F   the findings in file F (the tests use it on edited copies)

It reads every code file of every steps/step*/ folder and of common/ (a new step's folder is
read too; a file type it does not know is reported, never skipped in silence). A finding is
code (comments and strings blanked, a statement read across its lines) that matches a kind
below. Findings are keyed by their code text, not by line numbers, so moving or rewriting a
line correctly changes nothing, and a new 32 changes the tables. A line that carries the
comment `wave-audit: allow` is not a finding (portable.hpp's CUDA branch: NVIDIA's 32).
The patterns are a net, not a proof: a 32 hidden in a named constant gets through (the
wavefront model, tests/wave_model/, runs step 10 at both widths for that).
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHAPTER = os.path.join(ROOT, "docs", "10_hip.md")
EVIDENCE = os.path.join(ROOT, "docs", "evidence", "10_hip.md")
BLOCKS = {  # marker: (file, table maker)
    "kinds": CHAPTER,
    "lines": EVIDENCE,
}
CODE = (".cu", ".cuh", ".hpp", ".h", ".cpp", ".cc", ".hip")
NOT_CODE = (".txt", ".md")  # CMakeLists.txt, notes
CLEAN = ("steps/step10_hip",)  # folders that must have no finding
ALLOW = "wave-audit: allow"
OPERAND = r"(?:[\w\]\)])"  # what an operator applies to: a name, a call, an element
SUF = r"(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)?"  # an integer literal's suffix: 32u, 32ul, 31UL

# kind: (regex, what the line assumes, on a 64-wide wavefront, the portable form)
KINDS = {
    "mask": (r"\b0[xX][fF]{8}(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)?\b|~\s*0[uU]\b",
             "a 32-bit all-ones word (`0xffffffff`, `~0u`): a mask of 32 lanes",
             "names lanes 0-31 only: a `__ballot` compared with it, or a mask built from it, leaves lanes 32-63 out",
             "HIP 5.2 takes no masks; compare with `__ballot`'s 64 bits, `~port::lane_mask(0)` where a mask is needed"),
    "wave-size": (r"\b\w*(?:[Ww]arp|[Ww]ave|WARP|WAVE)_?(?:[Ss]ize|SIZE)\w*\s*=\s*\d+|#\s*define\s+\w*(?:WARP|WAVE)\w*\s+\d+",
                  "the width written as a number",
                  "right only where the hardware's width matches it",
                  "the compiler's width (`__AMDGCN_WAVEFRONT_SIZE`, `warpSize` on HIP 5.2), once"),
    "lane-index": (OPERAND + rf"\s*(?:&\s*31{SUF}\b|&\s*0[xX]1[fF]{SUF}\b|%\s*32{SUF}\b|>>\s*5{SUF}\b|&\s*\(\s*32{SUF}\s*-\s*1{SUF}\s*\))",
                   "lane and warp numbers from 32 (`& 31`, `% 32`, `>> 5`)",
                   "right when every operation of the group is 32 wide (a tile of 32); wrong beside a wavefront-wide one",
                   "`% kWaveSize`, `tile.thread_rank()`"),
    "warps-per-block": (OPERAND + rf"\s*/\s*32{SUF}\b|\b16{SUF}\s*\*\s*32{SUF}\b",
                        "a count of 32-thread warps (`/ 32`)",
                        "counts groups of 32: right for tiles of 32, too many for wavefronts of 64",
                        "`/ kWaveSize` where the wavefronts are meant"),
    "per-warp-slots": (rf"__shared__[^;]*\[\s*32{SUF}\s*\]",
                       "one shared slot per 32-thread warp",
                       "right: 32 slots hold a block of 1024 in groups of 32, twice what 16 wavefronts of 64 need",
                       "`[kThreads / kWaveSize]`"),
    "shuffle-16": (rf"for\s*\([^;]*?\b(\w+)\s*=\s*(?:16|32{SUF}\s*/\s*2|32{SUF}\s*>>\s*1){SUF}\s*;[^;]*;\s*(?:\1\s*(?:/=\s*2|>>=\s*1)|\1\s*=\s*\1\s*(?:/\s*2|>>\s*1))",
                   "a shuffle tree that starts 16 lanes apart",
                   "lane 0 ends with its 32-lane half only; right where each 32-lane group reports its own sum",
                   "start at `kWaveSize / 2`"),
    "ballot-32bit": (r"\b(?:unsigned(?:\s+int)?|uint32_t)\s+\w+\s*=\s*(?:__ballot\w*|\w+\s*\.\s*ballot)\s*\(",
                     "a ballot held in 32 bits (`unsigned b = __ballot(`, `= warp.ballot(`)",
                     "HIP's `__ballot` returns 64 bits: a 32-bit variable keeps lanes 0-31 and drops 32-63",
                     "`port::lane_mask` (64 bits on HIP), `__popcll`"),
    "shuffle-width-32": (None,  # found by reading the shuffle's arguments (shuffle_widths)
                         "a shuffle of width 32",
                         "splits the wavefront into two 32-lane halves; wrong under a tree over 64 lanes",
                         "the width `kWaveSize` (or none: HIP's default is `warpSize`)"),
    "tile-32": (rf"\b(?:tiled_partition|thread_block_tile)\s*<\s*32{SUF}\s*>",
                "a 32-thread tile",
                "still 32 threads: half a wavefront, right (HIP allows tiles up to the wavefront)",
                "keep it; `tiled_partition<kWaveSize>` where the whole wavefront is meant"),
    "compare-32": (rf"[\w\]]\s*(?:<=?|>=?|[=!]=)\s*32{SUF}\b(?!\s*[>,])|\w\s*[-+]\s*32{SUF}\b|\b\w+\s*=\s*32{SUF}\b(?!\s*/)",
                   "32 as a count of threads (`< 32`, `tid + 32`, `= 32`)",
                   "right where it counts a group of 32; wrong where it stands for the hardware's lockstep",
                   "the group's own size"),
    "stride-32": (rf"\+=\s*32{SUF}\b|,\s*32{SUF}\s*\)\s*[;,]",
                  "32 as a stride or an argument",
                  "right for a group of 32 lanes; wrong for a loop over a wavefront's lanes",
                  "the group's size"),
}
SHUFFLE = re.compile(r"\b__shfl(?:_up|_down|_xor)?(_sync)?\s*\(")


def blank_comments_and_strings(text):
    """The text with comments, string and char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def shuffle_widths(code):
    """Offsets of shuffles whose width argument is the literal 32."""
    hits = []
    for m in SHUFFLE.finditer(code):
        depth, args, cur, j = 1, [], "", m.end()
        while j < len(code) and depth:
            ch = code[j]
            depth += ch in "([{"
            depth -= ch in ")]}"
            if depth == 1 and ch == ",":
                args.append(cur)
                cur = ""
            elif depth:
                cur += ch
            j += 1
        args.append(cur)
        width_at = 3 if m.group(1) else 2
        if len(args) > width_at and re.fullmatch(r"32" + SUF, args[width_at].strip()):
            hits.append(m.start())
    return hits


def scan(path):
    """[(code, kinds)] for each finding in `path`, in file order (code: the line, trimmed)."""
    with open(path) as f:
        raw = f.read()
    code = blank_comments_and_strings(raw)
    raw_lines, code_lines = raw.splitlines(), code.splitlines()
    starts = [0]
    for line in code_lines:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(offset):
        lo, hi = 0, len(code_lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    kinds_at = {}
    for kind, (rx, *_) in KINDS.items():
        if rx is None:
            offsets = shuffle_widths(code)
        else:
            offsets = [m.start() for m in re.finditer(rx, code)]
        for off in offsets:
            kinds_at.setdefault(line_of(off), [])
            if kind not in kinds_at[line_of(off)]:
                kinds_at[line_of(off)].append(kind)
    found = []
    for number in sorted(kinds_at):
        if ALLOW in raw_lines[number]:
            continue
        found.append((code_lines[number].strip(), kinds_at[number]))
    return found


def audited_files():
    """(code files, files of unknown type) under steps/step*/ and common/."""
    files, unknown = [], []
    for folder in sorted(glob.glob(os.path.join(ROOT, "steps", "step*"))) + [os.path.join(ROOT, "common")]:
        for dirpath, _, names in os.walk(folder):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                if name.endswith(CODE):
                    files.append(path)
                elif not name.endswith(NOT_CODE):
                    unknown.append(path)
    return sorted(files), unknown


def findings():
    """{relative path: [(code, kinds, count)]}: each distinct line once, with how often it occurs."""
    out = {}
    for path in audited_files()[0]:
        rows = []
        for code, kinds in scan(path):
            for row in rows:
                if row[0] == code:
                    row[2] += 1
                    break
            else:
                rows.append([code, kinds, 1])
        if rows:
            out[os.path.relpath(path, ROOT)] = rows
    return out


def cell(code):
    code = code if len(code) <= 80 else code[:77] + "..."
    return "`" + code.replace("|", "&#124;") + "`"


def step_of(rel):
    m = re.match(r"steps/(step\d+)", rel)
    return m.group(1) if m else os.path.dirname(rel) + "/"


def kinds_table(found):
    rows = ["| kind | lines | where | on a 64-wide wavefront | portable form |", "|---|---|---|---|---|"]
    for kind, (_, what, on64, portable) in KINDS.items():
        where, count = [], 0
        for rel, items in found.items():
            hits = sum(c for _, kinds, c in items if kind in kinds)
            if hits:
                count += hits
                if step_of(rel) not in where:
                    where.append(step_of(rel))
        rows.append(f"| {kind}: {what} | {count} | {', '.join(where) or '-'} | {on64} | {portable} |")
    return "\n".join(rows)


def lines_table(found):
    rows = ["| file | code | kinds |", "|---|---|---|"]
    for rel, items in found.items():
        for code, kinds, count in items:
            times = f" ({count} lines)" if count > 1 else ""
            rows.append(f"| [`{rel}`](../../{rel}) | {cell(code)}{times} | {', '.join(kinds)} |")
    return "\n".join(rows)


def marker(name):
    return f"<!-- wave-audit: {name} (scripts/maintainer/wave_audit.py --write) -->", "<!-- /wave-audit -->"


def block_parts(path, name):
    with open(path) as f:
        text = f.read()
    begin, end = marker(name)
    if begin not in text:
        return text, None, None
    a = text.index(begin) + len(begin)
    return text, a, text.index(end, a)


def main(argv):
    if argv[:1] == ["--scan"]:
        for path in argv[1:]:
            for code, kinds in scan(path):
                print(f"{path}: {', '.join(kinds)}: {code}")
        return 0
    found = findings()
    fresh = {"kinds": kinds_table(found), "lines": lines_table(found)}
    status = 0
    _, unknown = audited_files()
    for path in unknown:
        print(f"{os.path.relpath(path, ROOT)}: not read (not a known code file type: add it to CODE or NOT_CODE)")
        status = 1
    for rel, items in found.items():
        if rel.startswith(CLEAN):
            for code, kinds, _ in items:
                print(f"{rel}: step 10 assumes a width ({', '.join(kinds)}): {code}")
                status = 1
    for name, path in BLOCKS.items():
        text, a, b = block_parts(path, name)
        rel = os.path.relpath(path, ROOT)
        if a is None:
            print(f"{rel}: no '{marker(name)[0]}' block")
            status = 1
        elif argv[:1] == ["--write"]:
            with open(path, "w") as f:
                f.write(text[:a] + "\n" + fresh[name] + "\n" + text[b:])
        elif text[a:b].strip() != fresh[name].strip():
            print(f"{rel}: the wave audit's '{name}' table is stale (a width assumption was added, changed or "
                  f"removed); fix: python3 scripts/maintainer/wave_audit.py --write")
            status = 1
    if argv[:1] != ["--write"]:
        total = sum(c for items in found.values() for _, _, c in items)
        print(f"wave audit: {total} lines in {len(found)} files of {len(audited_files()[0])} read")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
