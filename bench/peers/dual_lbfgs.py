#!/usr/bin/python3
"""Dual KPCA by L-BFGS: kdual against SciPy's L-BFGS-B on the same dual cost,
the same start and the same oracle stop eta < delta, in one run.

Usage: dual_lbfgs.py KDUAL_BINARY [--n 7000] [--s 20] [--repeat 3]

Problems (the dual-KPCA paper's): fashion with the Gaussian kernel and the
median bandwidth; randn (d = 256) with the Laplace kernel and the paper's
bandwidth 0.01*d*var(X); both uncentred, as in the paper's code.
kdual writes its data matrix and its start H0; SciPy minimises
d(H) = 1/2 ||H||_F^2 - Tr sqrt(H^T G H) with gradient H - G H M^{-1/2}, each
evaluation one product G @ H, stopped from the callback when
eta = |d - d_opt| / |d_opt| < delta (d_opt as kdual computed it).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.optimize
from sklearn.metrics.pairwise import euclidean_distances


class Done(Exception):
    pass


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def scipy_run(g, h0, dopt, delta):
    n, s = h0.shape
    state = {"evals": 0, "x": None, "f": None, "iters": 0}

    def fun(x):
        h = x.reshape(n, s)
        gh = g @ h
        m = h.T @ gh
        mu, q = np.linalg.eigh(0.5 * (m + m.T))
        if mu[0] <= 0:
            return np.inf, np.zeros_like(x)
        f = 0.5 * np.sum(h * h) - np.sum(np.sqrt(mu))
        grad = h - gh @ ((q / np.sqrt(mu)) @ q.T)
        state["evals"] += 1
        state["x"], state["f"] = x.copy(), f
        return f, grad.ravel()

    def callback(x):
        state["iters"] += 1
        f = state["f"] if np.array_equal(x, state["x"]) else fun(x)[0]
        if abs(f - dopt) / abs(dopt) < delta:
            state["final"] = f
            raise Done

    t = time.perf_counter()
    try:
        scipy.optimize.minimize(fun, h0.ravel(), jac=True, method="L-BFGS-B", callback=callback,
                                options={"maxcor": 10, "maxiter": 20000, "gtol": 0, "ftol": 0})
    except Done:
        pass
    el = time.perf_counter() - t
    eta = abs(state.get("final", np.inf) - dopt) / abs(dopt)
    return el, state["evals"], state["iters"], eta


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, s, repeat = arg("--n", 7000), arg("--s", 20), arg("--repeat", 3)
    problems = [("fashion", "gaussian", "median", 784), ("randn", "laplace", "paper", 256)]
    print(f"SciPy {scipy.__version__} L-BFGS-B against kdual lbfgs; n={n}, s={s}, medians of {repeat}")
    print("| problem | delta | kdual s | scipy s | kdual/scipy | kdual passes (iters) | scipy evals (iters) | kdual eta | scipy eta |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for data, kern, bw, d in problems:
            for delta in (1e-2, 1e-4):
                xfile, hfile = os.path.join(tmp, "x.bin"), os.path.join(tmp, "h0.bin")
                out = subprocess.run([binary, "bench", "kpca", "--data", data, "--n", str(n), "--d", str(d),
                                      "--components", str(s), "--kernel", kern, "--sigma", bw, "--delta", str(delta),
                                      "--solvers", "lbfgs", "--repeat", str(repeat), "--start-out", hfile,
                                      "--data-out", xfile, "--json", "-"],
                                     check=True, capture_output=True, text=True).stdout
                rep = json.loads(out)
                prob, ours = rep["problem"], rep["results"][0]
                x = np.fromfile(xfile, dtype="<f8").reshape(n, prob["d"])
                h0 = np.fromfile(hfile, dtype="<f8").reshape(n, s)
                dist = euclidean_distances(x, squared=(kern == "gaussian"))
                sigma = prob["sigma"]
                g = np.exp(-dist / (2 * sigma * sigma)) if kern == "gaussian" else np.exp(-dist / sigma)
                np.fill_diagonal(g, 1.0)
                del dist, x
                runs = [scipy_run(g, h0, prob["d_opt"], delta) for _ in range(repeat)]
                st = statistics.median(r[0] for r in runs)
                ot = ours["seconds"]
                ratio = f"{ot / st:.2f}" if ot else "-"
                print(f"| {data} {kern} {bw} | {delta:g} | {ot if ot is None else round(ot, 3)} | {st:.3f} | {ratio} | "
                      f"{ours['passes']} ({ours['iterations']}) | {runs[0][1]} ({runs[0][2]}) | "
                      f"{ours['eta']:.1e} | {runs[0][3]:.1e} |", flush=True)
                del g


if __name__ == "__main__":
    main()
