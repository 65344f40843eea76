#!/usr/bin/env python3
"""Host test: the wavefront model catches wave64 bugs that no NVIDIA run and no compiler sees.

Each mutant is a real edit of step 10's source (step10_hip.cu or portable.hpp), applied to a
copy. The model (driver.cpp + kernels.cpp) is built from the copy at W = 32 and W = 64 and
run; the wave audit scans the edited file. A wave64 bug must fail the model at W = 64 and
pass at W = 32 (right on NVIDIA's 32 and on RDNA, wrong on GCN and CDNA); an edit right at
both widths (over-allocation, a wavefront used as two groups of 32) must pass at both.

    mutants.py [--cxx C++] [--core LIB] [--hipcc] [--log FILE]

--core: the prebuilt wave_model_core library (CMake's); without it the model is compiled here.
--hipcc: also compile each mutant with hipcc for gfx90a and gfx1030, warnings as errors
(about a minute a mutant; the committed table's hipcc column comes from such a run).
--log FILE: write the table there (results/logs/wave_model_mutants.txt).
Without --hipcc the test compares its model and audit columns with the committed table, so
the table in docs/evidence/10_hip.md (an excerpt of that log) cannot go stale there; the
hipcc columns are copied from the table, not re-checked (only --hipcc re-makes them).
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STEP10 = os.path.join(ROOT, "steps", "step10_hip")
AUDIT = os.path.join(ROOT, "scripts", "maintainer", "wave_audit.py")
LOG = os.path.join(ROOT, "results", "logs", "wave_model_mutants.txt")
sys.path.insert(0, HERE)
import prepare_source  # noqa: E402

WAVE_LOOP = "for (int offset = port::kWaveSize / 2; offset > 0; offset /= 2)"
LANE_LINE = "  const unsigned lane = threadIdx.x % port::kWaveSize, wave = threadIdx.x / port::kWaveSize;"
# name, file, old text (must occur once), new text, what it is, kind:
#   bug64: wrong on a 64-wide wavefront only; right: right at both widths;
#   bug32: wrong on a 32-wide wavefront only
MUTANTS = [
    ("lane_and31_var", "step10_hip.cu", LANE_LINE,
     "  const unsigned tid = threadIdx.x;\n  const unsigned lane = tid & 31, wave = tid / port::kWaveSize;",
     "lane number `tid & 31` through a variable", "bug64"),
    ("thread_rank_and31", "step10_hip.cu", LANE_LINE,
     "  const unsigned lane = cg::this_thread_block().thread_rank() & 31, wave = threadIdx.x / port::kWaveSize;",
     "lane number `thread_rank() & 31`", "bug64"),
    ("ballot_32bit", "step10_hip.cu", "__device__ T wave_sum(T value) {\n",
     "__device__ T wave_sum(T value) {\n  if (__ballot(1) != 0xffffffff) return value;  // not a full wavefront: no tree\n",
     "full-wavefront test as a 32-bit compare `__ballot(1) != 0xffffffff`", "bug64"),
    ("tree_from_16", "step10_hip.cu", WAVE_LOOP, WAVE_LOOP.replace("port::kWaveSize / 2", "16"),
     "shuffle tree from `offset = 16`", "bug64"),
    ("tree_from_kTile", "step10_hip.cu", WAVE_LOOP, WAVE_LOOP.replace("port::kWaveSize / 2", "kTile"),
     "shuffle tree from `offset = kTile` (a named 16)", "bug64"),
    ("shfl_width_32", "portable.hpp", "__shfl_down(value, delta, kWaveSize)", "__shfl_down(value, delta, 32)",
     "HIP shuffle of width 32 under a 64-lane tree", "bug64"),
    ("wave_sums_32", "step10_hip.cu", "__shared__ T wave_sums[kThreads / port::kWaveSize];",
     "__shared__ T wave_sums[32];", "`wave_sums[32]`: 32 slots where 16 are used", "right"),
    ("hip_wave_size_32", "portable.hpp", "constexpr int kWaveSize = __AMDGCN_WAVEFRONT_SIZE;",
     "constexpr int kWaveSize = 32;", "HIP `kWaveSize = 32`: a wavefront as two groups of 32", "right"),
    ("tile_64", "step10_hip.cu", "constexpr int kTile = 16;", "constexpr int kTile = 64;",
     "`tiled_partition<64>`: tiles wider than a wave32", "bug32"),
]
CXXFLAGS = ["-std=c++17", "-O1", "-Wno-unknown-pragmas", "-D__HIPCC__"]


def sh(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def mutated_sources(name):
    texts = {}
    for fname in ("step10_hip.cu", "portable.hpp"):
        with open(os.path.join(STEP10, fname)) as f:
            texts[fname] = f.read()
    if name is None:
        return texts
    m = next(m for m in MUTANTS if m[0] == name)
    _, fname, old, new, _, _ = m
    count = texts[fname].count(old)
    if count != 1:
        raise SystemExit(f"mutant {name}: its text occurs {count} times in {fname} (the source changed: update the mutant)\n  {old}")
    texts[fname] = texts[fname].replace(old, new)
    return texts


def build_core(cxx, out):
    objs = []
    for src in ("wave_model.cpp", "driver.cpp"):
        obj = os.path.join(out, src + ".o")
        r = sh([cxx, *CXXFLAGS, "-I", HERE, "-I", os.path.join(ROOT, "common"), "-c", os.path.join(HERE, src), "-o", obj])
        if r.returncode:
            raise SystemExit(r.stderr)
        objs.append(obj)
    return objs


def model(cxx, core, work, name, width):
    """'pass', 'FAIL' or 'no build' for mutant `name` (None: the source as it is) at width."""
    texts = mutated_sources(name)
    src = os.path.join(work, f"{name}_{width}")
    prepare_source.write(src, texts["step10_hip.cu"], texts["portable.hpp"])
    exe = os.path.join(src, "model")
    r = sh([cxx, *CXXFLAGS, f"-D__AMDGCN_WAVEFRONT_SIZE={width}", "-I", src, "-I", HERE, os.path.join(HERE, "kernels.cpp"),
            *core, "-o", exe, "-pthread"])
    if r.returncode:
        return "no build", r.stderr
    r = sh([exe, "--quick"], timeout=300)
    return ("pass" if r.returncode == 0 else "FAIL"), r.stdout


def audit(work, name):
    texts = mutated_sources(name)
    fname = next(m[1] for m in MUTANTS if m[0] == name)
    path = os.path.join(work, f"audit_{name}", fname)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(texts[fname])
    found = sh([sys.executable, AUDIT, "--scan", path]).stdout.strip()
    return ("flags" if found else "-"), found


def hipcc(work, name, arch):
    texts = mutated_sources(name)
    src = os.path.join(work, f"hip_{name}")
    os.makedirs(src, exist_ok=True)
    for fname, text in texts.items():
        with open(os.path.join(src, fname), "w") as f:
            f.write(text)
    r = sh(["hipcc", "-x", "hip", "-O3", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"--offload-arch={arch}",
            "-I", os.path.join(ROOT, "common"), "-I", src, "-c", os.path.join(src, "step10_hip.cu"),
            "-o", os.path.join(src, f"{arch}.o")], timeout=900)
    return "ok" if r.returncode == 0 else "error"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--core", help="prebuilt wave_model_core library")
    p.add_argument("--hipcc", action="store_true")
    p.add_argument("--log")
    a = p.parse_args()
    start = time.time()
    work = tempfile.mkdtemp(prefix="wave_mutants_")
    try:
        core = [a.core] if a.core else build_core(a.cxx, work)
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for name in [None] + [m[0] for m in MUTANTS]:
                for width in (32, 64):
                    jobs[(name, width)] = pool.submit(model, a.cxx, core, work, name, width)
            results = {k: f.result() for k, f in jobs.items()}
        problems = []
        for width in (32, 64):
            if results[(None, width)][0] != "pass":
                problems.append(f"step 10 as it is fails the model at W={width}:\n{results[(None, width)][1]}")
        rows = ["| mutant | the edit | kind | model W=32 | model W=64 | audit | hipcc gfx1030 | hipcc gfx90a | caught by |",
                "|---|---|---|---|---|---|---|---|---|"]
        old_rows = {}
        if os.path.exists(LOG):
            with open(LOG) as f:
                for line in f:
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    if len(cells) == 9 and cells[0].startswith("`"):
                        old_rows[cells[0].strip("`")] = cells
        for name, fname, _, _, what, kind in MUTANTS:
            m32, m64 = results[(name, 32)][0], results[(name, 64)][0]
            au, found = audit(work, name)
            if a.hipcc:
                h32, h64 = hipcc(work, name, "gfx1030"), hipcc(work, name, "gfx90a")
            else:
                h32, h64 = (old_rows[name][6], old_rows[name][7]) if name in old_rows else ("?", "?")
            wrong = {"bug64": m64 != "pass", "bug32": m32 != "pass", "right": False}[kind]
            if kind == "right":
                caught = "nothing to catch" + (" (the audit flags it)" if au == "flags" else "")
            else:
                by = [who for who, hit in (("model", wrong), ("audit", au == "flags"),
                                           ("hipcc", "error" in (h32, h64))) if hit]
                caught = ", ".join(by) if by else "none"
            expect = {"bug64": (m32 == "pass" and m64 == "FAIL"), "bug32": (m32 != "pass" and m64 == "pass"),
                      "right": (m32 == "pass" and m64 == "pass")}[kind]
            if not expect:
                problems.append(f"{name} ({kind}): model W=32 {m32}, W=64 {m64}\n{results[(name, 32)][1][-1500:]}\n{results[(name, 64)][1][-1500:]}")
            row = f"| `{name}` | {what} ({fname}) | {kind} | {m32} | {m64} | {au} | {h32} | {h64} | {caught} |"
            rows.append(row)
            if not a.hipcc and name in old_rows:
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if cells != old_rows[name]:
                    problems.append(f"{name}: the committed table ({os.path.relpath(LOG, ROOT)}) says\n  {' | '.join(old_rows[name])}\n"
                                    f"but this run gives\n  {' | '.join(cells)}\nfix: python3 tests/wave_model/mutants.py --hipcc --log {os.path.relpath(LOG, ROOT)}")
            elif not a.hipcc:
                problems.append(f"{name}: not in the committed table {os.path.relpath(LOG, ROOT)}")
        table = "\n".join(rows)
        print(table)
        seconds = time.time() - start
        print(f"{len(MUTANTS)} mutants, each built and run at W=32 and W=64{', and hipcc' if a.hipcc else ''}: "
              f"{'as expected' if not problems else 'PROBLEMS'} ({seconds:.0f} s)")
        if a.log:
            with open(a.log, "w") as f:
                f.write("# tests/wave_model/mutants.py --hipcc: each mutant a real edit of step 10, built and run on the\n"
                        "# wavefront model at W=32 and W=64 (--quick: stops at the first wrong case), scanned by\n"
                        "# scripts/maintainer/wave_audit.py, compiled by hipcc with -Wall -Wextra -Werror per target.\n")
                f.write(table + "\n")
        for p_ in problems:
            print("PROBLEM:", p_)
        return 1 if problems else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
