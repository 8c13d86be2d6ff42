package kpca

import (
	"context"
	"fmt"
	"math"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/status"
)

// LossKind is a Moreau-envelope objective for the DC algorithm.
type LossKind int

const (
	// Square is the variance objective of plain KPCA (Ψ* = 0, prox = id).
	Square LossKind = iota
	// Huber1 is H¹κ, the envelope of κ‖·‖₁: prox clips entries to [−κ, κ].
	Huber1
	// Huber2 is H²κ: prox scales each row yᵢ by min(1, κ/‖yᵢ‖₂).
	Huber2
	// HuberF is the Frobenius Huber loss: prox scales Y by min(1, κ/‖Y‖_F).
	HuberF
	// EpsInf is ℓ^∞_ε: Ψ* = ε‖H‖₁, prox soft-thresholds entries by ε.
	EpsInf
	// Eps2 is ℓ²_ε: Ψ* = ε Σᵢ‖hᵢ‖₂, prox shrinks rows by max(0, 1 − ε/‖yᵢ‖).
	Eps2
)

// Loss is a loss with its parameter: κ for the Huber losses, ε for the
// ε-insensitive ones, 0 for Square (which has none). Fit refuses a
// parameter on Square and Relative on a loss other than Huber's: either
// would be ignored.
type Loss struct {
	Kind  LossKind
	Param float64
	// Relative makes a Huber κ a fraction of κ_max (KappaMax of the
	// square-loss solution): the paper uses 0.6 for H¹κ and 0.8 for H²κ.
	Relative bool
}

func (l Loss) check() error {
	if l.Kind < Square || l.Kind > Eps2 {
		return fmt.Errorf("kpca: unknown loss %d: %w", l.Kind, status.ErrInvalid)
	}
	if l.Kind != Square && (!(l.Param >= 0) || math.IsInf(l.Param, 0)) {
		return fmt.Errorf("kpca: loss parameter %g must be finite and ≥ 0: %w", l.Param, status.ErrInvalid)
	}
	huber := l.Kind == Huber1 || l.Kind == Huber2 || l.Kind == HuberF
	if huber && l.Param == 0 {
		return fmt.Errorf("kpca: Huber κ must be positive: %w", status.ErrInvalid)
	}
	if l.Kind == Square && l.Param != 0 {
		return fmt.Errorf("kpca: loss parameter %g: the square loss has none: %w", l.Param, status.ErrInvalid)
	}
	if l.Relative && !huber {
		return fmt.Errorf("kpca: a relative loss parameter is a fraction of the Huber losses' κ_max; this loss is not Huber's: %w", status.ErrInvalid)
	}
	return nil
}

// prox overwrites y with prox_{Ψ*}(y) (Table 1 of the paper).
func (l Loss) prox(y *mat.Dense) {
	n, s := y.Dims()
	raw := y.RawMatrix()
	p := l.Param
	switch l.Kind {
	case Huber1:
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+s]
			for j, v := range row {
				row[j] = math.Max(-p, math.Min(p, v))
			}
		}
	case Huber2, Eps2:
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+s]
			nr := 0.0
			for _, v := range row {
				nr += v * v
			}
			nr = math.Sqrt(nr)
			c := 1.0
			if l.Kind == Huber2 {
				if nr > p {
					c = p / nr
				}
			} else {
				c = 0
				if nr > p {
					c = 1 - p/nr
				}
			}
			for j := range row {
				row[j] *= c
			}
		}
	case HuberF:
		if nf := linalg.Norm2(y); nf > p {
			y.Scale(p/nf, y)
		}
	case EpsInf:
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+s]
			for j, v := range row {
				row[j] = math.Copysign(math.Max(math.Abs(v)-p, 0), v)
			}
		}
	}
}

// conjugate returns Ψ*(H): 0 for the Huber losses on their feasible set
// (the prox keeps the iterates there), ε‖H‖₁ or ε Σᵢ‖hᵢ‖₂ for the
// ε-insensitive ones.
func (l Loss) conjugate(h *mat.Dense) float64 {
	n, s := h.Dims()
	switch l.Kind {
	case EpsInf:
		t := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < s; j++ {
				t += math.Abs(h.At(i, j))
			}
		}
		return l.Param * t
	case Eps2:
		t := 0.0
		for i := 0; i < n; i++ {
			t += linalg.Norm2(h.RowView(i))
		}
		return l.Param * t
	}
	return 0
}

