package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
)

// FitOperator fits kernel PCA to a kernel operator built elsewhere — by
// eig.NewKernelOperator, or row-distributed by package dist — centred or
// not as it was built, with the same solvers, scores, status and Info as
// Fit. auto is the solver the planner paired with the operator
// (eig.Plan.Solver), used when Solver is nil or eig.Auto; nil leaves
// eig.Auto's rule. On an eig.Distributed operator every part calls it
// together with the same configuration, as for eig's solvers: the
// eigenvalues, status and Info are the same on every part, and Scores and
// Dual hold this part's rows (the lanczos, block and lbfgs solvers; dense,
// randomized and dca need one process). The model keeps no training
// points, so Transform, TransformGram and Save are not available.
func (k *KPCA) FitOperator(ctx context.Context, op eig.Operator, auto eig.Solver) error {
	k.fitted = false
	k.info = Info{}
	k.approx, k.inverse, k.proj, k.x = nil, nil, nil, nil
	if op == nil {
		return fmt.Errorf("kpca: FitOperator: nil operator: %w", status.ErrInvalid)
	}
	if err := k.checkIndefinite(); err != nil {
		return err
	}
	return k.fitOperator(ctx, op, auto)
}

// errDistributed refuses what a model fitted on a distributed operator
// cannot do: it holds only this part's rows.
var errDistributed = fmt.Errorf("kpca: fitted on a distributed operator, the model holds this part's rows only: %w", status.ErrInvalid)

// opName names op's storage for messages.
func opName(op eig.Operator) string {
	if isDistributed(op) {
		return "distributed operator"
	}
	return "operator"
}

// isDistributed reports whether op's rows are split over processes.
func isDistributed(op eig.Operator) bool {
	_, ok := op.(eig.Distributed)
	return ok
}

// fitOperator fits the (centred, when wanted) kernel operator op; auto,
// when non-nil, is the solver the planner paired with the operator.
func (k *KPCA) fitOperator(ctx context.Context, op eig.Operator, auto eig.Solver) error {
	local, n, _, _ := eig.Parts(op)
	s := k.Components
	if s < 1 || s >= n {
		return fmt.Errorf("kpca: Components = %d, need 1 ≤ s < n = %d: %w", s, n, status.ErrInvalid)
	}
	distributed := isDistributed(op)
	k.distributed = distributed
	if _, dca := k.solverOf().(DCA); dca && distributed {
		return fmt.Errorf("kpca: the dca solver needs one process, not a distributed operator: %w", status.ErrInvalid)
	}
	k.center = linalg.Centering{}
	k.fitKernel, k.fitCenter, k.fitAlpha = k.Kernel, !k.NoCenter, k.Alpha
	watched := &watchOp{Operator: op, progress: k.Progress}
	if ctx.Done() != nil {
		watched.Operator = eig.WithContext(ctx, op)
	}
	counter := &eig.Counting{Op: eig.WithParts(watched, op)}
	k.n = local
	solver := k.solverOf()
	k.info = Info{Solver: solver.Name()}
	k.values = nil
	start := time.Now()
	var err error
	switch sv := solver.(type) {
	case LBFGS:
		err = k.fitLBFGS(ctx, eig.WithParts(counter, op), sv, op)
	case DCA:
		err = k.fitDCA(ctx, counter, sv, op)
	case Eigen:
		es := sv.Solver
		if a, ok := es.(eig.Auto); ok || es == nil {
			// The planner's pairing: blocks of max(3s, 32) for the
			// matrix-free operator, eig.Auto's rule for stored matrices.
			var why string
			if !distributed {
				es, why = a.Resolve(op, s)
			}
			if b, ok := auto.(eig.BlockKrylov); ok {
				b.Tol, b.Seed = a.Tol, a.Seed
				es, why = b, fmt.Sprintf("the planner's pairing: block Krylov in blocks of %d", b.Block)
			}
			if es == nil {
				es, why = eig.BlockKrylov{Tol: a.Tol, Seed: a.Seed}, "block Krylov on a distributed operator"
			}
			k.info.Solver, k.info.SolverReason = eigName(es), "auto: "+why
		}
		if b, ok := es.(eig.BlockKrylov); ok && b.Block == 0 {
			if p, ok := auto.(eig.BlockKrylov); ok && p.Block > 0 {
				// The block width of the planner's pairing (wide blocks
				// matrix-free, where a pass costs a kernel build whatever
				// its width).
				b.Block = p.Block
				es = b
				k.info.SolverReason = fmt.Sprintf("blocks of %d, the planner's pairing for the %s", p.Block, opName(op))
			}
		}
		err = k.fitEig(eig.WithParts(counter, op), es, op)
	default:
		return fmt.Errorf("kpca: solver %T: want Eigen, LBFGS or DCA: %w", solver, status.ErrInvalid)
	}
	if c, ok := op.(*eig.Centered); ok && k.values != nil {
		// Known after the solve: a deferred centring (matrix-free
		// operator) took the row means from the first pass.
		var cerr error
		if k.center, cerr = c.Centering(); cerr != nil {
			k.values = nil
			err = fmt.Errorf("kpca: %w", cerr)
		}
	}
	k.info.SolveSeconds = time.Since(start).Seconds()
	k.info.Passes = counter.Passes
	if st, ok := status.StatusOf(err); ok && st.Code == status.Stopped {
		k.info.Status = st
	}
	// A solver that stopped early (iteration limit, the caller's Stop)
	// leaves a usable partial model: it is kept, and the error says why it
	// is partial (ErrNotConverged, ErrStopped); Info().Status says more.
	k.fitted = k.values != nil && (err == nil || errors.Is(err, ErrNotConverged) || errors.Is(err, status.ErrStopped))
	if err != nil {
		return err
	}
	return nil
}

