#!/usr/bin/env python3
"""Host test: the CSV reader (the current schema and the 13 columns before the spread), the
tables, the within-noise rule, the docs tables' reproduce lines, the CSV migration and the
plot script, on small made-up CSVs (device 'Sample GPU', not a measurement), plus a schema
check of every committed CSV."""
import csv
import glob
import os
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "maintainer"))
import docs_sync  # noqa: E402
import migrate_csv  # noqa: E402
import results  # noqa: E402

HEADER = ",".join(results.COLUMNS)
NO_SPREAD_HEADER = ",".join(results.NO_SPREAD_COLUMNS)
OLD_HEADER = ",".join(results.OLD_COLUMNS)
NO_SPREAD = ",,,1"  # ms_min, ms_max not measured, batch 1: the tail that makes a 13-column row current
# The sample's spread around each median: every rep within -1% .. +2% of it.
LOW, HIGH = 0.99, 1.02
SIZES = (10, 20, 24, 30)
# One program run per step: (step, [(variant, fraction of the 1000 GB/s peak)]).
RUNS = (("step00_baseline", [("tree", 0.20)]),
        ("step01_warp_unroll", [("plain", 0.22), ("syncwarp", 0.21)]),
        ("step02_warp_shuffle", [("shfl_down", 0.25)]),
        ("step05_vectorized", [("v4_batch4", 0.93)]))
FLOOR_FRAC = 0.95


def cub_frac(step):
    # CUB runs at 0.90 except in step05's run, where it ran at 0.86: the pooled CUB
    # median (0.90) then differs from the CUB that step05 was timed against (0.86).
    return 0.86 if step.startswith("step05") else 0.90


def gbps(frac, e):
    return 1000.0 * frac * e / 30


def ms_of(n, g):
    return n * 4 / g / 1e6


def row(step, variant, dtype, n, g, ok, extra=""):
    return f"Sample GPU,13.0,{step},{variant},{dtype},{n},{ms_of(n, g):.6f},{g:.2f},{g / 10:.2f},{ok}{extra}"


def spread(ms, batch=1):
    return f",{ms * LOW:.6f},{ms * HIGH:.6f},{batch}"


