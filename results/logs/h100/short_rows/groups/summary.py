"""Tables of round 5's runs (run.sh), from their CSVs. x_floor is each run's own: the
staged_rows time over the floor's time measured in the same invocation.
  summary.py rules DIR r4,d4,final   staged_rows at each length, min-max of the two rounds;
                                     'off 1' marks the rows of the offset-1 invocation
  summary.py lanes DIR               every G at every length, three grids (run.sh lanes)"""
import csv
import sys
from collections import defaultdict

mode, folder = sys.argv[1], sys.argv[2]
if mode == "rules":
    names = sys.argv[3].split(",")
    table = defaultdict(lambda: defaultdict(list))
    for name in names:
        seen = defaultdict(int)
        for r in csv.DictReader(open(f"{folder}/{name}.csv")):
            if r["variant"] != "staged_rows":
                continue
            cols = int(r["shape"].split("=")[1])
            offset_1 = cols in (16, 32, 64, 128, 256, 512)  # only the offset-1 run has these
            if cols in (33, 100):  # in both runs: offset 0 first, then offset 1, in each round
                seen[(r["dtype"], cols)] += 1
                offset_1 = seen[(r["dtype"], cols)] % 2 == 0
            table[(r["dtype"], offset_1, cols)][name].append(float(r["x_floor"]))
    print("dtype  rows  offset " + " ".join(f"{n:>13}" for n in names))
    for dtype, offset_1, cols in sorted(table):
        cells = table[(dtype, offset_1, cols)]
        print(f"{dtype:6} {cols:5} {'1' if offset_1 else '0':>6} " +
              " ".join(f"{min(cells[n]):.3f}-{max(cells[n]):.3f}".rjust(13) if n in cells else "-".rjust(13) for n in names))
elif mode == "lanes":
    table = defaultdict(dict)
    grids = (0, 1, 4)
    for tpb in grids:
        for g in (1, 2, 4, 8, 16, 32):
            for r in csv.DictReader(open(f"{folder}/lanes{g}_tpb{tpb}.csv")):
                if r["variant"] == "staged_rows":
                    table[int(r["shape"].split("=")[1])][(g, tpb)] = float(r["x_floor"])
    print("x_floor of staged_rows, float, 2^26 elements; G = lanes per row; tiles per block: 0 = as many blocks")
    print("as fit, striding over the tiles; 1 = a block per tile; 4 = four tiles a block. * = the best.")
    print("rows " + " ".join(f"G{g}/t{t}".rjust(7) for t in grids for g in (1, 2, 4, 8, 16, 32)))
    for cols in sorted(table):
        best = min(table[cols].values())
        print(f"{cols:4} " + " ".join((("*" if table[cols][(g, t)] == best else " ") + f"{table[cols][(g, t)]:.3f}").rjust(7)
                                      for t in grids for g in (1, 2, 4, 8, 16, 32)))
