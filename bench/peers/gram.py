#!/usr/bin/python3
"""The Gaussian Gram matrix of Fashion-MNIST images: kdual against the same
OpenBLAS through NumPy (X @ X.T, which NumPy runs as one DSYRK and a copy
of the triangle) and scikit-learn's rbf_kernel.

Usage: gram.py KDUAL_BINARY [--n 7000] [--repeat 5] [--settle 5]

kdual's time is `kdual eig --matrix fashion`'s kernel_seconds: linalg.Gram
of the first n training images (pixels /255, centred columns), both
triangles stored, from the data in memory. The three are run in turn,
repeat times (kdual, NumPy, scikit-learn, kdual, ...), and the medians
compared. The agreement is the largest entry difference between kdual's
Gram matrix and rbf_kernel's on 2000 random entries. Every timed run
starts after a pause of --settle seconds (see kernelpca.py: on a virtual
machine a run right after another freed much memory is slowed by it).
"""
import gzip
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import sklearn
from sklearn.metrics.pairwise import rbf_kernel

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, repeat = arg("--n", 7000), arg("--repeat", 5)
    settle = arg("--settle", 5.0)
    with gzip.open(FASHION) as f:
        f.read(16)
        x = np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0
    x = x - x.mean(axis=0)
    ours, syrk, rbf = [], [], []
    sigma = None
    for _ in range(repeat):
        time.sleep(settle)
        out = subprocess.run([binary, "eig", "--matrix", "fashion", "--n", str(n), "--components", "1",
                              "--solver", "lanczos", "--json", "-"],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        ours.append(r["kernel_seconds"])
        sigma = r["sigma"]
        time.sleep(settle)
        t = time.perf_counter()
        g = x @ x.T
        syrk.append(time.perf_counter() - t)
        del g
        time.sleep(settle)
        t = time.perf_counter()
        k = rbf_kernel(x, gamma=1.0 / (2 * sigma * sigma))
        rbf.append(time.perf_counter() - t)
        del k
    o, s, k = statistics.median(ours), statistics.median(syrk), statistics.median(rbf)
    print(f"Gaussian Gram, Fashion-MNIST n={n}, d=784, sigma={sigma:.4f}; numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}; medians of {repeat} alternated runs, {settle:g} s pause before each")
    print("| what | seconds | kdual / it |")
    print("|---|---|---|")
    print(f"| kdual linalg.Gram | {o:.3f} | 1.00 |")
    print(f"| NumPy X @ X.T (DSYRK + copy) | {s:.3f} | {o / s:.2f} |")
    print(f"| scikit-learn rbf_kernel | {k:.3f} | {o / k:.2f} |")
    print("runs (s): kdual " + " ".join(f"{v:.3f}" for v in ours) + "; X@X.T " +
          " ".join(f"{v:.3f}" for v in syrk) + "; rbf_kernel " + " ".join(f"{v:.3f}" for v in rbf))


if __name__ == "__main__":
    main()
