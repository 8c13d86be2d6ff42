package eig

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Reduction combines the partial results of a computation over the row
// blocks of vectors split across processes. The Krylov solvers (Lanczos,
// BlockKrylov) take every n-long inner product and norm through it: they
// form Vᵀw, ‖w‖² and the like on the rows they hold and reduce the small
// result, and every s×s decision is then made from identical numbers on
// every part. Local, the default, holds all rows and does nothing.
type Reduction interface {
	// Sum replaces each x[i] by its sum over all parts.
	Sum(x []float64) error
	// MaxAbs replaces each x[i] by the value of largest magnitude among
	// the parts' x[i] (ties: the lowest part's), keeping its sign.
	MaxAbs(x []float64) error
}

// Local is the Reduction of an operator that holds every row.
type Local struct{}

// Sum does nothing.
func (Local) Sum([]float64) error { return nil }

// MaxAbs does nothing.
func (Local) MaxAbs([]float64) error { return nil }

// Distributed is implemented by operators whose vectors are split by rows
// across processes: Dim is the number of rows held here, and Apply maps
// this part's rows of x to this part's rows of A·x (gathering what it
// needs itself). The Krylov solvers run on such operators unchanged; the
// direct and randomized solvers refuse them (ErrInvalid).
type Distributed interface {
	Operator
	// GlobalDim is n, the rows over all parts.
	GlobalDim() int
	// RowOffset is the global index of this part's first row; the parts'
	// rows are consecutive and in order.
	RowOffset() int
	// Reduction combines results over the parts.
	Reduction() Reduction
}

// Parts returns the rows of op held here, n over all parts, the global
// index of the first row held here, and the Reduction that combines the
// parts: op's own for a Distributed operator, Local (all rows, offset 0)
// otherwise. Solvers outside eig (kpca's dual L-BFGS) use it to run on a
// distributed operator the way Lanczos and BlockKrylov do.
func Parts(op Operator) (local, global, offset int, red Reduction) { return layout(op) }

// layout returns op's local rows, global dimension, row offset and
// reduction.
func layout(op Operator) (local, global, offset int, red Reduction) {
	if d, ok := op.(Distributed); ok {
		return d.Dim(), d.GlobalDim(), d.RowOffset(), d.Reduction()
	}
	return op.Dim(), op.Dim(), 0, Local{}
}

// localOnly refuses a Distributed operator for a solver that needs every
// row in one place.
func localOnly(solver string, op Operator) error {
	if _, ok := op.(Distributed); ok {
		return fmt.Errorf("eig: %s needs the whole operator in one process; use Lanczos or BlockKrylov on a distributed one: %w", solver, status.ErrInvalid)
	}
	return nil
}

// orthoBlock orthonormalises the columns of x (this part's rows) and
// writes the b×b upper triangular R with x = Q·R into rr (row-major): by
// Cholesky QR twice (CholQR2: the Gram matrix xᵀx reduced by red,
// R₁ = chol, x·R₁⁻¹, then again; Yamamoto et al. 2015 — orthogonal to
// rounding when x is far from rank-deficient) when every column keeps at
// least cholQRKeep of its norm squared against the columns before it,
// which the first factor shows; otherwise (and when b = 1) by classical
// Gram–Schmidt applied twice per column (CGS2: twice is enough, Giraud et
// al.). A column with nothing left after projection keeps R's diagonal 0
// and is zero; a column with little left is still normalised, and
// repairBlock replaces both by the size of R's diagonal. Every part makes
// the same choice: it depends on reduced values only.
func orthoBlock(x *mat.Dense, rr []float64, red Reduction) error {
	if ok, err := cholQR2(x, rr, red); ok || err != nil {
		return err
	}
	return cgs2(x, rr, red)
}

// cholQRKeep is the least fraction of a column's norm squared left after
// the columns before it (R₁'s diagonal squared over the Gram diagonal)
// for which orthoBlock takes CholQR2: a scaled condition number up to
// about 10⁴, where one Cholesky QR leaves a loss of orthogonality of
// about κ²·u = 10⁻⁸ and the second pass removes it.
const cholQRKeep = 1e-8

