//go:build mpi

package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/mpi"
)

// mpiJob is a distributed kernel PCA fit: every rank has read the same data
// and parsed the same flags.
type mpiJob struct {
	x                      *mat.Dense
	kernel                 kernel.Kernel
	s                      int
	solver, operator, json string
	tol                    float64
	seed                   uint64
	center                 bool
}

// kpcaFitMPI fits kernel PCA across the ranks of mpirun: the rows split
// evenly (dist.Operator), block Krylov or Lanczos with every vector split by
// rows, the scores gathered; rank 0 writes CSV or JSON (with ranks, each
// rank's operator memory and the bytes each rank sent per pass). An error
// on any rank ends the whole job (MPI_Abort) with its message.
func kpcaFitMPI(job mpiJob, stdout io.Writer) (err error) {
	var kind dist.Kind
	switch job.operator {
	case "auto", "float64":
		kind = dist.Float64
	case "matrix-free":
		kind = dist.MatrixFree
	default:
		return usagef("--operator %q with --mpi: want float64 or matrix-free", job.operator)
	}
	var solver eig.Solver
	switch job.solver {
	case "auto", "block":
		solver = eig.BlockKrylov{Tol: job.tol, Seed: job.seed}
	case "lanczos":
		solver = eig.Lanczos{Tol: job.tol, Seed: job.seed}
	default:
		return usagef("--solver %q with --mpi: want auto, block or lanczos", job.solver)
	}
	if job.tol < 0 || math.IsNaN(job.tol) || math.IsInf(job.tol, 0) {
		return usagef("--tol %g: want a finite tolerance ≥ 0", job.tol)
	}
	// Flags are checked above, before MPI starts: a usage error is exit 2 on
	// every rank. From here an error on any rank ends the whole job.
	if err := mpi.Init(); err != nil {
		return err
	}
	rank := mpi.Rank()
	defer func() {
		if err != nil {
			fmt.Fprintf(diag, "kdual kpca: rank %d: %v\n", rank, err)
			mpi.Abort(1)
		}
		if ferr := mpi.Finalize(); err == nil {
			err = ferr
		}
	}()
	ranks, err := mpi.Size()
	if err != nil {
		return err
	}
	start := time.Now()
	op, err := dist.NewKernelOperator(job.x, job.kernel, kind, job.center)
	if err != nil {
		return err
	}
	kernelSeconds := time.Since(start).Seconds()
	t := time.Now()
	res, err := solver.Solve(op, job.s)
	if err != nil {
		return err
	}
	solveSeconds := time.Since(t).Seconds()
	// Scores H = V·Λ^{1/2}, gathered on every rank, signs as kpca's.
	n := op.GlobalDim()
	s := job.s
	local := make([]float64, op.Dim()*s)
	for i := 0; i < op.Dim(); i++ {
		for j := 0; j < s; j++ {
			local[i*s+j] = res.Vectors.At(i, j)
		}
	}
	full := make([]float64, n*s)
	counts, displs := make([]int, ranks), make([]int, ranks)
	l, _ := dist.NewLayout(n, ranks)
	for r := 0; r < ranks; r++ {
		lo, hi := l.Rows(r)
		counts[r], displs[r] = (hi-lo)*s, lo*s
	}
	if err := mpi.Allgatherv(local, full, counts, displs); err != nil {
		return err
	}
	scores := mat.NewDense(n, s, full)
	for j, flip := range linalg.SignFlips(scores) {
		f := 1.0
		if flip {
			f = -1
		}
		sq := f * sqrtPos(res.Values[j])
		for i := 0; i < n; i++ {
			scores.Set(i, j, scores.At(i, j)*sq)
		}
	}
	// Per-rank memory and bytes sent per pass, gathered.
	st := op.Stats()
	mine := []float64{float64(op.Bytes()), float64(st.BytesSent) / float64(max(st.Passes, 1)), float64(bigmem.PeakRSS())}
	all := make([]float64, 3*ranks)
	c3, d3 := make([]int, ranks), make([]int, ranks)
	for r := range c3 {
		c3[r], d3[r] = 3, 3*r
	}
	if err := mpi.Allgatherv(mine, all, c3, d3); err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}
	fmt.Fprintf(diag, "kdual: %d ranks, operator %s, %d passes\n", ranks, map[dist.Kind]string{dist.Float64: "float64", dist.MatrixFree: "matrix-free"}[kind], res.Passes)
	if job.json == "" {
		writeCSV(stdout, scores)
		return nil
	}
	opBytes, sent, rss := make([]float64, ranks), make([]float64, ranks), make([]float64, ranks)
	for r := 0; r < ranks; r++ {
		opBytes[r], sent[r], rss[r] = all[3*r], all[3*r+1], all[3*r+2]
	}
	opName := "float64"
	if kind == dist.MatrixFree {
		opName = "matrix-free"
	}
	return writeJSON(job.json, stdout, map[string]any{
		"eigenvalues": res.Values, "scores": rowsOf(scores), "sigma": job.kernel.Sigma, "n": n,
		"ranks": ranks, "operator": opName, "rank_operator_bytes": opBytes, "rank_bytes_sent_per_pass": sent,
		"rank_peak_rss_bytes": rss, "passes": res.Passes, "kernel_seconds": kernelSeconds, "solve_seconds": solveSeconds,
		"fit_seconds": time.Since(start).Seconds(), "status": res.Status.Code, "stopping_test": res.Status.Test,
	})
}

func sqrtPos(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}
