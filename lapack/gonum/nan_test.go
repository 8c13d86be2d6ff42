package gonum

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	gblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	glapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/netlib/blas/netlib"
)

// outcome is what one mat decomposition gave: whether it said ok, whether
// every output is finite, and the panic message if it panicked.
type outcome struct {
	ok, finite bool
	panicked   string
}

func finiteAll(ms ...mat.Matrix) bool {
	for _, m := range ms {
		if m == nil {
			continue
		}
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if v := m.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
					return false
				}
			}
		}
	}
	return true
}

func finiteSlice(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// decompositions runs mat's decompositions on a (square) through whatever
// LAPACK and BLAS are installed.
func decompositions(a *mat.Dense) map[string]func() outcome {
	n, _ := a.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, a.At(i, j))
		}
	}
	b := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		b.Set(i, 0, 1)
	}
	return map[string]func() outcome{
		"EigenSym vectors": func() outcome {
			var e mat.EigenSym
			ok := e.Factorize(sym, true)
			if !ok {
				return outcome{}
			}
			var v mat.Dense
			e.VectorsTo(&v)
			return outcome{ok: true, finite: finiteSlice(e.Values(nil)) && finiteAll(&v)}
		},
		"EigenSym values": func() outcome {
			var e mat.EigenSym
			ok := e.Factorize(sym, false)
			return outcome{ok: ok, finite: ok && finiteSlice(e.Values(nil))}
		},
		"Eigen": func() outcome {
			var e mat.Eigen
			ok := e.Factorize(a, mat.EigenRight)
			if !ok {
				return outcome{}
			}
			fin := true
			for _, v := range e.Values(nil) {
				fin = fin && !math.IsNaN(real(v)) && !math.IsInf(real(v), 0) && !math.IsNaN(imag(v))
			}
			return outcome{ok: true, finite: fin}
		},
		"SVD full": func() outcome {
			var s mat.SVD
			ok := s.Factorize(a, mat.SVDFull)
			return outcome{ok: ok, finite: ok && finiteSlice(s.Values(nil))}
		},
		"SVD thin": func() outcome {
			var s mat.SVD
			ok := s.Factorize(a, mat.SVDThin)
			return outcome{ok: ok, finite: ok && finiteSlice(s.Values(nil))}
		},
		"SVD none": func() outcome {
			var s mat.SVD
			ok := s.Factorize(a, mat.SVDNone)
			return outcome{ok: ok, finite: ok && finiteSlice(s.Values(nil))}
		},
		"Cholesky": func() outcome {
			var c mat.Cholesky
			ok := c.Factorize(sym)
			if !ok {
				return outcome{}
			}
			var u mat.TriDense
			c.UTo(&u)
			return outcome{ok: true, finite: finiteAll(&u)}
		},
		"LU": func() outcome {
			var lu mat.LU
			lu.Factorize(a)
			var u mat.TriDense
			lu.UTo(&u)
			return outcome{ok: true, finite: finiteAll(&u)}
		},
		"QR": func() outcome {
			var qr mat.QR
			qr.Factorize(a)
			var r mat.Dense
			qr.RTo(&r)
			return outcome{ok: true, finite: finiteAll(&r)}
		},
		"LQ": func() outcome {
			var lq mat.LQ
			lq.Factorize(a)
			var l mat.Dense
			lq.LTo(&l)
			return outcome{ok: true, finite: finiteAll(&l)}
		},
		"Solve": func() outcome {
			var x mat.Dense
			// A Condition error (the result may be inaccurate) is not ok.
			if err := x.Solve(a, b); err != nil {
				return outcome{}
			}
			return outcome{ok: true, finite: finiteAll(&x)}
		},
		"Inverse": func() outcome {
			var x mat.Dense
			if err := x.Inverse(a); err != nil {
				return outcome{}
			}
			return outcome{ok: true, finite: finiteAll(&x)}
		},
	}
}

func run(f func() outcome) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{panicked: fmt.Sprint(r)}
		}
	}()
	return f()
}

// gonum's contract on bad input: on matrices with NaN or ±Inf in several
// positions, every mat decomposition through this package never panics
// with a LAPACK argument error, never says ok=true with all-finite outputs
// from non-finite input, and says ok=false where gonum's own LAPACK does
// by its code: Cholesky on a NaN (its dpotrf tests every pivot for NaN),
// SVD on a NaN (its dgesvd checks the norm). gonum's own is not run here:
// on some of these inputs it never returns (Dgebal and Dbdsqr loop on
// NaN and Inf in gonum v0.17).
func TestNonFiniteContract(t *testing.T) {
	blas64.Use(netlib.Implementation{})
	lapack64.Use(Implementation{})
	defer func() {
		blas64.Use(gblas.Implementation{})
		lapack64.Use(glapack.Implementation{})
	}()
	base := []float64{4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}
	symmetricOnly := map[string]bool{"EigenSym vectors": true, "EigenSym values": true, "Cholesky": true}
	notOK := map[string]bool{"Cholesky": true, "SVD full": true, "SVD thin": true, "SVD none": true}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, pos := range []int{0, 1, 3, 4, 8} {
			d := append([]float64(nil), base...)
			d[pos] = bad
			a := mat.NewDense(3, 3, d)
			lower := pos == 3 // (1,0): outside the triangle the symmetric ones read
			for name, f := range decompositions(a) {
				if lower && symmetricOnly[name] {
					continue
				}
				got := run(f)
				what := fmt.Sprintf("%v at %d, %s: %+v", bad, pos, name, got)
				if got.panicked != "" {
					if strings.Contains(got.panicked, "illegal value") || strings.Contains(got.panicked, "lapack") {
						t.Errorf("%s: a LAPACK argument panic", what)
					}
					continue
				}
				if got.ok && got.finite {
					t.Errorf("%s: all-finite output from non-finite input", what)
				}
				if math.IsNaN(bad) && notOK[name] && got.ok {
					t.Errorf("%s: ok on a NaN, where gonum's own says false", what)
				}
			}
		}
	}
	_ = lapack.Float64(Implementation{})
}
