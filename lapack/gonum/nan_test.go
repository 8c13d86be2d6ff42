package gonum

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// decompositions runs mat's decompositions on a through whatever LAPACK and
// BLAS are installed; the matrices they need are built inside each
// function, so that a shape panic happens there.
func decompositions(a *mat.Dense) map[string]func() outcome {
	symOf := func() *mat.SymDense {
		n, c := a.Dims()
		if n != c {
			panic(mat.ErrShape)
		}
		sym := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				sym.SetSym(i, j, a.At(i, j))
			}
		}
		return sym
	}
	rhs := func() *mat.Dense {
		n, _ := a.Dims()
		b := mat.NewDense(n, 1, nil)
		for i := 0; i < n; i++ {
			b.Set(i, 0, 1)
		}
		return b
	}
	return map[string]func() outcome{
		"EigenSym vectors": func() outcome {
			var e mat.EigenSym
			ok := e.Factorize(symOf(), true)
			if !ok {
				return outcome{}
			}
			var v mat.Dense
			e.VectorsTo(&v)
			return outcome{ok: true, finite: finiteSlice(e.Values(nil)) && finiteAll(&v)}
		},
		"EigenSym values": func() outcome {
			var e mat.EigenSym
			ok := e.Factorize(symOf(), false)
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
		"GSVD": func() outcome {
			_, c := a.Dims()
			b := mat.NewDense(c, c, nil)
			for i := 0; i < c; i++ {
				b.Set(i, i, float64(i+2))
				if i > 0 {
					b.Set(i, i-1, 0.5)
				}
			}
			var g mat.GSVD
			ok := g.Factorize(a, b, mat.GSVDU|mat.GSVDV|mat.GSVDQ)
			return outcome{ok: ok, finite: ok && finiteSlice(g.ValuesA(nil)) && finiteSlice(g.ValuesB(nil))}
		},
		"Cholesky": func() outcome {
			var c mat.Cholesky
			ok := c.Factorize(symOf())
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
			if err := x.Solve(a, rhs()); err != nil {
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

// contractCase is one input of the contract test.
type contractCase struct {
	name      string
	a         *mat.Dense
	nonFinite bool
	// lower: the bad entry is below the diagonal, outside the triangle the
	// symmetric decompositions read.
	lower bool
}

func contractCases() []contractCase {
	base := []float64{4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}
	var cs []contractCase
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, pos := range []int{0, 1, 3, 4, 8} {
			d := append([]float64(nil), base...)
			d[pos] = bad
			cs = append(cs, contractCase{name: fmt.Sprintf("3×3, %v at %d", bad, pos), a: mat.NewDense(3, 3, d), nonFinite: true, lower: pos == 3})
		}
		tall := mat.NewDense(4, 3, []float64{4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2, 1, 1, 1})
		tall.Set(3, 1, bad)
		cs = append(cs, contractCase{name: fmt.Sprintf("4×3, %v at (3,1)", bad), a: tall, nonFinite: true})
	}
	zeroRow := mat.NewDense(3, 3, append([]float64(nil), base...))
	zeroRow.SetRow(1, []float64{0, 0, 0})
	cs = append(cs,
		contractCase{name: "3×3 with a zero row", a: zeroRow},
		contractCase{name: "3×3 zero", a: mat.NewDense(3, 3, nil)},
		contractCase{name: "0×0", a: &mat.Dense{}},
	)
	return cs
}

func decompositionNames() []string {
	var names []string
	for name := range decompositions(&mat.Dense{}) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// gonumsOwnEnv makes the test binary a child that runs gonum's own LAPACK
// on every case, one line per decomposition.
const gonumsOwnEnv = "KDUAL_TEST_GONUMS_OWN"

// gonumsOwnChild runs each decomposition in its own goroutine and gives it
// 500 ms: gonum v0.17's Dgebal and Dbdsqr loop forever on some NaN and Inf
// inputs, and those goroutines are left spinning until the child exits.
func gonumsOwnChild() {
	names := decompositionNames()
	for ci, c := range contractCases() {
		ds := decompositions(c.a)
		for j, name := range names {
			done := make(chan outcome, 1)
			go func() { done <- run(ds[name]) }()
			select {
			case o := <-done:
				fmt.Printf("OUTCOME %d %d %t %t %q\n", ci, j, o.ok, o.finite, o.panicked)
			case <-time.After(500 * time.Millisecond):
				fmt.Printf("HUNG %d %d\n", ci, j)
			}
		}
	}
	os.Exit(0)
}

// gonumsOwn runs gonum's own LAPACK on every case in a child process; an
// outcome is nil where gonum's own gave no answer.
func gonumsOwn(t *testing.T) []map[string]*outcome {
	names := decompositionNames()
	got := make([]map[string]*outcome, len(contractCases()))
	for i := range got {
		got[i] = map[string]*outcome{}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNonFiniteContract$")
	cmd.Env = append(os.Environ(), gonumsOwnEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		var ci, j int
		var o outcome
		if _, err := fmt.Sscanf(l, "OUTCOME %d %d %t %t %q", &ci, &j, &o.ok, &o.finite, &o.panicked); err == nil {
			got[ci][names[j]] = &o
		}
	}
	return got
}

// gonum's contract on bad input, on matrices with NaN or ±Inf in several
// positions (square and tall), a zero row, a zero matrix and 0×0: every
// mat decomposition through this package
//   - never panics with a LAPACK argument error (a panic is fine only where
//     gonum's own LAPACK panics with the same message),
//   - never says ok=true with all-finite outputs from non-finite input,
//   - says ok=false wherever gonum's own LAPACK does (run in child
//     processes: on some of these inputs it never returns).
func TestNonFiniteContract(t *testing.T) {
	if os.Getenv(gonumsOwnEnv) != "" {
		gonumsOwnChild()
	}
	cases := contractCases()
	theirs := gonumsOwn(t)
	blas64.Use(netlib.Implementation{})
	lapack64.Use(Implementation{})
	defer func() {
		blas64.Use(gblas.Implementation{})
		lapack64.Use(glapack.Implementation{})
	}()
	symmetricOnly := map[string]bool{"EigenSym vectors": true, "EigenSym values": true, "Cholesky": true}
	compared := 0
	for ci, c := range cases {
		for name, f := range decompositions(c.a) {
			if c.lower && symmetricOnly[name] {
				continue
			}
			got := run(f)
			their := theirs[ci][name]
			what := fmt.Sprintf("%s, %s: %+v (gonum's own: %+v)", c.name, name, got, their)
			if got.panicked != "" {
				if their != nil && their.panicked == got.panicked {
					continue
				}
				if strings.Contains(got.panicked, "illegal value") || strings.Contains(got.panicked, "lapack") {
					t.Errorf("%s: a LAPACK argument panic", what)
				} else if their == nil || their.panicked == "" {
					t.Errorf("%s: a panic where gonum's own does not", what)
				}
				continue
			}
			if c.nonFinite && got.ok && got.finite {
				t.Errorf("%s: all-finite output from non-finite input", what)
			}
			if their != nil && their.panicked == "" {
				compared++
				if !their.ok && got.ok {
					t.Errorf("%s: ok where gonum's own says false", what)
				}
			}
		}
	}
	// gonum's own answered on most of them: the comparison is not empty.
	require.Greater(t, compared, len(cases)*len(decompositionNames())/2)
	_ = lapack.Float64(Implementation{})
}

// Small and thin shapes (1×1, 3×1, 1×3, 2×2, 5×2, 2×5), where LAPACK's
// drivers take their edge paths: every mat decomposition through this
// package reconstructs its input and agrees with gonum's own on the
// invariant parts (singular values, eigenvalues, |det|).
func TestSmallShapesAgreeWithGonum(t *testing.T) {
	shapes := [][2]int{{1, 1}, {3, 1}, {1, 3}, {2, 2}, {5, 2}, {2, 5}}
	type facts struct {
		recon   []float64 // ‖A − reconstruction‖ per decomposition
		svals   []float64
		absDet  float64
		symVals []float64
	}
	compute := func(a *mat.Dense) facts {
		var f facts
		r, c := a.Dims()
		norm := func(m mat.Matrix) float64 {
			var d mat.Dense
			d.Sub(a, m)
			return mat.Norm(&d, math.Inf(1))
		}
		if r >= c { // mat's QR wants a tall matrix, its LQ a wide one
			var qr mat.QR
			qr.Factorize(a)
			var q, rr, qrm mat.Dense
			qr.QTo(&q)
			qr.RTo(&rr)
			qrm.Mul(&q, &rr)
			f.recon = append(f.recon, norm(&qrm))
		}
		if r <= c {
			var lq mat.LQ
			lq.Factorize(a)
			var l, q2, lqm mat.Dense
			lq.LTo(&l)
			lq.QTo(&q2)
			lqm.Mul(&l, &q2)
			f.recon = append(f.recon, norm(&lqm))
		}
		if r >= c { // least squares (Dgels) with two right-hand sides
			b := mat.NewDense(r, 2, nil)
			for i := 0; i < r; i++ {
				b.Set(i, 0, float64(i+1))
				b.Set(i, 1, 1/float64(i+1))
			}
			var x, ax, res, atr mat.Dense
			if err := x.Solve(a, b); err == nil {
				ax.Mul(a, &x)
				res.Sub(b, &ax)
				atr.Mul(a.T(), &res) // the normal equations: Aᵀ(b − Ax) = 0
				f.recon = append(f.recon, mat.Norm(&atr, math.Inf(1)))
			} else {
				f.recon = append(f.recon, math.Inf(1))
			}
		}
		var svd mat.SVD
		if !svd.Factorize(a, mat.SVDFull) {
			t.Fatalf("SVD of %d×%d", r, c)
		}
		f.svals = svd.Values(nil)
		var u, v mat.Dense
		svd.UTo(&u)
		svd.VTo(&v)
		sig := mat.NewDense(r, c, nil)
		for i, s := range f.svals {
			sig.Set(i, i, s)
		}
		var us, usv mat.Dense
		us.Mul(&u, sig)
		usv.Mul(&us, v.T())
		f.recon = append(f.recon, norm(&usv))
		if r == c {
			var lu mat.LU
			lu.Factorize(a)
			f.absDet = math.Abs(lu.Det())
			sym := mat.NewSymDense(r, nil)
			for i := 0; i < r; i++ {
				for j := i; j < r; j++ {
					sym.SetSym(i, j, a.At(i, j)+a.At(j, i))
				}
			}
			var es mat.EigenSym
			if !es.Factorize(sym, true) {
				t.Fatalf("EigenSym of %d×%d", r, r)
			}
			f.symVals = es.Values(nil)
		}
		return f
	}
	for _, sh := range shapes {
		r, c := sh[0], sh[1]
		a := mat.NewDense(r, c, nil)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				a.Set(i, j, 1/float64(i+2*j+1)+float64(i*j%3))
			}
		}
		theirs := compute(a)
		blas64.Use(netlib.Implementation{})
		lapack64.Use(Implementation{})
		ours := compute(a)
		blas64.Use(gblas.Implementation{})
		lapack64.Use(glapack.Implementation{})
		scale := mat.Norm(a, math.Inf(1))
		for i, e := range ours.recon {
			require.Less(t, e, 1e-13*scale, "%d×%d: reconstruction %d", r, c, i)
		}
		require.InDeltaSlice(t, theirs.svals, ours.svals, 1e-13*scale, "%d×%d singular values", r, c)
		require.InDelta(t, theirs.absDet, ours.absDet, 1e-12*math.Max(1, theirs.absDet), "%d×%d |det|", r, c)
		require.InDeltaSlice(t, theirs.symVals, ours.symVals, 1e-13*scale, "%d×%d eigenvalues", r, c)
	}
}
