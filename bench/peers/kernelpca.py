#!/usr/bin/python3
"""Kernel PCA end to end: `kdual kpca fit` against scikit-learn's KernelPCA.

Usage: kernelpca.py KDUAL_BINARY [--n 7000] [--s 20] [--repeat 3] [--solvers auto,lanczos,block,lbfgs] [--settle 10]

Both fit s components of the first n Fashion-MNIST training images (pixels
/255) with the Gaussian kernel at kdual's median bandwidth, centred kernel:
kernel matrix, centring and eigensolve, timed from the data in memory to the
fitted model (kdual reports its own fit time; reading the file is excluded
on both sides). Peers: KernelPCA with eigen_solver 'arpack' (default tol 0)
and 'randomized'; kdual with the solvers asked (default: 'auto', block
Krylov in blocks of 8 beyond the dense sizes, 'lanczos' (tol 1e-10),
'block' and 'lbfgs'), each with its
operator chosen by the planner (float64 at these sizes). The runs
alternate (kdual's solvers, then the peers, repeat times). The agreement
is the largest relative difference of the s eigenvalues against ARPACK's.
The data are the first n images of kdual's `--data fashion` (the 70 000
images, then shifted noisy copies), read by NumPy from the same files.

Every timed run starts after a pause of --settle seconds (default 10),
whoever runs: on the virtual machine these numbers come from, a process
that starts right after another freed gigabytes runs up to twice as slow
(n = 20 000: kdual's fit took 18.6–21.5 s right after a process freed
9.6 GB, 9.1–10.4 s 15 s later) while the host takes the memory back, and
without the pause each side would pay for the other's memory.
"""
import gzip
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import sklearn
from sklearn.decomposition import KernelPCA

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, s, repeat = arg("--n", 7000), arg("--s", 20), arg("--repeat", 3)
    settle = arg("--settle", 10.0)
    solvers = arg("--solvers", "auto,lanczos,block,lbfgs").split(",")
    if n > 60000:
        sys.exit("kernelpca.py: n ≤ 60 000 (the training images)")
    with gzip.open(FASHION) as f:
        f.read(16)
        x = np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0

    def ours(solver):
        time.sleep(settle)
        out = subprocess.run([binary, "kpca", "fit", "--data", "fashion", "--n", str(n),
                              "--components", str(s), "--kernel", "gaussian",
                              "--sigma", "median", "--solver", solver, "--json", "-"],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        return r["fit_seconds"], np.array(r["eigenvalues"]), r["sigma"]

    runs = {}
    sigma = None
    for _ in range(repeat):
        for solver in solvers:
            t, vals, sigma = ours(solver)
            runs.setdefault("kdual " + solver, []).append((t, vals))
        gamma = 1.0 / (2 * sigma * sigma)
        for solver in ("arpack", "randomized"):
            kp = KernelPCA(n_components=s, kernel="rbf", gamma=gamma, eigen_solver=solver, random_state=0)
            time.sleep(settle)
            t = time.perf_counter()
            kp.fit(x)
            runs.setdefault("KernelPCA " + solver, []).append((time.perf_counter() - t, kp.eigenvalues_))
    ref = runs["KernelPCA arpack"][0][1]
    base = statistics.median(r[0] for r in runs["KernelPCA arpack"])
    print(f"Kernel PCA end to end, Fashion-MNIST n={n}, s={s}, Gaussian sigma={sigma:.4f}, centred; "
          f"scikit-learn {sklearn.__version__}; medians of {repeat}, {settle:g} s pause before each run")
    print("| solver | seconds | vs KernelPCA arpack | max rel. eigenvalue difference |")
    print("|---|---|---|---|")
    for name, rs in runs.items():
        t = statistics.median(r[0] for r in rs)
        diff = float(np.max(np.abs(np.sort(rs[0][1])[::-1] - np.sort(ref)[::-1]) / np.sort(ref)[::-1]))
        print(f"| {name} | {t:.3f} | {t / base:.2f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
