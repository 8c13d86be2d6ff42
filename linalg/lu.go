package linalg

import (
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
