#!/usr/bin/python3
"""Small kernel PCA problems: kdual's library fit against scikit-learn's KernelPCA.

Usage: small.py KDUAL_BINARY [--n 150,500,1000,2000] [--s 5] [--sigma 11.5] [--repeat 21] [--rounds 3]

Both fit s components of the first n Fashion-MNIST training images scaled to
[0, 1] with the Gaussian kernel at σ (scikit-learn: kernel="rbf",
gamma = 1/(2σ²), its defaults otherwise: eigen_solver "auto", tol 0); the
clock starts at the call with the data in memory. For each n, each side runs
in a fresh process: the first fit, then the median of --repeat fits (kdual:
`kdual bench small`, kpca.KPCA's defaults); the two processes alternate
--rounds times and the table gives the median over the rounds of each side's
first fit and of its steady median (the ratio is of those medians). Run it through scripts/peer-python
(make does) so that NumPy uses kdual's OpenBLAS core.
"""
import gzip
import json
import statistics
import subprocess
import sys
import time

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"

CHILD = r'''
import gzip, json, sys, time
import numpy as np
from sklearn.decomposition import KernelPCA
n, s, sigma, repeat = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
raw = gzip.open(sys.argv[5]).read()
x = np.frombuffer(raw, dtype=np.uint8, offset=16)[: n * 784].reshape(n, 784).astype(np.float64) / 255
def fit():
    t = time.perf_counter()
    k = KernelPCA(n_components=s, kernel="rbf", gamma=1 / (2 * sigma * sigma)).fit(x)
    return time.perf_counter() - t, k
first, k = fit()
times = sorted(fit()[0] for _ in range(repeat))
print(json.dumps({"first": first, "median": times[len(times) // 2], "lambda1": float(k.eigenvalues_[0])}))
'''


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    binary = sys.argv[1]
    ns = [int(v) for v in arg("--n", "150,500,1000,2000").split(",")]
    s, sigma, repeat, rounds = arg("--s", 5), arg("--sigma", 11.5), arg("--repeat", 21), arg("--rounds", 3)
    import sklearn
    print(f"Small problems: the first n Fashion-MNIST images, Gaussian σ = {sigma}, s = {s}; first fit in a fresh "
          f"process and the median of {repeat} fits after it, {rounds} alternated rounds (medians); "
          f"scikit-learn {sklearn.__version__}")
    print("| n | kdual first | KernelPCA first | kdual steady | KernelPCA steady | steady ratio | λ₁ rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for n in ns:
        ours, peer = [], []
        for _ in range(rounds):
            out = subprocess.run([binary, "bench", "small", "--n", str(n), "--components", str(s), "--sigma", str(sigma),
                                  "--repeat", str(repeat), "--json", "-"], capture_output=True, text=True, check=True)
            ours.append(json.loads(out.stdout)[0])
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(s), str(sigma), str(repeat), FASHION],
                                 capture_output=True, text=True, check=True)
            peer.append(json.loads(out.stdout))
        med = statistics.median
        of, om = med(o["first_seconds"] for o in ours), med(o["median_seconds"] for o in ours)
        pf, pm = med(p["first"] for p in peer), med(p["median"] for p in peer)
        diff = max(abs(o["lambda1"] - p["lambda1"]) / abs(p["lambda1"]) for o, p in zip(ours, peer))
        print(f"| {n} | {1e3 * of:.2f} ms | {1e3 * pf:.2f} ms | {1e3 * om:.2f} ms | {1e3 * pm:.2f} ms | "
              f"{om / pm:.2f} | {diff:.1e} |")

main()
