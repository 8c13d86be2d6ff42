#!/usr/bin/python3
"""gonum's decompositions on kdual's OpenBLAS LAPACK against NumPy/SciPy on
the same OpenBLAS, and against gonum's own Go LAPACK.

Usage: lapack.py KDUAL_BINARY [--n 2000] [--repeat 3] [--native-repeat 1]
                 [--ops eigensym,svd,qr,lu,cholesky,eigen]

kdual's times are `kdual bench lapack --impl openblas` (gonum's mat with
lapack64 set to kdual's lapack/gonum) and `--impl gonum` (gonum's Go code),
timed inside the process around the mat call. The Python side times the
matching call (see bench/lapack.go) on an n×n N(0, 1) matrix built the same
way. kdual and NumPy run in turn, repeat times, and the medians are
compared; gonum's Go LAPACK runs native-repeat times (0 skips it). Both
sides are timed warm: kdual runs each call once untimed in its process
first, and the Python side runs each call once untimed before the first
repeat.
"""
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.linalg
import scipy.linalg.lapack


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


PEER = {
    "eigensym": "numpy.linalg.eigh",
    "svd": "numpy.linalg.svd(full_matrices=False)",
    "qr": "numpy.linalg.qr",
    "lu": "scipy.linalg.lu_factor",
    "lu+cond": "lu_factor + dlange + dgecon (mat.LU's work)",
    "cholesky": "numpy.linalg.cholesky",
    "eigen": "numpy.linalg.eig",
}


def peer(op, a, n):
    if op == "eigensym":
        s = (a + a.T) / 2
        t = time.perf_counter()
        np.linalg.eigh(s)
    elif op == "svd":
        t = time.perf_counter()
        np.linalg.svd(a, full_matrices=False)
    elif op == "qr":
        t = time.perf_counter()
        np.linalg.qr(a)
    elif op == "lu":
        t = time.perf_counter()
        scipy.linalg.lu_factor(a)
    elif op == "lu+cond":
        # mat.LU.Factorize also takes the 1-norm of A and estimates the
        # condition number from the factors: the same work in SciPy.
        t = time.perf_counter()
        anorm = scipy.linalg.lapack.dlange("1", a)
        lu, _ = scipy.linalg.lu_factor(a)
        scipy.linalg.lapack.dgecon(lu, anorm, norm="1")
    elif op == "cholesky":
        s = a @ a.T / n + np.eye(n)
        t = time.perf_counter()
        np.linalg.cholesky(s)
    elif op == "eigen":
        t = time.perf_counter()
        np.linalg.eig(a)
    return time.perf_counter() - t


def kdual(binary, n, ops, impl):
    out = subprocess.run([binary, "bench", "lapack", "--n", str(n), "--impl", impl, "--ops", ",".join(ops)],
                         check=True, capture_output=True, text=True).stdout
    return {r["op"]: r for r in json.loads(out)}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, repeat, native_repeat = arg("--n", 2000), arg("--repeat", 3), arg("--native-repeat", 1)
    ops = arg("--ops", "eigensym,svd,qr,lu,cholesky,eigen").split(",")
    a = np.random.default_rng(1).standard_normal((n, n))
    ops = [op for op in ops if op]
    ours = {op: [] for op in ops}
    peers = {op: [] for op in ops}
    native = {op: [] for op in ops}
    checks = {}
    # "lu+cond" compares kdual's lu time with the SciPy calls that do
    # mat.LU.Factorize's whole work.
    if "lu" in ops:
        ops.insert(ops.index("lu") + 1, "lu+cond")
        ours["lu+cond"], peers["lu+cond"], native["lu+cond"] = ours["lu"], [], native["lu"]
    go_ops = [op for op in ops if op != "lu+cond"]
    for op in ops:
        peer(op, a, n)  # warm-up, untimed (kdual warms up in its process)
    for _ in range(repeat):
        for op, r in kdual(binary, n, go_ops, "openblas").items():
            ours[op].append(r["seconds"])
            checks[op] = max(checks.get(op, 0), r["check"])
        for op in ops:
            peers[op].append(peer(op, a, n))
    for _ in range(native_repeat):
        for op, r in kdual(binary, n, go_ops, "gonum").items():
            native[op].append(r["seconds"])
    checks["lu+cond"] = checks.get("lu", 0)
    print(f"gonum decompositions, n={n}: kdual's lapack/gonum (OpenBLAS LAPACK) vs NumPy {np.__version__} / "
          f"SciPy {scipy.__version__} on the same OpenBLAS; medians of {repeat} alternated runs, "
          f"gonum's Go LAPACK {native_repeat} run(s)")
    print("| gonum call | kdual s | peer | peer s | kdual / peer | gonum Go s | gonum Go / kdual | residual |")
    print("|---|---|---|---|---|---|---|---|")
    for op in ops:
        o, p = statistics.median(ours[op]), statistics.median(peers[op])
        g = f"{statistics.median(native[op]):.3f}" if native[op] else "-"
        gr = f"{statistics.median(native[op]) / o:.1f}" if native[op] else "-"
        print(f"| {op} | {o:.3f} | {PEER[op]} | {p:.3f} | {o / p:.2f} | {g} | {gr} | {checks[op]:.1e} |")
    print("runs (s): " + "; ".join(f"{op} kdual " + " ".join(f"{v:.3f}" for v in ours[op]) +
                                   " peer " + " ".join(f"{v:.3f}" for v in peers[op]) for op in ops))


if __name__ == "__main__":
    main()
