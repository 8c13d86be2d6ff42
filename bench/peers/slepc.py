#!/usr/bin/python3
"""Distributed kernel PCA: `kdual kpca fit --mpi` beside SLEPc's Krylov–Schur.

Usage: slepc.py KDUAL_BINARY [--n 20000] [--s 20] [--ranks 2] [--repeat 3] [--tol 1e-8]
       mpirun -np P slepc.py --worker --n N --s S --sigma SIGMA --tol TOL --out FILE.npz

Both solve the top s eigenpairs of the same centred Gaussian kernel matrix
K_c of the first n Fashion-MNIST training images (pixels /255), σ the median
bandwidth kdual reports for them (one kdual run first), over P MPI ranks
with one thread each (OPENBLAS_NUM_THREADS=1, kdual --threads 1):

  kdual  `mpirun -np P kdual kpca fit --mpi --sigma σ --tol TOL`: the
         operator and solver its planner pairs (the float64 triangle split
         over the ranks, block Krylov), kernel_seconds and solve_seconds from
         its JSON;
  SLEPc  this script with --worker under `mpirun -np P`: every rank computes
         its rows of K (NumPy: X_r·Xᵀ, then the exponential, in panels of 1000
         rows) straight into a PETSc MPI dense matrix, centres them (row means
         gathered over the ranks), then EPS Krylov–Schur (HEP, largest real,
         nev = s, SLEPc's default basis, relative tolerance TOL) solves; the
         kernel build and the solve are timed apart (from a barrier to a
         barrier).

The runs alternate (kdual, SLEPc), --repeat times; the table gives medians.
Both solutions of the last run are then checked by one external float64
computation here (NumPy, all of K_c in memory): max_i ‖K_c v_i − λ_i v_i‖ / λ₁
with v_i the unit eigenvectors (kdual's scores normalised). With the default
TOL = 1e-8 both solvers' stopping tests (‖r_i‖ ≤ TOL·λ_i) bound this by
1e-8. Both run on the same OpenBLAS kernels (scripts/peer-python exports
kdual's core, passed to every rank). Open MPI's launcher needs no ssh
(OMPI_MCA_plm=isolated); root is allowed.
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
# Debian installs petsc4py and slepc4py under versioned prefixes; their .pth
# files look for /usr/lib/petsc and /usr/lib/slepc, which only the -dev
# packages provide.
PETSC_DIR = "/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real"
SLEPC_DIR = "/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real"
PANEL = 1000


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def load(n):
    with gzip.open(FASHION) as f:
        f.read(16)
        return np.frombuffer(f.read(n * 784), dtype=np.uint8).reshape(n, 784) / 255.0


def gaussian_rows(x, sq, lo, hi, gamma):
    """Rows lo…hi of exp(−γ‖x_i − x_j‖²), float64."""
    g = x[lo:hi] @ x.T
    g *= -2.0
    g += sq[lo:hi, None]
    g += sq[None, :]
    np.maximum(g, 0.0, out=g)
    g *= -gamma
    return np.exp(g, out=g)


def worker():
    for d, env in ((PETSC_DIR, "PETSC_DIR"), (SLEPC_DIR, "SLEPC_DIR")):
        os.environ.setdefault(env, d)
        sys.path.append(os.path.join(os.environ[env], "lib/python3/dist-packages"))
    import petsc4py
    import slepc4py
    petsc4py.init([])
    slepc4py.init([])
    from petsc4py import PETSc
    from slepc4py import SLEPc

    comm = PETSc.COMM_WORLD
    rank, size = comm.getRank(), comm.getSize()
    n, s = arg("--n", 20000), arg("--s", 20)
    sigma, tol, out = arg("--sigma", 0.0), arg("--tol", 1e-8), arg("--out", "")
    gamma = 1.0 / (2 * sigma * sigma)
    x = load(n)
    sq = np.einsum("ij,ij->i", x, x)
    a = PETSc.Mat().createDense(((PETSc.DECIDE, n), (PETSc.DECIDE, n)), comm=comm)
    a.setUp()
    lo, hi = a.getOwnershipRange()

    comm.barrier()
    t0 = time.perf_counter()
    arr = a.getDenseArray()  # this rank's rows × all columns, PETSc's storage
    for p in range(lo, hi, PANEL):
        q = min(p + PANEL, hi)
        arr[p - lo:q - lo, :] = gaussian_rows(x, sq, p, q, gamma)
    means = arr.mean(axis=1)
    mv = PETSc.Vec().createMPI((hi - lo, n), comm=comm)
    mv.setArray(means)
    sc, full = PETSc.Scatter.toAll(mv)
    sc.scatter(mv, full, False, PETSc.Scatter.Mode.FORWARD)
    allmeans = full.getArray().copy()
    mu = allmeans.mean()
    for p in range(0, hi - lo, PANEL):
        q = min(p + PANEL, hi - lo)
        arr[p:q, :] -= means[p:q, None]
        arr[p:q, :] -= allmeans[None, :]
        arr[p:q, :] += mu
    del arr
    a.assemble()
    comm.barrier()
    t1 = time.perf_counter()

    eps = SLEPc.EPS().create(comm)
    eps.setOperators(a)
    eps.setProblemType(SLEPc.EPS.ProblemType.HEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.LARGEST_REAL)
    eps.setDimensions(nev=s)
    eps.setTolerances(tol=tol, max_it=10000)
    eps.setConvergenceTest(SLEPc.EPS.Conv.REL)
    eps.setFromOptions()
    comm.barrier()
    t2 = time.perf_counter()
    eps.solve()
    comm.barrier()
    t3 = time.perf_counter()

    nconv = eps.getConverged()
    vr, _ = a.createVecs()
    values, vectors = [], []
    for i in range(min(nconv, s)):
        values.append(eps.getEigenpair(i, vr).real)
        sc, v0 = PETSc.Scatter.toZero(vr)
        sc.scatter(vr, v0, False, PETSc.Scatter.Mode.FORWARD)
        if rank == 0:
            vectors.append(v0.getArray().copy())
        sc.destroy()
        v0.destroy()
    its = eps.getIterationNumber()
    ncv = eps.getDimensions()[1]
    if rank == 0:
        np.savez(out, values=np.array(values), vectors=np.array(vectors).T, kernel=t1 - t0, solve=t3 - t2,
                 nconv=nconv, its=its, ncv=ncv, ranks=size, version=".".join(map(str, SLEPc.Sys.getVersion())))


def kdual_fit(binary, n, s, sigma, tol, ranks, env, out):
    cmd = ["mpirun", "-np", str(ranks), "-x", "OPENBLAS_NUM_THREADS=1"]
    if "OPENBLAS_CORETYPE" in env:
        cmd += ["-x", "OPENBLAS_CORETYPE"]
    cmd += [binary, "kpca", "fit", "--data", "fashion", "--n", str(n), "--components", str(s),
            "--kernel", "gaussian", "--sigma", repr(sigma), "--tol", repr(tol), "--mpi", "--threads", "1",
            "--quiet", "--json", out]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    with open(out) as f:
        r = json.load(f)
    z = np.array(r["scores"], dtype=float)
    return r, np.array(r["eigenvalues"]), z / np.linalg.norm(z, axis=0)


def slepc_fit(n, s, sigma, tol, ranks, env, out):
    cmd = ["mpirun", "-np", str(ranks), "-x", "OPENBLAS_NUM_THREADS=1"]
    if "OPENBLAS_CORETYPE" in env:
        cmd += ["-x", "OPENBLAS_CORETYPE"]
    cmd += [sys.executable, os.path.abspath(__file__), "--worker", "--n", str(n), "--s", str(s),
            "--sigma", repr(sigma), "--tol", repr(tol), "--out", out]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"slepc.py: SLEPc worker: exit {res.returncode}: {res.stderr[-2000:]}")
    return np.load(out)


def residual(x, sigma, values, vectors):
    """max_i ‖K_c v_i − λ_i v_i‖ / λ₁ in float64 (K_c formed here)."""
    n = x.shape[0]
    sq = np.einsum("ij,ij->i", x, x)
    kv = np.zeros_like(vectors)
    rows = []
    gamma = 1.0 / (2 * sigma * sigma)
    for p in range(0, n, 2 * PANEL):
        q = min(p + 2 * PANEL, n)
        g = gaussian_rows(x, sq, p, q, gamma)
        rows.append(g.mean(axis=1))
        kv[p:q] = g @ vectors
    r = np.concatenate(rows)
    # K_c v = K v − r (1ᵀv) − 1 (rᵀv) + μ 1 (1ᵀv)
    ones = vectors.sum(axis=0)
    kcv = kv - np.outer(r, ones) - np.outer(np.ones(n), r @ vectors) + r.mean() * np.outer(np.ones(n), ones)
    res = np.linalg.norm(kcv - vectors * values[None, :], axis=0)
    return float(np.max(res) / values[0])


def main():
    if "--worker" in sys.argv:
        worker()
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    n, s, ranks = arg("--n", 20000), arg("--s", 20), arg("--ranks", 2)
    repeat, tol = arg("--repeat", 3), arg("--tol", 1e-8)
    env = dict(os.environ, OMPI_MCA_plm="isolated", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    with tempfile.TemporaryDirectory() as tmp:
        # σ: kdual's median rule on the n points (one run, not timed).
        probe = subprocess.run([binary, "kpca", "fit", "--data", "fashion", "--n", str(n), "--components", "1",
                                "--kernel", "gaussian", "--sigma", "median", "--approx", "nystrom",
                                "--landmarks", "50", "--json", "-", "--quiet"],
                               env=env, check=True, capture_output=True, text=True)
        sigma = json.loads(probe.stdout)["sigma"]
        times = {"kdual": ([], []), "SLEPc": ([], [])}
        last = {}
        for rep in range(repeat):
            r, vals, vecs = kdual_fit(binary, n, s, sigma, tol, ranks, env, os.path.join(tmp, "kdual.json"))
            info = r.get("info", r)
            times["kdual"][0].append(info["kernel_seconds"])
            times["kdual"][1].append(info["solve_seconds"])
            last["kdual"] = (vals, vecs, f"{info['solver']} on {info['operator']}, {info['passes']} passes")
            z = slepc_fit(n, s, sigma, tol, ranks, env, os.path.join(tmp, "slepc.npz"))
            if int(z["nconv"]) < s:
                sys.exit(f"slepc.py: SLEPc converged {int(z['nconv'])} of {s} pairs")
            times["SLEPc"][0].append(float(z["kernel"]))
            times["SLEPc"][1].append(float(z["solve"]))
            last["SLEPc"] = (z["values"], z["vectors"],
                             f"Krylov–Schur {z['version']}, ncv {int(z['ncv'])}, {int(z['its'])} restarts")
            print(f"# rep {rep + 1}: kdual kernel {times['kdual'][0][-1]:.2f} s solve {times['kdual'][1][-1]:.2f} s; "
                  f"SLEPc kernel {times['SLEPc'][0][-1]:.2f} s solve {times['SLEPc'][1][-1]:.2f} s",
                  file=sys.stderr, flush=True)
    x = load(n)
    print(f"Distributed kernel PCA, Fashion-MNIST n={n}, s={s}, Gaussian σ={sigma:.4f}, centred, {ranks} ranks × 1 thread, "
          f"tolerance {tol:g}; medians of {repeat} alternated runs; residuals checked in float64 by NumPy")
    print("| solver | kernel build s | solve s | kernel: SLEPc ÷ kdual | solve: SLEPc ÷ kdual | max ‖K_c v − λ v‖/λ₁ | how |")
    print("|---|---|---|---|---|---|---|")
    kk, ks = statistics.median(times["kdual"][0]), statistics.median(times["kdual"][1])
    for name in ("kdual", "SLEPc"):
        k, sv = statistics.median(times[name][0]), statistics.median(times[name][1])
        vals, vecs, how = last[name]
        print(f"| {name} | {k:.2f} | {sv:.2f} | {k / kk:.2f} | {sv / ks:.2f} | "
              f"{residual(x, sigma, np.asarray(vals), np.asarray(vecs)):.1e} | {how} |")
    dv = np.max(np.abs(np.asarray(last["kdual"][0]) - np.asarray(last["SLEPc"][0])) / last["SLEPc"][0][0])
    print(f"\nlargest eigenvalue difference kdual − SLEPc, relative to λ₁: {dv:.1e}")


if __name__ == "__main__":
    main()
