package testmat

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// RandOrthogonal is orthogonal, with no zero entry (a Gaussian draw's Q); WithSpectrum has the
// eigenvalues asked for (gonum's EigenSym), both triangles of its storage
// equal, and mixes the axes (its diagonal is not λ); the same seed gives
// the same matrix.
func TestOrthogonalAndSpectrum(t *testing.T) {
	const n = 7
	q := RandOrthogonal(rand.New(rand.NewPCG(3, 4)), n)
	var qtq mat.Dense
	qtq.Mul(q.T(), q)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(qtq.At(i, j)-want) > 1e-13 {
				t.Fatalf("QᵀQ[%d,%d] = %g", i, j, qtq.At(i, j))
			}
		}
		if math.Abs(q.At(i, i)) > 1-1e-6 {
			t.Fatalf("Q[%d,%d] = %g: an axis left in place", i, i, q.At(i, i))
		}
		for j := 0; j < n; j++ {
			if q.At(i, j) == 0 {
				t.Fatalf("Q[%d,%d] = 0: not the Q of a Gaussian draw (an entry of the draw left out?)", i, j)
			}
		}
	}
	lambda := []float64{9, -2, 4, 0.5, 1e-3, 4, 7}
	a := WithSpectrum(rand.New(rand.NewPCG(5, 6)), lambda)
	raw := a.RawSymmetric()
	diagMixed := false
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if raw.Data[i*n+j] != raw.Data[j*n+i] {
				t.Fatalf("storage (%d,%d) %g, (%d,%d) %g", i, j, raw.Data[i*n+j], j, i, raw.Data[j*n+i])
			}
		}
		if math.Abs(a.At(i, i)-lambda[i]) > 1e-3 {
			diagMixed = true
		}
	}
	if !diagMixed {
		t.Fatal("the diagonal is λ: no rotation")
	}
	var es mat.EigenSym
	if !es.Factorize(a, false) {
		t.Fatal("EigenSym failed")
	}
	got := es.Values(nil)
	want := append([]float64(nil), lambda...)
	sort.Float64s(want)
	sort.Float64s(got)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*9 {
			t.Fatalf("eigenvalue %d: %g, want %g", i, got[i], want[i])
		}
	}
	b := WithSpectrum(rand.New(rand.NewPCG(5, 6)), lambda)
	if !mat.Equal(a, b) {
		t.Fatal("the same seed gave another matrix")
	}
}
