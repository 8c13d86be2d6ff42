//go:build mpi

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// startMPI initialises MPI and returns the function to defer: on an error
// it prints it with the rank and ends the whole job (MPI_Abort), else it
// finalises.
func startMPI(cmd string, err *error) (func(), error) {
	if e := mpi.Init(); e != nil {
		return func() {}, e
	}
	rank := mpi.Rank()
	return func() {
		if *err != nil {
			fmt.Fprintf(errw, "kdual %s: rank %d: %s\n", cmd, rank, errorText((*err).Error()))
			mpi.Abort(1)
		}
		if ferr := mpi.Finalize(); *err == nil {
			*err = ferr
		}
	}, nil
}

// planMPI chooses the operator on rank 0 (dist.Plan; the budget per rank is
// --memory, or the memory available divided by the ranks on this host) and
// broadcasts the choice, so every rank builds the same kind.
func planMPI(n, d, k int, tol float64, memory int64, want string) (dist.Kind, string, error) {
	ranks, err := mpi.Size()
	if err != nil {
		return 0, "", err
	}
	var kind dist.Kind
	var reason string
	var planErr error
	if mpi.Rank() == 0 {
		budget := memory
		if budget <= 0 {
			local, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
			budget = eig.DefaultBudget() / int64(max(local, 1))
		}
		kind, _, reason, planErr = dist.Plan(n, d, k, ranks, tol, budget, want)
	}
	msg := []float64{float64(kind), 0}
	if planErr != nil {
		msg[1] = 1
	}
	if err := mpi.Bcast(msg, 0); err != nil {
		return 0, "", err
	}
	if msg[1] != 0 {
		if planErr == nil {
			planErr = fmt.Errorf("the plan failed on rank 0: %w", status.ErrInvalid)
		}
		return 0, "", planErr
	}
	return dist.Kind(msg[0]), reason, nil
}

// agree stops the job, before any work, when the ranks were not given the
// same command, flags and data (dist.Agree).
func agree(fields [][2]string, x *mat.Dense) error {
	// The data right after the command and version: a different input
	// changes what is derived from it (the median σ), and the input is the
	// difference to name.
	var fs []dist.Field
	for i, f := range fields {
		if i == min(2, len(fields)) {
			fs = append(fs, dist.Field{Name: "the data (size and checksum)", Value: dist.Checksum(x)})
		}
		fs = append(fs, dist.Field{Name: f[0], Value: f[1]})
	}
	if len(fields) <= 2 {
		fs = append(fs, dist.Field{Name: "the data (size and checksum)", Value: dist.Checksum(x)})
	}
	return dist.Agree(fs)
}

// buildMPI builds this rank's part of the planned operator.
func buildMPI(job mpiJob) (*dist.Operator, string, error) {
	_, d := job.x.Dims()
	kind, reason, err := planMPI(job.x.RawMatrix().Rows, d, job.s, job.tol, job.memory, job.operator)
	if err != nil {
		return nil, "", err
	}
	o := gram.GramOptions{}
	if job.products == "float32" {
		o.Products = gram.ProductsFloat32
	}
	op, err := dist.NewKernelOperatorWith(job.x, job.kernel, kind, job.center, o)
	return op, reason, err
}

// mpiSolution is a distributed solve on this rank: the eigenvalues (the
// same on every rank) and this rank's rows of the scores before their
// signs are fixed.
type mpiSolution struct {
	values             []float64
	scores             *mat.Dense
	passes, iterations int
	status             status.Status
}

// solveMPI runs the solver on the distributed operator: block Krylov
// (blocks of 8, or max(3s, 32) matrix-free, where a pass costs a Gram
// build whatever its width) or Lanczos, scores V·Λ^{1/2}; or the dual
// L-BFGS, then the Ritz pairs of span(H), scores G·H·R as kpca's.
func solveMPI(op *dist.Operator, solver string, s int, tol float64, seed uint64) (*mpiSolution, error) {
	var es eig.Solver
	switch solver {
	case "auto", "block":
		block := 8
		if op.Kind() == dist.MatrixFree {
			block = max(3*s, 32)
		}
		es = eig.BlockKrylov{Tol: tol, Seed: seed, Block: block}
	case "lanczos":
		es = eig.Lanczos{Tol: tol, Seed: seed}
	case "lbfgs":
		r, err := kpca.SolveDual(op, s, kpca.DualOptions{Tol: tol, Seed: seed})
		if r == nil {
			return nil, err
		}
		theta, rot, rerr := kpca.RitzFromDual(r.H, r.GH, op.Reduction())
		if rerr != nil {
			return nil, rerr
		}
		scores := mat.NewDense(op.Dim(), s, nil)
		scores.Mul(r.GH, rot)
		return &mpiSolution{values: theta, scores: scores, passes: r.Passes, iterations: r.Iterations, status: r.Status}, err
	}
	res, err := es.Solve(op, s)
	if err != nil {
		return nil, err
	}
	scores := mat.DenseCopyOf(res.Vectors)
	for j := 0; j < s; j++ {
		f := sqrtPos(res.Values[j])
		for i := 0; i < op.Dim(); i++ {
			scores.Set(i, j, scores.At(i, j)*f)
		}
	}
	return &mpiSolution{values: res.Values, scores: scores, passes: res.Passes, iterations: res.Iterations, status: res.Status}, nil
}

