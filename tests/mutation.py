#!/usr/bin/env python3
"""The proof that the checks can fail: broken copies of a step must be rejected.

    mutation.py list                          NAME=SOURCE;... every mutant and the step source it is
                                              made from (a CMake list: CMake builds one program each)
    mutation.py write NAME OUT.cu             write the mutated source (CMake calls this at build time)
    mutation.py anchors                       host check: every patch applies, anchored on code
    mutation.py run BUILD_DIR [LOG] [--only NAME,...]
                                              run every mutant (or the named ones); exit 0 only if
                                              each required rejection and detection happened, 77
                                              when no mutant could run (no GPU)

Each mutant is the clean source with a few exact text replacements; a replacement that no
longer matches exactly once stops the build, so the mutants cannot silently drift away from
the code they break. The step files themselves stay clean.

What --check must reject: every run in int (full-range data, exact modulo 2^32). In float,
every run whose loss is larger than the float result's own rounding allowance: the lost
vectors and warps, the guard value read past the end, and the 1..3 lost head or tail
elements up to n = 2^20+3. A few lost elements at n >= 2^24 (tol 0.22 there, while one
element is uniform in [-1, 1)) and `drop_4_elements` are recorded, not required: seeing them
in float is luck (see docs/evidence/README.md, "Verification").

Races. A race need not show in any one result, so every race mutant has a detector, and the
test shows both that the detector fires on the mutant and that it stays quiet on the clean
program run with the same arguments (a detector that fires on both proves nothing):
  - races that make results wrong in most runs (packed_no_wait, barrier_no_spin): --check
    itself. In each run at least one result of each dtype must be rejected (RACE), and the
    clean program must pass the same run.
  - races in shared memory that --check cannot be relied on to see (filter_no_last_sync,
    packed_no_reuse_sync, and cluster_no_sync in distributed shared memory, which racecheck
    also watches): compute-sanitizer on a small run (SANITIZER below): racecheck for
    shared-memory hazards (synccheck would be the tool for a misused __syncthreads or
    __syncwarp). Its summary must count at least one hazard for the mutant and none for the
    clean program. What --check says of these mutants is recorded, not required (RECORDED).
    compute-sanitizer must be on PATH or in /usr/local/cuda/bin: without it this test says so
    and fails (it runs on GPU machines, which have it).
Step 08's cross-GPU barrier has no sanitizer that sees it: racecheck watches shared memory
only; synccheck checks the use of __syncthreads(), __syncwarp() and their Cooperative Groups
forms, not a barrier built from system-scope atomics; and what that barrier guards are plain
stores from every GPU into GPU 0's memory. So its mutant is one whose race changes results,
and its detector is --check over many shapes. It needs two GPUs: on one GPU its program exits
77, the log says "skipped" and why, and the rest of the test goes on.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANITIZE = os.path.join(ROOT, "scripts", "sanitize.sh")
STEP05 = "steps/step05_vectorized/step05_vectorized.cu"
STEP06 = "steps/step06_cooperative_groups/step06_cooperative_groups.cu"
STEP06_FILTER = "steps/step06_cooperative_groups/step06_filter.cu"
STEP07 = "steps/step07_cooperative_grid/step07_cooperative_grid.cu"
STEP08 = "steps/step08_multi_grid/step08_multi_grid.cu"
STEP09 = "steps/step09_clusters/step09_clusters.cu"
STEP09_ROWS = "steps/step09_clusters/step09_cluster_rows.cu"
STEP10 = "steps/step10_hip/step10_hip.cu"
RACE = "race"          # no single result required to be wrong; at least one per dtype in the run
RECORDED = "recorded"  # nothing required of --check: the mutant's detector is in SANITIZER
TIMEOUT_S = 900        # one program run; a mutant that hangs fails instead of stalling the test
# Step 06's segmented sum at many row lengths (every variant that takes rows that long).
STEP06_ROWS = ["--cols", "1,2,3,4,5,15,16,17,31,32,33,63,64,65,255,256,257,1000,4096,2^16+1"]

BATCH_SUM = "    for (int b = 0; b < Batch; ++b) sum += (v[b].x + v[b].y) + (v[b].z + v[b].w);"
REST_SUM = "    sum += (v.x + v.y) + (v.z + v.w);"

# name: (source, [(old, new)], runs); a run is (--n, --offset, float rejection required) and,
# optionally, a list of more arguments; every variant and both dtypes run for each. int
# rejection is always required, except for RACE (at least one result of each dtype in the
# run must be rejected, and the clean program must pass the run) and RECORDED (nothing).
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
        [("2^20", "0,3", True, STEP06_ROWS), ("2^20", "0", True, ["--cols", "2^20"])]),
    "drop_last_of_row": (STEP06, [(
        "  m.len = cols;    // every element of a row",
        "  m.len = cols - 1;  // mutant: the last element of each row is never added")],
        [("2^20", "0,3", True, STEP06_ROWS)]),
    # Step 06's filter_block_aggregated without its last __syncthreads(). block_base stays
    # safe: warp 0 rewrites it only after the next tile's first barrier, which every thread
    # reaches after its store. warp_offset[w] does not: lane 0 of warp w writes the next
    # tile's count into it while other lanes of warp w may still be reading this tile's
    # offset, with only the next tile's warp.ballot between them. A ballot makes the lanes
    # wait for each other but is no memory barrier (the Programming Guide gives memory
    # ordering to __syncwarp() and __syncthreads(), not to the vote functions): a data race.
    # --check is not expected to see it: a lane has used its offset (the address of its
    # store) before it reaches the ballot. Racecheck must. --n 2^20+3 gives every block
    # several tiles (the grid is at most the co-resident blocks, 256 elements a tile).
    "filter_no_last_sync": (STEP06_FILTER, [(
        "    __syncthreads();  // warp_offset and block_base are rewritten by the next tile",
        "    // mutant: no barrier before the next tile rewrites warp_offset and block_base")],
        [("2^20+3,2^24+3", "0", RECORDED,
          ["--variant", "block_aggregated", "--pass-rate", "50"])]),
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
    # Step 07's packed_slots without the __syncthreads() between block 0's two block_sum
    # calls: warp 0 (thread 0 in float) may still be reading the first call's warp sums in
    # shared memory while the other warps already write the second call's into the same
    # array (at small n most of block 0's warps have no partial to wait for). A
    # write-after-read race; it changes block 0's own partial only when another warp
    # overtakes warp 0 that far, so --check is not required to see it. Racecheck must.
    "packed_no_reuse_sync": (STEP07, [(
        "  __syncthreads();  // block_sum's shared memory is used again below\n  T v = 0;",
        "  // mutant: no barrier before block_sum's shared memory is used again\n  T v = 0;")],
        [("2^16+1,2^20+1", "0", RECORDED, ["--variant", "packed_slots"])]),
    # Step 08's cross-GPU barrier with `if` for `for`: a GPU that does not arrive last looks
    # at the generation once and leaves, then adds the K slots while the GPUs behind it may
    # still be writing theirs. Arrivals and generations still add up (the barrier's reuse
    # test passes); the sums do not: a slot not yet written holds what that GPU wrote two
    # launches back (the slots alternate halves), which is another shape's partial here,
    # since every shape runs once. A race: right when the other GPUs' slot stores land before
    # the early GPU reads. --barrier-reps 10 keeps the reuse test (not this test's business)
    # short.
    "barrier_no_spin": (STEP08, [(
        "  for (unsigned spins = 1; gen.load(cuda::memory_order_acquire) == my_gen; ++spins) {",
        "  if (gen.load(cuda::memory_order_acquire) == my_gen) {  // mutant: looks once, does not spin\n"
        "    const unsigned spins = 1;")],
        [("1,3,1023,4099,2^20+1,2^24+7", "0,3", RACE, ["--variant", "peer_barrier", "--barrier-reps", "10"])]),
    # Step 09's push: the leader adds every slot but the last rank's, the sum of one block
    # of each cluster lost. Every push variant with clusters of 2 or more (and auto's
    # one_cluster below 2^20) must be rejected in both dtypes: one block's share is at least
    # 16 Ki elements here, far above a float result's allowance.
    "cluster_drop_peer": (STEP09, [(
        "    for (unsigned r = 0; r < cluster.num_blocks(); ++r) cluster_sum += block_sums[r];  // rank order: repeatable",
        "    for (unsigned r = 0; r + 1 < cluster.num_blocks(); ++r) cluster_sum += block_sums[r];  // mutant: last rank lost")],
        [("2^16+1,2^20+3,2^24+7", "0,3", True, ["--variant", "cluster_2"]),
         ("2^20+3,2^24+7", "0", True, ["--variant", "cluster_8"]),
         ("2^20+3", "0", True, ["--variant", "cluster_16"]),
         ("2^16+1", "0,1", True, ["--variant", "one_cluster"])]),
    # Step 09's push without the cluster.sync() between the DSMEM stores and the leader's
    # reads: the leader adds whatever its slots hold when its own block is done (the other
    # blocks' sums of an earlier launch, or not yet written), and may exit while the others
    # still store into its shared memory. A race that --check cannot be relied on to see (on
    # an H100 the int results of a first run all passed). Racecheck sees distributed shared
    # memory: its detector (SANITIZER below).
    "cluster_no_sync": (STEP09, [(
        "  cluster.sync();\n  if (cluster.block_rank() != 0) return;\n  T cluster_sum = 0;",
        "  // mutant: no cluster.sync() before the leader reads the slots\n  if (cluster.block_rank() != 0) return;\n  T cluster_sum = 0;")],
        [("2^16+1,2^20+3,2^24+7", "0,3", RECORDED, ["--variant", "cluster_8"])]),
    # Step 09's packed_rows (packed_rows.cuh): the lane groups' shuffle starts one round too
    # wide, so every row of 4 or more elements adds a neighbouring row's (or, at 256 and 512,
    # its own) lanes once more. Rows of 1 and 2 take no shuffle; they are not in the run.
    "packed_group_too_wide": (STEP09_ROWS, [(
        "  for (unsigned offset = lanes / 2; offset > 0; offset /= 2)",
        "  for (unsigned offset = lanes; offset > 0; offset /= 2) /* mutant: one round too wide */",
        "packed_rows.cuh")],
        [("2^20,2^24+300", "0", True, ["--variant", "packed_rows", "--cols", "4,8,16,32,64,128,256,512"])]),
    # packed_rows without its tail: the rows after the last whole span of 512 elements keep
    # the poison. 2^20+300 elements leave a tail at every row length from 1 to 256 (512 divides
    # no span's remainder, so it has none and is not in the run).
    "packed_drop_tail": (STEP09_ROWS, [(
        "  if (r < rows) {",
        "  if (r < rows && false) {  // mutant: the tail's rows are never summed",
        "packed_rows.cuh")],
        [("2^20+300", "0", True, ["--variant", "packed_rows", "--cols", "1,2,4,8,16,32,64,128,256"])]),
    # Step 09's staged_rows (staged_rows.cuh) without its scalar tail: the last 1-3 elements of
    # a tile whose length is not a multiple of four keep what shared memory held (a row of
    # the tile before, or nothing yet), so the tile's last row is wrong. Rows of 3 leave such a
    # tail at offset 0 and 1, rows of 33 and 300 only at offset 1 (at 0 their tiles are whole
    # vectors: the first run, logs_h100/short_rows/staged/, had them in and they passed).
    "staged_drop_tail": (STEP09_ROWS, [(
        "  if (threadIdx.x < len - tail_begin) tile[lead + tail_begin + threadIdx.x] = src[tail_begin + threadIdx.x];",
        "  if (false) tile[lead + tail_begin + threadIdx.x] = src[tail_begin + threadIdx.x];  // mutant: tail lost",
        "staged_rows.cuh")],
        [("2^20+300", "0,1", True, ["--variant", "staged_rows", "--cols", "3"]),
         ("2^20+300", "1", True, ["--variant", "staged_rows", "--cols", "33,300"])]),
    # staged_rows' groups of lanes per row without their exchange of sums: only lane 0's share
    # of a row (elements 0, G, 2G, ...) reaches out[r]. Wrong wherever a row has more than one
    # lane: rows longer than 32, and rows of 8, 16, 24 and 32 (widened by the bank rule).
    "staged_no_exchange": (STEP09_ROWS, [(
        "    for (unsigned half = lanes / 2; half > 0; half /= 2) part += warp.shfl_xor(part, half);",
        "    for (unsigned half = 0; half > 0; half /= 2) part += warp.shfl_xor(part, half);  // mutant: no exchange",
        "staged_rows.cuh")],
        [("2^20+300", "0,1", True, ["--variant", "staged_rows", "--cols", "16,33,300"])]),
    # Step 10's wavefront sum with a 64-wide wavefront written in: on NVIDIA's 32-lane warps the
    # first round (offset 32) reads past the warp, so each lane adds its own value again and
    # every block sum is wrong. --check must reject it (both variants, both dtypes). The other
    # way round, 32 written in, is right on NVIDIA and wrong on a 64-wide wavefront: no NVIDIA
    # run can see that one; the host audit (tests/test_wave_audit.py) catches it.
    "wave_64_on_nvidia": (STEP10, [(
        "  for (int offset = port::kWaveSize / 2; offset > 0; offset /= 2) value += port::shfl_down(value, offset);",
        "  for (int offset = 64 / 2; offset > 0; offset /= 2) value += port::shfl_down(value, offset);  // mutant")],
        [("1000,2^20+3,2^24+5", "0,3", True, ["--variant", "block_atomic,grid_sync"])]),
}

# name: (tool, arguments of a small run). The mutant and the clean program both run under the
# tool with these arguments; the mutant must have hazards, the clean program none.
SANITIZER = {
    "filter_no_last_sync": ("racecheck", ["--check", "--variant", "block_aggregated",
                                          "--dtype", "int", "--n", "2^20+3", "--pass-rate", "50"]),
    "packed_no_reuse_sync": ("racecheck", ["--check", "--variant", "packed_slots", "--dtype", "all", "--n", "2^16+1"]),
    "cluster_no_sync": ("racecheck", ["--check", "--variant", "cluster_8", "--dtype", "int", "--n", "2^16+1"]),
}


def code_pattern(old):
    """A regex for the code of `old`: the same tokens, any run of spaces or tabs between them,
    and where `old` ends a line with a // comment, any comment there. A mutant anchors on code,
    so rewording a comment never breaks it; changing the code it patches does (and says so)."""
    lines = []
    for line in old.split("\n"):
        code, comment = line, False
        if "//" in line and '"' not in line:
            code, comment = line.split("//", 1)[0], True
        tokens = [re.escape(t) for t in code.split()]
        lead = r"[ \t]*" if (lines or code[:1].isspace()) else ""  # a line's indentation, any width
        tail = r"[ \t]*//[^\n]*" if comment else (r"[ \t]+" if code[-1:].isspace() else "")
        lines.append(lead + r"[ \t]+".join(tokens) + tail)
    return re.compile(r"\n".join(lines))


def mutate(name):
    """The mutant program's text. A replacement (old, new, header) patches that header of the
    step's folder instead, and the patched header takes the place of its #include line."""
    source, replacements, _ = MUTANTS[name]
    files = {}  # None: the program itself; else a header's name

    def text_of(header):
        if header not in files:
            path = os.path.join(ROOT, source if header is None else os.path.join(os.path.dirname(source), header))
            with open(path) as f:
                files[header] = f.read()
        return files[header]

    for old, new, *header in replacements:
        where = header[0] if header else None
        text = text_of(where)
        found = list(code_pattern(old).finditer(text))
        if len(found) != 1:
            raise SystemExit(f"mutation.py: {name}: the code to replace occurs {len(found)} times in "
                             f"{where or source} (expected once): {old!r}")
        m = found[0]
        files[where] = text[:m.start()] + new + text[m.end():]
    text = text_of(None)
    for header, body in files.items():
        if header is not None:
            include = f'#include "{header}"'
            if text.count(include) != 1:
                raise SystemExit(f"mutation.py: {name}: {source} must include {header} once")
            text = text.replace(include, f"// {header}, patched:\n" + body.replace("#pragma once\n", ""))
    return f"// GENERATED by tests/mutation.py from {source}: mutant '{name}'. Do not edit.\n" + text


