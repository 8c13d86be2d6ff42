package lapack

import (
	"fmt"

	"github.com/kdual/kdual/status"
)

// Sentinel kinds of LAPACK failure (info > 0). An *Error unwraps to one.
var (
	// ErrNotConverged: an iterative part of the routine did not converge.
	ErrNotConverged = fmt.Errorf("lapack: %w", status.ErrNotConverged)
	// ErrNotPositiveDefinite: a Cholesky factorisation met a non-positive pivot.
	ErrNotPositiveDefinite = fmt.Errorf("lapack: matrix is not positive definite: %w", status.ErrBreakdown)
	// ErrSingular: an LU factor has an exactly zero diagonal entry.
	ErrSingular = fmt.Errorf("lapack: matrix is exactly singular: %w", status.ErrBreakdown)
)

// Error is a LAPACK failure reported through info > 0.
type Error struct {
	Routine string // e.g. "dsyevd"
	Info    int    // LAPACK's info, > 0
	Kind    error  // one of the sentinel errors
	Detail  string // what info means for this routine
}

func (e *Error) Error() string {
	return fmt.Sprintf("lapack: %s: info=%d: %s", e.Routine, e.Info, e.Detail)
}

// Unwrap returns the sentinel kind.
func (e *Error) Unwrap() error { return e.Kind }

// checkInfo turns info into nil, a panic (info < 0: an argument error that
// the Go checks should have caught) or an *Error.
func checkInfo(routine string, info int, kind error, detail func(int) string) error {
	switch {
	case info == 0:
		return nil
	case info < 0:
		panic(fmt.Sprintf("lapack: %s: argument %d had an illegal value", routine, -info))
	}
	return &Error{Routine: routine, Info: info, Kind: kind, Detail: detail(info)}
}

func panicf(format string, args ...any) {
	panic(fmt.Sprintf("lapack: "+format, args...))
}

func checkJob(routine string, c byte, allowed string) {
	for i := 0; i < len(allowed); i++ {
		if c == allowed[i] {
			return
		}
	}
	panicf("%s: bad option %q, want one of %q", routine, c, allowed)
}

func checkDim(routine, name string, v int) {
	if v < 0 {
		panicf("%s: %s = %d < 0", routine, name, v)
	}
}

// checkMatrix checks a column-major rows×cols matrix stored in a with
// leading dimension ld.
func checkMatrix(routine, name string, rows, cols int, a []float64, ld int) {
	if ld < max(1, rows) {
		panicf("%s: leading dimension of %s is %d < max(1, %d)", routine, name, ld, rows)
	}
	if rows > 0 && cols > 0 && len(a) < ld*(cols-1)+rows {
		panicf("%s: %s has %d elements, need %d", routine, name, len(a), ld*(cols-1)+rows)
	}
}

func checkLen(routine, name string, have, need int) {
	if have < need {
		panicf("%s: %s has %d elements, need %d", routine, name, have, need)
	}
}
