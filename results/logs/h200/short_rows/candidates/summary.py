import csv,sys,statistics
from collections import defaultdict
d=sys.argv[1]; CANDS=sys.argv[2].split(",")
t=defaultdict(lambda: defaultdict(list))
for c in CANDS:
    for r in csv.DictReader(open(f"{d}/{c}.csv")):
        key=(r['dtype'],r['shape'],r['step'] if r['step'] in('cub','floor') else r['variant'])
        t[key][c].append(float(r['ms']))
shapes=sorted({(k[0],k[1]) for k in t}, key=lambda s:(s[0],int(s[1][5:])))
print("dtype shape variant: x_floor per cand (mean of run medians / floor mean over all cands)  | cub x_floor")
for dt,sh in shapes:
    fl=statistics.mean([x for c in t[(dt,sh,'floor')].values() for x in c])
    cub=statistics.mean([x for c in t[(dt,sh,'cub')].values() for x in c])
    for v in ['auto','warp_row']:
        if (dt,sh,v) not in t: continue
        vals=" ".join(f"{c}:{statistics.mean(t[(dt,sh,v)][c])/fl:.3f}({min(t[(dt,sh,v)][c])/fl:.3f}-{max(t[(dt,sh,v)][c])/fl:.3f})" for c in CANDS)
        print(f"{dt:5} {sh:12} {v:8} {vals} | cub {cub/fl:.3f}")
