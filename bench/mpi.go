//go:build mpi

package bench

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// RunKPCAMPI runs the kpca benchmark on a row-distributed operator (MPI
// initialised, every rank calling it with the same problem): the operator
// planned on rank 0 (kpca.PlanMPI; budget bytes per rank), the same rows
// as RunLBFGS and RunEigen give on one process (lbfgs with the oracle
// η-stop; Lanczos and block Krylov at the loosest tolerance reaching
// η < δ), every rank taking part in every run. The report, complete on
// rank 0, gains the ranks, each rank's operator memory, bytes sent per
// pass and peak memory.
func RunKPCAMPI(p *KPCAProblem, solvers []string, deltas []float64, repeat int, budget int64) (*Report, error) {
	ranks, err := mpi.Size()
	if err != nil {
		return nil, err
	}
	var op *dist.Operator
	b, err := p.BuildOn(func(x *mat.Dense, k kernel.Kernel) (eig.Operator, string, string, bool, error) {
		want := eig.OperatorAuto
		if p.Operator != "" {
			if want, err = eig.ParseOperatorKind(p.Operator); err != nil {
				return nil, "", "", false, err
			}
		}
		n, d := x.Dims()
		plan, err := kpca.PlanMPI(eig.PlanInput{N: n, D: d, K: p.S, Tol: p.Tol, Budget: budget, Ranks: ranks, Want: want})
		if err != nil {
			return nil, "", "", false, err
		}
		o := gram.GramOptions{}
		if p.Products == "float32" {
			o.Products = gram.ProductsFloat32
		}
		if op, err = dist.NewKernelOperatorWith(x, k, plan.Operator, p.Center, o); err != nil {
			return nil, "", "", false, err
		}
		return op, plan.Operator.String(), plan.Reason, plan.Operator == eig.OperatorMatrixFree, nil
	})
	if err != nil {
		return nil, err
	}
	defer op.Free()
	var rep Report
	for _, solver := range solvers {
		for _, d := range deltas {
			var r KPCAResult
			switch solver {
			case "lbfgs":
				r, err = RunLBFGS(p, b, d, repeat, "")
			case "lanczos":
				r, err = RunEigen(SearchLanczos, p, b, d, repeat)
			case "block":
				r, err = RunEigen(SearchBlock, p, b, d, repeat)
			default:
				err = fmt.Errorf("bench: solver %q on a distributed operator: want lbfgs, lanczos or block: %w", solver, status.ErrInvalid)
			}
			if err != nil {
				return nil, err
			}
			r.Operator = p.Operator
			rep.Results = append(rep.Results, r)
		}
	}
	figs, err := op.Figures()
	if err != nil {
		return nil, err
	}
	p.PeakRSSGB = PeakRSSGB()
	rep.Problem = *p
	rep.Ranks, rep.RankOperatorBytes, rep.RankBytesSentPerPass, rep.RankPeakRSSBytes = ranks, figs.OperatorBytes, figs.SentPerPass, figs.PeakRSS
	return &rep, nil
}
