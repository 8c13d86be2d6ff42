package eig

import (
	"errors"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Error kinds: the status package's sentinels.
var (
	// ErrNotConverged: the iteration limit was reached first.
	ErrNotConverged = status.ErrNotConverged
	// ErrBreakdown: a computation cannot continue because a matrix lost
	// rank (used by the models on top of eig, e.g. a singular HᵀGH).
	ErrBreakdown = status.ErrBreakdown
)

// notConverged is the error of a run that ended before its stopping test
// passed: a *status.Error with res's Status (its Detail saying how many
// pairs converged), wrapping ErrNotConverged, whose Partial is res (read
// it with Partial).
func notConverged(solver string, res *Result) error {
	st := res.Status
	st.Detail = fmt.Sprintf("eig: %s: %d of %d eigenpairs converged after %d iterations (%s)",
		solver, res.NumConverged, len(res.Values), res.Iterations, st.Detail)
	return &status.Error{Status: st, Kind: ErrNotConverged, Partial: res}
}

// timed returns a function that sets a solver's result's Seconds to the
// time since start and passes the result and error on.
func timed(start time.Time) func(*Result, error) (*Result, error) {
	return func(res *Result, err error) (*Result, error) {
		if res != nil {
			res.Seconds = time.Since(start).Seconds()
		}
		return res, err
	}
}

// Partial returns the partial result a solver's error carries (the
// *Result of a run that ended before its stopping test passed, also
// returned beside the error), and whether err carries one.
func Partial(err error) (*Result, bool) {
	var e *status.Error
	if !errors.As(err, &e) {
		return nil, false
	}
	r, ok := e.Partial.(*Result)
	return r, ok && r != nil
}

// Result is what every solver returns.
type Result struct {
	// Values are the k largest eigenvalues, decreasing.
	Values []float64
	// Vectors is n×k, orthonormal columns, signs fixed.
	Vectors *mat.Dense
	// Stats is the work: Iterations are restarts (Krylov solvers), power
	// steps (Randomized) or 1 (Dense); Passes the Operator.Apply calls and
	// MatVecs the columns they processed; Seconds the wall time.
	status.Stats
	// Status says how the run ended: Converged when every pair met the
	// stopping test named in it (each solver's doc comment states it),
	// FixedSchedule for a randomized run without a test, IterationLimit
	// otherwise. NumConverged counts the leading pairs that met the test.
	Status       status.Status
	NumConverged int
	// Residuals[i] estimates ‖A v_i − λ_i v_i‖₂ (exact for Dense up to
	// rounding; from the Krylov or Rayleigh–Ritz relation otherwise).
	Residuals []float64
}

// Direct reports whether LAPACK's dense solver computed r: DenseSolver,
// or an iterative solver that handed it a problem too small for its
// basis (its basis and next block would span every dimension).
func (r *Result) Direct() bool { return r != nil && r.Status.Test == testDirect }

// Solver computes the k largest eigenpairs of op.
type Solver interface {
	Solve(op Operator, k int) (*Result, error)
}

// checkK validates k against the operator.
func checkK(op Operator, k int) (int, error) {
	if op == nil {
		return 0, fmt.Errorf("eig: nil operator: %w", status.ErrInvalid)
	}
	_, n, _, _ := layout(op)
	if n < 1 || op.Dim() < 0 {
		return 0, fmt.Errorf("eig: operator of dimension %d: %w", n, status.ErrInvalid)
	}
	if k < 1 || k > n {
		return 0, fmt.Errorf("eig: k = %d outside 1…n = %d: %w", k, n, status.ErrInvalid)
	}
	return n, nil
}

// checkBlockFinite returns ErrInvalid when an operator produced NaN or Inf
// (a NaN in the matrix shows up this way for matrix-free operators).
func checkBlockFinite(y *mat.Dense) error {
	if err := linalg.CheckFinite("eig: A·x", y); err != nil {
		return fmt.Errorf("eig: the operator returned non-finite values (NaN or Inf in A?): %w", status.ErrInvalid)
	}
	return nil
}
