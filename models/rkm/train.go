package rkm

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"github.com/kdual/kdual/stiefel"
)

// Training: the eigenvalue and Stiefel solutions of the primal and dual
// problems (the paper's Algorithms 1–4).

// traceObjective is f(A) = −½Tr(AᵀBA) with G = −BA for B given as a
// product.
type traceObjective struct {
	apply func(dst, a *mat.Dense)
}

func (o traceObjective) Eval(a, grad *mat.Dense) float64 {
	o.apply(grad, a)
	f := 0.0
	ad := a.RawMatrix().Data
	for i, v := range grad.RawMatrix().Data {
		f += v * ad[i]
	}
	grad.Scale(-1, grad)
	return -0.5 * f
}

// rankRatio is the relative size below which an eigenvalue counts as zero
// when the top-s eigenvalues are checked (rank below s).
const rankRatio = 1e-12

// stiefelTrain maximises Tr(AᵀBA) over St(dim, s) and returns A and
// Γ' = AᵀBA, rotated to diagonal when Rotate is set.
func (m *Model) stiefelTrain(dim int, apply func(dst, a *mat.Dense)) (*mat.Dense, *mat.SymDense, error) {
	s := m.s
	settings := m.Stiefel
	if m.ctx != nil && m.ctx.Done() != nil {
		settings.Context = m.ctx
	}
	res, err := stiefel.Minimize(traceObjective{apply}, dim, s, nil, settings)
	if res == nil {
		return nil, nil, err
	}
	m.info.Iterations, m.info.GradNorm, m.info.Status = res.Iterations, res.GradNorm, res.Status
	if err != nil && !errors.Is(err, stiefel.ErrNotConverged) && !errors.Is(err, status.ErrStopped) {
		return nil, nil, err
	}
	// An unconverged or stopped run still gives a feasible A: the model is
	// kept and Fit reports the error.
	m.partial = err
	a := res.A
	ba := mat.NewDense(dim, s, nil)
	apply(ba, a)
	var at mat.Dense
	linalg.Mul(&at, a.T(), ba)
	g := linalg.SymPart(&at)
	if m.Rotate {
		e, err := linalg.SymEig(g, 0)
		if err != nil {
			return nil, nil, err
		}
		var ao mat.Dense
		linalg.Mul(&ao, a, e.Vectors)
		a = linalg.CopyOf(&ao)
		linalg.FixSigns(a)
		g = diag(e.Values)
	}
	return a, g, nil
}

func diag(v []float64) *mat.SymDense {
	g := mat.NewSymDense(len(v), nil)
	for i, x := range v {
		g.SetSym(i, i, x)
	}
	return g
}

// topEigen returns the s largest eigenpairs of a through the model's
// eig.Solver (eig.Auto when nil), recording its status in Info.
func (m *Model) topEigen(a *mat.SymDense, s int) ([]float64, *mat.Dense, error) {
	var op eig.Operator
	op, err := eig.NewDense(a)
	if err != nil {
		return nil, nil, err
	}
	if m.ctx != nil && m.ctx.Done() != nil {
		op = eig.WithContext(m.ctx, op)
	}
	solver := m.Solver
	if solver == nil {
		solver = eig.Auto{}
	}
	res, err := solver.Solve(op, s)
	if res != nil {
		m.info.Status = res.Status
	} else if st, ok := status.StatusOf(err); ok {
		m.info.Status = st
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rkm: %w", err)
	}
	return res.Values, res.Vectors, nil
}

func (m *Model) fitPrimal() error {
	phi := m.features()
	s := m.s
	var ut *mat.Dense // Ũ
	var gamma *mat.SymDense
	if m.Training == Eig {
		c := mat.NewSymDense(m.df, nil)
		linalg.SymOuterK(c, 1, phi.T())
		values, vectors, err := m.topEigen(c, s)
		if err != nil {
			return err
		}
		if !(values[s-1] > rankRatio*values[0]) {
			return &status.RankError{Matrix: "rkm: the feature covariance", Rank: status.NumericalRank(values, rankRatio), Asked: s}
		}
		ut, gamma = vectors, diag(values)
	} else {
		// B·A = Φᵀ(ΦA), or C·A when C (df×df) is the cheaper product.
		var apply func(dst, a *mat.Dense)
		if m.df <= m.n {
			c := mat.NewSymDense(m.df, nil)
			linalg.SymOuterK(c, 1, phi.T())
			apply = func(dst, a *mat.Dense) { linalg.Mul(dst, c, a) }
		} else {
			tmp := mat.NewDense(m.n, s, nil)
			apply = func(dst, a *mat.Dense) {
				linalg.Mul(tmp, phi, a)
				linalg.Mul(dst, phi.T(), tmp)
			}
		}
		var err error
		if ut, gamma, err = m.stiefelTrain(m.df, apply); err != nil {
			return err
		}
	}
	m.gamma = gamma
	// U = Ũ Γ^{1/2} (symmetric square root), unless the ablation.
	m.u = linalg.CopyOf(ut)
	if !m.NoRescale {
		root, err := symPow(gamma, 0.5)
		if err != nil {
			return err
		}
		linalg.Mul(m.u, ut, root)
	}
	// H = Φ U Γ^{-1} (Eq. 6).
	inv, err := symPow(gamma, -1)
	if err != nil {
		return err
	}
	var pu mat.Dense
	linalg.Mul(&pu, phi, m.u)
	m.h = mat.NewDense(m.n, s, nil)
	linalg.Mul(m.h, &pu, inv)
	return nil
}

func (m *Model) fitDual() error {
	s := m.s
	k := mat.NewSymDense(m.n, nil)
	for i := range m.views {
		k.AddSym(k, m.views[i].viewKernel())
	}
	if m.Training == Eig {
		values, vectors, err := m.topEigen(k, s)
		if err != nil {
			return err
		}
		if !(values[s-1] > rankRatio*values[0]) {
			return &status.RankError{Matrix: "rkm: the kernel matrix", Rank: status.NumericalRank(values, rankRatio), Asked: s}
		}
		m.h, m.gamma = vectors, diag(values)
	} else {
		var err error
		m.h, m.gamma, err = m.stiefelTrain(m.n, func(dst, a *mat.Dense) { linalg.Mul(dst, k, a) })
		if err != nil {
			return err
		}
	}
	return nil
}

// symPow returns Γ^p for a symmetric positive definite Γ.
func symPow(g *mat.SymDense, p float64) (*mat.Dense, error) {
	e, err := linalg.SymEig(g, 0)
	if err != nil {
		return nil, err
	}
	s := len(e.Values)
	if !(e.Values[s-1] > 0) {
		return nil, invalidf("Γ is not positive definite (eigenvalue %g)", e.Values[s-1])
	}
	return e.Func(func(x float64) float64 { return math.Pow(x, p) }), nil
}
