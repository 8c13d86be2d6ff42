//go:build mpi

package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/mpi"
)

// startMPI initialises MPI and returns the function to defer: on an error
// it prints it with the rank and ends the job (MPI_Abort), else finalises.
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

// localRanks is the number of ranks on this host (Open MPI says), ≥ 1.
func localRanks() int {
	n, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
	return max(n, 1)
}

// kpcaFitMPI fits kernel PCA across the ranks of mpirun (kpca.FitMPI,
// after dist.Agree on the flags and data); rank 0 writes CSV or JSON. An
// error on any rank ends the whole job (MPI_Abort) with its message.
func kpcaFitMPI(job mpiJob, stdout io.Writer) (err error) {
	if err := job.check(); err != nil {
		return err
	}
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
	mpi.SetTimeout(job.timeout)
	if job.timeout == 0 {
		mpi.SetTimeout(dist.DefaultTimeout(n, d, ranks))
	}
	if err := dist.AgreeOnData(job.x, job.agreement("kpca fit")...); err != nil {
		return err
	}
	kind, _ := eig.ParseOperatorKind(job.operator) // checked by job.check
	o := kpca.MPI{Operator: kind, Budget: job.memory, LocalRanks: localRanks()}
	if job.products == "float32" {
		o.Products = gram.ProductsFloat32
	}
	m := &kpca.KPCA{Components: job.s, Kernel: job.kernel, Solver: job.solverValue, NoCenter: !job.center}
	start := time.Now()
	fit, fitErr := m.FitMPI(runCtx, job.x, o)
	if fit == nil || mpi.Rank() != 0 {
		return fitErr
	}
	info := m.Info()
	vals, _ := m.Eigenvalues()
	fmt.Fprintf(diag, "kdual: rank 0: %d passes, %d reductions of %d values, %.3f s in MPI calls\n", fit.Stats.Passes, fit.Stats.Reductions, fit.Stats.ReducedValues, fit.Stats.CommSeconds)
	fmt.Fprintf(diag, "kdual: %d ranks, operator %s (%s), %d passes\n", ranks, fit.Operator, fit.PlanReason, info.Passes)
	if job.json == "" {
		writeCSV(stdout, fit.Scores)
		return fitErr
	}
	f := fit.Figures
	if err := writeJSON(job.json, stdout, map[string]any{
		"eigenvalues": vals, "scores": rowsOf(fit.Scores), "sigma": job.kernel.Sigma, "n": n,
		"ranks": ranks, "operator": fit.Operator.String(), "plan_reason": fit.PlanReason, "solver": info.Solver, "solver_reason": info.SolverReason,
		"rank_operator_bytes": f.OperatorBytes, "rank_bytes_sent_per_pass": f.SentPerPass, "rank_mpi_seconds_per_pass": f.SecondsPerPass,
		"rank_peak_rss_bytes": f.PeakRSS, "passes": info.Passes, "iterations": info.Iterations,
		"kernel_seconds": fit.KernelSeconds, "solve_seconds": fit.SolveSeconds,
		"fit_seconds": time.Since(start).Seconds(), "status": info.Status.Code, "stopping_test": info.Status.Test,
	}); err != nil {
		return err
	}
	return fitErr
}

// benchKPCAMPI runs kdual bench kpca on a row-distributed operator
// (bench.RunKPCAMPI); rank 0 writes the report.
func benchKPCAMPI(p *bench.KPCAProblem, mb mpiBench, stdout io.Writer) (err error) {
	end, err := startMPI("bench", &err)
	defer end()
	if err != nil {
		return err
	}
	budget := mb.memory
	if budget <= 0 {
		budget = eig.DefaultBudget() / int64(localRanks())
	}
	rep, err := bench.RunKPCAMPI(p, mb.solvers, mb.deltas, mb.repeat, budget)
	if err != nil || mpi.Rank() != 0 {
		return err
	}
	if mb.json == "" {
		fmt.Fprintf(stdout, "%d ranks; per rank: operator bytes %v, bytes sent per pass %v\n", rep.Ranks, rep.RankOperatorBytes, rep.RankBytesSentPerPass)
		printBenchKPCA(stdout, p, rep)
		return nil
	}
	return writeJSON(mb.json, stdout, rep)
}
