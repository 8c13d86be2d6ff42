// Package status is kdual's one model of how a computation ended: a typed
// Status (which stopping test passed, or why none did), the work it took
// (Stats), and the sentinel errors every package wraps. It imports only the
// standard library, so every layer can use it.
//
// A result is called converged only when a stopping test, named in the
// Status and written in the solver's doc comment, passed. A run with a
// fixed number of steps and no test says FixedSchedule and reports its
// measured accuracy instead (residuals, gradient norms). Status.Err is nil
// for Converged and FixedSchedule and wraps one of the sentinel errors
// otherwise, so a caller can write
//
//	res, err := solver.Solve(op, k) // err == res.Status.Err() on a finished run
//	if errors.Is(err, status.ErrNotConverged) { … use the partial res … }
package status

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors from kdual wrap exactly one of them.
var (
	// ErrInvalid: bad input (shapes, NaN or Inf, out-of-range options).
	ErrInvalid = errors.New("invalid input")
	// ErrNotConverged: the iteration limit came before the stopping test.
	ErrNotConverged = errors.New("not converged")
	// ErrBreakdown: the computation cannot continue (a matrix lost rank, a
	// line search found no descent, a factorisation failed).
	ErrBreakdown = errors.New("breakdown")
	// ErrStopped: the caller stopped the run (a callback or a context).
	ErrStopped = errors.New("stopped by the caller")
	// ErrNotFitted: a model was used before a fit.
	ErrNotFitted = errors.New("model not fitted")
)

// Code says how a run ended.
type Code int

const (
	// NotRun is the zero value: nothing was computed.
	NotRun Code = iota
	// Converged: the stopping test named in Status.Test passed.
	Converged
	// FixedSchedule: the method ran a fixed number of steps and has no
	// stopping test; its accuracy is what it reports (for example
	// measured residuals).
	FixedSchedule
	// IterationLimit: the iteration or pass limit came first.
	IterationLimit
	// Stopped: the caller stopped the run.
	Stopped
	// Breakdown: the method could not continue.
	Breakdown
)

var names = [...]string{
	NotRun:         "not_run",
	Converged:      "converged",
	FixedSchedule:  "fixed_schedule",
	IterationLimit: "iteration_limit",
	Stopped:        "stopped",
	Breakdown:      "breakdown",
}

// String is the code's name as it appears in JSON ("converged",
// "fixed_schedule", "iteration_limit", "stopped", "breakdown", "not_run").
func (c Code) String() string {
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// MarshalText writes the name.
func (c Code) MarshalText() ([]byte, error) {
	if c < 0 || int(c) >= len(names) {
		return nil, fmt.Errorf("status: unknown code %d: %w", int(c), ErrInvalid)
	}
	return []byte(names[c]), nil
}

// UnmarshalText reads a name written by MarshalText.
func (c *Code) UnmarshalText(b []byte) error {
	for i, n := range names {
		if n == string(b) {
			*c = Code(i)
			return nil
		}
	}
	return fmt.Errorf("status: unknown status %q: %w", b, ErrInvalid)
}

// Status is how a run ended and, for Converged and IterationLimit, the
// stopping test (Test, e.g. "‖Av − θv‖ ≤ tol·‖A‖"). Detail says more for
// Breakdown and Stopped.
type Status struct {
	Code   Code   `json:"code"`
	Test   string `json:"test,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Converged reports whether the stopping test passed.
func (s Status) Converged() bool { return s.Code == Converged }

// Err is nil for Converged and FixedSchedule; otherwise it wraps the
// matching sentinel (IterationLimit and NotRun: ErrNotConverged).
func (s Status) Err() error {
	switch s.Code {
	case Converged, FixedSchedule:
		return nil
	case Stopped:
		return &Error{Status: s, Kind: ErrStopped}
	case Breakdown:
		return &Error{Status: s, Kind: ErrBreakdown}
	}
	return &Error{Status: s, Kind: ErrNotConverged}
}

func (s Status) String() string {
	out := s.Code.String()
	if s.Test != "" {
		out += " (" + s.Test + ")"
	}
	if s.Detail != "" {
		out += ": " + s.Detail
	}
	return out
}

// Error is the error of a Status that is not a success.
type Error struct {
	Status Status
	Kind   error
	// Cause, when not nil, is what ended the run besides the sentinel (a
	// context's error for a cancelled run).
	Cause error
	// Partial, when not nil, is the run's partial result, of the solver
	// package's result type (eig: *eig.Result, read with eig.Partial):
	// what a run that stopped before its test passed had reached.
	Partial any
}

func (e *Error) Error() string { return e.Status.String() }

// Unwrap returns the sentinel and the cause, so errors.Is finds both
// (status.ErrStopped and context.Canceled for a cancelled run).
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// Cancelled is the error of a run stopped because its context ended
// (cause is ctx.Err(), or context.Cause(ctx)): Status Stopped, wrapping
// ErrStopped and cause. where says what was stopped ("Gram panel 3 of 12",
// "pass 41").
func Cancelled(cause error, where string) error {
	detail := "the context ended"
	if cause != nil {
		detail = cause.Error()
	}
	if where != "" {
		detail += " (" + where + ")"
	}
	return &Error{Status: Status{Code: Stopped, Detail: detail}, Kind: ErrStopped, Cause: cause}
}

// StatusOf returns the Status of err when it is (or wraps) an *Error, and
// whether it is.
func StatusOf(err error) (Status, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, true
	}
	return Status{}, false
}

// Stats is the work a run took. Passes counts reads of the operator
// (Operator.Apply calls), MatVecs the vectors they processed, Evaluations
// function (or gradient) evaluations; Seconds is wall time.
type Stats struct {
	Iterations  int     `json:"iterations"`
	Passes      int     `json:"passes"`
	MatVecs     int     `json:"matvecs"`
	Evaluations int     `json:"evaluations"`
	Seconds     float64 `json:"seconds"`
}

// RankError says that more components were asked for than a matrix has:
// its numerical rank (the eigenvalues above a relative threshold of the
// largest, see NumericalRank) is below the number asked. Every model
// returns it in this case, and the fix is the same everywhere: ask for at
// most Rank components. It wraps ErrInvalid.
type RankError struct {
	// Matrix names the matrix ("kpca: the centred kernel matrix").
	Matrix      string
	Rank, Asked int
}

func (e *RankError) Error() string {
	if e.Rank < 1 {
		return fmt.Sprintf("%s has numerical rank 0 (no eigenvalue above its rounding level): no component can be fitted", e.Matrix)
	}
	return fmt.Sprintf("%s has numerical rank %d, below the %d components asked for; ask for at most %d", e.Matrix, e.Rank, e.Asked, e.Rank)
}

// Unwrap returns ErrInvalid.
func (e *RankError) Unwrap() error { return ErrInvalid }

// NumericalRank counts the values above rel·max|v| (NaN counts as zero).
func NumericalRank(values []float64, rel float64) int {
	top := 0.0
	for _, v := range values {
		if v > top || -v > top {
			top = max(v, -v)
		}
	}
	r := 0
	for _, v := range values {
		if v > rel*top {
			r++
		}
	}
	return r
}