// KappaMax returns, for the Huber losses, the κ beyond which the loss
// equals the square loss on the square-loss solution H = V_s Λ_s^{1/2}:
// the largest |entry| (Huber1), row norm (Huber2) or ‖H‖_F (HuberF).
func KappaMax(h *mat.Dense, kind LossKind) float64 {
	n, s := h.Dims()
	m := 0.0
	switch kind {
	case Huber1:
		for i := 0; i < n; i++ {
			for j := 0; j < s; j++ {
				m = math.Max(m, math.Abs(h.At(i, j)))
			}
		}
	case Huber2:
		for i := 0; i < n; i++ {
			m = math.Max(m, linalg.Norm2(h.RowView(i)))
		}
	case HuberF:
		m = linalg.Norm2(h)
	}
	return m
}

// fitDCA runs Algorithm 1: H ← prox_{Ψ*}(G·H·M^{-1/2}), one pass over G per
// iteration, from the square-loss solution (an eigensolve). It stops when
// the dual objective ½‖H‖² + Ψ*(H) − Tr√(HᵀGH) changes by less than
// Tol·|objective| (default 1e-9). orig is op before its wrappers
// (centredFloor's).
func (k *KPCA) fitDCA(ctx context.Context, op eig.Operator, o DCA, orig eig.Operator) error {
	if err := o.Loss.check(); err != nil {
		return err
	}
	s := k.Components
	n := op.Dim()
	startSolver := o.Start
	if startSolver == nil {
		startSolver = eig.Auto{}
	}
	res, err := startSolver.Solve(op, s)
	if err != nil {
		return fmt.Errorf("kpca: dca start: %w", err)
	}
	if err := rankCheck("kpca: the kernel matrix", res.Values, s, centredFloor(orig)); err != nil {
		return err
	}
	h := mat.NewDense(n, s, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < s; j++ {
			h.Set(i, j, res.Vectors.At(i, j)*math.Sqrt(res.Values[j]))
		}
	}
	loss := o.Loss
	if loss.Relative && (loss.Kind == Huber1 || loss.Kind == Huber2 || loss.Kind == HuberF) {
		loss.Param *= KappaMax(h, loss.Kind)
	}
	loss.prox(h) // start feasible
	tol := o.Tol
	if tol <= 0 {
		tol = 1e-9
	}
	maxIter := o.MaxIter
	if maxIter <= 0 {
		maxIter = 10000
	}
	gh := mat.NewDense(n, s, nil)
	prev := math.NaN()
	for it := 1; ; it++ {
		if err := op.Apply(gh, h); err != nil {
			return fmt.Errorf("kpca: dca iteration %d: %w", it, err)
		}
		var m mat.Dense
		linalg.Mul(&m, h.T(), gh)
		ms, err := sqrtFactors(&m)
		if err != nil {
			return fmt.Errorf("kpca: dca iteration %d: %w", it, err)
		}
		nh := linalg.Norm2(h)
		obj := 0.5*nh*nh + loss.conjugate(h) - ms.traceSqrt
		k.info.Iterations, k.info.Cost = it, obj
		if math.Abs(obj-prev) <= tol*math.Abs(obj) {
			k.info.Status = status.Status{Code: status.Converged, Test: testDCA}
			return k.setFromDual(op, h, gh)
		}
		if it >= maxIter {
			k.info.Status = status.Status{Code: status.IterationLimit, Test: testDCA}
			if err := k.setFromDual(op, h, gh); err != nil {
				return err
			}
			return fmt.Errorf("kpca: dca: %d iterations, objective still changing: %w", it, ErrNotConverged)
		}
		if ctx.Err() != nil {
			err := status.Cancelled(context.Cause(ctx), fmt.Sprintf("after dca iteration %d", it))
			k.info.Status, _ = status.StatusOf(err)
			if serr := k.setFromDual(op, h, gh); serr != nil {
				return serr
			}
			return fmt.Errorf("kpca: dca: %w", err)
		}
		prev = obj
		linalg.Mul(h, gh, ms.invSqrt)
		loss.prox(h)
	}
}

// testDCA names the DCA stopping test.
const testDCA = "objective: |F_k − F_{k−1}| ≤ Tol·|F_k|"