// cholQR2 is orthoBlock's Cholesky QR, reporting false when the block is
// too close to rank-deficient for it (x then untouched, or, should the
// second factor break down, x·R₁⁻¹·R₁: x to rounding).
func cholQR2(x *mat.Dense, rr []float64, red Reduction) (bool, error) {
	_, b := x.Dims()
	if b < 2 {
		return false, nil
	}
	raw := x.RawMatrix()
	g := mat.NewSymDense(b, nil)
	// factor returns U with xᵀx = UᵀU (linalg.Cholesky: LAPACK dpotrf),
	// nil when xᵀx is not numerically positive definite (or not finite).
	factor := func() (*mat.TriDense, error) {
		gr := g.RawSymmetric()
		linalg.B64.Gemm(blas.Trans, blas.NoTrans, 1, raw, raw, 0, blas64.General{Rows: b, Cols: b, Stride: gr.Stride, Data: gr.Data})
		if err := red.Sum(gr.Data); err != nil {
			return nil, err
		}
		var c linalg.Cholesky
		if c.Factorize(g) != nil {
			return nil, nil
		}
		return c.UTo(), nil
	}
	r1, err := factor()
	if r1 == nil || err != nil {
		return false, err
	}
	for c := 0; c < b; c++ {
		if u := r1.At(c, c); !(u*u > cholQRKeep*g.At(c, c)) {
			return false, nil
		}
	}
	// x ← x·R⁻¹ in place by a product with the inverse (b×b): OpenBLAS's
	// dtrsm on the tall block itself took several times longer, and its
	// dtrmm woke its threads at every size (docs/measurements.md).
	scaleBy := func(r *mat.TriDense) {
		mulUpperRight(raw, linalg.TriInverse(r.RawTriangular()).RawMatrix())
	}
	scaleBy(r1)
	r2, err := factor()
	if err != nil {
		return false, err
	}
	if r2 == nil {
		// Not expected for a block that passed the test: x·R₁ (x
		// again, to rounding) goes to CGS2.
		linalg.B64.Trmm(blas.Right, blas.NoTrans, 1, r1.RawTriangular(), raw)
		return false, nil
	}
	scaleBy(r2)
	// R = R₂·R₁ (upper triangular), into rr.
	r1r := r1.RawTriangular()
	for i := 0; i < b; i++ {
		copy(rr[i*b:(i+1)*b], r1r.Data[i*r1r.Stride:i*r1r.Stride+b])
	}
	linalg.B64.Trmm(blas.Left, blas.NoTrans, 1, r2.RawTriangular(), blas64.General{Rows: b, Cols: b, Stride: b, Data: rr[:b*b]})
	return true, nil
}

// cgs2 is orthoBlock's column-by-column Gram–Schmidt.
func cgs2(x *mat.Dense, rr []float64, red Reduction) error {
	n, b := x.Dims()
	clear(rr[:b*b])
	raw := x.RawMatrix()
	col := func(c int) blas64.Vector { return blas64.Vector{N: n, Inc: raw.Stride, Data: raw.Data[c:]} }
	dots := make([]float64, max(b, 1))
	for c := 0; c < b; c++ {
		xc := col(c)
		prev := blas64.General{Rows: n, Cols: c, Stride: raw.Stride, Data: raw.Data}
		for pass := 0; pass < 2 && c > 0; pass++ {
			dv := blas64.Vector{N: c, Inc: 1, Data: dots}
			linalg.B64.Gemv(blas.Trans, 1, prev, xc, 0, dv) // the first c columns' ·xc
			if err := red.Sum(dots[:c]); err != nil {
				return err
			}
			linalg.B64.Gemv(blas.NoTrans, -1, prev, dv, 1, xc)
			for q := 0; q < c; q++ {
				rr[q*b+c] += dots[q]
			}
		}
		dots[0] = linalg.B64.Dot(xc, xc)
		if err := red.Sum(dots[:1]); err != nil {
			return err
		}
		nrm := math.Sqrt(dots[0])
		rr[c*b+c] = nrm
		if nrm > 0 {
			linalg.B64.Scal(1/nrm, xc)
		}
	}
	return nil
}

