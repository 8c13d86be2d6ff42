#!/usr/bin/python3
"""The dual-KPCA paper's protocol for the peers, in kdual's JSON schema.

Usage: kpca.py KDUAL_BINARY --out PEERS.json [--data randn] [--n 7000]
       [--d 256] [--s 20] [--kernel laplace] [--bandwidth paper] [--center]
       [--delta 1e-2,1e-4] [--peers eigsh,randomized_svd,lbfgsb,kernelpca,eigh]
       [--repeat 3] [--seed 1]

It asks `kdual bench kpca` for the problem only (the data matrix, the
bandwidth, d_opt from its converged reference solve and the L-BFGS start
H0; one untimed L-BFGS run at the largest delta writes H0, and its result
is discarded), then builds the same kernel matrix with NumPy and runs, on
the same OpenBLAS:
  eigsh            SciPy's ARPACK Lanczos: the loosest tol in TOLS (1, 2 and
                   5 times each power of ten, 1e-1, 5e-2, 2e-2, ... 1e-13:
                   kdual's bench.TolGrid)
                   reaching eta < delta;
  randomized_svd   scikit-learn: the smallest oversampling in 10*2^j <= 640
                   (n_iter 'auto') reaching eta < delta;
  lbfgsb           SciPy's L-BFGS-B on the dual cost from kdual's start,
                   stopped on eta < delta;
  kernelpca_arpack, kernelpca_randomized
                   scikit-learn's KernelPCA on the precomputed kernel matrix
                   (it centres the matrix itself, so only with --center):
                   the timed fit is centring plus eigensolve; arpack
                   searches tol like eigsh, randomized has no oversampling
                   parameter in this scikit-learn; params.end_to_end_seconds
                   adds the peer's kernel time;
  eigh             NumPy's full eigendecomposition (LAPACK dsyevd), the
                   paper's SVD column: timed once (its time does not depend
                   on delta) and reported for every delta it reaches.
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
from sklearn.decomposition import KernelPCA, _kernel_pca
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.extmath import randomized_svd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dual_lbfgs import scipy_run  # noqa: E402

# kdual's bench.TolGrid: 1e-1, 5e-2, 2e-2, 1e-2, 5e-3, ..., 1e-13.
TOLS = [t for e in range(1, 14) for t in ((10.0 ** -e,) if e == 13 else (10.0 ** -e, 10.0 ** -e / 2, 10.0 ** -e / 5))]


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


def run_kernelpca(g, s, delta, dopt, repeat, solver, gram_seconds):
    def fit(tol):
        kp = KernelPCA(n_components=s, kernel="precomputed", eigen_solver=solver, tol=tol, random_state=0)
        kp.fit(g)
        return kp

    def counted(tol):
        # The search run counts ARPACK's products through a LinearOperator
        # put in place of KernelPCA's eigsh; the timed runs use the original.
        count = [0]

        def eigsh_counting(k, *a, **kw):
            def mv(x):
                count[0] += 1
                return k @ x
            return eigsh(LinearOperator(k.shape, matvec=mv, dtype=k.dtype), *a, **kw)

        _kernel_pca.eigsh = eigsh_counting
        try:
            kp = fit(tol)
        finally:
            _kernel_pca.eigsh = eigsh
        if solver == "arpack":
            return kp, count[0], count[0]
        # _randomized_eigsh: randomized_svd with 10 oversamples and
        # scikit-learn's 'auto' power iterations.
        q = 7 if s < 0.1 * g.shape[0] else 4
        return kp, 2 * q + 2, (2 * q + 2) * (s + 10)

    tols = TOLS if solver == "arpack" else [0]
    eta, passes, matvecs = np.inf, 0, 0
    for tol in tols:
        if (solver, tol) not in SEARCHED:
            kp, passes, matvecs = counted(tol)
            SEARCHED[(solver, tol)] = (eta_of(gc_of(g), kp.eigenvalues_, kp.eigenvectors_, dopt), passes, matvecs)
        eta, passes, matvecs = SEARCHED[(solver, tol)]
        if eta < delta:
            t = statistics.median(timed(lambda: fit(tol))[0] for _ in range(repeat))
            params = {"end_to_end_seconds": t + gram_seconds}
            if solver == "arpack":
                params["tol"] = tol
            return dict(seconds=t, eta=eta, passes=passes, matvecs=matvecs, iterations=0, params=params)
    return dict(seconds=None, eta=eta, passes=passes, matvecs=matvecs, iterations=0, params={})


def run_eigh(g, s, delta, dopt):
    if "eigh" not in SEARCHED:
        t, (vals, vecs) = timed(lambda: np.linalg.eigh(g))
        SEARCHED["eigh"] = (t, eta_of(g, vals[::-1][:s], vecs[:, ::-1][:, :s], dopt))
    t, eta = SEARCHED["eigh"]
    return dict(seconds=t if eta < delta else None, eta=eta, passes=0, matvecs=0, iterations=0,
                params={"repeats": 1})


GC = {}


def gc_of(g):
    """The centred copy of g that KernelPCA's eigenvectors belong to."""
    if "g" not in GC:
        GC["g"] = center(g.copy())
    return GC["g"]


