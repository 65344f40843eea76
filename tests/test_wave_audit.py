#!/usr/bin/env python3
"""Host test of chapter 10's wave audit (scripts/maintainer/wave_audit.py). It reads code, not
line numbers: the generated tables in docs/10_hip.md and docs/evidence/10_hip.md are what the
audit finds today and step 10 has no finding; real edits of the source (applied to copies)
that write a 32-wide assumption are caught, correct rewrites of the same lines are not;
moving a line changes nothing; a new finding, a new step folder or an unknown file type fails
the check. What the audit cannot see (a 32 behind a named constant) is the wavefront model's
job: tests/wave_model/mutants.py."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUDIT = os.path.join(ROOT, "scripts", "maintainer", "wave_audit.py")
STEP10 = os.path.join(ROOT, "steps", "step10_hip", "step10_hip.cu")
PORTABLE = os.path.join(ROOT, "steps", "step10_hip", "portable.hpp")
STEP05 = os.path.join(ROOT, "steps", "step05_vectorized", "step05_vectorized.cu")
sys.path.insert(0, os.path.join(ROOT, "tests", "wave_model"))
from mutants import LANE_LINE, MUTANTS, WAVE_LOOP  # noqa: E402  the model's mutants: the same edits
HIP_WIDTH = "constexpr int kWaveSize = __AMDGCN_WAVEFRONT_SIZE;"
# The wavefront model's mutants (tests/wave_model/mutants.py) that the audit must see too, and
# the kind it reports for each.
AUDITED_MUTANTS = {"lane_and31_var": "lane-index", "thread_rank_and31": "lane-index", "ballot_32bit": "mask",
                   "tree_from_16": "shuffle-16", "wave_sums_32": "per-warp-slots", "shfl_width_32": "shuffle-width-32",
                   "hip_wave_size_32": "wave-size"}


def mutant_edits():
    """(file, old, new, kind) of each audited mutant."""
    files = {"step10_hip.cu": STEP10, "portable.hpp": PORTABLE}
    return [(files[fname], old, new, AUDITED_MUTANTS[name]) for name, fname, old, new, _, _ in MUTANTS
            if name in AUDITED_MUTANTS]


def run(*args, audit=AUDIT):
    return subprocess.run([sys.executable, audit, *args], capture_output=True, text=True)


def edited_copy(tmp, path, old, new):
    """A copy of `path` in tmp with `old` (which must occur exactly once) replaced by `new`."""
    with open(path) as f:
        text = f.read()
    if text.count(old) != 1:
        raise AssertionError(f"{os.path.relpath(path, ROOT)} holds {text.count(old)} copies of the text the edit replaces "
                             f"(the source changed: update the test): {old!r}")
    copy = os.path.join(tmp, os.path.basename(path))
    with open(copy, "w") as f:
        f.write(text.replace(old, new))
    return copy


def findings(path):
    """[(kinds, code)] as `wave_audit.py --scan` prints them."""
    lines = run("--scan", path).stdout.strip().splitlines()
    return [tuple(line.split(": ", 2)[1:]) for line in lines]


def kinds_found(path):
    return [kinds for kinds, _ in findings(path)]


class WaveAudit(unittest.TestCase):
    def test_the_tables_are_current_and_step10_is_clean(self):
        r = run()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(kinds_found(STEP10), [])
        self.assertEqual(kinds_found(PORTABLE), [])  # CUDA's 32 carries `wave-audit: allow`

    def test_width_assumptions_written_into_the_source_are_caught(self):
        edits = mutant_edits() + [  # (file, old, new, a kind the audit must report)
            (STEP10, LANE_LINE, "  const unsigned lane = cg::this_thread_block().thread_rank() & 31, wave = threadIdx.x >> 5;",
             "lane-index"),
            (STEP10, "__shared__ T wave_sums[kThreads / port::kWaveSize];", "__shared__ T wave_sums[kThreads / 32];",
             "warps-per-block"),
            (STEP05, "  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;",
             "  __syncwarp(0xffffffff);\n  if (warp.thread_rank() == 0) warp_sums[warp_id] = value;", "mask"),
            (STEP05, "  if (warp_id == 0)\n", "  if (warp_id == 0 && __activemask() == 0xffffffff)\n", "mask"),
            (STEP05, "  value = cg::reduce(warp, value, cg::plus<T>());",
             "  const unsigned all_lanes = 0xFFFFFFFFu;\n  __syncwarp(all_lanes);\n  value = cg::reduce(warp, value, cg::plus<T>());",
             "mask"),
            # integer suffixes, and a ballot held in 32 bits
            (STEP10, LANE_LINE, "  const unsigned lane = threadIdx.x & 31u, wave = threadIdx.x / port::kWaveSize;", "lane-index"),
            (STEP10, "__shared__ T wave_sums[kThreads / port::kWaveSize];", "__shared__ T wave_sums[kThreads / 32u];",
             "warps-per-block"),
            (PORTABLE, "__shfl_down(value, delta, kWaveSize)", "__shfl_down(value, delta, 32u)", "shuffle-width-32"),
            (STEP10, WAVE_LOOP, WAVE_LOOP.replace("port::kWaveSize / 2", "16u"), "shuffle-16"),
            (STEP10, "__device__ T wave_sum(T value) {\n",
             "__device__ T wave_sum(T value) {\n  const unsigned voters = __ballot(1);\n  if (voters == 0) return value;\n",
             "ballot-32bit"),
        ]
        for path, old, new, kind in edits:
            with self.subTest(new=new), tempfile.TemporaryDirectory() as tmp:
                before = {code for _, code in findings(path)}
                added = [kinds for kinds, code in findings(edited_copy(tmp, path, old, new)) if code not in before]
                self.assertTrue(any(kind in kinds for kinds in added), f"not caught as {kind}: {new} (new findings: {added})")

    def test_correct_rewrites_of_the_watched_lines_pass(self):
        edits = [
            (PORTABLE, HIP_WIDTH, "constexpr int kWaveSize = warpSize;  // HIP 5.2: a constant"),
            (STEP10, WAVE_LOOP, WAVE_LOOP.replace("port::kWaveSize / 2", "port::kWaveSize >> 1")),
            (STEP10, LANE_LINE, "  const unsigned lane = threadIdx.x & (port::kWaveSize - 1), wave = threadIdx.x / port::kWaveSize;"),
            (STEP10, "__shared__ T wave_sums[kThreads / port::kWaveSize];", "__shared__ T wave_sums[kThreads / warpSize];"),
        ]
        for path, old, new in edits:
            with self.subTest(new=new), tempfile.TemporaryDirectory() as tmp:
                self.assertEqual(kinds_found(edited_copy(tmp, path, old, new)), [], new)

    def tree(self, tmp):
        """A copy of what the audit reads and writes; returns the copied audit script."""
        for part in ("scripts", "docs", "steps", "common"):
            shutil.copytree(os.path.join(ROOT, part), os.path.join(tmp, part), ignore=shutil.ignore_patterns("*.png"))
        return os.path.join(tmp, "scripts", "maintainer", "wave_audit.py")

    def test_moving_lines_changes_nothing_and_a_new_32_makes_the_tables_stale(self):
        with tempfile.TemporaryDirectory() as tmp:
            audit = self.tree(tmp)
            step03 = os.path.join(tmp, "steps", "step03_atomic_one_pass", "step03_atomic_one_pass.cu")
            with open(step03) as f:
                text = f.read()
            with open(step03, "w") as f:
                f.write("// one line more: every line below moves down\n" + text)
            r = run(audit=audit)
            self.assertEqual(r.returncode, 0, r.stdout)
            old = "const unsigned warp_id = threadIdx.x / 32"
            self.assertEqual(text.count(old), 1)
            with open(step03, "w") as f:
                f.write(text.replace(old, "const unsigned warp_id = threadIdx.x >> 5"))
            r = run(audit=audit)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("stale", r.stdout)
            self.assertEqual(run("--write", audit=audit).returncode, 0)
            self.assertEqual(run(audit=audit).returncode, 0)
            with open(os.path.join(tmp, "docs", "evidence", "10_hip.md")) as f:
                self.assertIn("threadIdx.x >> 5", f.read())

    def test_a_new_step_folder_is_read_and_an_unknown_file_type_reported(self):
        with tempfile.TemporaryDirectory() as tmp:
            audit = self.tree(tmp)
            step11 = os.path.join(tmp, "steps", "step11_next")
            os.makedirs(step11)
            with open(os.path.join(step11, "step11_next.cu"), "w") as f:
                f.write("auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n")
            r = run(audit=audit)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("stale", r.stdout)
            run("--write", audit=audit)
            with open(os.path.join(tmp, "docs", "evidence", "10_hip.md")) as f:
                self.assertIn("steps/step11_next/step11_next.cu", f.read())
            with open(os.path.join(step11, "kernel.cl"), "w") as f:
                f.write("x & 31;\n")
            r = run(audit=audit)
            self.assertEqual(r.returncode, 1)
            self.assertIn("steps/step11_next/kernel.cl: not read", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
