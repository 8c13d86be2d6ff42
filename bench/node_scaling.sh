#!/bin/bash
# Scaling on one larger shared-memory machine (16 cores in docs/benchmarks.md), in one run of about four
# minutes: OpenBLAS's core fallback, kdual's thread scaling 1 → 16 (fit, Gram and block pass against
# NumPy's DGEMM/DGEMV), P concurrent one-thread processes (memory bandwidth by a triad, compute by DGEMM),
# kdual --mpi at 1 … 16 ranks of one thread (n = 40 000, float32 triangle) and 8 ranks of two threads, the
# matrix-free operator at 8 and 16 ranks, the block pass again with OpenBLAS's idle spin at 2^24 cycles,
# and scikit-learn's KernelPCA beside kdual at n = 20 000. Needs Fashion-MNIST, python3 with NumPy and
# scikit-learn, mpirun (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
# Usage: KDUAL=path/to/kdual OUT=dir bench/node_scaling.sh   (the log goes to $OUT/log.txt)
cd "$(dirname "$0")/.." || exit 1
KDUAL=${KDUAL:-bin/kdual}
OUT=${OUT:-.}
L=$OUT/log.txt
say() { echo "### $(date +%T) $*" | tee -a $L; }
say machine
{ lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA|L3|Flags' | cut -c1-300; free -g | head -2; nproc;
  $KDUAL info; python3 -c 'import numpy, sklearn; print(numpy.__version__, sklearn.__version__)'; numpy_cfg=$(python3 -c 'import numpy; numpy.show_config()' 2>&1 | grep -iE 'openblas|version|arch' | head -8); echo "$numpy_cfg"; } >> $L 2>&1
FIT="kpca fit --data fashion --n 20000 --components 20 --kernel gaussian --sigma median --solver block --json - --quiet"
j() { python3 -c 'import json,sys; r=json.load(sys.stdin); r=r.get("info",r); print("kernel %.2f solve %.2f passes %s" % (r["kernel_seconds"], r["solve_seconds"], r["passes"]))'; }
say "core fallback, n=20000, 16 threads: default (kdual restart) then OPENBLAS_CORETYPE=Prescott"
for c in default Prescott default Prescott; do
  t0=$(date +%s%N)
  if [ $c = default ]; then $KDUAL $FIT --threads 16 2>>$L | j >> $L
  else OPENBLAS_CORETYPE=Prescott $KDUAL $FIT --threads 16 2>>$L | j >> $L; fi
  echo "  ($c) wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $L
done
say "kdual fit n=20000 threads 1 2 4 8 16"
for t in 1 2 4 8 16; do echo -n "threads $t: " >> $L; $KDUAL $FIT --threads $t 2>>$L | j >> $L; done
say "threads.py n=10000 (kdual eig gram+block pass vs numpy's own OpenBLAS dgemm/dgemv)"
timeout 150 python3 bench/peers/threads.py $KDUAL --n 10000 --threads 1,2,4,8,16 --repeat 1 >> $L 2>&1
say "threads.py n=10000 again with OPENBLAS_THREAD_TIMEOUT=24 (idle OpenBLAS threads spin 2^24 cycles, not 2^28)"
OPENBLAS_THREAD_TIMEOUT=24 timeout 120 python3 bench/peers/threads.py $KDUAL --n 10000 --threads 1,8,16 --repeat 1 >> $L 2>&1
say "probes: P concurrent single-thread processes, triad (GB/s) and dgemm 2000 (GFLOP/s)"
cat > /tmp/probe.py <<'PY'
import sys, time, numpy as np
kind = sys.argv[1]
if kind == "triad":
    n = 40_000_000; a = np.zeros(n); b = np.ones(n); c = np.ones(n); a += 0
    t = time.perf_counter()
    for _ in range(10): np.add(b, c, out=a)
    print(10 * 3 * 8 * n / (time.perf_counter() - t) / 1e9)
else:
    x = np.random.default_rng(0).random((2000, 2000)); x @ x
    t = time.perf_counter()
    for _ in range(8): x @ x
    print(8 * 2 * 2000**3 / (time.perf_counter() - t) / 1e9)
PY
for kind in triad dgemm; do for p in 1 2 4 8 16; do
  tot=$(for i in $(seq $p); do OPENBLAS_NUM_THREADS=1 python3 /tmp/probe.py $kind & done | awk '{s+=$1} END {printf "%.1f", s}'); wait
  echo "$kind P=$p aggregate $tot" >> $L
done; done
say "MPI n=40000 float32 block, 1 thread per rank, ranks 1 2 4 8 16; then 8x2"
MF="kpca fit --data fashion --n 40000 --components 20 --kernel gaussian --sigma median --solver block --operator float32 --json - --quiet --mpi"
mj() { python3 -c 'import json,sys; r=json.load(sys.stdin); r=r.get("info",r); print("kernel %.2f solve %.2f passes %s s/pass %.3f mpi s/pass %s" % (r["kernel_seconds"], r["solve_seconds"], r["passes"], r["solve_seconds"]/r["passes"], [round(v,4) for v in r.get("rank_mpi_seconds_per_pass",[])]))'; }
for p in 1 2 4 8 16; do echo -n "ranks $p x1: " >> $L; timeout 100 mpirun -np $p -x OPENBLAS_NUM_THREADS=1 $KDUAL $MF --threads 1 2>>$L | mj >> $L; done
MM="kpca fit --data fashion --n 40000 --components 20 --kernel gaussian --sigma median --solver block --operator matrix-free --tol 1e-6 --json - --quiet --mpi"
for p in 8 16; do echo -n "matrix-free ranks $p x1: " >> $L; timeout 90 mpirun -np $p -x OPENBLAS_NUM_THREADS=1 $KDUAL $MM --threads 1 2>>$L | mj >> $L; done
echo -n "ranks 8 x2: " >> $L; timeout 60 mpirun -np 8 --bind-to none -x OPENBLAS_NUM_THREADS=2 $KDUAL $MF --threads 2 2>>$L | mj >> $L
say "scikit-learn KernelPCA n=20000 (16 threads) vs kdual block"
timeout 120 python3 bench/peers/kernelpca.py $KDUAL --n 20000 --repeat 1 --solvers block --settle 2 >> $L 2>&1
say done