// fixSigns applies linalg.SignFlips' convention (the first entry within
// linalg.SignTies of the largest magnitude is made positive) to v, this
// part's rows offset… of a global n-row matrix.
func fixSigns(v *mat.Dense, offset, global int, red Reduction) error {
	flips, err := signFlips(v, offset, global, red)
	if err != nil {
		return err
	}
	flipColumns(v, flips)
	return nil
}

// SignFlips is linalg.SignFlips for this part's rows of a matrix whose
// rows are split as op's (eig.Parts): which columns to negate so that the
// first entry within linalg.SignTies of each column's largest magnitude,
// over all parts, is positive. Every part gets the same answer.
func SignFlips(v *mat.Dense, op Operator) ([]bool, error) {
	_, global, offset, red := layout(op)
	return signFlips(v, offset, global, red)
}

// signFlips: three reductions find the global largest magnitude, the
// first row near it and that entry's sign.
func signFlips(v *mat.Dense, offset, global int, red Reduction) ([]bool, error) {
	if _, local := red.(Local); local {
		return linalg.SignFlips(v), nil
	}
	r, c := v.Dims()
	big := make([]float64, c)
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			big[j] = math.Max(big[j], math.Abs(v.At(i, j)))
		}
	}
	if err := red.MaxAbs(big); err != nil {
		return nil, err
	}
	first := make([]float64, c) // global − index of the first row near the top
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			if math.Abs(v.At(i, j)) >= math.Abs(big[j])*(1-linalg.SignTies) {
				first[j] = float64(global - (offset + i))
				break
			}
		}
	}
	if err := red.MaxAbs(first); err != nil {
		return nil, err
	}
	sign := make([]float64, c)
	for j := 0; j < c; j++ {
		if i := global - int(first[j]) - offset; i >= 0 && i < r {
			sign[j] = math.Copysign(1, v.At(i, j))
		}
	}
	if err := red.Sum(sign); err != nil {
		return nil, err
	}
	flips := make([]bool, c)
	for j := range flips {
		flips[j] = sign[j] < 0
	}
	return flips, nil
}

// flipColumns negates the columns of v marked in flips.
func flipColumns(v *mat.Dense, flips []bool) {
	raw := v.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, f := range flips {
			if f {
				row[j] = -row[j]
			}
		}
	}
}

// globalNormal fills x (this part's rows of an n×b block) with the rows
// offset … offset+rows−1 of the n×b standard normal block that rng draws
// row by row, so every part sees the same global block.
func globalNormal(x *mat.Dense, offset, global int, rng interface{ NormFloat64() float64 }) {
	rows, b := x.Dims()
	for i := 0; i < global; i++ {
		for c := 0; c < b; c++ {
			v := rng.NormFloat64()
			if i >= offset && i < offset+rows {
				x.Set(i-offset, c, v)
			}
		}
	}
}

// mulUpperRightRows is the rows per OpenBLAS dgemm of mulUpperRight.
const mulUpperRightRows = 2048

// mulUpperRight sets x ← x·U in place for x n×b and U b×b upper
// triangular (its strict lower triangle zero), by OpenBLAS dgemm on
// blocks of mulUpperRightRows rows into a scratch block copied back:
// dgemm threads by its own size rule (m·n·k), where dtrmm on the tall
// block woke OpenBLAS's threads for every block of the small fits
// (docs/measurements.md).
func mulUpperRight(x blas64.General, u blas64.General) {
	n, b := x.Rows, x.Cols
	rows := min(n, mulUpperRightRows)
	tmp := blas64.General{Rows: rows, Cols: b, Stride: b, Data: make([]float64, rows*b)}
	for i0 := 0; i0 < n; i0 += rows {
		h := min(rows, n-i0)
		blk := blas64.General{Rows: h, Cols: b, Stride: x.Stride, Data: x.Data[i0*x.Stride:]}
		t := blas64.General{Rows: h, Cols: b, Stride: b, Data: tmp.Data[:h*b]}
		linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, 1, blk, u, 0, t)
		for i := 0; i < h; i++ {
			copy(blk.Data[i*x.Stride:i*x.Stride+b], t.Data[i*b:(i+1)*b])
		}
	}
}
