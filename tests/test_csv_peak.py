#!/usr/bin/env python3
"""Host test: no committed measurement is faster than its GPU's theoretical bandwidth.

Every row of results/*/*.csv (the harness's schema: files with gbps and pct_peak) must
have pct_peak <= 100 and gbps at most its GPU's peak. The CSVs do not store the peak, so it
is recovered from them: each row with pct_peak >= 10 implies peak = 100 x gbps / pct_peak
(both columns have two decimals: within 0.1% at 10%); the device's peak is the median of
those over all its files, per GPU (step 08's rows of shape gpus=K are of K GPUs, K times the
peak). A row whose pct_peak disagrees with its gbps and that peak (beyond the rounding of
two decimals and that 0.1%) is an error too: it could hide a GB/s above the peak.

A row above the peak is a measurement that counted bytes it did not move (a floor timed on a
read while the problem also writes, a byte count for the wrong kernel): re-measure it, never
edit the CSV by hand. Files of another schema (grid_sync_cost.csv, cluster_cost.csv) are named in OTHER_SCHEMAS;
any other file without these columns is an error, so a new CSV cannot slip past unchecked."""
import csv
import glob
import os
import shutil
import statistics
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "results")
# grid_sync_cost.csv: microseconds per grid.sync(), no GB/s column; cluster_cost.csv (step 09):
# launch and barrier costs, and GB/s of on-chip memory (shared memory, DSMEM, L2), which the
# DRAM peak does not bound.
OTHER_SCHEMAS = {"grid_sync_cost.csv", "cluster_cost.csv"}
PRECISE_PCT = 10.0  # rows at or above this % of peak imply the peak within 0.1%


def gpus_of(row):
    """How many GPUs the row's GB/s and % of peak are of (step 08: shape gpus=K)."""
    shape = row.get("shape", "")
    return int(shape[len("gpus="):]) if shape.startswith("gpus=") else 1


def read_rows(paths):
    """{path: rows} of the files in the harness's schema; raises for an unknown schema."""
    out = {}
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        header = rows[0].keys() if rows else []
        if "gbps" in header and "pct_peak" in header:
            out[path] = rows
        elif os.path.basename(path) not in OTHER_SCHEMAS:
            raise ValueError(f"{path}: no gbps/pct_peak columns and not a known other schema")
    return out


def device_peaks(files):
    """{device: one GPU's theoretical GB/s}, as the rows imply it (see the module's doc)."""
    implied = {}
    for rows in files.values():
        for r in rows:
            pct = float(r["pct_peak"])
            if pct >= PRECISE_PCT:
                implied.setdefault(r["device"], []).append(100.0 * float(r["gbps"]) / pct / gpus_of(r))
    return {device: statistics.median(values) for device, values in implied.items()}


def violations(paths):
    """One line per row above its peak or inconsistent with it; [] when all are within."""
    files = read_rows(paths)
    peaks = device_peaks(files)
    found = []
    for path, rows in files.items():
        for line, r in enumerate(rows, start=2):
            where = f"{os.path.relpath(path, ROOT)}:{line} ({r['step']} {r['variant']} {r['dtype']} n={r['n']} {r.get('shape', '')})"
            gbps, pct = float(r["gbps"]), float(r["pct_peak"])
            if pct > 100.0:
                found.append(f"{where}: {pct:.2f}% of peak")
            if r["device"] not in peaks:
                found.append(f"{where}: no row of {r['device']} at {PRECISE_PCT:.0f}% of peak or more to know its peak from")
                continue
            peak = peaks[r["device"]] * gpus_of(r)
            if gbps > peak * 1.001:
                found.append(f"{where}: {gbps:.2f} GB/s is above the peak {peak:.0f} GB/s")
            expected_pct = 100.0 * gbps / peak
            if abs(pct - expected_pct) > 0.01 + 0.001 * expected_pct:
                found.append(f"{where}: pct_peak {pct:.2f} but {gbps:.2f} GB/s is {expected_pct:.2f}% of {peak:.0f} GB/s")
    return found


def committed_csvs():
    return sorted(glob.glob(os.path.join(DATA, "*", "*.csv")))


class CsvPeak(unittest.TestCase):
    def test_no_committed_row_above_peak(self):
        paths = committed_csvs()
        self.assertGreater(len(read_rows(paths)), 10, "expected the committed CSVs under results/*/")
        found = violations(paths)
        if found:
            rows = {v.split(": ", 1)[0] for v in found}
            self.fail(f"{len(rows)} row(s) above or off the theoretical peak:\n" + "\n".join(found[:40]) +
                      "\nmeasure them again (scripts/gpu_check.sh); never edit a CSV by hand")

    def test_a_doctored_row_is_caught(self):
        """The check above can fail: in copies of committed CSVs, a row pushed past the peak
        (by its pct_peak, or by its gbps alone) must be reported, and nothing else."""
        paths = committed_csvs()
        found = violations(paths)
        clean = [p for p in read_rows(paths) if not any(v.startswith(os.path.relpath(p, ROOT) + ":") for v in found)]
        self.assertTrue(clean, "no committed CSV is clean: cannot build a doctored copy from one")
        source = clean[0]
        with open(source, newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames, list(reader)
        target = max(range(len(rows)), key=lambda i: float(rows[i]["pct_peak"]))  # the fastest row
        peak = 100.0 * float(rows[target]["gbps"]) / float(rows[target]["pct_peak"])
        for what, change in (("pct_peak", {"gbps": f"{1.05 * peak:.2f}", "pct_peak": "105.00"}),
                             ("gbps alone", {"gbps": f"{1.05 * peak:.2f}"})):
            with tempfile.TemporaryDirectory() as tmp:
                # the clean files of every device beside it, so the peaks are known as in the real check
                copies = []
                for p in clean:
                    dst = os.path.join(tmp, os.path.basename(os.path.dirname(p)) + "_" + os.path.basename(p))
                    shutil.copy(p, dst)
                    copies.append(dst)
                self.assertEqual(violations(copies), [], "the clean copies must pass")
                doctored = os.path.join(tmp, "doctored.csv")
                with open(doctored, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
                    writer.writeheader()
                    for i, r in enumerate(rows):
                        writer.writerow({**r, **change} if i == target else r)
                found = violations(copies + [doctored])
                self.assertTrue(found, f"a row at 105% of peak ({what}) was not reported")
                self.assertTrue(all(v.startswith(os.path.relpath(doctored, ROOT) + f":{target + 2} ") for v in found),
                                (what, found))

    def test_unknown_schema_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mystery.csv")
            with open(path, "w") as f:
                f.write("device,us\nX,1.0\n")
            with self.assertRaises(ValueError):
                read_rows([path])


if __name__ == "__main__":
    unittest.main(verbosity=2)