// fitEig solves with an eigensolver: H = V Λ^{1/2}, proj = V Λ^{-1/2}.
// orig is the operator before its wrappers (centredFloor's).
func (k *KPCA) fitEig(op eig.Operator, solver eig.Solver, orig eig.Operator) error {
	s := k.Components
	res, err := solver.Solve(op, s)
	if err != nil && (res == nil || !errors.Is(err, ErrNotConverged)) {
		return fmt.Errorf("kpca: %w", err)
	}
	if err := rankCheck("kpca: the kernel matrix", res.Values, s, centredFloor(orig)); err != nil {
		return err
	}
	k.info.Iterations = res.Iterations
	if name := eigName(solver); res.Direct() && name != "dense" {
		_, n, _, _ := eig.Parts(orig) // n over every rank of a distributed operator
		k.info.Solver = "dense"
		k.info.SolverReason = fmt.Sprintf("%s handed the problem to LAPACK: n = %d is too small for its basis", name, n)
	}
	k.setFromEigen(res.Values, res.Vectors)
	k.info.Cost, _ = OptimalCost(res.Values) // λ_s > 0 was checked above
	k.info.Status = res.Status
	if err != nil {
		return fmt.Errorf("kpca: %w", err)
	}
	return nil
}

// watchOp reports every pass to a Progress callback and passes an explicit
// matrix on (for the dense solver).
type watchOp struct {
	eig.Operator
	progress func(Progress)
	passes   int64
}

func (w *watchOp) Apply(dst, x *mat.Dense) error {
	err := w.Operator.Apply(dst, x)
	w.passes++
	if w.progress != nil && err == nil {
		w.progress(Progress{Stage: "solve", Done: w.passes})
	}
	return err
}

func (w *watchOp) SymMatrix() *mat.SymDense {
	if m, ok := w.Operator.(eig.Matrixer); ok {
		return m.SymMatrix()
	}
	return nil
}

// noFloat32 reports whether the kernel's values on the rows of x may leave
// float32's range in float32 storage (gram.Store32Range: the linear and
// polynomial kernels, from the rows' largest squared norm; the others are
// bounded by 1).
func noFloat32(x *mat.Dense, k kernel.Kernel) bool {
	if k.Kind != kernel.Linear && k.Kind != kernel.Polynomial {
		return false
	}
	n, d := x.Dims()
	top := 0.0
	for i := 0; i < n; i++ {
		v := 0.0
		for _, e := range x.RawRowView(i)[:d] {
			v += e * e
		}
		top = math.Max(top, v)
	}
	return gram.Store32Range(k.ElementMap(d), top) != nil
}

// rankCheck returns a status.RankError naming matrix when the s-th of the
// top eigenvalues values is not above breakdownRatio times the larger of
// |λ₁| and floor, the scale of the matrix's rounding noise (centredFloor,
// meanFloor): a centred matrix that is zero but for rounding (identical
// points) then has no components, however its noise compares with itself.
func rankCheck(matrix string, values []float64, s int, floor float64) error {
	top := floor
	for _, v := range values {
		top = math.Max(top, math.Abs(v))
	}
	if values[s-1] > breakdownRatio*top {
		return nil
	}
	rank := 0
	for _, v := range values {
		if v > breakdownRatio*top {
			rank++
		}
	}
	if values[0] < -breakdownRatio*top {
		// A kernel matrix is positive semi-definite: say why this one
		// has nothing to fit.
		matrix += fmt.Sprintf(", whose largest eigenvalue is %.3g (not positive semi-definite),", values[0])
	}
	return &status.RankError{Matrix: matrix, Rank: rank, Asked: s}
}

// centredFloor is rankCheck's noise scale for a centred kernel operator
// (eig.Centered; 0 for others): n·max_i |r_i| for K's row means r. Every
// entry K_ij − r_i − r_j + r̄ of M·K·M carries an error of a few
// ε·max|r_i| or more, and an n×n matrix of such errors has eigenvalues up
// to about n times that.
func centredFloor(op eig.Operator) float64 {
	// *eig.Centered, and a distributed operator that centres (every part
	// holds the global row means).
	c, ok := op.(interface {
		Centering() (linalg.Centering, error)
	})
	if !ok {
		return 0
	}
	ce, err := c.Centering()
	if err != nil {
		return 0
	}
	r := 0.0
	for _, v := range ce.RowMeans {
		r = math.Max(r, math.Abs(v))
	}
	return float64(len(ce.RowMeans)) * r
}

// meanFloor is rankCheck's noise scale for F_cᵀF_c = FᵀF − n·μμᵀ (or
// F_cF_cᵀ) formed from n feature rows with means μ: n·‖μ‖², the part the
// centring cancels, whose rounding is of the order of ε times it.
func meanFloor(n int, mean []float64) float64 {
	t := 0.0
	for _, v := range mean {
		t += v * v
	}
	return float64(n) * t
}
