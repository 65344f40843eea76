import csv, sys, statistics, glob
# usage: cmp.py committed_dir fresh.csv [fresh.csv...]: per row of the fresh CSVs, the committed
# median for the same (device, step, variant, dtype, n, shape, batch), pooled by median if repeated.
committed = {}
for f in glob.glob(sys.argv[1] + '/*.csv'):
    rows = list(csv.DictReader(open(f)))
    if not rows or 'step' not in rows[0]: continue
    for r in rows:
        k = (r['device'], r['step'], r['variant'], r['dtype'], r['n'], r['shape'], r.get('batch', '1') or '1')
        committed.setdefault(k, []).append(float(r['ms']))
ratios = []
print(f"{'step':24} {'variant':18} {'dtype':5} {'n':>11} {'shape':10} {'b':>3} {'new ms':>10} {'old ms':>10} {'new/old':>8}")
for f in sys.argv[2:]:
    for r in csv.DictReader(open(f)):
        k = (r['device'], r['step'], r['variant'], r['dtype'], r['n'], r['shape'], r.get('batch', '1') or '1')
        if k not in committed: continue
        old = statistics.median(committed[k]); new = float(r['ms'])
        ratios.append(new / old)
        print(f"{r['step']:24} {r['variant']:18} {r['dtype']:5} {r['n']:>11} {r['shape']:10} {k[6]:>3} {new:10.5f} {old:10.5f} {new/old:8.3f}")
ratios.sort()
q = lambda p: ratios[min(len(ratios) - 1, int(p * len(ratios)))]
print(f"{len(ratios)} rows matched: new/old median {statistics.median(ratios):.3f}, 10th pct {q(0.1):.3f}, 90th pct {q(0.9):.3f}, min {ratios[0]:.3f}, max {ratios[-1]:.3f}")