// rankStats are every rank's figures, in rank order: operator bytes,
// bytes handed to MPI per pass, peak memory, seconds in MPI calls per pass.
type rankStats struct{ opBytes, sent, rss, comm []float64 }

// rankFigures gathers every rank's figures.
func rankFigures(op *dist.Operator) (rankStats, error) {
	ranks, err := mpi.Size()
	if err != nil {
		return rankStats{}, err
	}
	st := op.Stats()
	passes := float64(max(st.Passes, 1))
	mine := []float64{float64(op.Bytes()), float64(st.BytesSent) / passes, float64(bigmem.PeakRSS()), st.CommSeconds / passes}
	if mpi.Rank() == 0 {
		fmt.Fprintf(diag, "kdual: rank 0: %d passes, %d reductions of %d values, %.3f s in MPI calls\n", st.Passes, st.Reductions, st.ReducedValues, st.CommSeconds)
	}
	const k = 4
	all := make([]float64, k*ranks)
	counts, displs := make([]int, ranks), make([]int, ranks)
	for r := range counts {
		counts[r], displs[r] = k, k*r
	}
	if err := mpi.Allgatherv(mine, all, counts, displs); err != nil {
		return rankStats{}, err
	}
	var rs rankStats
	for r := 0; r < ranks; r++ {
		rs.opBytes = append(rs.opBytes, all[k*r])
		rs.sent = append(rs.sent, all[k*r+1])
		rs.rss = append(rs.rss, all[k*r+2])
		rs.comm = append(rs.comm, all[k*r+3])
	}
	return rs, nil
}

// kpcaFitMPI fits kernel PCA across the ranks of mpirun: the operator
// planned on rank 0 (the float64 or the float32 triangle split by
// tile rows, or matrix-free), block Krylov, Lanczos or the dual L-BFGS with
// every vector split by rows, the scores gathered; rank 0 writes CSV or
// JSON (with ranks, each rank's operator memory and the bytes each rank
// sent per pass). An error on any rank ends the whole job (MPI_Abort) with
// its message.
func kpcaFitMPI(job mpiJob, stdout io.Writer) (err error) {
	if err := job.check(); err != nil {
		return err
	}
	// From here an error on any rank ends the whole job.
	end, err := startMPI("kpca", &err)
	defer end()
	if err != nil {
		return err
	}
	ranks, err := mpi.Size()
	if err != nil {
		return err
	}
	n, d := job.x.Dims()
	timeout := job.timeout
	if timeout == 0 {
		timeout = defaultMPITimeout(n, d, ranks)
	}
	mpi.SetTimeout(timeout)
	if err := agree(job.agreement("kpca fit"), job.x); err != nil {
		return err
	}
	start := time.Now()
	op, reason, err := buildMPI(job)
	if err != nil {
		return err
	}
	defer op.Free()
	kernelSeconds := time.Since(start).Seconds()
	t := time.Now()
	sol, solveErr := solveMPI(op, job.solver, job.s, job.tol, job.seed)
	if sol == nil {
		return solveErr
	}
	solveSeconds := time.Since(t).Seconds()
	// The scores, gathered on every rank, signs fixed as kpca's.
	s := job.s
	local := make([]float64, op.Dim()*s)
	for i := 0; i < op.Dim(); i++ {
		copy(local[i*s:(i+1)*s], sol.scores.RawRowView(i)[:s])
	}
	full := make([]float64, n*s)
	counts, displs := make([]int, ranks), make([]int, ranks)
	l := op.Layout()
	for r := 0; r < ranks; r++ {
		lo, hi := l.Rows(r)
		counts[r], displs[r] = (hi-lo)*s, lo*s
	}
	if err := mpi.Allgatherv(local, full, counts, displs); err != nil {
		return err
	}
	scores := mat.NewDense(n, s, full)
	for j, flip := range linalg.SignFlips(scores) {
		if flip {
			for i := 0; i < n; i++ {
				scores.Set(i, j, -scores.At(i, j))
			}
		}
	}
	rs, err := rankFigures(op)
	if err != nil {
		return err
	}
	if mpi.Rank() != 0 {
		return solveErr
	}
	fmt.Fprintf(diag, "kdual: %d ranks, operator %s (%s), %d passes\n", ranks, op.Kind(), reason, sol.passes)
	if job.json == "" {
		writeCSV(stdout, scores)
		return solveErr
	}
	if err := writeJSON(job.json, stdout, map[string]any{
		"eigenvalues": sol.values, "scores": rowsOf(scores), "sigma": job.kernel.Sigma, "n": n,
		"ranks": ranks, "operator": op.Kind().String(), "plan_reason": reason, "solver": job.solver,
		"rank_operator_bytes": rs.opBytes, "rank_bytes_sent_per_pass": rs.sent, "rank_mpi_seconds_per_pass": rs.comm,
		"rank_peak_rss_bytes": rs.rss, "passes": sol.passes, "iterations": sol.iterations,
		"kernel_seconds": kernelSeconds, "solve_seconds": solveSeconds,
		"fit_seconds": time.Since(start).Seconds(), "status": sol.status.Code, "stopping_test": sol.status.Test,
	}); err != nil {
		return err
	}
	return solveErr
}

