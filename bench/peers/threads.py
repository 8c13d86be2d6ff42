#!/usr/bin/python3
"""Thread scaling 1 → T: kdual's Gram build and block pass against OpenBLAS's
own DGEMM and DGEMV on the same machine and kernels.

Usage: threads.py KDUAL_BINARY [--n 7000] [--threads 1,2] [--repeat 3]

kdual: `kdual eig --matrix fashion --n N --components 20 --solver block
--threads T --json -` (the first n Fashion-MNIST images, Gaussian kernel,
the float64 matrix built by the Gram engine, then block Krylov in blocks of
8): kernel_seconds; apply_seconds (the time inside the operator's passes)
/ passes for one block pass; and seconds (the whole solve, with the
solver's own orthogonalisation and Rayleigh–Ritz work between passes) /
passes, shown beside it. OpenBLAS,
through NumPy in a fresh process with OPENBLAS_NUM_THREADS=T: the DGEMM of
the same X (n×784) with Xᵀ, and DGEMV of an n×n float64 matrix with a
vector (median of 20 calls each). The runs alternate (every thread count
of kdual, then of NumPy), --repeat times; the table gives medians and each
one's speedup over one thread, and kdual's speedup as a fraction of
OpenBLAS's (DGEMM for the Gram, DGEMV for the pass).
"""
import json
import os
import statistics
import subprocess
import sys

PEER = r"""
import gzip, statistics, sys, time
import numpy as np
n = int(sys.argv[1])
with gzip.open("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") as f:
    f.read(16)
    x = np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0
a = np.random.default_rng(1).random((n, n))
v = np.ones(n)
x @ x.T; a @ v
g, m = [], []
for _ in range(5):
    t = time.perf_counter(); x @ x.T; g.append(time.perf_counter() - t)
for _ in range(20):
    t = time.perf_counter(); a @ v; m.append(time.perf_counter() - t)
print(statistics.median(g), statistics.median(m))
"""


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, repeat = arg("--n", 7000), arg("--repeat", 3)
    threads = [int(t) for t in arg("--threads", "1,2").split(",")]
    runs = {}
    for _ in range(repeat):
        for t in threads:
            out = subprocess.run([binary, "eig", "--matrix", "fashion", "--n", str(n), "--components", "20",
                                  "--solver", "block", "--threads", str(t), "--json", "-"],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            runs.setdefault(("gram", t), []).append(r["kernel_seconds"])
            runs.setdefault(("pass", t), []).append(r["apply_seconds"] / r["passes"])
            runs.setdefault(("solve", t), []).append(r["seconds"] / r["passes"])
        for t in threads:
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(t))
            out = subprocess.run([sys.executable, "-c", PEER, str(n)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            runs.setdefault(("dgemm", t), []).append(float(out[0]))
            runs.setdefault(("dgemv", t), []).append(float(out[1]))
    med = {k: statistics.median(v) for k, v in runs.items()}
    t0 = threads[0]
    print(f"Thread scaling, Fashion-MNIST n={n}: medians of {repeat} alternated runs")
    print("| what | " + " | ".join(f"{t} threads s" for t in threads) + " | speedup | of OpenBLAS's |")
    print("|---|" + "---|" * len(threads) + "---|---|")
    for what, peer in (("gram", "dgemm"), ("pass", "dgemv"), ("solve", "dgemv"), ("dgemm", None), ("dgemv", None)):
        cells = " | ".join(f"{med[(what, t)]:.4f}" for t in threads)
        sp = med[(what, t0)] / med[(what, threads[-1])]
        frac = ""
        if peer:
            frac = f"{sp / (med[(peer, t0)] / med[(peer, threads[-1])]):.2f}"
        name = {"gram": "kdual Gram (kernel_seconds)", "pass": "kdual block pass (8 vectors; apply_seconds / passes)",
                "solve": "kdual solve / passes (the solver's own work included)",
                "dgemm": "OpenBLAS DGEMM X·Xᵀ", "dgemv": "OpenBLAS DGEMV n×n"}[what]
        print(f"| {name} | {cells} | {sp:.2f} | {frac} |")


if __name__ == "__main__":
    main()
