#!/usr/bin/python3
"""Foundation timings: kdual against NumPy/SciPy/scikit-learn in one run.

Usage: foundation.py KDUAL_BINARY [--repeat R]

Three measurements, each a median of R runs, kdual and the peer alternating
on the same machine and the same OpenBLAS:
  1. all eigenpairs of a 2000x2000 symmetric matrix:
     kdual SymEig (dsyevd) vs numpy.linalg.eigh;
  2. the top 20 eigenpairs of a 5000x5000 symmetric matrix:
     kdual SymEig(k=20) (dsyevr) vs scipy.linalg.eigh(subset_by_index, driver='evr');
  3. the Gaussian Gram matrix of the first 7000 Fashion-MNIST images:
     kdual linalg.Gram vs sklearn.metrics.pairwise.rbf_kernel.
Prints a table with the ratio kdual/peer (below 1: kdual is faster).
"""
import gzip
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.linalg
import sklearn
from sklearn.metrics.pairwise import rbf_kernel

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def randsym(n, seed):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q / np.arange(1, n + 1)) @ q.T
    return 0.5 * (a + a.T)


def fashion(n):
    with gzip.open(FASHION) as f:
        f.read(16)
        x = np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0
    return x - x.mean(axis=0)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def kdual(binary, *args):
    out = subprocess.run([binary, "eig", "--json", "-", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    repeat = 5
    if "--repeat" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1])

    rows = []
    # 1. full eigendecomposition, n = 2000
    a = randsym(2000, 1)
    ours, peer = [], []
    for _ in range(repeat):
        r = kdual(binary, "--matrix", "randsym", "--n", "2000")
        assert r["residual_max"] < 1e-12, r["residual_max"]
        ours.append(r["seconds"])
        peer.append(timed(lambda: np.linalg.eigh(a)))
    rows.append(("SymEig full, n=2000", "numpy.linalg.eigh", ours, peer))

    # 2. top 20, n = 5000
    a = randsym(5000, 1)
    ours, peer = [], []
    for _ in range(repeat):
        r = kdual(binary, "--matrix", "randsym", "--n", "5000", "--components", "20")
        assert r["residual_max"] < 1e-12, r["residual_max"]
        ours.append(r["seconds"])
        peer.append(timed(lambda: scipy.linalg.eigh(a, subset_by_index=[4980, 4999], driver="evr")))
    del a
    rows.append(("SymEig top-20, n=5000", "scipy eigh(evr, subset)", ours, peer))

    # 3. Gaussian Gram matrix of 7000 Fashion-MNIST images, same sigma
    x = fashion(7000)
    ours, peer = [], []
    sigma = None
    for _ in range(repeat):
        r = kdual(binary, "--matrix", "fashion", "--n", "7000", "--components", "1")
        sigma = r["sigma"]
        ours.append(r["kernel_seconds"])
        gamma = 1.0 / (2 * sigma * sigma)
        peer.append(timed(lambda: rbf_kernel(x, gamma=gamma)))
    rows.append(("Gaussian Gram, Fashion n=7000", "sklearn rbf_kernel", ours, peer))

    print(f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; "
          f"medians of {repeat} runs")
    print(f"| {'task':32} | {'peer':26} | kdual s | peer s | kdual/peer |")
    print(f"|{'-' * 34}|{'-' * 28}|---------|--------|------------|")
    for task, name, ours, peer in rows:
        o, p = statistics.median(ours), statistics.median(peer)
        print(f"| {task:32} | {name:26} | {o:7.3f} | {p:6.3f} | {o / p:10.2f} |")


if __name__ == "__main__":
    main()