func sqrtPos(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}

// benchKPCAMPI runs kdual bench kpca on a row-distributed operator: the
// same rows (lbfgs with the oracle η-stop; Lanczos and block Krylov at the
// loosest tolerance reaching η < δ), every rank taking part in every run,
// rank 0 timing and writing; the report gains ranks, each rank's operator
// memory, bytes sent per pass and peak memory.
func benchKPCAMPI(p *bench.KPCAProblem, mb mpiBench, stdout io.Writer) (err error) {
	end, err := startMPI("bench", &err)
	defer end()
	if err != nil {
		return err
	}
	ranks, err := mpi.Size()
	if err != nil {
		return err
	}
	var op *dist.Operator
	b, err := p.BuildOn(func(x *mat.Dense, k kernel.Kernel) (eig.Operator, string, string, bool, error) {
		job := mpiJob{x: x, kernel: k, s: p.S, tol: p.Tol, operator: p.Operator, products: p.Products, center: p.Center, memory: mb.memory}
		if job.operator == "" {
			job.operator = "auto"
		}
		o, reason, err := buildMPI(job)
		if err != nil {
			return nil, "", "", false, err
		}
		op = o
		return o, o.Kind().String(), reason, o.Kind() == dist.MatrixFree, nil
	})
	if err != nil {
		return err
	}
	defer op.Free()
	var rep bench.Report
	for _, solver := range mb.solvers {
		for _, d := range mb.deltas {
			var r bench.KPCAResult
			switch solver {
			case "lbfgs":
				r, err = bench.RunLBFGS(p, b, d, mb.repeat, "")
			case "lanczos":
				r, err = bench.RunEigen(bench.SearchLanczos, p, b, d, mb.repeat)
			case "block":
				r, err = bench.RunEigen(bench.SearchBlock, p, b, d, mb.repeat)
			default:
				err = fmt.Errorf("--solvers %q with --mpi: %w", solver, errors.Join(errUsage, status.ErrInvalid))
			}
			if err != nil {
				return err
			}
			r.Operator = p.Operator
			rep.Results = append(rep.Results, r)
		}
	}
	rs, err := rankFigures(op)
	if err != nil {
		return err
	}
	p.PeakRSSGB = bench.PeakRSSGB()
	if mpi.Rank() != 0 {
		return nil
	}
	rep.Problem = *p
	rep.Ranks, rep.RankOperatorBytes, rep.RankBytesSentPerPass, rep.RankPeakRSSBytes = ranks, rs.opBytes, rs.sent, rs.rss
	if mb.json == "" {
		fmt.Fprintf(stdout, "%d ranks; per rank: operator bytes %v, bytes sent per pass %v\n", ranks, rs.opBytes, rs.sent)
		printBenchKPCA(stdout, p, &rep)
		return nil
	}
	return writeJSON(mb.json, stdout, rep)
}
