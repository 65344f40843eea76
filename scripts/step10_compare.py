#!/usr/bin/env python3
"""Step 10 against step 07, same session (scripts/step10_gpu.sh): per dtype and n, the ratio
of the x CUB (each over CUB in its own run; >1: step 10 ahead) of their fastest variants and
of their grid_sync (the same design), and every variant's x floor, each the median of its
rows. Writes plots/data/logs_<gpu>/step10/compare_with_step07.txt.
    python3 scripts/step10_compare.py"""
import csv
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = {"h100": "h100_80gb_hbm3", "h200": "h200"}


def median(rows, step, variant, dtype, n, col="x_cub"):
    v = [float(r[col]) for r in rows if r["step"] == step and r["variant"] == variant and r["dtype"] == dtype
         and int(r["n"]) == n and r["shape"] == "array" and r["batch"] == "1"]
    return statistics.median(v)


for short, slug in GPUS.items():
    with open(os.path.join(ROOT, "plots", "data", slug, "step10_hip.csv")) as f:
        s10 = list(csv.DictReader(f))
    logs = os.path.join(ROOT, "plots", "data", f"logs_{short}", "step10")
    with open(os.path.join(logs, "same_session_step07.csv")) as f:
        s07 = list(csv.DictReader(f))
    lines = ["# per dtype and n: step 10's fastest vs step 07's fastest (x CUB ratio), the same design",
             "# (grid_sync vs grid_sync, x CUB ratio), and each variant's median x floor",
             "dtype n step10_best x_cub step07_best x_cub ratio grid_sync_ratio"
             " xfloor_s10_block_atomic xfloor_s10_grid_sync xfloor_s07_grid_sync xfloor_s07_packed_slots"]
    for n in (2**20, 2**22, 2**24, 2**26, 2**28, 2**30):
        for dtype in ("int", "float"):
            a = max((median(s10, "step10_hip", v, dtype, n), v) for v in ("block_atomic", "grid_sync"))
            b = max((median(s07, "step07_cooperative_grid", v, dtype, n), v) for v in ("grid_sync", "packed_slots"))
            same = median(s10, "step10_hip", "grid_sync", dtype, n) / median(s07, "step07_cooperative_grid", "grid_sync", dtype, n)
            floors = [median(s10, "step10_hip", v, dtype, n, "x_floor") for v in ("block_atomic", "grid_sync")]
            floors += [median(s07, "step07_cooperative_grid", v, dtype, n, "x_floor") for v in ("grid_sync", "packed_slots")]
            lines.append(f"{dtype} {n} {a[1]} {a[0]:.4f} {b[1]} {b[0]:.4f} {a[0] / b[0]:.3f} {same:.3f} "
                         + " ".join(f"{x:.3f}" for x in floors))
    with open(os.path.join(logs, "compare_with_step07.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(short, *lines[3:], sep="\n  ")
