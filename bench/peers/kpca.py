#!/usr/bin/python3
"""The dual-KPCA paper's protocol for the peers, in kdual's JSON schema.

Usage: kpca.py KDUAL_BINARY --ours OURS.json --out PEERS.json [--data randn]
       [--n 7000] [--d 256] [--s 20] [--kernel laplace] [--bandwidth paper]
       [--delta 1e-2,1e-4] [--solvers lbfgs,lanczos,randomized,block] [--repeat 3]

It first runs `kdual bench kpca` on the problem (writing OURS.json, the data
matrix and kdual's L-BFGS start), then builds the same kernel matrix with
NumPy and runs, on the same OpenBLAS:
  eigsh            SciPy's ARPACK Lanczos: the loosest tol in 1e-1...1e-13
                   reaching eta < delta;
  randomized_svd   scikit-learn: the smallest oversampling in 10*2^j <= 640
                   (n_iter 'auto') reaching eta < delta;
  lbfgsb           SciPy's L-BFGS-B on the dual cost from kdual's start,
                   stopped on eta < delta.
eta = |d(H) - d_opt| / |d_opt| with H = U diag(lambda)^{1/2} for the
eigensolvers and d_opt from kdual's reference solve. Each timed run is
repeated and the median reported; seconds is null where delta was not reached.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.extmath import randomized_svd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dual_lbfgs import scipy_run  # noqa: E402

TOLS = [10.0 ** -e for e in range(1, 14)]


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def dual_cost(g, h):
    m = h.T @ (g @ h)
    mu = np.linalg.eigvalsh(0.5 * (m + m.T))
    if mu[0] <= 0:
        return np.inf
    return 0.5 * np.sum(h * h) - np.sum(np.sqrt(mu))


def eta_of(g, vals, vecs, dopt):
    h = vecs * np.sqrt(np.maximum(vals, 0))
    return abs(dual_cost(g, h) - dopt) / abs(dopt)


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


# The eta of a setting does not depend on delta: the search for a smaller
# delta reuses what a larger one measured (as kdual's search does).
SEARCHED = {}


def run_eigsh(g, s, delta, dopt, repeat):
    n = g.shape[0]
    for tol in TOLS:
        if ("eigsh", tol) not in SEARCHED:
            count = [0]

            def mv(x):
                count[0] += 1
                return g @ x

            op = LinearOperator(g.shape, matvec=mv, dtype=g.dtype)
            vals, vecs = eigsh(op, k=s, which="LA", tol=tol, v0=np.ones(n) / np.sqrt(n))
            SEARCHED[("eigsh", tol)] = (eta_of(g, vals, vecs, dopt), count[0])
        eta, count = SEARCHED[("eigsh", tol)]
        if eta < delta:
            times = [timed(lambda: eigsh(g, k=s, which="LA", tol=tol, v0=np.ones(n) / np.sqrt(n)))[0]
                     for _ in range(repeat)]
            return dict(seconds=statistics.median(times), eta=eta, passes=count, matvecs=count,
                        iterations=0, params={"tol": tol})
    return dict(seconds=None, eta=eta, passes=count, matvecs=count, iterations=0, params={})


def run_rsvd(g, s, delta, dopt, repeat):
    n = g.shape[0]
    o, eta = 10, np.inf
    while s + o <= n and o <= 640:
        if ("rsvd", o) not in SEARCHED:
            u, sv, _ = randomized_svd(g, s, n_oversamples=o, n_iter="auto", random_state=0)
            SEARCHED[("rsvd", o)] = eta_of(g, sv, u, dopt)
        eta = SEARCHED[("rsvd", o)]
        q = 7 if s < 0.1 * n else 4
        if eta < delta:
            times = [timed(lambda: randomized_svd(g, s, n_oversamples=o, n_iter="auto", random_state=0))[0]
                     for _ in range(repeat)]
            return dict(seconds=statistics.median(times), eta=eta, passes=2 * q + 2,
                        matvecs=(2 * q + 2) * (s + o), iterations=q, params={"oversample": o})
        o *= 2
    return dict(seconds=None, eta=eta, passes=0, matvecs=0, iterations=0, params={})


def run_lbfgsb(g, h0, delta, dopt, repeat):
    runs = [scipy_run(g, h0, dopt, delta) for _ in range(repeat)]
    ok = all(r[3] < delta for r in runs)
    return dict(seconds=statistics.median(r[0] for r in runs) if ok else None, eta=runs[0][3],
                passes=runs[0][1], matvecs=runs[0][1] * h0.shape[1], iterations=runs[0][2],
                params={"maxcor": 10})


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    data, n, d, s = arg("--data", "randn"), arg("--n", 7000), arg("--d", 256), arg("--s", 20)
    kern, bw, repeat = arg("--kernel", "laplace"), arg("--bandwidth", "paper"), arg("--repeat", 3)
    deltas = [float(x) for x in arg("--delta", "1e-2,1e-4").split(",")]
    solvers = arg("--solvers", "lbfgs,lanczos,randomized,block")
    ours_path, out_path = arg("--ours", "ours.json"), arg("--out", "peers.json")
    with tempfile.TemporaryDirectory() as tmp:
        xfile, hfile = os.path.join(tmp, "x.bin"), os.path.join(tmp, "h0.bin")
        subprocess.run([binary, "bench", "kpca", "--data", data, "--n", str(n), "--d", str(d), "--s", str(s),
                        "--kernel", kern, "--bandwidth", bw, "--delta", ",".join(map(str, deltas)),
                        "--solvers", solvers, "--repeat", str(repeat), "--start-out", hfile,
                        "--data-out", xfile, "--json", ours_path], check=True)
        prob = json.load(open(ours_path))["problem"]
        x = np.fromfile(xfile, dtype="<f8").reshape(n, prob["d"])
        h0 = np.fromfile(hfile, dtype="<f8").reshape(n, s)
    t0 = time.perf_counter()
    dist = euclidean_distances(x, squared=(kern == "gaussian"))
    sigma = prob["sigma"]
    g = np.exp(-dist / (2 * sigma * sigma)) if kern == "gaussian" else np.exp(-dist / sigma)
    np.fill_diagonal(g, 1.0)
    gram_seconds = time.perf_counter() - t0
    del dist
    results = []
    for delta in deltas:
        for name, run in (("eigsh", lambda: run_eigsh(g, s, delta, prob["d_opt"], repeat)),
                          ("randomized_svd", lambda: run_rsvd(g, s, delta, prob["d_opt"], repeat)),
                          ("lbfgsb", lambda: run_lbfgsb(g, h0, delta, prob["d_opt"], repeat))):
            r = run()
            r.update(solver=name, delta=delta)
            results.append(r)
            print(f"peer {name} delta={delta:g}: {r['seconds']} s, eta {r['eta']:.2e}", file=sys.stderr, flush=True)
    peer_prob = dict(prob, gram_seconds=gram_seconds)
    json.dump({"problem": peer_prob, "results": results}, open(out_path, "w"), indent=2)


if __name__ == "__main__":
    main()
