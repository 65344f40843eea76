set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p $out
other=$(mktemp -d); tar --exclude='./build*' -cf - . | tar -xf - -C $other; cp floor_ab_tmp/hybrid_bench.cuh $other/common/bench.cuh
for pair in ".:b1" "$other:b2"; do s=${pair%%:*}; b=${pair##*:}; cmake -S $s -B $b -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1; cmake --build $b -j 16 --target step05_vectorized step06_cooperative_groups step06_filter step07_normalize >$out/build_$b.log 2>&1 || { tail $out/build_$b.log; exit 1; }; done
echo built $(date +%T)
for round in 1 2; do for b in b1 b2; do
  $b/step05_vectorized --variant v4_batch4 --n 2^22,2^24,2^26,2^28,2^30 --dtype int --reps 30 --csv $out/$b.csv >>$out/runs.txt 2>&1
  $b/step06_cooperative_groups --variant auto --n 2^26 --cols 1,2,4,8,64 --dtype int --reps 30 --csv $out/$b.csv >>$out/runs.txt 2>&1
  $b/step06_filter --variant warp_aggregated --n 2^26 --pass-rate 50,100 --dtype int --reps 30 --csv $out/$b.csv >>$out/runs.txt 2>&1
  $b/step07_normalize --variant two_pass --n 2^24,2^26,2^28 --dtype int --reps 30 --csv $out/$b.csv >>$out/runs.txt 2>&1
done; echo round $round $(date +%T); done
