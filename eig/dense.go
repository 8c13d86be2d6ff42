package eig

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// DenseSolver computes eigenpairs with LAPACK on the full matrix
// (linalg.SymEig: dsyevd for all pairs, dsyevr for a subset; up to order
// linalg.SmallSym its own tridiagonal reduction first). An operator
// that implements Matrixer (with a non-nil matrix) is used directly (0
// passes); any other is first
// turned into a matrix by one Apply of the n×n identity (1 pass, n
// matvecs). Memory: two n×n float64 matrices. The zero value is ready.
type DenseSolver struct{}

// Solve returns the k largest eigenpairs.
func (ds DenseSolver) Solve(op Operator, k int) (*Result, error) {
	return timed(time.Now())(ds.solve(op, k))
}

func (DenseSolver) solve(op Operator, k int) (*Result, error) {
	if err := localOnly("the dense solver", op); err != nil {
		return nil, err
	}
	n, err := checkK(op, k)
	if err != nil {
		return nil, err
	}
	res := &Result{Stats: status.Stats{Iterations: 1}}
	var a *mat.SymDense
	if m, ok := op.(Matrixer); ok {
		a = m.SymMatrix()
	}
	if a == nil {
		a, err = materialize(op, res)
		if err != nil {
			return nil, err
		}
	}
	// ‖A‖₂ ≤ ‖A‖_∞ (the largest absolute row sum), taken before LAPACK
	// overwrites A: the top k eigenvalues alone miss a large negative one.
	anorm := 0.0
	raw := a.RawSymmetric()
	for i := 0; i < n; i++ {
		row := 0.0
		for j := 0; j < n; j++ {
			if j >= i {
				row += math.Abs(raw.Data[i*raw.Stride+j])
			} else {
				row += math.Abs(raw.Data[j*raw.Stride+i])
			}
		}
		anorm = math.Max(anorm, row)
	}
	e, err := linalg.SymEig(a, k)
	if err != nil {
		return nil, fmt.Errorf("eig: dense: %w", err)
	}
	res.Values, res.Vectors = e.Values, e.Vectors
	res.Status = status.Status{Code: status.Converged, Test: testDirect}
	res.NumConverged = k
	// LAPACK's backward error: ‖Av − λv‖ ≲ n·ε·‖A‖ for every pair, with
	// ‖A‖ bounded by ‖A‖_∞.
	res.Residuals = make([]float64, k)
	for i := range res.Residuals {
		res.Residuals[i] = float64(n) * epsilon * anorm
	}
	return res, nil
}

// materialize builds the matrix of op by one Apply of the identity.
func materialize(op Operator, res *Result) (*mat.SymDense, error) {
	n := op.Dim()
	id := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		id.Set(i, i, 1)
	}
	y := mat.NewDense(n, n, nil)
	res.Passes++
	res.MatVecs += n
	if err := op.Apply(y, id); err != nil {
		return nil, err
	}
	if err := checkBlockFinite(y); err != nil {
		return nil, err
	}
	return linalg.SymPart(y), nil
}

// epsilon is the float64 unit roundoff 2⁻⁵³.
const epsilon = 1.1102230246251565e-16
