#!/usr/bin/env python3
"""Converts a measurement CSV of an earlier schema to the current one.

    migrate_csv.py OLD.csv NEW.csv      (NEW may be OLD itself: the file is read first)

10 columns:  device,cuda,step,variant,dtype,n,ms,gbps,pct_peak,verified
13 columns:  ...,verified,x_cub,x_floor,shape
Current:     ...,verified,x_cub,x_floor,shape,ms_min,ms_max,batch

From 13 columns: ms_min and ms_max empty (the spread was not recorded: "not measured" to
plots/results.py, whose tables then show the median alone) and batch 1 (every launch was
timed between its own pair of events then). Nothing else changes.

From 10 columns, first x_cub, x_floor and shape. Those files carry no run id, but the old
harness wrote each run's CUB row first and then that run's variants for the same (device,
dtype, n). So a row's CUB partner is the CUB row of its (device, dtype, n) that most
recently precedes it in file order, and
    x_cub   = that CUB row's ms / this row's ms  (1.0000 on CUB rows; 0.0000 if none precedes)
    x_floor = 0.0000 on every row: the floor was not measured then.
0.0000 means "not measured" to plots/results.py; its tables print "-" there. shape is
"array". Everything else is copied unchanged. The output is read back with results.load
as a check; a file already in the current schema is refused, not redone.
"""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

NOT_MEASURED = f"{results.NOT_MEASURED:.4f}"
NO_SPREAD = ["", "", str(results.SWEEP_BATCH)]  # ms_min, ms_max not measured; one launch per event pair


def migrate_records(records):
    """10-column field lists (no header) -> current-schema field lists, in the same order."""
    last_cub_ms = {}  # (device, dtype, n) -> ms of the latest CUB row seen, i.e. of this run
    out = []
    for fields in records:
        r = dict(zip(results.OLD_COLUMNS, fields))
        key = (r["device"], r["dtype"], r["n"])
        if r["step"] == results.CUB[0]:
            last_cub_ms[key] = float(r["ms"])
            x_cub = "1.0000"
        else:
            x_cub = same_run_ratio(last_cub_ms.get(key), float(r["ms"]))
        out.append(list(fields) + [x_cub, NOT_MEASURED, results.ARRAY] + NO_SPREAD)
    return out


def same_run_ratio(cub_ms, ms):
    return NOT_MEASURED if not cub_ms or ms <= 0 else f"{cub_ms / ms:.4f}"


def migrate_text(text, source="<text>"):
    """A whole CSV text of the 10- or 13-column schema -> the current schema's text;
    SchemaError for anything else (a file already migrated or measured anew is refused)."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header not in (results.OLD_COLUMNS, results.NO_SPREAD_COLUMNS):
        raise results.SchemaError(f"{source}: header {header} is neither earlier schema, "
                                  f"{results.OLD_COLUMNS} or {results.NO_SPREAD_COLUMNS}")
    records = list(reader)
    for lineno, fields in enumerate(records, start=2):
        if len(fields) != len(header):
            raise results.SchemaError(f"{source}:{lineno}: {len(fields)} fields, expected {len(header)}")
        try:
            float(fields[header.index("ms")])
        except ValueError as e:
            raise results.SchemaError(f"{source}:{lineno}: {e}") from None
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(results.COLUMNS)
    writer.writerows(migrate_records(records) if header == results.OLD_COLUMNS else
                     [fields + NO_SPREAD for fields in records])
    return out.getvalue()


def migrate_file(src, dst):
    """Writes dst (current schema) from src (an earlier one) and returns its rows as results.load reads them."""
    with open(src, newline="") as f:
        new = migrate_text(f.read(), src)
    rows = results.parse(io.StringIO(new), f"{src} (migrated)")  # refuse to write what would not load
    with open(dst, "w", newline="") as f:
        f.write(new)
    return rows


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        sys.exit(__doc__)
    try:
        rows = migrate_file(*args)
    except (OSError, results.SchemaError) as e:
        sys.exit(f"migrate_csv.py: {e}")
    print(f"wrote {args[1]}: {len(rows)} rows in the current schema (no spread, batch 1)")


if __name__ == "__main__":
    main()