def programs(build_dir, name):
    """The mutant's program and the clean step it is made from (CMakeLists.txt names them)."""
    step = os.path.splitext(os.path.basename(MUTANTS[name][0]))[0]
    return os.path.join(build_dir, f"mutant_{step[:6]}_{name}"), os.path.join(build_dir, step)


LINE = re.compile(r"^(int|float)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$")


def execute(cmd):
    """(exit code, stdout, stderr); exit code None when the program ran past TIMEOUT_S."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"killed after {TIMEOUT_S} s"


def results(stdout):
    """The --check lines: (dtype, n, offset, variant, detail); CUB's baselines ("cub", "cub_1gpu") apart."""
    mine, baseline = [], []
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            (baseline if m.group(4).startswith("cub") else mine).append(m.groups())
    return mine, baseline


def sanitize(tool, program, args, log):
    """Runs scripts/sanitize.sh one: (hazards or None, the report's first lines, a note)."""
    cmd = ["bash", SANITIZE, "one", tool, log, program] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, [], f"compute-sanitizer ran past {TIMEOUT_S} s"
    if p.returncode == 77:
        return None, [], p.stdout.strip()
    m = re.search(r"errors (\d+) warnings (\d+) exit (\d+)", p.stdout)
    report, correct = [], False
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            text = f.read()
        report = [line.rstrip() for line in text.splitlines()
                  if line.startswith("=========") and line.strip("= \n") and "COMPUTE-SANITIZER" not in line
                  and "SUMMARY" not in line][:2]
        mine, baseline = results(text)
        correct = bool(mine) and all(d.startswith("ok") for *_, d in mine + baseline)
    if not m:
        return None, report, "no summary from compute-sanitizer (see " + log + ")"
    errors, warnings, status = (int(g) for g in m.groups())
    return errors + warnings, report, (f"{errors} errors, {warnings} warnings; program exit {status}, "
                                       f"{'every result ok' if correct else 'NOT every result ok'}")


