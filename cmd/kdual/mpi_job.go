package main

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
)

// mpiJob is a distributed kernel PCA fit: every rank has read the same data
// and parsed the same flags.
type mpiJob struct {
	x                                *mat.Dense
	kernel                           kernel.Kernel
	s                                int
	solver, operator, products, json string
	tol                              float64
	seed                             uint64
	center                           bool
	memory                           int64         // bytes per rank; 0: available memory / ranks on this host
	timeout                          time.Duration // the collective watchdog's; 0: defaultMPITimeout
}

// defaultMPITimeout is the collective watchdog's default for n points of
// dimension d on ranks ranks: ten times the seconds of one Gram's
// n²·d multiply-adds split over the ranks at a deliberately slow
// 10⁹ per second — no collective waits longer than the slowest rank's part
// of one pass or build — and at least 5 minutes.
func defaultMPITimeout(n, d, ranks int) time.Duration {
	sec := 10 * float64(n) * float64(n) * float64(d) / (1e9 * float64(max(ranks, 1)))
	return max(5*time.Minute, time.Duration(sec*float64(time.Second)))
}

// agreement is what every rank of a kpca fit must agree on.
func (j mpiJob) agreement(cmd string) [][2]string {
	return [][2]string{
		{"the command", cmd},
		{"the kdual version", version()},
		{"--kernel and --sigma", fmt.Sprintf("%v σ=%x γ=%x degree %d c₀=%x", j.kernel.Kind, math.Float64bits(j.kernel.Sigma),
			math.Float64bits(j.kernel.Gamma), j.kernel.Degree, math.Float64bits(j.kernel.Coef0))},
		{"--components", fmt.Sprint(j.s)},
		{"--solver", j.solver},
		{"--operator", j.operator},
		{"--products", j.products},
		{"--tol", fmt.Sprint(j.tol)},
		{"--seed", fmt.Sprint(j.seed)},
		{"--no-center", fmt.Sprint(!j.center)},
	}
}

// check refuses bad flags before MPI starts, so that a usage error is exit
// 2 on every rank.
func (j mpiJob) check() error {
	switch j.operator {
	case "auto", "float64", "float32", "matrix-free":
	default:
		return usagef("--operator %q with --mpi: want auto, float64, float32 or matrix-free", j.operator)
	}
	switch j.solver {
	case "auto", "block", "lanczos", "lbfgs":
	default:
		return usagef("--solver %q with --mpi: want auto, block, lanczos or lbfgs", j.solver)
	}
	switch j.products {
	case "", "float64", "float32":
	default:
		return usagef("--products %q: want float64 or float32", j.products)
	}
	if j.products == "float32" && j.operator == "float64" {
		return usagef("--products float32 is for the float32 and matrix-free operators")
	}
	if j.tol < 0 || math.IsNaN(j.tol) || math.IsInf(j.tol, 0) {
		return usagef("--tol %g: want a finite tolerance ≥ 0", j.tol)
	}
	if j.memory < 0 {
		return usagef("--memory: want a positive size")
	}
	return nil
}

// mpiBench is the part of kdual bench kpca --mpi beyond the problem.
type mpiBench struct {
	solvers []string
	deltas  []float64
	repeat  int
	json    string
	memory  int64
}
