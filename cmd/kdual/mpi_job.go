package main

import (
	"math"

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
	memory                           int64 // bytes per rank; 0: available memory / ranks on this host
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
