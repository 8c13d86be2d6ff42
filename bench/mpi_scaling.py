#!/usr/bin/python3
"""Time per pass of kernel PCA over MPI against one process, on this machine.

Usage: mpi_scaling.py KDUAL_BINARY [--n 20000] [--s 20] [--repeat 3]
                      [--operators float64,float32] [--ranks 2,4]

Fashion-MNIST (the first n images, then kdual's seeded shifted copies),
Gaussian kernel at the median bandwidth, centred, top s, block Krylov
(blocks of 8) at its default tolerance. For each operator it runs, in turn
and repeat times:
  single   `kdual kpca fit --operator OP --solver block` without MPI
           (OpenBLAS and kdual on both cores);
  1x2      the same under `mpirun --bind-to none -np 1 … --mpi`;
  Px1      `mpirun -np P -x OPENBLAS_NUM_THREADS=1 … --mpi --threads 1`
           (one core per rank; P = 4 oversubscribes the 2 cores here).
Each run's time per pass is solve_seconds / passes (kdual's JSON); the
table gives medians, the bytes each rank handed to MPI per pass, the
operator bytes per rank, and the ratio of each run to `single`.
Open MPI's launcher needs no ssh (OMPI_MCA_plm=isolated); root is allowed.
"""
import json
import os
import statistics
import subprocess
import sys


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    kdual = sys.argv[1]
    n = int(arg("--n", "20000"))
    s = int(arg("--s", "20"))
    repeat = int(arg("--repeat", "3"))
    operators = arg("--operators", "float64,float32").split(",")
    ranks = [int(p) for p in arg("--ranks", "2,4").split(",")]
    env = dict(os.environ, OMPI_MCA_plm="isolated", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    fit = [kdual, "kpca", "fit", "--data", "fashion", "--n", str(n), "--components", str(s),
           "--sigma", "median", "--solver", "block", "--json", "-", "--quiet"]
    configs = [("single", lambda op: fit + ["--operator", op]),
               ("1x2", lambda op: ["mpirun", "--bind-to", "none", "-np", "1"] + fit + ["--operator", op, "--mpi"])]
    for p in ranks:
        if p == 1:
            configs.append(("1x1", lambda op: ["mpirun", "-np", "1", "-x", "OPENBLAS_NUM_THREADS=1"] + fit
                            + ["--operator", op, "--mpi", "--threads", "1"]))
            continue
        configs.append((f"{p}x1", lambda op, p=p: ["mpirun", "-np", str(p), "-x", "OPENBLAS_NUM_THREADS=1"] + fit
                        + ["--operator", op, "--mpi", "--threads", "1"]))
    per_pass = {}
    info = {}
    for rep in range(repeat):
        for op in operators:
            for name, cmd in configs:
                out = subprocess.run(cmd(op), env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"{name} {op}: exit {out.returncode}: {out.stderr[-2000:]}")
                r = json.loads(out.stdout)
                r = r.get("info", r)
                per_pass.setdefault((op, name), []).append(r["solve_seconds"] / r["passes"])
                info[(op, name)] = r
                print(f"# rep {rep + 1} {op} {name}: {r['solve_seconds'] / r['passes']:.4f} s/pass, "
                      f"{r['passes']} passes, kernel {r['kernel_seconds']:.2f} s", file=sys.stderr, flush=True)
    print(f"n = {n}, s = {s}, block Krylov, {repeat} runs each, alternating; medians")
    print("| operator | run | s/pass | × single | passes | bytes sent per pass per rank | s in MPI per pass per rank | operator bytes per rank |")
    print("|---|---|---|---|---|---|---|---|")
    for op in operators:
        base = statistics.median(per_pass[(op, "single")])
        for name, _ in configs:
            t = statistics.median(per_pass[(op, name)])
            r = info[(op, name)]
            sent = r.get("rank_bytes_sent_per_pass", [0])
            opb = r.get("rank_operator_bytes", [])
            comm = r.get("rank_mpi_seconds_per_pass", [])
            print(f"| {op} | {name} | {t:.4f} | {t / base:.2f} | {r['passes']} | "
                  f"{', '.join(f'{v:.0f}' for v in sent)} | {', '.join(f'{v:.4f}' for v in comm) or '-'} | "
                  f"{', '.join(f'{v / 1e9:.2f} GB' for v in opb) or '-'} |")


if __name__ == "__main__":
    main()