def run(build_dir, log_path=None, only=None):
    log = open(log_path, "w") if log_path else None

    def say(text):
        print(text)
        if log:
            log.write(text + "\n")

    names = [n for n in MUTANTS if not only or n in only]
    failures, ran, skipped = 0, 0, []
    say(f"{'mutant':<20} {'dtype':<5} {'n':>11} {'off':>3} {'variant':<16} {'result':<9} required  detail")
    for name in names:
        source, _, runs = MUTANTS[name]
        program, clean = programs(build_dir, name)
        missing = [p for p in (program, clean) if not os.path.exists(p)]
        if missing:
            say(f"{name}: not built: {', '.join(missing)}")
            failures += 1
            continue
        skip = None
        for sizes, offsets, need, *more in runs:
            args = ["--check", "--dtype", "all", "--n", sizes, "--offset", offsets] + (more[0] if more else [])
            cmd = [program] + args
            code, out, err = execute(cmd)
            if code == 77:  # no GPU, or not enough of them: the program's last line says which
                text = (out + err).strip()
                skip = text.splitlines()[-1] if text else "exit 77"
                break
            mine, baseline = results(out)
            for dtype, n, off, variant, detail in baseline:
                if not detail.startswith("ok"):
                    say(f"{name}: CUB failed on the same input: {dtype} {n} {off} {variant} {detail}")
                    failures += 1
            rejected_by_dtype = {"int": 0, "float": 0}
            for dtype, n, off, variant, detail in mine:
                rejected = detail.startswith("FAILED")
                rejected_by_dtype[dtype] += rejected
                required = need not in (RACE, RECORDED) and (dtype == "int" or need)
                if required and not rejected:
                    failures += 1
                verdict = "rejected" if rejected else "PASSED"
                need_text = "race" if need == RACE else "yes" if required else "no"
                flag = "" if rejected or not required else "   <-- NOT CAUGHT"
                say(f"{name:<20} {dtype:<5} {n:>11} {off:>3} {variant:<16} {verdict:<9} {need_text:<9} {detail}{flag}")
            if not mine:
                say(f"{name}: no result lines from {' '.join(cmd)} (exit {code}): {err.strip()[-300:]}")
                failures += 1
            elif any(rejected_by_dtype.values()) and code != 1:
                say(f"{name}: a rejection must exit 1, got exit {code}")
                failures += 1
            if need == RACE and mine:
                for dtype, count in rejected_by_dtype.items():
                    if count == 0:
                        say(f"{name}: no {dtype} result of this run was rejected   <-- NOT CAUGHT")
                        failures += 1
                # The same run must pass the clean program, or the rejections prove nothing.
                code, out, err = execute([clean] + args)
                clean_mine, clean_baseline = results(out)
                bad = [r for r in clean_mine + clean_baseline if not r[4].startswith("ok")]
                ok = code == 0 and clean_mine and not bad
                say(f"{name}: the clean {os.path.basename(clean)}, same run: "
                    + (f"all {len(clean_mine)} results ok" if ok else
                       f"exit {code}, {len(bad)} of {len(clean_mine)} results not ok   <-- DOES NOT DISCRIMINATE"))
                failures += not ok
        if skip:
            say(f"{name}: skipped: {skip}")
            skipped.append(name)
            continue
        ran += 1
        if name in SANITIZER:
            failures += detect(name, build_dir, say)
    if ran == 0:
        print("mutation test: no mutant could run (every program exited 77)")
        if log:
            log.close()
        return 77
    say("mutation test: " + ("every required rejection and detection happened" if failures == 0
                             else f"{failures} required rejection(s) or detection(s) missing")
        + (f"; skipped: {', '.join(skipped)}" if skipped else ""))
    if log:
        log.close()
    return 0 if failures == 0 else 1


