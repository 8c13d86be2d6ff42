// Package testmat builds test matrices with known spectra for kdual's
// tests, independently of the code under test (gonum's pure-Go QR).
package testmat

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RandOrthogonal returns a seeded random n×n orthogonal matrix: the Q factor
// of a standard-normal matrix.
func RandOrthogonal(rng *rand.Rand, n int) *mat.Dense {
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// WithSpectrum returns Q·diag(λ)·Qᵀ for a random orthogonal Q drawn from
// rng, exactly symmetric, with both triangles of its storage filled.
func WithSpectrum(rng *rand.Rand, lambda []float64) *mat.SymDense {
	n := len(lambda)
	q := RandOrthogonal(rng, n)
	var ql, a mat.Dense
	ql.Apply(func(i, j int, v float64) float64 { return v * lambda[j] }, q)
	a.Mul(&ql, q.T())
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.5 * (a.At(i, j) + a.At(j, i))
			data[i*n+j], data[j*n+i] = v, v
		}
	}
	return mat.NewSymDense(n, data)
}
