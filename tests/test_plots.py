#!/usr/bin/env python3
"""Host test: the CSV reader, the tables and the plot script, on a small made-up CSV
(device 'Sample GPU', not a measurement), plus a schema check of every committed CSV."""
import glob
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import results  # noqa: E402

HEADER = ",".join(results.COLUMNS)


def sample_csv(path):
    rows = [HEADER]
    for dtype in ("int", "float"):
        for e in (10, 20, 24, 30):
            n = 1 << e
            for step, variant, frac in (("cub", "cub", 0.90), ("step00_baseline", "tree", 0.20),
                                        ("step01_warp_unroll", "plain", 0.22), ("step01_warp_unroll", "syncwarp", 0.21),
                                        ("step02_warp_shuffle", "shfl_down", 0.25), ("step05_vectorized", "v4_batch4", 0.93)):
                gbps = 1000.0 * frac * e / 30
                ok = "false" if variant == "plain" else "true"
                rows.append(f"Sample GPU,13.0,{step},{variant},{dtype},{n},{n * 4 / gbps / 1e6:.6f},{gbps:.2f},{gbps / 10:.2f},{ok}")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


class Results(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "sample.csv")
        sample_csv(self.csv)

    def tearDown(self):
        self.tmp.cleanup()

    def test_load_and_tables(self):
        rows = results.load([self.csv])
        self.assertEqual(len(rows), 48)
        self.assertAlmostEqual(results.peak(rows, "Sample GPU"), 1000.0, places=0)
        best = results.best_variants(rows, "Sample GPU", "int", 1 << 30)
        # the wrong 'plain' variant is never chosen, though it is 'faster'
        self.assertEqual([(s, v) for s, v, _ in best],
                         [("step00_baseline", "tree"), ("step01_warp_unroll", "syncwarp"),
                          ("step02_warp_shuffle", "shfl_down"), ("step05_vectorized", "v4_batch4")])
        table = results.ladder_table(rows, "Sample GPU", "int", 1 << 30)
        self.assertIn("| step05_vectorized | v4_batch4 | 930 | 93.0% | 1.03 |", table)
        self.assertIn("| CUB DeviceReduce::Sum | - | 900 | 90.0% | 1.00 |", table)
        self.assertIn("Sample GPU, int, n = 1073741824", results.summary([self.csv]))
        self.assertEqual(results.slug("NVIDIA H100 80GB HBM3"), "h100_80gb_hbm3")

    def test_schema_errors(self):
        bad = os.path.join(self.tmp.name, "bad.csv")
        for content in ("device,n\nx,1\n", HEADER + "\nGPU,13.0,step00,tree,int,12,1,2,3\n",
                        HEADER + "\n,13.0,step00,tree,int,12,1,2,3,true\n",
                        HEADER + "\nGPU,13.0,step00,tree,half,12,1,2,3,true\n",
                        HEADER + "\nGPU,13.0,step00,tree,int,twelve,1,2,3,true\n"):
            with open(bad, "w") as f:
                f.write(content)
            with self.assertRaises(results.SchemaError):
                results.load([bad])

    def test_plot_script_writes_pngs(self):
        import plot  # needs matplotlib: this test runs under the interpreter CMake found
        out = os.path.join(self.tmp.name, "png")
        written = plot.main(["--out", out, self.csv])
        names = sorted(os.path.basename(p) for p in written)
        self.assertEqual(names, ["bandwidth_sample_gpu.png", "headline.png", "ladder_sample_gpu.png",
                                 "warp_unroll_sample_gpu.png"])
        for p in written:
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)
            self.assertGreater(os.path.getsize(p), 10000, p)

    def test_committed_csv(self):
        """Every committed measurement file follows the schema, names its device in every
        row, and holds only that device (the file is named after it)."""
        for path in glob.glob(os.path.join(ROOT, "plots", "data", "*.csv")):
            rows = results.load([path])
            self.assertTrue(rows, path)
            devs = results.devices(rows)
            self.assertEqual(len(devs), 1, path)
            self.assertEqual(os.path.basename(path), results.slug(devs[0]) + ".csv")


if __name__ == "__main__":
    unittest.main(verbosity=2)
