package eigtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
)

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// The checks scale with the spectrum: on every problem the exact pairs
// pass, and an eigenvalue off by a millionth of itself, or the first
// vector turned by 10⁻³, fails — at the scale 10⁻⁶ as at the scale 1 (an
// absolute tolerance would let them through there).
func TestChecksScaleWithTheSpectrum(t *testing.T) {
	for pi, pr := range Problems {
		if pr.DominatedByNegative {
			continue
		}
		a := WithSpectrum(uint64(len(pr.Lambda)+pi), pr.Lambda)
		n, k := len(pr.Lambda), pr.K
		var es mat.EigenSym
		if !es.Factorize(a, true) {
			t.Fatal("EigenSym failed")
		}
		vals := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		res := &eig.Result{Values: make([]float64, k), Vectors: mat.NewDense(n, k, nil), Residuals: make([]float64, k)}
		for j := 0; j < k; j++ {
			res.Values[j] = vals[n-1-j]
			col := mat.Col(nil, n-1-j, &vecs)
			best := 0.0
			for _, x := range col {
				if math.Abs(x) > math.Abs(best) {
					best = x
				}
			}
			for i, x := range col {
				res.Vectors.Set(i, j, math.Copysign(1, best)*x)
			}
			res.Residuals[j] = math.Abs(vals[n-1-j]) * 1e-12
		}
		want := append([]float64(nil), vals...)
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			want[i], want[j] = want[j], want[i]
		}
		anorm := maxAbs(pr.Lambda)
		r := &recorder{}
		checkPairs(r, a, res, want, anorm)
		if len(r.errs) > 0 {
			t.Fatalf("%s: the exact pairs fail: %v", pr.Name, r.errs)
		}
		bad := *res
		bad.Values = append([]float64(nil), res.Values...)
		bad.Values[0] *= 1 + 1e-6
		r = &recorder{}
		checkPairs(r, a, &bad, want, anorm)
		if len(r.errs) == 0 {
			t.Errorf("%s: λ₁ off by 10⁻⁶·λ₁ passes the checks", pr.Name)
		}
		if k == n {
			continue
		}
		// The first vector turned by 10⁻³ towards an eigenvector not
		// returned: still orthonormal, values exact, but its residual
		// 10⁻³·|λ₁ − λ_{k+1}| is far above the tolerance.
		bad = *res
		bad.Vectors = mat.DenseCopyOf(res.Vectors)
		c, s := math.Cos(1e-3), math.Sin(1e-3)
		outside := mat.Col(nil, n-1-k, &vecs)
		for i := 0; i < n; i++ {
			bad.Vectors.Set(i, 0, c*res.Vectors.At(i, 0)+s*outside[i])
		}
		r = &recorder{}
		checkPairs(r, a, &bad, want, anorm)
		if len(r.errs) == 0 {
			t.Errorf("%s: the first vector turned by 10⁻³ passes the checks", pr.Name)
		}
	}
}

// The copies check: on each problem with a repeated top eigenvalue, k
// values holding the guaranteed copies pass — a copy nearly as far off
// as the tolerance allows included —, one copy fewer fails, and a solver that
// guarantees fewer copies is held to its own count only.
func TestCheckCopies(t *testing.T) {
	tried := 0
	for _, pr := range Problems {
		if pr.Repeated <= 1 {
			continue
		}
		tried++
		n, k := len(pr.Lambda), pr.K
		anorm := maxAbs(pr.Lambda)
		top := anorm
		slack := Tol*anorm + 64*float64(n)*epsilon*anorm
		run := func(copies, have int, off float64) []string {
			values := make([]float64, k)
			for j := range values {
				values[j] = top / 2 // not a copy
				if j < have {
					values[j] = top
				}
			}
			if have > 0 {
				values[have-1] = top + off
			}
			r := &recorder{}
			checkCopies(r, values, top, pr.Repeated, copies, n, anorm)
			return r.errs
		}
		guaranteed := min(pr.Repeated, k)
		require.Empty(t, run(0, guaranteed, 0), pr.Name)
		require.Empty(t, run(0, guaranteed, 0.99*slack), "%s: a copy near the tolerance's edge", pr.Name)
		require.Empty(t, run(0, guaranteed, -0.99*slack), "%s: a copy near the tolerance's edge", pr.Name)
		require.NotEmpty(t, run(0, guaranteed, 2*slack), "%s: a copy off by twice the tolerance", pr.Name)
		require.NotEmpty(t, run(0, guaranteed-1, 0), "%s: one copy missing", pr.Name)
		require.Empty(t, run(2, 2, 0), "%s: a solver that guarantees two copies", pr.Name)
		require.NotEmpty(t, run(2, 1, 0), "%s: one copy where two are guaranteed", pr.Name)
	}
	require.Positive(t, tried)
	r := &recorder{}
	checkCopies(r, []float64{1, 0.5}, 1, 1, 0, 2, 1)
	require.Empty(t, r.errs, "a simple top eigenvalue has no copies to check")
}
