#!/usr/bin/env python3
"""The proof that the checks can fail: broken copies of a step's kernel must be rejected.

    mutation.py list                          names of the mutants (CMake builds one program each)
    mutation.py source NAME                   the step source a mutant is made from (relative path)
    mutation.py write NAME OUT.cu             write the mutated source (CMake calls this at build time)
    mutation.py run BUILD_DIR [LOG]           run every mutant with --check; exit 0 only if each
                                              required rejection happened (77 without a GPU)

Each mutant is the clean source with a few exact text replacements; a replacement that no
longer matches exactly once stops the build, so the mutants cannot silently drift away from
the code they break. The step files themselves stay clean.

What must be rejected: every run in int (full-range data, exact modulo 2^32). In float,
every run whose loss is larger than the float result's own rounding allowance: the lost
vectors and warps, the guard value read past the end, and the 1..3 lost head or tail
elements up to n = 2^20+3. A few lost elements at n >= 2^24 (tol 0.22 there, while one
element is uniform in [-1, 1)) and `drop_4_elements` are recorded, not required: seeing them
in float is luck (see docs/README.md, "Verification"). Step 07's packed_no_wait is a race:
it must be rejected at least once per dtype in each of its runs, not in every result.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP05 = "steps/step05_vectorized/step05_vectorized.cu"
STEP06 = "steps/step06_cooperative_groups/step06_cooperative_groups.cu"
STEP07 = "steps/step07_cooperative_grid/step07_cooperative_grid.cu"
RACE = "race"
# Step 06's segmented sum at many row lengths (every variant that takes rows that long).
STEP06_ROWS = ["--problem", "segmented", "--cols", "1,2,3,4,5,15,16,17,31,32,33,63,64,65,255,256,257,1000,4096,2^16+1"]

BATCH_SUM = "    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);"
REST_SUM = "    sum += (v.x + v.y) + (v.z + v.w);"

# name: (source, [(old, new)], runs); a run is (--n, --offset, float rejection required) and,
# optionally, a list of more arguments; every variant and both dtypes run for each. int
# rejection is always required. RACE instead of True/False: the bug is a race, so no single
# result is required to be wrong; at least one result of each dtype in the run must be.
MUTANTS = {
    "drop_tail": (STEP05, [(
        "  if (thread < n - tail_begin) sum += in[tail_begin + thread];  // scalar tail",
        "  // mutant: the scalar tail is never added")],
        [("1023,4099,2^20+3", "0", True), ("2^24+1", "0", False)]),
    "drop_head": (STEP05, [(
        "  if (thread < head) sum += in[thread];                       // scalar head",
        "  // mutant: the scalar head is never added")],
        [("1000,2^20", "1,2,3", True), ("2^24", "1,2,3", False)]),
    "read_past_end": (STEP05, [(
        "  for (; i < vectors; i += stride) {",
        "  for (; i <= vectors; i += stride) {  // mutant: one vector past the last whole one")],
        [("1000,1023,2^20,2^20+3", "0,1,2,3", True)]),
    "drop_last_warp": (STEP05, [(
        "cg::reduce(warp, warp.thread_rank() < warps ? warp_sums",
        "cg::reduce(warp, warp.thread_rank() < warps - 1 ? warp_sums")],
        [("2^20,2^24+7", "0", True)]),
    "drop_4_elements": (STEP05, [(
        BATCH_SUM,
        "    for (int b = 0; b < Batch; ++b) if (i + b * stride != vectors / 2) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);")],
        [("2^24,2^28", "0", False)]),
    "drop_1_in_65536": (STEP05, [
        (BATCH_SUM,
         "    for (int b = 0; b < Batch; ++b) if ((i + b * stride) % 65536 != 65535) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);"),
        (REST_SUM, "    if (i % 65536 != 65535) sum += (v.x + v.y) + (v.z + v.w);")],
        [(",".join(f"2^{k}" for k in range(20, 31)), "0", True)]),
    # Step 06: every segmented variant takes its rows from rows_of(), so one replacement
    # breaks them all. A dropped row keeps its poisoned output (NaN in float); a dropped
    # element is at least ~0.004 off in float at these row lengths, well above a row's
    # tolerance for all but a few rows, and each run has at least 15 rows.
    "drop_last_row": (STEP06, [(
        "  m.count = rows;  // every row",
        "  m.count = rows - 1;  // mutant: the last row is never summed")],
        [("2^20", "0,3", True, STEP06_ROWS), ("2^20", "0", True, ["--problem", "segmented", "--cols", "2^20"])]),
    "drop_last_of_row": (STEP06, [(
        "  m.len = cols;    // every element of a row",
        "  m.len = cols - 1;  // mutant: the last element of each row is never added")],
        [("2^20", "0,3", True, STEP06_ROWS)]),
    # Step 07's packed_slots: block 0 reads the words without waiting for this launch's number,
    # so it adds whatever an earlier launch left (or zeros): the bug of a flag forgotten. Only
    # packed_slots (and auto above 48 Ki, which runs it) are broken; the sizes and offsets
    # change from run to run, so an old word never holds this launch's partial. It is a race:
    # when block 0 happens to finish last, every word is already there and the sum is right
    # (seen once in 28 results on an H100: float, 2^20+1, the first float run).
    "packed_no_wait": (STEP07, [(
        "    v += b == 0 ? sum : packed_slots::value_of<T>(packed_slots::wait_for(board, b));",
        "    v += b == 0 ? sum : packed_slots::value_of<T>(unsigned(board.words[size_t(b) * packed_slots::kStride]));  // mutant")],
        [("2^20+1,2^24+5,2^26", "0,1,3", RACE, ["--variant", "packed_slots"]),
         ("2^20+1,2^26", "0,2", RACE, ["--variant", "auto"])]),
}


def mutate(name):
    source, replacements, _ = MUTANTS[name]
    with open(os.path.join(ROOT, source)) as f:
        text = f.read()
    for old, new in replacements:
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"mutation.py: {name}: the text to replace occurs {count} times in {source} "
                             f"(expected once): {old!r}")
        text = text.replace(old, new)
    return f"// GENERATED by tests/mutation.py from {source}: mutant '{name}'. Do not edit.\n" + text


LINE = re.compile(r"^(int|float)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$")


def run(build_dir, log_path=None):
    log = open(log_path, "w") if log_path else None

    def say(text):
        print(text)
        if log:
            log.write(text + "\n")

    failures = 0
    say(f"{'mutant':<17} {'dtype':<5} {'n':>11} {'off':>3} {'variant':<10} {'result':<9} required  detail")
    for name, (source, _, runs) in MUTANTS.items():
        program = os.path.join(build_dir, f"mutant_{os.path.basename(source)[:6]}_{name}")
        for sizes, offsets, float_required, *more in runs:
            cmd = [program, "--check", "--dtype", "all", "--n", sizes, "--offset", offsets] + (more[0] if more else [])
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode == 77:
                print(p.stdout.strip())
                return 77
            rejected_any = False
            rejected_by_dtype = {"int": 0, "float": 0}
            seen = 0
            for line in p.stdout.splitlines():
                m = LINE.match(line)
                if not m or m.group(4) == "cub":
                    if m and not m.group(5).startswith("ok"):
                        say(f"{name}: CUB failed on the same input: {line}")
                        failures += 1
                    continue
                dtype, n, off, variant, detail = m.groups()
                seen += 1
                rejected = detail.startswith("FAILED")
                rejected_any |= rejected
                rejected_by_dtype[dtype] += rejected
                required = float_required != RACE and (dtype == "int" or float_required)
                if required and not rejected:
                    failures += 1
                verdict = "rejected" if rejected else "PASSED"
                need = "race" if float_required == RACE else "yes" if required else "no"
                flag = "" if rejected or not required else "   <-- NOT CAUGHT"
                say(f"{name:<17} {dtype:<5} {n:>11} {off:>3} {variant:<10} {verdict:<9} {need:<9} {detail}{flag}")
            if seen == 0:
                say(f"{name}: no result lines from {' '.join(cmd)} (exit {p.returncode}): {p.stderr.strip()[-300:]}")
                failures += 1
            elif rejected_any and p.returncode != 1:
                say(f"{name}: a rejection must exit 1, got exit {p.returncode}")
                failures += 1
            if float_required == RACE and seen:
                for dtype, count in rejected_by_dtype.items():
                    if count == 0:
                        say(f"{name}: no {dtype} result of this run was rejected   <-- NOT CAUGHT")
                        failures += 1
    say("mutation test: " + ("every required rejection happened" if failures == 0
                             else f"{failures} required rejection(s) missing: the checks are too weak"))
    if log:
        log.close()
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["list"]:
        print(";".join(MUTANTS))
    elif args[:1] == ["source"] and len(args) == 2:
        print(MUTANTS[args[1]][0])
    elif args[:1] == ["write"] and len(args) == 3:
        text = mutate(args[1])
        os.makedirs(os.path.dirname(os.path.abspath(args[2])), exist_ok=True)
        with open(args[2], "w") as f:
            f.write(text)
    elif args[:1] == ["run"] and len(args) in (2, 3):
        sys.exit(run(args[1], args[2] if len(args) == 3 else None))
    else:
        sys.exit(__doc__)
