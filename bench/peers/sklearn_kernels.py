#!/usr/bin/python3
"""Stored scikit-learn references for kdual's kernels named the scikit-learn way.

Usage: sklearn_kernels.py OUT.json         (run from the repository root)
       sklearn_kernels.py --check KDUAL  (the live comparison: runs KDUAL kpca fit)

For Iris (dataset/data/iris.csv) and the first 500 digits
(dataset/data/digits.csv.gz), KernelPCA(n_components=3, eigen_solver="dense")
with each kernel below: its eigenvalues, the scores of the first 5 training
rows, and the transform of 5 points that are not training rows (0.7 times
rows 1-5 plus 0.3 times rows 6-10, stored too). cmd/kdual's
TestScikitLearnKernels runs `kdual kpca fit` with the same kernel flags on
the same data, then `kdual kpca transform` on the 5 new points, and compares
(eigenvalues to 1e-8 relative, scores and transforms to 1e-8 after aligning
each component's sign on the training scores). With --check the same
comparison runs live against this machine's scikit-learn, every training
score and the 5 new points' transforms compared, and the largest differences
are printed per kernel; it exits 1 when one is over 1e-8.
"""
import gzip
import json
import sys

import numpy as np
import sklearn
from sklearn.decomposition import KernelPCA
from sklearn.metrics.pairwise import laplacian_kernel


def iris():
    rows = open("dataset/data/iris.csv").read().strip().split("\n")[1:]
    return np.array([[float(v) for v in r.split(",")[:4]] for r in rows])


def digits():
    rows = gzip.open("dataset/data/digits.csv.gz", "rt").read().strip().split("\n")[:500]
    return np.array([[float(v) for v in r.split(",")[:64]] for r in rows])


# (name, kdual flags, scikit-learn arguments)
KERNELS = [
    ("linear", ["--kernel", "linear"], dict(kernel="linear")),
    ("rbf", ["--kernel", "rbf"], dict(kernel="rbf")),
    ("rbf-gamma", ["--kernel", "rbf", "--gamma", "0.05"], dict(kernel="rbf", gamma=0.05)),
    ("poly", ["--kernel", "poly"], dict(kernel="poly")),
    ("poly-2", ["--kernel", "poly", "--degree", "2", "--coef0", "0.5", "--gamma", "0.01"],
     dict(kernel="poly", degree=2, coef0=0.5, gamma=0.01)),
    ("sigmoid", ["--kernel", "sigmoid", "--gamma", "0.002"], dict(kernel="sigmoid", gamma=0.002)),
    ("sigmoid-c0", ["--kernel", "sigmoid", "--gamma", "0.001", "--coef0", "0"], dict(kernel="sigmoid", gamma=0.001, coef0=0)),
    ("cosine", ["--kernel", "cosine"], dict(kernel="cosine")),
    # KernelPCA does not name the laplacian kernel: its matrix
    # (sklearn.metrics.pairwise.laplacian_kernel) is given precomputed.
    ("laplacian", ["--kernel", "laplacian"], dict(kernel="laplacian")),
    ("laplacian-gamma", ["--kernel", "laplacian", "--gamma", "0.05"], dict(kernel="laplacian", gamma=0.05)),
]


def fit(x, args):
    """KernelPCA(n_components=3, eigen_solver="dense") with args on x."""
    if args["kernel"] == "laplacian":
        k = KernelPCA(n_components=3, eigen_solver="dense", kernel="precomputed")
        return k, k.fit_transform(laplacian_kernel(x, gamma=args.get("gamma")))
    k = KernelPCA(n_components=3, eigen_solver="dense", **args)
    return k, k.fit_transform(x)


def transform(k, x, new, args):
    """The fitted KernelPCA k (on x) applied to the points new."""
    if args["kernel"] == "laplacian":
        return k.transform(laplacian_kernel(new, x, gamma=args.get("gamma")))
    return k.transform(new)


def cases():
    for data, x in (("iris", iris()), ("digits500", digits())):
        for name, flags, args in KERNELS:
            if data == "digits500" and name == "rbf-gamma":
                args = dict(args, gamma=0.001)
                flags = flags[:-1] + ["0.001"]
            if data == "digits500" and name == "sigmoid":
                args = dict(args, gamma=0.0002)
                flags = flags[:-1] + ["0.0002"]
            yield data, x, name, flags, args


def check(kdual):
    import os
    import subprocess
    import tempfile
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for data, x, name, flags, args in cases():
            path = os.path.join(tmp, data + ".csv")
            np.savetxt(path, x, delimiter=",", fmt="%.17g")
            k, z = fit(x, args)
            model = os.path.join(tmp, "m.npz")
            run = subprocess.run([kdual, "kpca", "fit", "--input", path, "--components", "3", "--solver", "dense",
                                  "--json", "-", "--quiet", "--save", model] + flags, capture_output=True, text=True, check=True)
            got = json.loads(run.stdout)
            lam = np.array(got["eigenvalues"])
            s = np.array(got["scores"])
            sign = np.sign((s * z).sum(axis=0))
            s *= sign
            new = 0.7 * x[:5] + 0.3 * x[5:10]
            newpath = os.path.join(tmp, "new.csv")
            np.savetxt(newpath, new, delimiter=",", fmt="%.17g")
            run = subprocess.run([kdual, "kpca", "transform", "--model", model, "--input", newpath],
                                 capture_output=True, text=True, check=True)
            t = np.loadtxt(run.stdout.strip().split("\n"), delimiter=",", ndmin=2) * sign
            want = transform(k, x, new, args)
            dl = np.abs(lam - k.eigenvalues_).max() / k.eigenvalues_[0]
            ds = np.abs(s - z).max() / max(1.0, np.abs(z).max())
            dt = np.abs(t - want).max() / max(1.0, np.abs(z).max())
            worst = max(worst, dl, ds, dt)
            print(f"{data:10s} {name:16s} eigenvalues {dl:.1e}  scores {ds:.1e}  new points {dt:.1e}")
    print(f"scikit-learn {sklearn.__version__}: largest relative difference {worst:.1e}")
    sys.exit(0 if worst <= 1e-8 else 1)


def main():
    if sys.argv[1] == "--check":
        check(sys.argv[2])
    out = {"sklearn": sklearn.__version__, "cases": []}
    for data, x, name, flags, args in cases():
        k, z = fit(x, args)
        new = 0.7 * x[:5] + 0.3 * x[5:10]
        out["cases"].append({"data": data, "kernel": name, "flags": flags,
                             "eigenvalues": k.eigenvalues_.tolist(), "scores": z[:5].tolist(),
                             "new": new.tolist(), "transformed": transform(k, x, new, args).tolist()})
    json.dump(out, open(sys.argv[1], "w"), indent=1)


main()
