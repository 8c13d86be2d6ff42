#!/usr/bin/python3
"""Stored scikit-learn references for kdual's kernels named the scikit-learn way.

Usage: sklearn_kernels.py OUT.json   (run from the repository root)

For Iris (dataset/data/iris.csv) and the first 500 digits
(dataset/data/digits.csv.gz), KernelPCA(n_components=3, eigen_solver="dense")
with each kernel below: its eigenvalues and the scores of the first 5 training
rows. cmd/kdual's TestScikitLearnKernels runs `kdual kpca fit` with the same
kernel flags on the same data and compares (eigenvalues to 1e-8 relative,
scores to 1e-8 after aligning each component's sign).
"""
import gzip
import json
import sys

import numpy as np
import sklearn
from sklearn.decomposition import KernelPCA


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
]


def main():
    out = {"sklearn": sklearn.__version__, "cases": []}
    for data, x in (("iris", iris()), ("digits500", digits())):
        for name, flags, args in KERNELS:
            if data == "digits500" and name == "rbf-gamma":
                args = dict(args, gamma=0.001)
                flags = flags[:-1] + ["0.001"]
            k = KernelPCA(n_components=3, eigen_solver="dense", **args)
            z = k.fit_transform(x)
            out["cases"].append({"data": data, "kernel": name, "flags": flags,
                                 "eigenvalues": k.eigenvalues_.tolist(), "scores": z[:5].tolist()})
    json.dump(out, open(sys.argv[1], "w"), indent=1)


main()
