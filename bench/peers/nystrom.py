#!/usr/bin/python3
"""Approximate kernel PCA: kdual's Nyström (randomly pivoted Cholesky and
uniform landmarks) against scikit-learn's Nystroem + PCA, both against the
exact top eigenvalues.

Usage: nystrom.py KDUAL_BINARY [--n 20000] [--m 1000] [--s 20] [--repeat 3]

Data: the first n Fashion-MNIST training images (pixels /255), the
Gaussian kernel at kdual's median bandwidth (σ from kdual's JSON;
scikit-learn's gamma = 1/(2σ²)), centred. The exact top-s eigenvalues of
the centred kernel come from `kdual kpca fit --solver lanczos --tol 1e-10`
(they agree with ARPACK's to 1e-14 at n = 7000, bench/peers/kernelpca.py).
kdual: `kdual kpca fit --approx nystrom --landmarks m [--sampler uniform]
[--approx-precision float32]`,
fit_seconds (data in memory to fitted model). scikit-learn:
Nystroem(n_components=m).fit_transform(X) then PCA(s).fit on the features,
with svd_solver="full" (exact) and "auto" (the default: randomized here)
(PCA centres them: the centred K̂), its explained_variance_·(n − 1) on
kdual's scale, timed in-process. Runs alternate; medians. The error is
max_i |λ̂_i − λ_i|/λ_i over the top s.
"""
import gzip
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import sklearn
from sklearn.decomposition import PCA
from sklearn.kernel_approximation import Nystroem

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, m, s, repeat = arg("--n", 20000), arg("--m", 1000), arg("--s", 20), arg("--repeat", 3)
    with gzip.open(FASHION) as f:
        f.read(16)
        x = np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0

    def kdual(*extra):
        out = subprocess.run([binary, "kpca", "fit", "--data", "fashion", "--n", str(n), "--components", str(s),
                              "--kernel", "gaussian", "--sigma", "median", "--json", "-", *extra],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        return r["fit_seconds"], np.array(r["eigenvalues"]), r["sigma"], r.get("approx")

    _, exact, sigma, _ = kdual("--solver", "lanczos", "--tol", "1e-10")
    gamma = 1 / (2 * sigma * sigma)

    def sk(seed, solver):
        t = time.perf_counter()
        z = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=seed).fit_transform(x)
        p = PCA(n_components=s, svd_solver=solver, random_state=seed).fit(z)
        return time.perf_counter() - t, p.explained_variance_ * (n - 1)

    def err(v):
        return float(np.max(np.abs(v[:s] - exact) / exact))

    rows = {"kdual nystrom rpcholesky": [], "kdual nystrom rpcholesky float32": [], "kdual nystrom uniform": [],
            "scikit-learn Nystroem+PCA(full)": [], "scikit-learn Nystroem+PCA(auto)": []}
    info = {}
    for r in range(repeat):
        secs, v, _, a = kdual("--approx", "nystrom", "--landmarks", str(m), "--seed", str(r + 1))
        rows["kdual nystrom rpcholesky"].append((secs, err(v)))
        info["kdual nystrom rpcholesky"] = a
        secs, v, _, a = kdual("--approx", "nystrom", "--landmarks", str(m), "--seed", str(r + 1),
                              "--approx-precision", "float32")
        rows["kdual nystrom rpcholesky float32"].append((secs, err(v)))
        info["kdual nystrom rpcholesky float32"] = a
        secs, v, _, a = kdual("--approx", "nystrom", "--landmarks", str(m), "--sampler", "uniform", "--seed", str(r + 1))
        rows["kdual nystrom uniform"].append((secs, err(v)))
        info["kdual nystrom uniform"] = a
        secs, v = sk(r, "full")
        rows["scikit-learn Nystroem+PCA(full)"].append((secs, err(v)))
        secs, v = sk(r, "auto")
        rows["scikit-learn Nystroem+PCA(auto)"].append((secs, err(v)))
    peer = statistics.median(t for t, _ in rows["scikit-learn Nystroem+PCA(full)"])
    peer_auto = statistics.median(t for t, _ in rows["scikit-learn Nystroem+PCA(auto)"])
    print(f"Approximate kernel PCA, Fashion-MNIST n={n}, m={m}, top {s}, Gaussian σ={sigma:.6g}, centred; "
          f"scikit-learn {sklearn.__version__}; medians of {repeat}; error = max_i |λ̂_i − λ_i|/λ_i against "
          f"kdual lanczos (tol 1e-10)")
    print("| method | seconds | vs scikit-learn (full PCA) | vs scikit-learn (default PCA) | top-20 error (median) | worst | trace error |")
    print("|---|---|---|---|---|---|---|")
    for name, rs in rows.items():
        t = statistics.median(x for x, _ in rs)
        e = statistics.median(x for _, x in rs)
        te = info.get(name, {}) or {}
        print(f"| {name} | {t:.3f} | {t / peer:.2f} | {t / peer_auto:.2f} | {e:.2e} | {max(x for _, x in rs):.2e} | "
              f"{te.get('trace_error', float('nan')):.3g} |")


if __name__ == "__main__":
    main()
