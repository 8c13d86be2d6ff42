package eig

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// repairBlock handles an (almost) rank-deficient new block: a column whose
// R diagonal is negligible spans nothing new of the Krylov space (an
// invariant subspace was found). The threshold 10·n·ε·‖A‖ is the size of
// what two passes of Gram–Schmidt leave of a vector already in the span.
// Such a column is replaced by a random vector orthogonal to the basis and
// to the block's other columns, with zero coupling. When the block came
// from w (the expansion's block before orthoBlock; nil for the start
// block, which has no basis before it), the block is orthonormalised
// again from w, column by column by Gram–Schmidt twice against the basis
// and the block's columns before it: orthoBlock normalised what was left
// of the negligible column — rounding, not orthogonal to the basis — and
// the columns after it took their part along it, so that replacing that
// column alone would leave them leaning into the basis and W ≠ Q·R.
func (ks krylovSchur) repairBlock(v *mat.Dense, cur, b int, rr []float64, anorm float64, global, offset int, red Reduction, rng interface{ NormFloat64() float64 }, w *mat.Dense) error {
	thresh := 10 * float64(global) * epsilon * anorm
	bad := make([]bool, b)
	any := false
	for c := 0; c < b; c++ {
		if math.Abs(rr[c*b+c]) <= thresh {
			bad[c], any = true, true
		}
	}
	if !any {
		return nil
	}
	n, _ := v.Dims()
	col := mat.NewDense(n, 1, nil)
	cv := col.RawMatrix().Data
	vr := v.RawMatrix()
	dots := make([]float64, cur+b)
	// orth takes cv's part along the first k columns of v out, twice,
	// adding the coefficients of the block's columns (from cur on) to
	// column c of rr when c ≥ 0.
	orth := func(k, c int) error {
		for pass := 0; pass < 2 && k > 0; pass++ {
			basis := blas64.General{Rows: n, Cols: k, Stride: vr.Stride, Data: vr.Data}
			dv := blas64.Vector{N: k, Inc: 1, Data: dots}
			linalg.B64.Gemv(blas.Trans, 1, basis, blas64.Vector{N: n, Inc: 1, Data: cv}, 0, dv)
			if err := red.Sum(dots[:k]); err != nil {
				return err
			}
			linalg.B64.Gemv(blas.NoTrans, -1, basis, dv, 1, blas64.Vector{N: n, Inc: 1, Data: cv})
			for q := cur; c >= 0 && q < k; q++ {
				rr[(q-cur)*b+c] += dots[q]
			}
		}
		return nil
	}
	norm := func() (float64, error) {
		dots[0] = 0
		for _, x := range cv {
			dots[0] += x * x
		}
		if err := red.Sum(dots[:1]); err != nil {
			return 0, err
		}
		return math.Sqrt(dots[0]), nil
	}
	if w != nil {
		clear(rr[:b*b])
	}
	for c := 0; c < b; c++ {
		if w != nil {
			for i := 0; i < n; i++ {
				cv[i] = w.At(i, c)
			}
			if err := orth(cur+c, c); err != nil {
				return err
			}
			nrm, err := norm()
			if err != nil {
				return err
			}
			if bad[c] = nrm <= thresh; !bad[c] {
				rr[c*b+c] = nrm
				for i := 0; i < n; i++ {
					v.Set(i, cur+c, cv[i]/nrm)
				}
				continue
			}
		} else if !bad[c] {
			continue
		}
		// Zero coupling: rr's row c from the diagonal on.
		for cc := c; cc < b; cc++ {
			rr[c*b+cc] = 0
		}
		globalNormal(col, offset, global, rng)
		if w == nil {
			// The start block: orthogonal to its good columns, after as
			// well as before this one.
			if err := orthOthers(v, cur, b, c, bad, cv, red); err != nil {
				return err
			}
		} else if err := orth(cur+c, -1); err != nil {
			return err
		}
		nrm, err := norm()
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			v.Set(i, cur+c, cv[i]/nrm)
		}
		bad[c] = false
	}
	return nil
}

// orthOthers takes cv's part along the basis's first cur columns and the
// block's good columns other than c out, twice (repairBlock's start
// block).
func orthOthers(v *mat.Dense, cur, b, c int, bad []bool, cv []float64, red Reduction) error {
	n, _ := v.Dims()
	dot := make([]float64, 1)
	for pass := 0; pass < 2; pass++ {
		for q := 0; q < cur+b; q++ {
			if q == cur+c || (q >= cur && bad[q-cur]) {
				continue
			}
			dot[0] = 0
			for i := 0; i < n; i++ {
				dot[0] += v.At(i, q) * cv[i]
			}
			if err := red.Sum(dot); err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				cv[i] -= dot[0] * v.At(i, q)
			}
		}
	}
	return nil
}
