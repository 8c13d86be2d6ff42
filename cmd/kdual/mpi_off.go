//go:build !mpi

package main

import (
	"io"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
)

// mpiJob is a distributed kernel PCA fit (see mpi_on.go).
type mpiJob struct {
	x                      *mat.Dense
	kernel                 kernel.Kernel
	s                      int
	solver, operator, json string
	tol                    float64
	seed                   uint64
	center                 bool
}

// kpcaFitMPI: this build has no MPI.
func kpcaFitMPI(mpiJob, io.Writer) error {
	return usagef("--mpi: this kdual was built without MPI (install libopenmpi-dev and run make build, which adds the build tag mpi)")
}