def detect(name, build_dir, say):
    """The sanitizer on the mutant (hazards required) and on the clean program (none allowed)."""
    tool, args = SANITIZER[name]
    if not (shutil.which("compute-sanitizer") or os.path.exists("/usr/local/cuda/bin/compute-sanitizer")):
        say(f"{name}: compute-sanitizer not found (neither on PATH nor in /usr/local/cuda/bin): the race detector "
            f"cannot run   <-- NOT DETECTED")
        return 1
    logdir = os.path.join(build_dir, "mutation-sanitizer")
    os.makedirs(logdir, exist_ok=True)
    failures = 0
    for label, program, want_hazards in zip(("mutant", "clean program"), programs(build_dir, name), (True, False)):
        log = os.path.join(logdir, f"{tool}_{name}_{label.split()[0]}.log")
        hazards, report, note = sanitize(tool, program, args, log)
        command = f"compute-sanitizer --tool {tool} ./{os.path.basename(program)} {' '.join(args)}"
        if hazards is None:
            ok, result = False, note
        else:
            ok = hazards > 0 if want_hazards else hazards == 0
            result = f"{hazards} hazards ({note})"
        need = "hazards required" if want_hazards else "none allowed"
        say(f"{name}: {tool} on the {label}: $ {command}")
        say(f"{name}:   -> {result}; {need}: {'ok' if ok else 'FAILED   <-- ' + ('NOT DETECTED' if want_hazards else 'DOES NOT DISCRIMINATE')}")
        for line in report if want_hazards else []:
            say(f"{name}:   {line}")
        failures += not ok
    return failures


