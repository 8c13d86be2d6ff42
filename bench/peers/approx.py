#!/usr/bin/python3
"""Approximate kernel PCA peers for `kdual bench approx`: scikit-learn's
Nystroem + PCA and RBFSampler + PCA at the ranks, σ and data of a kdual
report, with the same error measures.

Usage: approx.py KDUAL_REPORT.json EXACT_VECTORS.npy [--repeat 3] > peers.json

Data: the first n Fashion-MNIST images (the 60 000 training images, then
the 10 000 test images), pixels /255, as kdual reads them. Gaussian kernel,
gamma = 1/(2σ²) with kdual's median σ. Each method: the feature map's
fit_transform(X), then PCA(n_components=s).fit_transform on the features
(PCA centres them: the centred K̂), timed in-process, median of the repeats;
PCA with its default solver (svd_solver="auto": randomized at these shapes)
and with svd_solver="full". Eigenvalues: explained_variance_·(n − 1), on
kdual's scale. Error: max_i |λ̂_i − λ_i|/λ_i against the report's exact
eigenvalues; angle: the largest principal angle between the PCA scores'
column space and the exact eigenvectors (EXACT_VECTORS.npy, from
`kdual bench approx --vectors-out`). Writes a JSON list of rows.
"""
import gzip
import json
import statistics
import sys
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.kernel_approximation import Nystroem, RBFSampler

DIR = "/usr/share/datasets/fashion-mnist/"


def images(path, count):
    with gzip.open(DIR + path) as f:
        f.read(16)
        return np.frombuffer(f.read(count * 784), dtype=np.uint8).reshape(count, 784) / 255.0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rep = json.load(open(sys.argv[1]))
    u = np.load(sys.argv[2])
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    n, s, sigma = rep["n"], rep["components"], rep["sigma"]
    exact = np.array(rep["exact"]["eigenvalues"][:s])
    x = images("train-images-idx3-ubyte.gz", min(n, 60000))
    if n > 60000:
        x = np.vstack([x, images("t10k-images-idx3-ubyte.gz", n - 60000)])
    gamma = 1 / (2 * sigma * sigma)
    ms = sorted({r["m"] for r in rep["rows"]})
    rows = []
    for name, mk in [("Nystroem+PCA", lambda m, seed: Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=seed)),
                     ("RBFSampler+PCA", lambda m, seed: RBFSampler(gamma=gamma, n_components=m, random_state=seed))]:
        for solver in ["auto", "full"]:
            for m in ms:
                times = []
                for r in range(repeat):
                    t = time.perf_counter()
                    z = mk(m, r + 1).fit_transform(x)
                    p = PCA(n_components=s, svd_solver=solver, random_state=r + 1)
                    sc = p.fit_transform(z)
                    times.append(time.perf_counter() - t)
                vals = p.explained_variance_ * (n - 1)
                q, _ = np.linalg.qr(sc)
                cos = np.linalg.svd(u.T @ q, compute_uv=False).min()
                rows.append({"tool": "scikit-learn", "method": f"{name}({solver})", "m": m, "rank": m,
                             "seconds": statistics.median(times),
                             "eig_error": float(np.max(np.abs(vals - exact) / exact)),
                             "angle_deg": float(np.degrees(np.arccos(min(1.0, cos))))})
                print(f"{name}({solver}) m={m}: {rows[-1]['seconds']:.3f} s, error {rows[-1]['eig_error']:.2e}",
                      file=sys.stderr)
    json.dump(rows, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
