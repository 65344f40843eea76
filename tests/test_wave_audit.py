#!/usr/bin/env python3
"""Host test of chapter 10's audit (scripts/maintainer/wave_audit.py): the table in docs/10_hip.md lists
every 32-wide assumption of steps 00-09 and common/ where it is; step 10 has none; and the
audit can fail: a copy of step 10 with 32 written into its wavefront sum (right on NVIDIA,
wrong on a 64-wide AMD wavefront, so no NVIDIA run sees it) is caught, and so is a stale table."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUDIT = os.path.join(ROOT, "scripts", "maintainer", "wave_audit.py")
STEP10 = os.path.join(ROOT, "steps", "step10_hip", "step10_hip.cu")
WAVE_LOOP = "for (int offset = port::kWaveSize / 2; offset > 0; offset /= 2)"


def run(*args):
    return subprocess.run([sys.executable, AUDIT, *args], capture_output=True, text=True)


class WaveAudit(unittest.TestCase):
    def test_the_table_is_current_and_step10_is_clean(self):
        r = run()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("steps/step02_warp_shuffle/step02_warp_shuffle.cu", r.stdout)

    def test_a_32_written_into_step10_is_caught(self):
        with open(STEP10) as f:
            text = f.read()
        self.assertEqual(text.count(WAVE_LOOP), 1)
        for mutant in (WAVE_LOOP.replace("port::kWaveSize / 2", "16"),                 # a shuffle tree of 32 lanes
                       "  __shared__ T wave_sums[32];",                                   # slots for 32-wide warps
                       "  const unsigned lane = threadIdx.x % 32;"):                      # lane numbers from 32
            with tempfile.TemporaryDirectory() as tmp:
                copy = os.path.join(tmp, "step10_hip.cu")
                with open(copy, "w") as f:
                    f.write(text.replace(WAVE_LOOP, mutant) if "offset" in mutant else text + "\n" + mutant + "\n")
                found = run("--scan", copy).stdout
                self.assertTrue(found.strip(), f"not caught: {mutant}")

    def test_32_in_the_hip_branch_of_portable_hpp_is_caught(self):
        portable = os.path.join(ROOT, "steps", "step10_hip", "portable.hpp")
        with open(portable) as f:
            text = f.read()
        hip_line = "constexpr int kWaveSize = __AMDGCN_WAVEFRONT_SIZE;"
        self.assertEqual(text.count(hip_line), 1)
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "portable.hpp")
            with open(copy, "w") as f:
                f.write(text.replace(hip_line, "constexpr int kWaveSize = 32;"))
            found = run("--scan", copy).stdout.strip().splitlines()
            self.assertEqual(len(found), 1, found)  # the HIP branch's line; CUDA's own 32 stays allowed
            self.assertIn("wave-size", found[0])

    def test_a_stale_table_is_caught(self):
        with tempfile.TemporaryDirectory() as tmp:
            for part in ("scripts", "docs", "steps", "common"):
                src = os.path.join(ROOT, part)
                shutil.copytree(src, os.path.join(tmp, part), ignore=shutil.ignore_patterns("logs", "*.png"))
            step02 = os.path.join(tmp, "steps", "step02_warp_shuffle", "step02_warp_shuffle.cu")
            with open(step02) as f:
                text = f.read()
            with open(step02, "w") as f:
                f.write("// one line more\n" + text)  # every finding of step 02 moves down a line
            r = subprocess.run([sys.executable, os.path.join(tmp, "scripts", "maintainer", "wave_audit.py")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("stale", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
