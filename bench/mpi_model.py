#!/usr/bin/python3
"""The scaling model of docs/mpi.md: time per pass of kernel PCA over MPI
on P machines, the n whose float32 triangle P machines hold, and the n
reachable matrix-free in a given time. Prints the tables of docs/mpi.md.

Usage: mpi_model.py --node   (the one-node table from the 16-core measurement)
       mpi_model.py [--core64 S] [--core32 S] [--machine64 S] [--machine32 S]
                    [--mf S] [--mf-passes K] [--mem GIB]

The inputs are measured on one machine (bench/mpi_scaling.py, docs/mpi.md),
at n0 = 20 000, b = 8 vectors per pass; the defaults are the medians
measured on the AMD EPYC machine of docs/mpi.md:
  --core64, --core32   seconds per pass of one rank on one core (1x1);
  --machine64, --machine32  seconds per pass of two ranks, one per core (2x1):
                       the machine's rate with both cores busy;
  --mf                 seconds per matrix-free pass on one machine (2x1),
                       at b = 60; --mf-passes the passes block Krylov took;
  --mem                memory one machine gives the operator, GiB.
Network parameters (not measured here: this machine has no network):
latency α and bandwidth β of two interconnects, 100 Gb/s InfiniBand
(α = 2 µs, β = 12.5 GB/s) and 10 Gb Ethernet (α = 50 µs, β = 1.25 GB/s).
"""
import math
import sys

N0, B, D, S = 20000, 8, 784, 20
REDUCTIONS = 25  # per pass, block Krylov b = 8, s = 20 (529 in 22 passes, measured)
NETS = [("InfiniBand 100 Gb/s", 2e-6, 12.5e9), ("Ethernet 10 Gb/s", 50e-6, 1.25e9)]


def arg(name, default):
    if name in sys.argv:
        return float(sys.argv[sys.argv.index(name) + 1])
    return default


def comm(n, b, ranks, alpha, beta):
    """One pass's communication per rank: a ring Allgatherv and a ring
    Reduce_scatter of the n×b float64 block ((Q−1) latencies and (Q−1)/Q of
    the block each), and the solver's reductions (Allreduce + Bcast of a few
    values: 2⌈log₂ Q⌉ latencies each)."""
    if ranks == 1:
        return 0.0
    block = 8.0 * n * b
    rings = 2 * ((ranks - 1) * alpha + (ranks - 1) / ranks * block / beta)
    return rings + REDUCTIONS * 2 * math.ceil(math.log2(ranks)) * alpha


