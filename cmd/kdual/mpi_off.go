//go:build !mpi

package main

import (
	"io"

	"github.com/kdual/kdual/bench"
)

const noMPI = "--mpi: this kdual was built without MPI (install libopenmpi-dev and run make build, which adds the build tag mpi)"

// kpcaFitMPI: this build has no MPI.
func kpcaFitMPI(mpiJob, io.Writer) error { return usagef(noMPI) }

// benchKPCAMPI: this build has no MPI.
func benchKPCAMPI(*bench.KPCAProblem, mpiBench, io.Writer) error { return usagef(noMPI) }
