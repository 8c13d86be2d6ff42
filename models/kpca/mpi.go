//go:build mpi

package kpca

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// MPI configures FitMPI: how the ranks hold the kernel's rows.
type MPI struct {
	// Operator forces the operator kind; eig.OperatorAuto plans it on rank
	// 0 (eig.PlanOperator with the number of ranks) and broadcasts it.
	Operator eig.OperatorKind
	// Products are the inner products' precision (float32: the float32
	// and matrix-free operators only).
	Products gram.ProductPrecision
	// Budget is the memory per rank in bytes; 0 means eig.DefaultBudget()
	// divided by LocalRanks (the ranks on rank 0's host, ≥ 1).
	Budget     int64
	LocalRanks int
}

// MPIFit is what FitMPI returns on every rank.
type MPIFit struct {
	Ranks      int
	Operator   eig.OperatorKind
	PlanReason string // rank 0's; empty on the others
	// Scores are the n×s training scores of all ranks, gathered, signs
	// fixed by linalg.SignFlips.
	Scores                      *mat.Dense
	KernelSeconds, SolveSeconds float64
	Figures                     dist.RankFigures
	Stats                       dist.Stats // this rank's communication
}

// FitMPI fits k across the ranks of an MPI job (mpi.Init called; every
// rank calls it with the same x and configuration — check with dist.Agree
// first): the operator planned on rank 0 and broadcast, every rank
// building its rows of it (dist.NewKernelOperatorWith), then FitOperator
// on it with the planner's pairing, and the scores gathered. The model
// keeps this rank's rows (see FitOperator). An error that FitOperator
// returns beside a partial fit (not converged, stopped) comes with the
// result.
func (k *KPCA) FitMPI(ctx context.Context, x *mat.Dense, o MPI) (*MPIFit, error) {
	ranks, err := mpi.Size()
	if err != nil {
		return nil, err
	}
	n, d := x.Dims()
	in := eig.PlanInput{N: n, D: d, K: k.Components, Tol: planTol(k.solverOf()), Budget: o.Budget,
		Ranks: ranks, Want: o.Operator, Dense: k.solverOf().Name() == "dense", NoFloat32: noFloat32(x, k.Kernel)}
	if in.Budget <= 0 {
		in.Budget = eig.DefaultBudget() / int64(max(o.LocalRanks, 1))
	}
	plan, err := PlanMPI(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	op, err := dist.NewKernelOperatorWith(x, k.Kernel, plan.Operator, !k.NoCenter, gram.GramOptions{Products: o.Products, Context: ctx})
	if err != nil {
		return nil, err
	}
	defer op.Free()
	fit := &MPIFit{Ranks: ranks, Operator: plan.Operator, PlanReason: plan.Reason, KernelSeconds: time.Since(start).Seconds()}
	t := time.Now()
	fitErr := k.FitOperator(ctx, op, plan.Solver)
	if !k.fitted {
		return nil, fitErr
	}
	fit.SolveSeconds = time.Since(t).Seconds()
	if fit.Scores, err = op.GatherRows(k.scores); err != nil {
		return nil, err
	}
	linalg.FixSigns(fit.Scores)
	if fit.Figures, err = op.Figures(); err != nil {
		return nil, err
	}
	fit.Stats = op.Stats()
	k.info.Operator, k.info.PlanReason, k.info.KernelSeconds = plan.Operator.String(), plan.Reason, fit.KernelSeconds
	return fit, fitErr
}

// PlanMPI plans on rank 0 and broadcasts the operator kind; every rank
// then derives the same plan with that kind forced (the pairing depends
// on the kind and k only), rank 0 keeping its reason.
func PlanMPI(in eig.PlanInput) (eig.Plan, error) {
	var plan eig.Plan
	var planErr error
	if mpi.Rank() == 0 {
		plan, planErr = eig.PlanOperator(in)
	}
	msg := []float64{float64(plan.Operator), 0}
	if planErr != nil {
		msg[1] = 1
	}
	if err := mpi.Bcast(msg, 0); err != nil {
		return eig.Plan{}, err
	}
	if msg[1] != 0 {
		if planErr == nil {
			planErr = fmt.Errorf("kpca: the plan failed on rank 0: %w", status.ErrInvalid)
		}
		return eig.Plan{}, planErr
	}
	if mpi.Rank() == 0 {
		return plan, nil
	}
	in.Want = eig.OperatorKind(msg[0])
	return eig.PlanOperator(in)
}