def center(g):
    r = g.mean(axis=0)
    g -= r[None, :]
    g -= r[:, None]
    g += r.mean()
    return g


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
    peers = arg("--peers", "eigsh,randomized_svd,lbfgsb,kernelpca").split(",")
    centred, seed = "--center" in sys.argv, arg("--seed", 1)
    out_path = arg("--out", "peers.json")
    with tempfile.TemporaryDirectory() as tmp:
        xfile, hfile, pfile = (os.path.join(tmp, f) for f in ("x.bin", "h0.bin", "problem.json"))
        cmd = [binary, "bench", "kpca", "--data", data, "--n", str(n), "--d", str(d), "--components", str(s),
               "--kernel", kern, "--sigma", bw, "--delta", str(max(deltas)), "--seed", str(seed),
               "--solvers", "lbfgs", "--repeat", "1", "--start-out", hfile, "--data-out", xfile, "--json", pfile]
        subprocess.run(cmd + (["--center"] if centred else []), check=True)
        prob = json.load(open(pfile))["problem"]
        x = np.fromfile(xfile, dtype="<f8").reshape(n, prob["d"])
        h0 = np.fromfile(hfile, dtype="<f8").reshape(n, s)
    t0 = time.perf_counter()
    dist = euclidean_distances(x, squared=(kern == "gaussian"))
    sigma = prob["sigma"]
    g = np.exp(-dist / (2 * sigma * sigma)) if kern == "gaussian" else np.exp(-dist / sigma)
    np.fill_diagonal(g, 1.0)
    gram_seconds = time.perf_counter() - t0
    del dist
    graw = g
    if centred:
        g = center(g.copy())
        GC["g"] = g
    dopt = prob["d_opt"]
    runs = {
        "eigsh": lambda delta: run_eigsh(g, s, delta, dopt, repeat),
        "randomized_svd": lambda delta: run_rsvd(g, s, delta, dopt, repeat),
        "lbfgsb": lambda delta: run_lbfgsb(g, h0, delta, dopt, repeat),
        "kernelpca_arpack": lambda delta: run_kernelpca(graw, s, delta, dopt, repeat, "arpack", gram_seconds),
        "kernelpca_randomized": lambda delta: run_kernelpca(graw, s, delta, dopt, repeat, "randomized",
                                                            gram_seconds),
        "eigh": lambda delta: run_eigh(g, s, delta, dopt),
    }
    names = []
    for p in peers:
        if p == "kernelpca":
            if centred:  # KernelPCA always centres: the same problem only when kdual's is centred
                names += ["kernelpca_arpack", "kernelpca_randomized"]
        elif p in runs:
            names.append(p)
        else:
            sys.exit(f"kpca.py: unknown peer {p!r}; want {','.join(runs)} or kernelpca")
    results = []
    for delta in deltas:
        for name in names:
            r = runs[name](delta)
            r.update(solver=name, delta=delta)
            results.append(r)
            print(f"peer {name} delta={delta:g}: {r['seconds']} s, eta {r['eta']:.2e}", file=sys.stderr, flush=True)
    peer_prob = dict(prob, gram_seconds=gram_seconds)
    json.dump({"problem": peer_prob, "results": results}, open(out_path, "w"), indent=2)


if __name__ == "__main__":
    main()
