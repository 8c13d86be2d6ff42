package eig

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Error kinds: the status package's sentinels.
var (
	// ErrInvalid: bad input (k out of range, NaN).
	ErrInvalid = status.ErrInvalid
	// ErrNotConverged: the iteration limit was reached first.
	ErrNotConverged = status.ErrNotConverged
	// ErrBreakdown: a computation cannot continue because a matrix lost
	// rank (used by the models on top of eig, e.g. a singular HᵀGH).
	ErrBreakdown = status.ErrBreakdown
)

// NotConvergedError carries the partial result of a solver that stopped at
// its iteration limit; it wraps ErrNotConverged.
type NotConvergedError struct {
	Solver string
	Result *Result
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("eig: %s: %d of %d eigenpairs converged after %d iterations",
		e.Solver, e.Result.NumConverged, len(e.Result.Values), e.Result.Iterations)
}

// Unwrap returns ErrNotConverged.
func (e *NotConvergedError) Unwrap() error { return ErrNotConverged }

// Result is what every solver returns.
type Result struct {
	// Values are the k largest eigenvalues, decreasing.
	Values []float64
	// Vectors is n×k, orthonormal columns, signs fixed.
	Vectors *mat.Dense
	// Iterations: restarts (Krylov solvers), power steps (Randomized), 1
	// (Dense).
	Iterations int
	// Passes is the number of Operator.Apply calls; MatVecs the number of
	// columns they processed.
	Passes, MatVecs int
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

// Solver computes the k largest eigenpairs of op.
type Solver interface {
	Solve(op Operator, k int) (*Result, error)
}

// checkK validates k against the operator.
func checkK(op Operator, k int) (int, error) {
	if op == nil {
		return 0, fmt.Errorf("eig: nil operator: %w", ErrInvalid)
	}
	_, n, _, _ := layout(op)
	if n < 1 || op.Dim() < 0 {
		return 0, fmt.Errorf("eig: operator of dimension %d: %w", n, ErrInvalid)
	}
	if k < 1 || k > n {
		return 0, fmt.Errorf("eig: k = %d outside 1…n = %d: %w", k, n, ErrInvalid)
	}
	return n, nil
}

// checkBlockFinite returns ErrInvalid when an operator produced NaN or Inf
// (a NaN in the matrix shows up this way for matrix-free operators).
func checkBlockFinite(y *mat.Dense) error {
	if err := linalg.CheckFinite("eig: A·x", y); err != nil {
		return fmt.Errorf("eig: the operator returned non-finite values (NaN or Inf in A?): %w", ErrInvalid)
	}
	return nil
}
