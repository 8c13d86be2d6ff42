package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/lapack"
)

// LUNormalizer replaces a tall n×l block Y by P·L of its LU factorisation
// Y = P·L·U (LAPACK dgetrf, partial pivoting): a cheap, well-conditioned
// basis of Y's column space for subspace iteration. It keeps its
// workspace between calls; not safe for concurrent use.
type LUNormalizer struct {
	buf  []float64
	ipiv []int
}

// PermutedLInPlace overwrites y with P·L. A zero pivot (an exactly
// singular block) still leaves a usable L.
func (lu *LUNormalizer) PermutedLInPlace(y *mat.Dense) {
	n, l := y.Dims()
	if cap(lu.buf) < n*l {
		lu.buf = make([]float64, n*l)
	}
	if cap(lu.ipiv) < l {
		lu.ipiv = make([]int, l)
	}
	buf, ipiv := lu.buf[:n*l], lu.ipiv[:min(n, l)]
	raw := y.RawMatrix()
	for i := 0; i < n; i++ {
		for c := 0; c < l; c++ {
			buf[c*n+i] = raw.Data[i*raw.Stride+c]
		}
	}
	_ = lapack.Dgetrf(n, l, buf, n, ipiv)
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+l]
		for c := range row {
			switch {
			case c < i:
				row[c] = buf[c*n+i]
			case c == i:
				row[c] = 1
			default:
				row[c] = 0
			}
		}
	}
	// Undo the interchanges: P·L applies them in reverse order.
	for i := len(ipiv) - 1; i >= 0; i-- {
		if p := ipiv[i]; p != i {
			a, b := raw.Data[i*raw.Stride:i*raw.Stride+l], raw.Data[p*raw.Stride:p*raw.Stride+l]
			for c := range a {
				a[c], b[c] = b[c], a[c]
			}
		}
	}
}

// Solve sets dst = a⁻¹·b for a square a (LU with partial pivoting, LAPACK
// dgetrf and dgetrs on OpenBLAS), like dst.Solve(a, b) of gonum: dst must
// be empty or n×k. An exactly singular a gives an error wrapping
// lapack.ErrSingular; one whose reciprocal condition number (dgecon, 1-norm)
// is below 1e-16 gives a mat.Condition error with dst still set, as gonum
// does; non-finite input is an error wrapping ErrInvalid.
func Solve(dst *mat.Dense, a, b mat.Matrix) error {
	n, c := a.Dims()
	br, k := b.Dims()
	if n != c || br != n {
		return invalidf("Solve: a is %d×%d and b %d×%d", n, c, br, k)
	}
	if err := CheckFinite("Solve: a", a); err != nil {
		return err
	}
	if err := CheckFinite("Solve: b", b); err != nil {
		return err
	}
	// Column-major copies for LAPACK.
	f := make([]float64, n*n)
	x := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			f[j*n+i] = a.At(i, j)
		}
		for j := 0; j < k; j++ {
			x[j*n+i] = b.At(i, j)
		}
	}
	if dst.IsEmpty() {
		dst.ReuseAs(n, k)
	}
	if r, cc := dst.Dims(); r != n || cc != k {
		return invalidf("Solve: dst is %d×%d, want %d×%d", r, cc, n, k)
	}
	if n == 0 {
		return nil
	}
	anorm := lapack.Dlange('1', n, n, f, n)
	ipiv := make([]int, n)
	if err := lapack.Dgetrf(n, n, f, n, ipiv); err != nil {
		return fmt.Errorf("linalg: Solve: %w", err)
	}
	rcond := lapack.Dgecon('1', n, f, n, anorm)
	if k > 0 {
		lapack.Dgetrs('N', n, k, f, n, ipiv, x, n)
	}
	raw := dst.RawMatrix()
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			raw.Data[i*raw.Stride+j] = x[j*n+i]
		}
	}
	if rcond < 1e-16 {
		return mat.Condition(1 / rcond)
	}
	return nil
}
