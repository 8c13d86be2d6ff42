package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// SymTridiag and TridiagQ, for every build and orders from 1 up, on
// matrices with a known spectrum (including a repeated eigenvalue and a
// zero column that leaves a reflector trivial): Q from TridiagQ on the
// identity is orthogonal and Q·T·Qᵀ reproduces A, each to a small multiple
// of n·ε (backward stability); T's trace and Frobenius norm are A's
// (invariants of an orthogonal similarity); the strict upper triangle is
// never touched; the reflectors leave the subdiagonal's sign as LAPACK's
// (β = −sign(α)·‖(α, x)‖).
func TestSymTridiag(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, b := range Builds() {
		for _, n := range []int{1, 2, 3, 4, 5, 8, 17, 64, 151} {
			for _, kind := range []string{"spread", "repeated", "zero column"} {
				lda := n + 3
				a := make([]float64, n*lda)
				want := symmetricWithSpectrum(r, n, kind, a, lda)
				for j := 0; j < n; j++ {
					for i := 0; i < j; i++ {
						a[i+j*lda] = math.NaN() // strict upper: never read or written
					}
					for i := n; i < lda; i++ {
						a[i+j*lda] = math.Inf(1) // padding: never touched
					}
				}
				orig := append([]float64(nil), a...)
				d, e, tau := make([]float64, n), make([]float64, n-1), make([]float64, n-1) // the lengths the doc comment asks, none at n = 1
				b.SymTridiag(n, a, lda, d, e, tau)
				for j := 0; j < n; j++ {
					for i := 0; i < lda; i++ {
						if i < j || i >= n {
							require.True(t, math.IsNaN(a[i+j*lda]) == math.IsNaN(orig[i+j*lda]) && (math.IsNaN(orig[i+j*lda]) || a[i+j*lda] == orig[i+j*lda]),
								"%s n %d: a[%d, %d] touched", b.Name(), n, i, j)
						}
					}
				}
				// Q = Q·I.
				q := make([]float64, n*n)
				for i := 0; i < n; i++ {
					q[i+i*n] = 1
				}
				b.TridiagQ(n, n, a, lda, tau, q, n)
				eps := 2.2e-16
				norm := 0.0
				for _, v := range want {
					norm = math.Max(norm, math.Abs(v))
				}
				tol := 20 * float64(n) * eps
				var trT, frT, trA, frA float64
				for i := 0; i < n; i++ {
					trT += d[i]
					frT += d[i] * d[i]
					if i+1 < n {
						frT += 2 * e[i] * e[i]
					}
					trA += orig[i+i*lda]
					for j := 0; j <= i; j++ {
						v := orig[i+j*lda]
						if i == j {
							frA += v * v
						} else {
							frA += 2 * v * v
						}
					}
				}
				require.InDelta(t, trA, trT, tol*math.Max(norm, 1)*float64(n), "%s n %d %s: trace", b.Name(), n, kind)
				require.InDelta(t, math.Sqrt(frA), math.Sqrt(frT), tol*math.Max(norm, 1)*math.Sqrt(float64(n)), "%s n %d %s: Frobenius norm", b.Name(), n, kind)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						// (QᵀQ)[i][j] and (Q·T·Qᵀ)[i][j]
						var g, rec float64
						for p := 0; p < n; p++ {
							g += q[p+i*n] * q[p+j*n]
							tq := d[p] * q[j+p*n]
							if p > 0 {
								tq += e[p-1] * q[j+(p-1)*n]
							}
							if p+1 < n {
								tq += e[p] * q[j+(p+1)*n]
							}
							rec += q[i+p*n] * tq
						}
						id := 0.0
						if i == j {
							id = 1
						}
						require.InDelta(t, id, g, tol, "%s n %d %s: QᵀQ[%d][%d]", b.Name(), n, kind, i, j)
						lo, hi := max(i, j), min(i, j)
						require.InDelta(t, orig[lo+hi*lda], rec, tol*math.Max(norm, 1), "%s n %d %s: (QTQᵀ)[%d][%d]", b.Name(), n, kind, i, j)
					}
				}
				// The first reflector's β has the opposite sign of the
				// entry it replaced (LAPACK's convention), when there was one.
				if n > 2 && tau[0] != 0 {
					require.True(t, e[0]*orig[1] <= 0, "%s n %d %s: β sign", b.Name(), n, kind)
				}
			}
		}
	}
}

// symmetricWithSpectrum fills the lower triangle of a (column-major, lda)
// with V·diag(λ)·Vᵀ for a random orthogonal V (Householder products) and
// returns λ: spread (1, 1/2, … ), one value repeated, or spread with the
// first column and row zeroed (a zero eigenvalue and a trivial reflector).
func symmetricWithSpectrum(r *rand.Rand, n int, kind string, a []float64, lda int) []float64 {
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = math.Pow(0.8, float64(i)) * 3
		if kind == "repeated" && i < n/2 {
			lam[i] = 3
		}
	}
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	for h := 0; h < 3; h++ {
		u := make([]float64, n)
		s := 0.0
		for i := range u {
			u[i] = r.NormFloat64()
			s += u[i] * u[i]
		}
		for c := 0; c < n; c++ {
			dot := 0.0
			for i := 0; i < n; i++ {
				dot += u[i] * v[i*n+c]
			}
			for i := 0; i < n; i++ {
				v[i*n+c] -= 2 * dot / s * u[i]
			}
		}
	}
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			s := 0.0
			for p := 0; p < n; p++ {
				s += v[i*n+p] * lam[p] * v[j*n+p]
			}
			if kind == "zero column" && j == 0 {
				s = 0
			}
			a[i+j*lda] = s
		}
	}
	if kind == "zero column" {
		return nil
	}
	return lam
}

// No vectors asked (k = 0): TridiagQ does nothing and needs no z.
func TestTridiagQNoVectors(t *testing.T) {
	const n = 5
	a := make([]float64, n*n)
	tau := make([]float64, n-1)
	for _, b := range testBuilds() {
		require.NotPanics(t, func() { b.TridiagQ(n, 0, a, n, tau, nil, n) }, b.Name())
	}
}
