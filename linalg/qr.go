package linalg

import (
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/lapack"
)

// QR returns the thin QR factorisation A = Q·R of the m×n matrix a, m ≥ n:
// Q is m×n with orthonormal columns and R is n×n upper triangular. a is not
// modified. A rank-deficient a still gives an orthonormal Q (R then has
// zeros on its diagonal).
//
// A row-major m×n matrix is the column-major n×m matrix Aᵀ, so the work is
// an LQ factorisation Aᵀ = L·Q̃ (LAPACK dgelqf, dorglq) on the data as it
// lies: Q = Q̃ᵀ and R = Lᵀ come out already row-major, with no transposed
// copies.
func QR(a *mat.Dense) (q, r *mat.Dense, err error) {
	m, n := a.Dims()
	if m < n || n == 0 {
		return nil, nil, invalidf("QR: need m ≥ n ≥ 1, have %d×%d", m, n)
	}
	if err := CheckFinite("QR: a", a); err != nil {
		return nil, nil, err
	}
	q = CopyOf(a)
	raw := q.RawMatrix()
	tau := make([]float64, n)
	var ws lapack.Workspace
	ws.Dgelqf(n, m, raw.Data, raw.Stride, tau)
	r = mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			r.Set(i, j, raw.Data[i*raw.Stride+j])
		}
	}
	ws.Dorglq(n, m, n, raw.Data, raw.Stride, tau)
	return q, r, nil
}

// Orthonormalizer replaces the columns of m×n blocks (m ≥ n) by an
// orthonormal basis of their span, in place, reusing its workspace. The zero
// value is ready to use; it must not be shared between goroutines.
type Orthonormalizer struct {
	tau []float64
	ws  lapack.Workspace
}

// InPlaceR is InPlace that also returns R: r (n×n row-major, length ≥ n²)
// receives the upper triangular factor with A = Q·R (zeros below).
func (o *Orthonormalizer) InPlaceR(a *mat.Dense, r []float64) error {
	m, n := a.Dims()
	if m < n || n == 0 {
		return invalidf("Orthonormalize: need m ≥ n ≥ 1, have %d×%d", m, n)
	}
	if len(r) < n*n {
		return invalidf("Orthonormalize: r has %d elements, need %d", len(r), n*n)
	}
	if cap(o.tau) < n {
		o.tau = make([]float64, n)
	}
	tau := o.tau[:n]
	raw := a.RawMatrix()
	o.ws.Dgelqf(n, m, raw.Data, raw.Stride, tau)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j < i {
				r[i*n+j] = 0
			} else {
				r[i*n+j] = raw.Data[i*raw.Stride+j]
			}
		}
	}
	o.ws.Dorglq(n, m, n, raw.Data, raw.Stride, tau)
	return nil
}

// InPlace overwrites a with the Q factor of its thin QR factorisation.
// It does not check for NaN (it is meant for inner loops); the columns of a
// rank-deficient a are still orthonormal afterwards.
func (o *Orthonormalizer) InPlace(a *mat.Dense) error {
	m, n := a.Dims()
	if m < n || n == 0 {
		return invalidf("Orthonormalize: need m ≥ n ≥ 1, have %d×%d", m, n)
	}
	if cap(o.tau) < n {
		o.tau = make([]float64, n)
	}
	tau := o.tau[:n]
	raw := a.RawMatrix()
	o.ws.Dgelqf(n, m, raw.Data, raw.Stride, tau)
	o.ws.Dorglq(n, m, n, raw.Data, raw.Stride, tau)
	return nil
}
