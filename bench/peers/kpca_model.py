#!/usr/bin/python3
"""A saved kdual KPCA model read by NumPy alone: the transform of new points
recomputed from the .npz archive, compared with kdual's own.

Usage: kpca_model.py KDUAL_BINARY [--n 500] [--d 20] [--new 50]

It writes a training and a new CSV (seeded normal data) and, for every
kernel, runs `kdual kpca fit --save` and `kdual kpca transform --model`, then reads
the model with numpy.load and computes, for every new point x,
k = kernel(x, X) (the header's kernel), k_c = k − mean(k) − row_means +
mean, z = k_c·proj, and prints the largest difference to kdual's scores
relative to their largest magnitude.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def kernel(h, a, b):
    """The header's kernel between the rows of a and b, from its definition."""
    k = h["kernel"]
    kind, d = k["kind"], a.shape[1]
    gamma = k["gamma"] or 1.0 / d  # scikit-learn's default where γ is unset
    dot = a @ b.T
    if kind == "linear":
        return dot
    if kind == "polynomial":
        return (gamma * dot + k["coef0"]) ** (k["degree"] or 3)
    if kind == "sigmoid":
        return np.tanh(gamma * dot + k["coef0"])
    if kind == "cosine":
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        return dot / np.where(np.outer(na, nb) == 0, np.inf, np.outer(na, nb))
    if kind == "laplacian":
        return np.exp(-gamma * np.abs(a[:, None, :] - b[None, :, :]).sum(2))
    d2 = np.maximum((a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * dot, 0)
    if kind == "gaussian":
        return np.exp(-d2 / (2 * k["sigma"] ** 2)) if k["sigma"] else np.exp(-k["gamma"] * d2)
    if kind == "laplace":
        return np.exp(-np.sqrt(d2) / k["sigma"]) if k["sigma"] else np.exp(-k["gamma"] * np.sqrt(d2))
    raise SystemExit(f"unknown kernel {kind}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, d, m = arg("--n", 500), arg("--d", 20), arg("--new", 50)
    rng = np.random.default_rng(7)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        train, new, model = (os.path.join(tmp, f) for f in ("train.csv", "new.csv", "model.npz"))
        np.savetxt(train, rng.standard_normal((n, d)), delimiter=",")
        np.savetxt(new, rng.standard_normal((m, d)), delimiter=",")
        for flags in (["--kernel", "linear"], ["--kernel", "gaussian"], ["--kernel", "rbf"], ["--kernel", "laplace"],
                      ["--kernel", "poly"], ["--kernel", "poly", "--coef0", "0", "--degree", "2"],
                      ["--kernel", "sigmoid", "--gamma", "0.01"], ["--kernel", "cosine"], ["--kernel", "laplacian"]):
            subprocess.run([binary, "kpca", "fit", "--input", train, "--components", "5", "--save", model, *flags],
                           check=True, capture_output=True)
            out = subprocess.run([binary, "kpca", "transform", "--model", model, "--input", new],
                                 check=True, capture_output=True, text=True).stdout
            ours = np.array([[float(v) for v in line.split(",")] for line in out.strip().splitlines()])
            z = np.load(model)
            h = json.loads(bytes(z["header"]).decode())
            x = np.loadtxt(new, delimiter=",", ndmin=2)
            k = kernel(h, x, z["x"])
            if h["center"]:
                k = k - k.mean(axis=1, keepdims=True) - z["row_means"][None, :] + h["mean"]
            theirs = k @ z["proj"]
            diff = np.abs(ours - theirs).max() / np.abs(theirs).max()
            worst = max(worst, diff)
            print(f"kdual model {h['format']} v{h['version']}, kernel {h['kernel']['kind']} ({' '.join(flags)}), "
                  f"n={h['n']}, s={h['components']}: NumPy transform of {m} new points differs from kdual's by "
                  f"{diff:.2e} (relative to the largest score)")
    if not worst <= 1e-12:
        sys.exit(1)


if __name__ == "__main__":
    main()
