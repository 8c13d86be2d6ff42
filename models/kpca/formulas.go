package kpca

import (
	"fmt"
	"math"

	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
)

// The dual problem's formulas, in one place (the dual-KPCA paper's
// Problem 2; DualCost is d(H) itself).

// OptimalCost returns d_opt = −½ Σ_{i≤s} λ_i, the minimum of the dual cost
// over n×s matrices for the top s eigenvalues values (all must be
// non-negative: d is defined on positive semi-definite G).
func OptimalCost(values []float64) (float64, error) {
	d := 0.0
	for i, l := range values {
		if !(l >= 0) || math.IsInf(l, 0) {
			return 0, fmt.Errorf("kpca: OptimalCost: λ_%d = %g is not a finite non-negative eigenvalue: %w", i, l, status.ErrInvalid)
		}
		d -= 0.5 * l
	}
	return d, nil
}

// Eta is the relative cost error η = |d − d_opt| / |d_opt| that the
// benchmark's accuracy targets δ are stated in.
func Eta(cost, dopt float64) float64 { return math.Abs(cost-dopt) / math.Abs(dopt) }

// DualFromEigen returns H = V·diag(λ)^{1/2} (n×s), the dual variable whose
// cost is d_opt when V and λ are the top s eigenpairs; negative λ (from an
// indefinite or inexact solve) count as 0.
func DualFromEigen(values []float64, vectors *mat.Dense) (*mat.Dense, error) {
	n, s := vectors.Dims()
	if len(values) != s {
		return nil, fmt.Errorf("kpca: DualFromEigen: %d values for %d vectors: %w", len(values), s, status.ErrInvalid)
	}
	h := mat.NewDense(n, s, nil)
	for j, l := range values {
		r := math.Sqrt(math.Max(l, 0))
		for i := 0; i < n; i++ {
			h.Set(i, j, vectors.At(i, j)*r)
		}
	}
	return h, nil
}