def check_anchors():
    """Host check (CTest host_mutation_anchors): every mutant's patch applies to today's source;
    an anchor ignores comments and spacing (reworded, the patch still applies) but not code
    (a changed token, and the patch refuses to apply)."""
    for name in MUTANTS:
        mutate(name)  # SystemExit with the reason when a patch no longer applies
    line = "  if (thread < n - tail_begin) sum += in[tail_begin + thread];  // scalar tail"
    text = "x;\n    if (thread <  n - tail_begin) sum += in[tail_begin + thread];   // reworded\ny;\n"
    assert len(code_pattern(line).findall(text)) == 1, "a reworded comment broke an anchor"
    assert not code_pattern(line).findall(text.replace("tail_begin +", "tail_begin -")), "a code change went unseen"
    assert len(code_pattern("  __syncthreads();  // why").findall("  __syncthreads();\n  __syncthreads();  // a\n")) == 1
    print(f"mutation anchors: {len(MUTANTS)} patches apply; comments and spacing ignored, code is not")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        only = args[i + 1].split(",")
        unknown = [n for n in only if n not in MUTANTS]
        if unknown:
            sys.exit(f"mutation.py: --only: unknown mutant(s) {', '.join(unknown)} (choose from {', '.join(MUTANTS)})")
        del args[i:i + 2]
    if args[:1] == ["list"]:
        print(";".join(f"{name}={MUTANTS[name][0]}" for name in MUTANTS))
    elif args[:1] == ["write"] and len(args) == 3:
        text = mutate(args[1])
        os.makedirs(os.path.dirname(os.path.abspath(args[2])), exist_ok=True)
        with open(args[2], "w") as f:
            f.write(text)
    elif args[:1] == ["anchors"] and len(args) == 1:
        sys.exit(check_anchors())
    elif args[:1] == ["run"] and len(args) in (2, 3):
        sys.exit(run(args[1], args[2] if len(args) == 3 else None, only))
    else:
        sys.exit(__doc__)