def sample_csv(path):
    """Current schema: every run writes CUB, the floor and its variants with same-run ratios,
    each with its spread (min and max over the reps) around the median."""
    lines = [HEADER]
    for dtype in ("int", "float"):
        for e in SIZES:
            n = 1 << e
            for step, variants in RUNS:
                cub_ms, floor_ms = ms_of(n, gbps(cub_frac(step), e)), ms_of(n, gbps(FLOOR_FRAC, e))
                contenders = [("cub", "cub", cub_frac(step)), ("floor", "read", FLOOR_FRAC)]
                for name, frac, in variants:
                    contenders.append((step, name, frac))
                for s, v, frac in contenders:
                    g = gbps(frac, e)
                    ms = ms_of(n, g)
                    ok = "false" if v == "plain" else "true"
                    lines.append(row(s, v, dtype, n, g, ok, f",{cub_ms / ms:.4f},{ms / floor_ms:.4f},array" + spread(ms)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def old_sample_csv(path):
    """Old schema, as the old harness wrote it: each run's CUB row, then its variants."""
    lines = [OLD_HEADER]
    for dtype in ("int", "float"):
        for e in SIZES:
            n = 1 << e
            for step, variants in RUNS:
                lines.append(row("cub", "cub", dtype, n, gbps(cub_frac(step), e), "true"))
                lines += [row(step, v, dtype, n, gbps(frac, e), "false" if v == "plain" else "true")
                          for v, frac in variants]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def drawn(fn, *args, **kwargs):
    """Calls a figure function of plot.py; returns what it returned and, for the figure it
    drew, per panel {line label: (xs, ys)} and the panel's title (the figure's suptitle too)."""
    import plot
    figs, close = [], plot.plt.close

    def keep(fig=None):
        if hasattr(fig, "axes"):  # a Figure, not "all" or a name
            figs.append(fig)
        close(fig)

    with mock.patch.object(plot.plt, "close", keep):
        result = fn(*args, **kwargs)
    panels = [({line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()},
               ax.get_title()) for fig in figs for ax in fig.axes]
    titles = [fig._suptitle.get_text() for fig in figs if fig._suptitle is not None]
    return result, panels, titles


def segmented_rows(step, variants, n=1 << 26, cols=(1, 16, 256, 4096)):
    """Rows of one segmented-sum run (13 columns): per row length CUB, the floor, then the
    program's variants, as the harness writes them; variants: [(step, variant, GB/s, min cols)]."""
    lines = []
    for dtype in ("int", "float"):
        for c in cols:
            for s, v, g, min_cols in variants:
                if c >= min_cols:
                    lines.append(row(s, v, dtype, n, g, "true", f",1.0000,1.0000,cols={c}"))
    return lines


def table_line(table, start):
    found = [line for line in table.split("\n") if line.startswith(start)]
    assert len(found) == 1, (start, table)
    return found[0]


class Results(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "sample.csv")
        sample_csv(self.csv)
        self.rows = results.load([self.csv])

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, content):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(content)
        return path

    def test_load_and_tables(self):
        rows = self.rows
        self.assertEqual(len(rows), 2 * len(SIZES) * 13)
        self.assertIsInstance(rows[0]["x_cub"], float)
        self.assertIsInstance(rows[0]["x_floor"], float)
        self.assertEqual(rows[0]["batch"], 1)
        self.assertLessEqual(rows[0]["ms_min"], rows[0]["ms"])
        self.assertLessEqual(rows[0]["ms"], rows[0]["ms_max"])
        self.assertAlmostEqual(results.peak(rows, "Sample GPU"), 1000.0, places=0)
        best = results.best_variants(rows, "Sample GPU", "int", 1 << 30)
        # the wrong 'plain' variant is never chosen, though it is 'faster'; the floor is
        # faster than everything but is no step
        self.assertEqual([(s, v) for s, v, _ in best],
                         [("step00_baseline", "tree"), ("step01_warp_unroll", "syncwarp"),
                          ("step02_warp_shuffle", "shfl_down"), ("step05_vectorized", "v4_batch4")])
        table = results.ladder_table(rows, "Sample GPU", "int", 1 << 30)
        self.assertIn("| step | variant | GB/s | % of peak | x CUB | x floor | CUB GB/s, same run | floor GB/s, same run |",
                      table)
        self.assertIn("| step00_baseline | tree | 200 | 20.0% | 0.22 | 4.75 | 900 | 950 |", table)
        # step05 ran against a CUB of 860 GB/s (its own run), the other programs against 900
        self.assertIn("| step05_vectorized | v4_batch4 | 930 | 93.0% | 1.08 | 1.02 | 860 | 950 |", table)
        # no line of CUB or the floor pooled over the programs' runs
        self.assertNotIn("CUB DeviceReduce::Sum", table)
        self.assertNotIn("floor (plain read)", table)
        text = results.summary([self.csv])
        self.assertIn("Sample GPU, int, n = 1073741824", text)
        self.assertIn("| x floor |", text)
        self.assertEqual(results.slug("NVIDIA H100 80GB HBM3"), "h100_80gb_hbm3")

    def test_x_cub_is_the_rows_own_not_pooled(self):
        """step05 ran against a CUB of 860 GB/s; pooled over programs CUB is 900. The
        tables must show 930/860 = 1.08 (same run), never 930/900 = 1.03."""
        c = results.curves(self.rows, "Sample GPU", "int")
        self.assertAlmostEqual(c[results.CUB][1 << 30], 900.0, places=1)
        ladder = results.ladder_table(self.rows, "Sample GPU", "int", 1 << 30, all_variants=True)
        line = table_line(ladder, "| step05_vectorized | v4_batch4 |")
        self.assertIn("| 1.08 |", line)
        self.assertNotIn("1.03", line)
        sizes = results.sizes_table(self.rows, "Sample GPU", "int", [1 << 24, 1 << 30], steps=["step05"])
        self.assertIn("| step05_vectorized | v4_batch4 | 744 GB/s (1.08x) | 930 GB/s (1.08x) |", sizes)
        self.assertIn("| CUB (all runs) | DeviceReduce::Sum | 720 GB/s | 900 GB/s |", sizes)
        self.assertIn("| floor (all runs) | plain read | 760 GB/s (1.06x) | 950 GB/s (1.06x) |", sizes)

    def test_floor_is_only_its_own_curve(self):
        for dtype in ("int", "float"):
            for field in ("gbps", "ms", "x_cub", "x_floor"):
                keys = results.curves(self.rows, "Sample GPU", dtype, include_wrong=True, field=field)
                self.assertEqual({k for k in keys if "floor" in k or "read" in k}, {results.FLOOR}, field)
        floor = results.curves(self.rows, "Sample GPU", "int")[results.FLOOR]
        self.assertEqual(sorted(floor), [1 << e for e in SIZES])
        self.assertAlmostEqual(floor[1 << 30], 950.0, places=1)
        self.assertNotIn("floor", [s for s, *_ in results.best_variants(self.rows, "Sample GPU", "int", 1 << 20)])

    def test_latency_table(self):
        table = results.latency_table(self.rows, "Sample GPU", "int", [1 << 20, 1 << 30])
        self.assertIn("| step | variant | n = 2^20 | n = 2^30 |", table)
        # 2^30 x 4 B at 930 GB/s = 4618.2 µs, its reps from 0.99x to 1.02x that
        self.assertIn("| step05_vectorized | v4_batch4 | ", table)
        self.assertIn(" 4618.2 µs (4572.1-4710.6) |", table_line(table, "| step05_vectorized |"))
        # CUB pools the rows of four programs: the lowest min and the highest max of them
        cub_us = [2 ** 30 * 4 / (gbps(f, 30) * 1e9) * 1e6 for f in (0.86, 0.90)]
        self.assertIn(f" ({cub_us[1] * LOW:.1f}-{cub_us[0] * HIGH:.1f}) |", table_line(table, "| CUB (all runs) |"))
        # The same rows without their spread (a 13-column file): the median alone, as before
        with open(self.csv) as f:
            lines = f.read().split("\n")
        old = self.write("no_spread.csv", "\n".join([NO_SPREAD_HEADER] + [",".join(l.split(",")[:13]) for l in lines[1:] if l]))
        plain = results.latency_table(results.load([old]), "Sample GPU", "int", [1 << 20, 1 << 30])
        self.assertTrue(table_line(plain, "| step05_vectorized |").endswith(" 4618.2 µs |"), plain)
        self.assertIn("| CUB (all runs) | DeviceReduce::Sum |", table)
        self.assertIn("| floor (all runs) | plain read |", table)
        self.assertNotIn("plain (", table)  # the figures' pick: no wrong variant

    def test_schema_errors(self):
        ok = "GPU,13.0,step00,tree,int,12,1,2,3,true"  # ms = 1
        T = NO_SPREAD
        for content in ("device,n\nx,1\n",
                        HEADER + "\nGPU,13.0,step00,tree,int,12,1,2,3\n",
                        HEADER + f"\n{ok}\n",                                   # 10 fields under the new header
                        HEADER + f"\n{ok},1,1,array\n",                         # 13 fields under the new header
                        HEADER + f"\n{ok},1,1,array{T},1\n",                    # 17 fields
                        NO_SPREAD_HEADER + f"\n{ok},1,1,array{T}\n",            # 16 fields under the 13-column header
                        HEADER + f"\n,13.0,step00,tree,int,12,1,2,3,true,1,1,array{T}\n",
                        HEADER + f"\nGPU,13.0,step00,tree,half,12,1,2,3,true,1,1,array{T}\n",
                        HEADER + f"\nGPU,13.0,step00,tree,int,twelve,1,2,3,true,1,1,array{T}\n",
                        HEADER + f"\n{ok},fast,1,array{T}\n",
                        HEADER + f"\n{ok},1,,array{T}\n",
                        HEADER + f"\n{ok},1,-1,array{T}\n",
                        HEADER + f"\n{ok},nan,1,array{T}\n",
                        HEADER + f"\n{ok},1,1,{T}\n",                            # empty shape
                        HEADER + f"\n{ok},1,1,rows and cols{T}\n",               # shape with spaces
                        HEADER + f"\nGPU,13.0,cub,cub,int,12,1,2,3,true,0.9000,1,array{T}\n",  # CUB against itself is 1
                        HEADER + f"\nGPU,13.0,floor,read,int,12,1,2,3,true,1,1.2000,array{T}\n",
                        HEADER + f"\nGPU,13.0,floor,write,int,12,1,2,3,true,1,1,array{T}\n",
                        HEADER + f"\nGPU,13.0,cub,tree,int,12,1,2,3,true,1,1,array{T}\n",
                        # the spread (around the median ms = 1) and the batch
                        HEADER + f"\n{ok},1,1,array,0.5,,1\n",                  # min without max
                        HEADER + f"\n{ok},1,1,array,,2,1\n",                    # max without min
                        HEADER + f"\n{ok},1,1,array,1.5,2,1\n",                 # the median below the min
                        HEADER + f"\n{ok},1,1,array,0.5,0.9,1\n",               # the median above the max
                        HEADER + f"\n{ok},1,1,array,-0.5,2,1\n",
                        HEADER + f"\n{ok},1,1,array,nan,2,1\n",
                        HEADER + f"\n{ok},1,1,array,0.5,inf,1\n",
                        HEADER + f"\n{ok},1,1,array,fast,2,1\n",
                        HEADER + f"\n{ok},1,1,array,0.5,2,0\n",                 # batch 0
                        HEADER + f"\n{ok},1,1,array,0.5,2,\n",                  # no batch
                        HEADER + f"\n{ok},1,1,array,0.5,2,1.5\n",
                        HEADER + f"\n{ok},1,1,array,0.5,2,-1\n"):
            bad = self.write("bad.csv", content)
            with self.assertRaises(results.SchemaError, msg=content):
                results.load([bad])
        old = self.write("old.csv", f"{OLD_HEADER}\n{ok}\n")
        with self.assertRaisesRegex(results.SchemaError, "migrate_csv.py"):
            results.load([old])
        fine = self.write("fine.csv", f"{HEADER}\n{ok},0.5000,0.0000,array,0.5,2,100\n"
                                      f"GPU,13.0,cub,cub,int,12,1,2,3,true,1.0000,0,array,1,1,1\n"
                                      f"{ok},0.5000,0.0000,array{T}\n")
        self.assertEqual([r["x_floor"] for r in results.load([fine])], [0.0, 0.0, 0.0])  # 0: not measured
        self.assertEqual([(r["ms_min"], r["ms_max"], r["batch"]) for r in results.load([fine])],
                         [(0.5, 2.0, 100), (1.0, 1.0, 1), (None, None, 1)])  # empty: not measured
        # The 13 columns before the spread are read as they are: no spread, batch 1
        earlier = self.write("earlier.csv", f"{NO_SPREAD_HEADER}\n{ok},0.5000,0.0000,array\n")
        self.assertEqual([(r["ms"], r["ms_min"], r["ms_max"], r["batch"]) for r in results.load([earlier])],
                         [(1.0, None, None, 1)])

    def test_within_noise(self):
        """Two contenders are within noise when their [min, max] ranges overlap (touching
        counts): the timer cannot order them. Apart: one was faster in every rep."""
        self.assertTrue(results.within_noise((4.1, 4.4), (4.3, 4.6)))
        self.assertTrue(results.within_noise((4.3, 4.6), (4.1, 4.4)))
        self.assertTrue(results.within_noise((4.1, 4.3), (4.3, 4.6)))   # touching
        self.assertTrue(results.within_noise((4.0, 5.0), (4.2, 4.3)))   # one inside the other
        self.assertFalse(results.within_noise((4.1, 4.29), (4.3, 4.6)))
        self.assertFalse(results.within_noise((4.3, 4.6), (4.1, 4.29)))
        self.assertIsNone(results.within_noise(None, (4.3, 4.6)))       # not measured: no claim
        self.assertIsNone(results.within_noise((None, None), (4.3, 4.6)))
        with self.assertRaises(ValueError):
            results.within_noise((4.4, 4.1), (4.3, 4.6))
        v = results.noise_verdict
        self.assertEqual(v([("a", 4.2, (4.1, 4.3)), ("b", 4.5, (4.4, 4.6))]), "a faster")
        self.assertEqual(v([("a", 4.5, (4.4, 4.6)), ("b", 4.2, (4.1, 4.4))]), "within noise")
        self.assertEqual(v([("a", 4.2, (4.1, 4.3)), ("b", 4.3, (4.2, 4.4)), ("c", 5.0, (4.9, 5.1))]),
                         "a fastest; within noise of it: b")
        self.assertEqual(v([("a", 4.2, (4.1, 4.3)), ("b", 4.9, (4.8, 5.0)), ("c", 5.0, (4.9, 5.1))]), "a fastest")
        self.assertEqual(v([("a", 4.2, (4.1, 4.3)), ("b", 4.9, None)]), "spread not measured")
        self.assertEqual(v([("a", 4.2, (4.1, 4.3)), ("b", None, None)]), "-")

    def test_noise_table_and_batches(self):
        """Rows timed with --batch stay out of the sweep's tables and figures, and the noise
        table reads them: per size, each contender's median (min-max) and the verdict."""
        step = "step07_cooperative_grid"
        lines = []
        # (n, variant, median µs, min µs, max µs) at batch 100: apart at 2^14, overlapping at 2^16
        for n, v, med, lo, hi in ((1 << 14, "one_block", 4.412, 4.398, 4.431), (1 << 14, "packed_slots", 4.702, 4.688, 4.730),
                                  (1 << 16, "one_block", 5.051, 5.012, 5.120), (1 << 16, "packed_slots", 5.090, 5.070, 5.101)):
            g = n * 4 / (med * 1e3)
            lines.append(f"Sample GPU,13.0,{step},{v},int,{n},{med / 1e3:.6f},{g:.2f},{g / 10:.2f},true,1.0000,1.0000,"
                         f"array,{lo / 1e3:.6f},{hi / 1e3:.6f},100")
        # the same contenders timed alone (batch 1) at 2^14, much slower: must not mix in
        for v in ("one_block", "packed_slots"):
            lines.append(f"Sample GPU,13.0,{step},{v},int,{1 << 14},0.009000,7.28,0.73,true,1.0000,1.0000,array,"
                         f"0.008000,0.010000,1")
        path = self.write("batch.csv", "\n".join([HEADER] + lines) + "\n")
        rows = results.load([self.csv, path])
        keys = [(step, "one_block"), (step, "packed_slots")]
        table = results.noise_table(rows, "Sample GPU", "int", keys, batch=100)
        self.assertEqual(table.split("\n")[:2], ["| n | one_block, µs | packed_slots, µs | the timer says |",
                                                 "|---:|---:|---:|---|"])
        self.assertEqual(table_line(table, "| 2^14 |"),
                         "| 2^14 | 4.412 (4.398-4.431) | 4.702 (4.688-4.730) | one_block faster |")
        self.assertEqual(table_line(table, "| 2^16 |"),
                         "| 2^16 | 5.051 (5.012-5.120) | 5.090 (5.070-5.101) | within noise |")
        alone = results.noise_table(rows, "Sample GPU", "int", keys)  # batch 1: only the slow rows
        self.assertEqual(table_line(alone, "| 2^14 |"), "| 2^14 | 9.00 (8.00-10.00) | 9.00 (8.00-10.00) | within noise |")
        self.assertNotIn("2^16", alone)
        # the sweep's tables never see the batch rows, and the noise table of a batch no others
        self.assertEqual(results.curves(rows, "Sample GPU", "int", field="ms")[(step, "one_block")], {1 << 14: 0.009})
        self.assertEqual(sorted(results.curves(rows, "Sample GPU", "int", batch=100)[(step, "one_block")]),
                         [1 << 14, 1 << 16])
        self.assertEqual(results.ladder_table(rows, "Sample GPU", "int", 1 << 14, steps=["step07"], all_variants=True)
                         .count("| step07_cooperative_grid |"), 2)  # the two batch-1 rows
        # the command line gives the same table
        self.assertEqual(results.compare([path, "--device", "Sample GPU", "--dtype", "int", "--batch", "100", "--keys",
                                          f"{step}/one_block,{step}/packed_slots"]), table)

    def test_docs_tables_end_with_the_command(self):
        rows = self.rows
        sizes = docs_sync.table('sizes device="Sample GPU" dtype=int sizes=2^20,2^30 steps=step00,step01 wrong=show', rows)
        self.assertTrue(sizes.endswith(
            "|\n\nReproduce (in the build directory): ./step00 --n 2^20,2^30 --dtype int --reps 50; "
            "./step01 --n 2^20,2^30 --dtype int --reps 50\n"), sizes)
        self.assertIn("| step01_warp_unroll | plain (wrong sum) | ", sizes)
        self.assertIn("(1.08x)", docs_sync.table('sizes device="Sample GPU" dtype=int sizes=2^30 steps=step05', rows))
        ladder = docs_sync.table('ladder device="Sample GPU" dtype=float n=2^30', rows)
        self.assertTrue(ladder.endswith(
            "\n\nReproduce (in the build directory): " + "; ".join(
                f"./{s} --n 2^30 --dtype float --reps 50" for s in ("step00", "step01", "step02", "step05")) + "\n"), ladder)
        self.assertIn("| floor GB/s, same run |", ladder)
        one = docs_sync.table('ladder device="Sample GPU" dtype=int n=2^24 steps=step05 variants=all', rows)
        self.assertEqual(one.split("\n")[-2],
                         "Reproduce (in the build directory): ./step05 --n 2^24 --dtype int --reps 50")
        latency = docs_sync.table('latency device="Sample GPU" dtype=int sizes=2^10,1048576 steps=step02', rows)
        self.assertIn("| n = 2^10 | n = 2^20 |", latency)
        self.assertTrue(latency.endswith("./step02 --n 2^10,2^20 --dtype int --reps 50\n"), latency)
        with self.assertRaises(ValueError):  # no step listed: no command, a broken directive
            docs_sync.table('ladder device="Sample GPU" dtype=int n=2^30 steps=step07', rows)

    def test_migrate_round_trip(self):
        old = os.path.join(self.tmp.name, "old.csv")
        new = os.path.join(self.tmp.name, "new.csv")
        old_sample_csv(old)
        rows = migrate_csv.migrate_file(old, new)
        self.assertEqual(rows, results.load([new]))
        with open(old) as f:
            old_records = list(csv.reader(f))[1:]
        with open(new) as f:
            new_records = list(csv.reader(f))
        self.assertEqual(new_records[0], results.COLUMNS)
        self.assertEqual([r[:10] for r in new_records[1:]], old_records)  # nothing else changes
        self.assertEqual({tuple(r[12:]) for r in new_records[1:]}, {("array", "", "", "1")})  # no spread, batch 1
        cub_ms = None
        for old_r, r in zip(old_records, rows):
            ms = float(old_r[6])
            if r["step"] == "cub":
                cub_ms = ms
            # paired with the CUB row just before it in file order, i.e. its own run
            self.assertAlmostEqual(r["x_cub"], round(cub_ms / ms, 4), places=6)
            self.assertEqual(r["x_floor"], 0.0)
        ladder = results.ladder_table(rows, "Sample GPU", "int", 1 << 30)
        self.assertIn("| step05_vectorized | v4_batch4 | 930 | 93.0% | 1.08 | - | 860 | - |", ladder)  # no floor rows
        with self.assertRaises(results.SchemaError):  # a new-schema file is refused, not redone
            migrate_csv.migrate_file(new, os.path.join(self.tmp.name, "again.csv"))
        # docs_sync reads old files the same way (and tags each row with its file: "run")
        self.assertEqual([{k: v for k, v in r.items() if k != "run"} for r in docs_sync.load_measurements([old])], rows)
        migrate_csv.main([old, old])  # in place
        self.assertEqual(results.load([old]), rows)

    def test_migrate_13_columns(self):
        """A file of the 13 columns before the spread: each line gains ',,,1' (no spread,
        batch 1), nothing else changes, and it reads as the 13-column file itself does."""
        with open(self.csv) as f:
            current = f.read().split("\n")
        earlier = [NO_SPREAD_HEADER] + [",".join(l.split(",")[:13]) for l in current[1:] if l]
        src = self.write("earlier.csv", "\n".join(earlier) + "\n")
        dst = os.path.join(self.tmp.name, "migrated.csv")
        rows = migrate_csv.migrate_file(src, dst)
        with open(dst) as f:
            self.assertEqual(f.read().split("\n"), [HEADER] + [l + NO_SPREAD for l in earlier[1:]] + [""])
        self.assertEqual(rows, results.load([src]))
        self.assertTrue(all(r["ms_min"] is None and r["ms_max"] is None and r["batch"] == 1 for r in rows))
        with self.assertRaises(results.SchemaError):  # the current schema is refused, not redone
            migrate_csv.migrate_file(dst, os.path.join(self.tmp.name, "again.csv"))
        with self.assertRaises(results.SchemaError):  # a row of another length
            migrate_csv.migrate_text(NO_SPREAD_HEADER + "\nGPU,13.0,step00,tree,int,12,1,2,3,true,1,1\n")

    def test_plot_script_writes_pngs(self):
        import plot  # needs matplotlib: this test runs under the interpreter CMake found
        out = os.path.join(self.tmp.name, "png")
        written = plot.main(["--out", out, self.csv])
        names = sorted(os.path.basename(p) for p in written)
        self.assertEqual(names, ["bandwidth_sample_gpu.png", "headline.png", "ladder_sample_gpu.png",
                                 "latency_sample_gpu.png", "warp_unroll_sample_gpu.png"])
        for p in written:
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)
            self.assertGreater(os.path.getsize(p), 10000, p)

    def test_segmented_figure(self):
        """Step 06's rows (shape cols=C at 2^26 elements) give segmented_<gpu>.png with a line
        per variant; rows of another total n (the blog's shape) and of other steps are left
        out, and without such rows no figure is claimed."""
        import plot
        lines = [NO_SPREAD_HEADER]  # a file from before the spread still draws
        n = 1 << 26
        for dtype in ("int", "float"):
            for cols in (1, 16, 256, 4096):
                for step, v, frac in (("cub", "cub", 0.1), ("floor", "read", 0.95),
                                      ("step06_cooperative_groups", "tile_cg_reduce", 0.8)):
                    g = gbps(frac, 26)
                    lines.append(row(step, v, dtype, n, g, "true", f",1.0000,1.0000,cols={cols}"))
        path = os.path.join(self.tmp.name, "segmented.png")
        rows = results.load([self.write("step06_cooperative_groups.csv", "\n".join(lines) + "\n")])
        self.assertTrue(plot.segmented_figure(rows, "Sample GPU", path))
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertFalse(plot.segmented_figure(self.rows, "Sample GPU", path + ".none.png"))

    def test_segmented_figure_keeps_step06_run(self):
        """Step 09's segmented sum times CUB and the floor at the same shapes as step 06: the
        step 06 figure draws those of step 06's own run only, whether the runs come in two
        files or one after the other in one file (run_all.sh's)."""
        import plot
        step06 = segmented_rows("step06_cooperative_groups",
                                [("cub", "cub", 100.0, 1), ("floor", "read_write", 950.0, 1),
                                 ("step06_cooperative_groups", "tile_cg_reduce", 800.0, 1)])
        step09 = segmented_rows("step09_cluster_rows",
                                [("cub", "cub", 111.0, 1), ("floor", "read_write", 999.0, 1),
                                 ("step09_cluster_rows", "auto", 700.0, 1)])
        one = self.write("step06_cooperative_groups.csv", "\n".join([NO_SPREAD_HEADER] + step06) + "\n")
        two = self.write("step09_cluster_rows.csv", "\n".join([NO_SPREAD_HEADER] + step09) + "\n")
        both = self.write("run_all.csv", "\n".join([NO_SPREAD_HEADER] + step06 + step09) + "\n")
        path = os.path.join(self.tmp.name, "segmented.png")
        _, alone, _ = drawn(plot.segmented_figure, plot.load([one]), "Sample GPU", path)
        self.assertEqual(alone[0][0]["CUB DeviceSegmentedReduce::Sum"][1], [100.0] * 4)
        self.assertEqual(alone[0][0]["floor (read + write)"][1], [950.0] * 4)
        for rows in (plot.load([one, two]), plot.load([both]), results.load([one, two]), results.load([both])):
            _, panels, _ = drawn(plot.segmented_figure, rows, "Sample GPU", path)
            self.assertEqual(panels, alone)

    def test_clusters_figure(self):
        """Step 09's two programs give clusters_<gpu>.png through main(), with only the
        step*.csv files named: left, the segmented sum's auto and cluster_row with CUB and the
        floor of that run (not step 06's); right, the whole-array sum's median microseconds per
        launch from batched_step09_clusters.csv beside them (not the launches timed alone,
        not another program's batched floor). A device without step 09 rows gets none."""
        import plot
        data = os.path.join(self.tmp.name, "data", "sample_gpu")
        os.makedirs(data)

        def write(name, lines):
            path = os.path.join(data, name)
            with open(path, "w") as f:
                f.write("\n".join([HEADER] + lines) + "\n")
            return path

        cols = (1, 16, 256, 4096, 1 << 20)
        rows06 = segmented_rows("step06_cooperative_groups", [("cub", "cub", 100.0, 1), ("floor", "read_write", 950.0, 1),
                                ("step06_cooperative_groups", "tile_cg_reduce", 800.0, 1)], cols=cols)
        rows09 = segmented_rows("step09_cluster_rows", [("cub", "cub", 111.0, 1), ("floor", "read_write", 999.0, 1),
                                ("step09_cluster_rows", "block_row", 600.0, 256),
                                ("step09_cluster_rows", "cluster_row", 650.0, 256),
                                ("step09_cluster_rows", "auto", 900.0, 1)], cols=cols)
        sizes = [1 << e for e in (10, 14, 18, 22)]
        us = {"cub": 5.0, "read": 2.0, "last_block": 3.0, "cluster_4": 3.5, "cluster_16": 4.0, "one_cluster": 4.5,
              "dims_2": 3.8, "one_block": 2.5}

        def array_rows(step, variants, batch, slower=1.0, floor_us=None):
            lines = []
            for dtype in ("int", "float"):
                for n in sizes:
                    for s, v in [("cub", "cub"), ("floor", "read")] + [(step, v) for v in variants]:
                        t = (floor_us if v == "read" and floor_us else us[v]) * slower * (1 + n / 2 ** 22)
                        ms = t / 1000
                        g = n * 4 / ms / 1e6
                        lines.append(row(s, v, dtype, n, g, "true", ",1.0000,1.0000,array" + spread(ms, batch)))
            return lines

        cluster_variants = ["last_block", "cluster_4", "cluster_16", "one_cluster", "dims_2"]
        named = [write("step06_cooperative_groups.csv", [l + NO_SPREAD for l in rows06]),
                 write("step07_cooperative_grid.csv", array_rows("step07_cooperative_grid", ["one_block"], 1, 4.0)),
                 write("step09_cluster_rows.csv", [l + NO_SPREAD for l in rows09]),
                 write("step09_clusters.csv", array_rows("step09_clusters", cluster_variants, 1, 3.0))]
        write("batched_step07_cooperative_grid.csv", array_rows("step07_cooperative_grid", ["one_block"], 100, floor_us=1.0))
        write("batched_step09_clusters.csv", array_rows("step09_clusters", cluster_variants, 100))
        out = os.path.join(self.tmp.name, "png")
        (written, figures, titles) = drawn(plot.main, ["--out", out] + named, in_process=True)
        target = os.path.join(out, "clusters_sample_gpu.png")
        self.assertIn(target, written)
        with open(target, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(target), 10000)
        self.assertEqual(plot.batched_companions(named), [os.path.join(data, "batched_step07_cooperative_grid.csv"),
                                                          os.path.join(data, "batched_step09_clusters.csv")])
        # The clusters figure as main() drew it, and drawn alone from the same files in the
        # other order (step 06's CUB after step 09's: no last-one-wins)
        self.assertTrue(any(t.startswith("Step 09") and "Sample GPU" in t for t in titles), titles)
        first = [i for i, (_, t) in enumerate(figures) if t.startswith("Segmented sum")]
        self.assertEqual(len(first), 1, figures)
        by_main = figures[first[0]:first[0] + 2]
        rows = plot.load(list(reversed(named + plot.batched_companions(named))))
        ok, panels, titles = drawn(plot.clusters_figure, rows, "Sample GPU", os.path.join(out, "again.png"))
        self.assertTrue(ok)
        self.assertEqual(len(panels), 2)
        self.assertEqual(panels, by_main)
        self.assertEqual(len(titles), 1)
        self.assertIn("Sample GPU", titles[0])
        (left, left_title), (right, right_title) = panels
        self.assertIn("Segmented sum", left_title)
        self.assertIn("int", left_title)
        self.assertEqual(sorted(left), sorted(["auto (packed rows, a warp or a cluster per row)",
                                               "cluster_row (a cluster of C blocks per row)",
                                               "CUB DeviceSegmentedReduce::Sum", "floor (read + write)"]))
        self.assertEqual(left["auto (packed rows, a warp or a cluster per row)"], (list(cols), [900.0] * 5))
        self.assertEqual(left["cluster_row (a cluster of C blocks per row)"], ([256, 4096, 1 << 20], [650.0] * 3))
        self.assertEqual(left["CUB DeviceSegmentedReduce::Sum"], (list(cols), [111.0] * 5))  # step 09's run, not 06's
        self.assertEqual(left["floor (read + write)"], (list(cols), [999.0] * 5))
        self.assertIn("Whole-array sum", right_title)
        self.assertIn("100 warm launches back to back", right_title)
        labels = {"last_block": "last_block (step 07's, no cluster)", "cluster_4": "cluster_4", "cluster_16": "cluster_16",
                  "one_cluster": "one_cluster (16 blocks, no partials)", "read": "floor (plain read)"}
        self.assertEqual(sorted(right), sorted(labels.values()))
        for v, label in labels.items():
            xs, ys = right[label]
            self.assertEqual(xs, sizes, label)
            # the batched rows' median per launch in µs: not the single launches (3x), nor
            # step 07's batched floor (1 µs)
            for n, y in zip(xs, ys):
                self.assertAlmostEqual(y, us[v] * (1 + n / 2 ** 22), places=2, msg=label)
        # Without step 09's rows: no figure, nothing written
        self.assertFalse(plot.clusters_figure(self.rows, "Sample GPU", os.path.join(out, "none.png")))
        self.assertFalse(os.path.exists(os.path.join(out, "none.png")))
        # Without the batched file the right panel shows the launches timed alone, and says so
        alone = [r for r in rows if r["batch"] == 1]
        _, panels, _ = drawn(plot.clusters_figure, alone, "Sample GPU", os.path.join(out, "alone.png"))
        self.assertIn("each launch timed alone", panels[1][1])
        self.assertAlmostEqual(panels[1][0]["cluster_4"][1][0], 3 * us["cluster_4"] * (1 + 2 ** 10 / 2 ** 22), places=2)

    def test_normalize_figure(self):
        """Step 07's normalization rows (shape normalize, with CUB and the copy floor) give
        normalize_<gpu>.png through main(); a device without them gets none."""
        import plot
        lines = [NO_SPREAD_HEADER]
        for dtype in ("int", "float"):
            for e in (16, 20, 24, 28):
                n = 1 << e
                for step, v, frac in (("cub", "cub", 0.4), ("floor", "copy", 0.9),
                                      ("step07_normalize", "two_pass", 0.5), ("step07_normalize", "stateful_slots", 0.7)):
                    lines.append(row(step, v, dtype, n, gbps(frac, e), "true", ",1.0000,1.0000,normalize"))
        path = self.write("step07_normalize.csv", "\n".join(lines) + "\n")
        out = os.path.join(self.tmp.name, "png")
        written = plot.main(["--out", out, self.csv, path])
        target = os.path.join(out, "normalize_sample_gpu.png")
        self.assertIn(target, written)
        with open(target, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(target), 10000)
        self.assertFalse(plot.normalize_figure(self.rows, "Sample GPU", os.path.join(out, "none.png")))
        self.assertFalse(os.path.exists(os.path.join(out, "none.png")))

    def test_scaling_figure(self):
        """Step 08's rows (shape gpus=1 and gpus=2, several GPUs) give scaling_<gpu>.png, and
        stay out of the one-GPU figures: their n and their % of K GPUs' peak would change
        which n those figures take as the largest."""
        import plot
        lines = [NO_SPREAD_HEADER]
        for dtype in ("int", "float"):
            for e in (16, 20, 24, 28, 32):
                n = 1 << e
                one_ms, two_ms = ms_of(n, gbps(0.9, e)), ms_of(n, 2 * gbps(0.88, e))
                rows = [("cub", "cub_1gpu", 1, one_ms, one_ms), ("floor", "read", 2, two_ms * 0.99, two_ms * 0.99)]
                for v in ("peer_atomic", "peer_barrier", "nccl"):
                    rows += [("step08_multi_grid", v, 1, one_ms * 1.01, one_ms), ("step08_multi_grid", v, 2, two_ms, two_ms)]
                for step, v, k, ms, floor_ms in rows:
                    g = n * 4 / ms / 1e6
                    lines.append(f"Sample GPU,13.0,{step},{v},{dtype},{n},{ms:.6f},{g:.2f},{g / (10 * k):.2f},true,"
                                 f"{one_ms / ms:.4f},{ms / (two_ms * 0.99 if k == 2 else floor_ms):.4f},gpus={k}")
                if e in (20, 28):  # one process per GPU: no CUB, no floor
                    g = n * 4 / two_ms / 1e6
                    lines.append(f"Sample GPU,13.0,step08_multi_grid,nccl_mp,{dtype},{n},{two_ms:.6f},{g:.2f},"
                                 f"{g / 20:.2f},true,0,0,gpus=2")
        multi = self.write("step08_multi_grid.csv", "\n".join(lines) + "\n")
        rows = results.load([multi])
        self.assertEqual({r["shape"] for r in rows}, {"gpus=1", "gpus=2"})
        out = os.path.join(self.tmp.name, "png")
        path = os.path.join(out, "scaling_sample_gpu.png")
        os.makedirs(out)
        self.assertTrue(plot.scaling_figure(rows, "Sample GPU", path))
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(path), 10000)
        self.assertFalse(plot.scaling_figure(self.rows, "Sample GPU", os.path.join(out, "none.png")))  # no step 08
        self.assertFalse(os.path.exists(os.path.join(out, "none.png")))
        # Through main(), beside one-GPU rows: the one-GPU figures keep their largest n (2^30)
        written = plot.main(["--out", out, self.csv, multi])
        self.assertIn(path, written)
        self.assertIn(os.path.join(out, "bandwidth_sample_gpu.png"), written)
        single = [r for r in results.load([self.csv, multi]) if not plot.is_multi_gpu(r)]
        self.assertEqual(results.largest_n(single, "Sample GPU", "int"), 1 << 30)
        # only step 08 rows: the scaling figure and nothing that needs one-GPU rows
        self.assertEqual([os.path.basename(p) for p in plot.main(["--out", out, multi])], ["scaling_sample_gpu.png"])

    def test_committed_csv(self):
        """Every committed measurement file is in the current schema (an earlier one is
        converted with plots/migrate_csv.py, not kept), names its device in every row, and
        holds only that device and one step's runs (folder and file are named after them)."""
        paths = glob.glob(os.path.join(ROOT, "results", "*", "step*.csv"))
        self.assertTrue(paths)
        for path in paths:
            with open(path) as f:
                self.assertEqual(f.readline().strip(), HEADER, f"{path}: convert it with plots/migrate_csv.py")
            rows = results.load([path])
            self.assertTrue(rows, path)
            devs = results.devices(rows)
            self.assertEqual(len(devs), 1, path)
            # results/<device slug>/<step>.csv: the folder names the device, the file the
            # program whose run it holds (every row is that step's, CUB's or the floor's)
            self.assertEqual(os.path.basename(os.path.dirname(path)), results.slug(devs[0]), path)
            step = os.path.basename(path)[:-len(".csv")]
            self.assertEqual({r["step"] for r in rows} - {"cub", "floor"}, {step}, path)
            self.assertTrue(results.ladder_table(rows, devs[0], "int", max(r["n"] for r in rows)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
