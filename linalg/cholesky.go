package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/lapack"
)

// Cholesky is the factorisation A = UᵀU of a symmetric positive definite
// matrix (LAPACK dpotrf), with solves (dpotrs). The zero value is empty;
// call Factorize first.
type Cholesky struct {
	n int
	// f holds U row-major in its upper triangle, which is L = Uᵀ
	// column-major in its lower triangle: LAPACK is called with uplo 'L'.
	f []float64
}

// Factorize computes the factor of a (upper triangle read; a unchanged).
// A matrix that is not positive definite gives an error wrapping
// lapack.ErrNotPositiveDefinite; NaN or Inf gives ErrInvalid.
func (c *Cholesky) Factorize(a *mat.SymDense) error {
	c.n = 0
	if a == nil || a.IsEmpty() {
		return invalidf("Cholesky: empty matrix")
	}
	if err := CheckFinite("Cholesky: a", a); err != nil {
		return err
	}
	n := a.SymmetricDim()
	raw := a.RawSymmetric()
	if cap(c.f) < n*n {
		c.f = make([]float64, n*n)
	}
	c.f = c.f[:n*n]
	for i := 0; i < n; i++ {
		copy(c.f[i*n+i:i*n+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
		clear(c.f[i*n : i*n+i])
	}
	if err := lapack.Dpotrf('L', n, c.f, n); err != nil {
		return fmt.Errorf("linalg: Cholesky: %w", err)
	}
	c.n = n
	return nil
}

// Size returns n, or 0 before a successful Factorize.
func (c *Cholesky) Size() int { return c.n }

// UTo copies the upper triangular factor U (A = UᵀU) into a new matrix.
func (c *Cholesky) UTo() *mat.TriDense {
	u := mat.NewTriDense(c.n, mat.Upper, nil)
	for i := 0; i < c.n; i++ {
		for j := i; j < c.n; j++ {
			u.SetTri(i, j, c.f[i*c.n+j])
		}
	}
	return u
}

// LogDet returns log det A = 2 Σ log U_ii.
func (c *Cholesky) LogDet() float64 {
	s := 0.0
	for i := 0; i < c.n; i++ {
		s += math.Log(c.f[i*c.n+i])
	}
	return 2 * s
}

// Solve returns X with A·X = B for the n×m matrix b (unchanged).
func (c *Cholesky) Solve(b *mat.Dense) (*mat.Dense, error) {
	if c.n == 0 {
		return nil, invalidf("Cholesky: Solve before Factorize")
	}
	r, m := b.Dims()
	if r != c.n {
		return nil, invalidf("Cholesky: Solve: b has %d rows, want %d", r, c.n)
	}
	if err := CheckFinite("Cholesky: b", b); err != nil {
		return nil, err
	}
	// dpotrs wants B column-major: transpose into a buffer and back (O(nm)
	// copies against O(n²m) flops).
	buf := make([]float64, c.n*m)
	for i := 0; i < c.n; i++ {
		for j := 0; j < m; j++ {
			buf[j*c.n+i] = b.At(i, j)
		}
	}
	lapack.Dpotrs('L', c.n, m, c.f, c.n, buf, c.n)
	x := mat.NewDense(c.n, m, nil)
	for i := 0; i < c.n; i++ {
		for j := 0; j < m; j++ {
			x.Set(i, j, buf[j*c.n+i])
		}
	}
	return x, nil
}

// SolveVec returns x with A·x = b.
func (c *Cholesky) SolveVec(b []float64) ([]float64, error) {
	if c.n == 0 {
		return nil, invalidf("Cholesky: SolveVec before Factorize")
	}
	if len(b) != c.n {
		return nil, invalidf("Cholesky: SolveVec: len(b) = %d, want %d", len(b), c.n)
	}
	if err := CheckFiniteSlice("Cholesky: b", b); err != nil {
		return nil, err
	}
	x := append([]float64(nil), b...)
	lapack.Dpotrs('L', c.n, 1, c.f, c.n, x, c.n)
	return x, nil
}

// ReduceCongruent sets a to L⁻¹·A·L⁻ᵀ in place for the lower triangular l
// (n×n row-major; its upper triangle is not read): the standard form of
// the generalised problem A·x = λ·L·Lᵀ·x, by LAPACK's dsygst (about n³
// flops, half of two triangular solves with n right-hand sides). a's upper
// triangle is read and set, so the result is symmetric by construction;
// its storage below the diagonal serves as scratch.
// A non-finite entry of a or of l's triangle, or a zero on l's diagonal,
// gives ErrInvalid.
func ReduceCongruent(a *mat.SymDense, l *mat.Dense) error {
	n := a.SymmetricDim()
	if r, c := l.Dims(); r != n || c != n {
		return invalidf("ReduceCongruent: L is %d×%d for a %d×%d matrix", r, c, n, n)
	}
	if err := CheckFinite("ReduceCongruent: a", a); err != nil {
		return err
	}
	lr := l.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range lr.Data[i*lr.Stride : i*lr.Stride+i+1] {
			if math.IsNaN(v) || math.IsInf(v, 0) || (j == i && v == 0) {
				return invalidf("ReduceCongruent: L[%d,%d] = %g", i, j, v)
			}
		}
	}
	if n == 0 {
		return nil
	}
	// Row-major a's upper triangle is column-major's lower: mirrored into
	// row-major's lower (column-major's upper), dsygst with uplo 'U' and
	// U = Lᵀ (l read column-major), then mirrored back.
	raw := a.RawSymmetric()
	mirror := func(toLower bool) {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if toLower {
					raw.Data[j*raw.Stride+i] = raw.Data[i*raw.Stride+j]
				} else {
					raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
				}
			}
		}
	}
	mirror(true)
	lapack.Dsygst(1, 'U', n, raw.Data, raw.Stride, lr.Data, lr.Stride)
	mirror(false)
	return nil
}