def main():
    core64 = arg("--core64", 0.4130)
    core32 = arg("--core32", 0.4044)
    mach64 = arg("--machine64", 0.2201)
    mach32 = arg("--machine32", 0.2130)
    mf = arg("--mf", 5.755)
    mf_passes = arg("--mf-passes", 13)
    mem = arg("--mem", 20.0) * 2**30
    w0 = 2.0 * N0 * N0 * B  # flops of one pass over a stored triangle
    print(f"Rates from the inputs: per core {w0 / core64 / 1e9:.1f} GFLOP/s (float64 triangle), "
          f"{w0 / core32 / 1e9:.1f} (float32); per machine (2 ranks) {w0 / mach64 / 1e9:.1f}, {w0 / mach32 / 1e9:.1f}.")
    print()
    print("Check on this machine (shared memory, α = 1 µs, β = 5 GB/s assumed; 2 cores):")
    print("| ranks | float64 predicted s/pass | float32 predicted s/pass |")
    print("|---|---|---|")
    for q in (1, 2, 4):
        cores = min(q, 2)
        p64 = core64 / cores + comm(N0, B, q, 1e-6, 5e9)
        p32 = core32 / cores + comm(N0, B, q, 1e-6, 5e9)
        print(f"| {q} | {p64:.4f} | {p32:.4f} |")
    print()
    print("Time per pass, stored float32 triangle, P machines × 2 ranks, b = 8:")
    for n in (N0, 200000):
        print(f"\nn = {n}:")
        print("| P | compute s | " + " | ".join(f"{name} comm s | total s | efficiency" for name, _, _ in NETS) + " |")
        print("|---|---|" + "---|---|---|" * len(NETS))
        for p in (1, 8, 64, 512):
            c = mach32 * (n / N0) ** 2 / p
            row = f"| {p} | {c:.4g} |"
            for _, a, bw in NETS:
                m = comm(n, B, 2 * p, a, bw)
                row += f" {m:.3g} | {c + m:.4g} | {c / (c + m):.0%} |"
            print(row)
    print()
    print(f"The n whose kernel P machines hold ({mem / 2**30:.0f} GiB each for the operator, 2 ranks each holding X, "
          f"n×{D} float64):")
    print("| P | float32 triangle alone | with X on every rank | float64 triangle with X |")
    print("|---|---|---|---|")
    for p in (1, 8, 64, 512):
        alone = math.sqrt(p * mem / 2)
        # 2n²/P + 2·8nd ≤ mem (per machine), and 4n²/P + 2·8nd ≤ mem.
        def solve(a):
            bq = 2 * 8 * D
            return (-bq + math.sqrt(bq * bq + 4 * a * mem)) / (2 * a)
        print(f"| {p} | {alone:,.0f} | {solve(2 / p):,.0f} | {solve(4 / p):,.0f} |")
    if mf > 0 and mf_passes > 0:
        c = mf / (N0 * N0)  # seconds per kernel entry per pass, one machine
        print()
        print(f"Matrix-free (every pass forms the kernel: {c * 1e9:.2f} ns per entry per pass on one machine, "
              f"{mf_passes:.0f} passes): the n reachable in")
        print("| P | 1 hour | 24 hours | data per rank at the 24-hour n |")
        print("|---|---|---|---|")
        for p in (1, 8, 64, 512):
            n1 = math.sqrt(3600 * p / (mf_passes * c))
            n24 = math.sqrt(86400 * p / (mf_passes * c))
            print(f"| {p} | {n1:,.0f} | {n24:,.0f} | {8 * n24 * D / 1e9:.1f} GB |")


# One shared-memory node (docs/mpi.md): measured on a 16-core Xeon VM by
# bench/node_scaling.sh at n = 40 000, float32 triangle, b = 8.
NODE = {"t1": 0.962, "bytes": 40000**2 / 2 * 4, "sync": 0.07,
        "triad": {1: 12.3e9, 2: 25.0e9, 4: 45.1e9, 8: 73.0e9, 16: 117.3e9},
        "measured": {1: 0.962, 2: 0.559, 4: 0.340, 8: 0.236, 16: 0.140}}


def node_table():
    """Time per pass of Q one-thread ranks on one node: the larger of the
    compute share t1/Q and the triangle's bytes at the bandwidth Q processes
    stream together, plus the time a rank waits in MPI per pass (measured:
    0.06–0.09 s from 2 to 16 ranks, taken as constant)."""
    print("One shared-memory node (16-core Xeon VM, n = 40 000, float32 triangle, b = 8):")
    print("| ranks | compute t1/Q | memory bytes/BW(Q) | MPI wait | predicted s/pass | measured | error |")
    print("|---|---|---|---|---|---|---|")
    for q, bw in NODE["triad"].items():
        c, m = NODE["t1"] / q, NODE["bytes"] / bw
        w = NODE["sync"] if q > 1 else 0.0
        p = max(c, m) + w
        meas = NODE["measured"][q]
        print(f"| {q} | {c:.4f} | {m:.4f} | {w:.3f} | {p:.4f} | {meas:.4f} | {(p - meas) / meas:+.0%} |")


if __name__ == "__main__":
    if "--node" in sys.argv:
        node_table()
        sys.exit(0)
    main()
