package ppca

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/status"
)

func randData(t *testing.T, n, d int, seed uint64) *mat.Dense {
	t.Helper()
	x, err := dataset.StandardNormal(n, d, seed)
	require.NoError(t, err)
	// Unequal column scales give a spectrum with gaps.
	for j := 0; j < d; j++ {
		for i := 0; i < n; i++ {
			x.Set(i, j, x.At(i, j)*math.Pow(0.7, float64(j)))
		}
	}
	return x
}

func rbf(sigma float64) kernel.Kernel { return kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma} }

// maxAbsDiff returns max |a − b| / max(1, max |b|).
func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	diff, scale := 0.0, 1.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			diff = math.Max(diff, math.Abs(a.At(i, j)-b.At(i, j)))
			scale = math.Max(scale, math.Abs(b.At(i, j)))
		}
	}
	return diff / scale
}

func centred(x *mat.Dense) *mat.Dense {
	c := mat.DenseCopyOf(x)
	linalg.CenterColumns(c)
	return c
}

// With a linear kernel the dual model is the primal one: W = Φ_cÃ, the same
// h_MAP and the same reconstructions (in kernel space Φ_c(φ_MAP − μ)).
func TestLinearDualEqualsPrimal(t *testing.T) {
	x := randData(t, 40, 6, 1)
	test := randData(t, 7, 6, 2)
	const q, s2 = 2, 0.05
	p := &Primal{Q: q, Sigma2: s2}
	require.NoError(t, p.Fit(x))
	d := &Dual{Q: q, Sigma2: s2}
	require.NoError(t, d.Fit(x))

	phiC := centred(x) // rows are the centred features: Φ_c = phiCᵀ
	var w mat.Dense
	w.Mul(phiC.T(), must(d.A()))
	// Eigenvector signs are fixed the same way on both sides only up to the
	// correspondence v_p ∝ Φ_c e_p; compare sign-invariant products.
	var wwD, wwP mat.Dense
	wwD.Mul(&w, w.T())
	pw := must(p.W())
	wwP.Mul(pw, pw.T())
	require.Less(t, maxAbsDiff(&wwD, &wwP), 1e-10)
	// Column by column too, after matching signs.
	for c := 0; c < q; c++ {
		sign := 1.0
		if mat.Dot(w.ColView(c), pw.ColView(c)) < 0 {
			sign = -1
		}
		for i := 0; i < 6; i++ {
			require.InDelta(t, pw.At(i, c), sign*w.At(i, c), 1e-10)
		}
	}

	hP, err := p.Transform(test)
	require.NoError(t, err)
	hD, err := d.Transform(test)
	require.NoError(t, err)
	var gP, gD mat.Dense // h hᵀ is sign-invariant
	gP.Mul(hP, hP.T())
	gD.Mul(hD, hD.T())
	require.Less(t, maxAbsDiff(&gD, &gP), 1e-10)

	rP, err := p.InverseTransform(hP)
	require.NoError(t, err)
	rD, err := d.Reconstruct(hD)
	require.NoError(t, err)
	// (k_c)_MAP = Φ_cᵀ(φ_MAP − μ) for each test point.
	mean := must(p.Mean())
	for i := 0; i < 7; i++ {
		row := rP.RawRowView(i)
		for j := range row {
			row[j] -= mean[j]
		}
	}
	var kFromPrimal mat.Dense
	kFromPrimal.Mul(rP, phiC.T())
	require.Less(t, maxAbsDiff(rD, &kFromPrimal), 1e-10)

	// The posterior covariances agree and equal σ²(WᵀW + σ²I)^{-1}.
	var wtw mat.Dense
	wtw.Mul(pw.T(), pw)
	for c := 0; c < q; c++ {
		wtw.Set(c, c, wtw.At(c, c)+s2)
	}
	var inv mat.Dense
	require.NoError(t, inv.Inverse(&wtw))
	inv.Scale(s2, &inv)
	require.Less(t, maxAbsDiff(must(p.PosteriorCov()), &inv), 1e-10)
	require.Less(t, maxAbsDiff(must(d.PosteriorCov()), &inv), 1e-10)
	require.InDelta(t, must(p.ExplainedVariance()), must(d.ExplainedVariance()), 1e-12)
}

// σ² → 0 gives kernel PCA's reconstruction E_qE_qᵀk_c, for training and
// new points, against models/kpca.
func TestZeroNoiseIsKPCA(t *testing.T) {
	x := randData(t, 60, 3, 3)
	test := randData(t, 5, 3, 4)
	k := rbf(1.5)
	const q = 4
	d := &Dual{Q: q, Sigma2: 1e-300, Kernel: k}
	require.NoError(t, d.Fit(x))
	ref := &kpca.KPCA{Components: q, Kernel: k, Solver: kpca.Eigen{Solver: eig.DenseSolver{}}}
	require.NoError(t, ref.Fit(x))
	s, err := ref.Scores()
	require.NoError(t, err)

	kc, err := d.TrainKernelVectors()
	require.NoError(t, err)
	h, err := d.ProjectKernel(kc)
	require.NoError(t, err)
	rec, err := d.Reconstruct(h)
	require.NoError(t, err)
	var want mat.Dense
	want.Mul(s, s.T()) // E_qΛ_qE_qᵀ = E_qE_qᵀK_c
	require.Less(t, maxAbsDiff(rec, &want), 1e-10)

	kt, err := d.KernelVectors(test)
	require.NoError(t, err)
	ht, err := d.ProjectKernel(kt)
	require.NoError(t, err)
	rt, err := d.Reconstruct(ht)
	require.NoError(t, err)
	z, err := ref.Transform(test)
	require.NoError(t, err)
	var wantT mat.Dense
	wantT.Mul(z, s.T())
	require.Less(t, maxAbsDiff(rt, &wantT), 1e-10)
}

// σ²_ML is the mean discarded variance Σ_{p>q}λ_p/(N(N−q)) and satisfies
// σ² ≤ λ_q/N; a given σ² derives the largest q with σ² ≤ λ_q/N; the top-q
// solver gets the same σ² from the trace.
func TestNoiseVariance(t *testing.T) {
	x := randData(t, 50, 4, 5)
	k := rbf(1)
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	_, err = linalg.CenterKernelInPlace(g)
	require.NoError(t, err)
	lam, err := linalg.SymEigValues(g, 0)
	require.NoError(t, err)
	const n = 50
	for _, q := range []int{1, 3, 10} {
		d := &Dual{Q: q, Kernel: k}
		require.NoError(t, d.Fit(x))
		tail := 0.0
		for _, v := range lam[q:] {
			tail += math.Max(v, 0)
		}
		want := tail / (n * float64(n-q))
		require.InDelta(t, want, d.NoiseVariance(), 1e-12*want)
		require.LessOrEqual(t, d.NoiseVariance(), lam[q-1]/n)
		top := &Dual{Q: q, Kernel: k, Solver: eig.Auto{}}
		require.NoError(t, top.Fit(x))
		require.InDelta(t, want, top.NoiseVariance(), 1e-9*want)
		kc, _ := d.TrainKernelVectors()
		h1, err := d.ProjectKernel(kc)
		require.NoError(t, err)
		r1, _ := d.Reconstruct(h1)
		h2, err := top.ProjectKernel(kc)
		require.NoError(t, err)
		r2, _ := top.Reconstruct(h2)
		require.Less(t, maxAbsDiff(r2, r1), 1e-8)
	}
	// σ² between λ_4/N and λ_3/N derives q = 3.
	s2 := 0.5 * (lam[2] + lam[3]) / n
	d := &Dual{Sigma2: s2, Kernel: k}
	require.NoError(t, d.Fit(x))
	require.Equal(t, 3, d.LatentDim())
	require.Equal(t, s2, d.NoiseVariance())
}

// The sample covariance of 200 000 dual samples matches
// B̃B̃ᵀ = K_cÃÃᵀK_c + σ²K_c within sampling error.
func TestSampleCovariance(t *testing.T) {
	x := randData(t, 8, 2, 6)
	d := &Dual{Q: 2, Kernel: rbf(1)}
	require.NoError(t, d.Fit(x))
	const m = 200000
	ks, err := d.Sample(m, 7)
	require.NoError(t, err)
	var s mat.SymDense
	s.SymOuterK(1.0/m, ks.T())

	kc, _ := d.TrainKernelVectors()
	var ka, want mat.Dense
	ka.Mul(kc, must(d.A()))
	want.Mul(&ka, ka.T())
	want.Add(&want, scaled(d.NoiseVariance(), kc))
	n := 8
	worst := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			// Standard error of a sample covariance of zero-mean normals.
			se := math.Sqrt((want.At(i, i)*want.At(j, j) + want.At(i, j)*want.At(i, j)) / m)
			worst = math.Max(worst, math.Abs(s.At(i, j)-want.At(i, j))/se)
		}
	}
	require.Less(t, worst, 6.0, "largest deviation in standard errors")
}

func scaled(f float64, a mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Scale(f, a)
	return &out
}

func TestSampleDeterministic(t *testing.T) {
	x := randData(t, 30, 3, 8)
	d := &Dual{Q: 3, Kernel: rbf(2)}
	require.NoError(t, d.Fit(x))
	a, err := d.Sample(5, 42)
	require.NoError(t, err)
	b, err := d.Sample(5, 42)
	require.NoError(t, err)
	c, err := d.Sample(5, 43)
	require.NoError(t, err)
	require.True(t, mat.Equal(a, b))
	require.False(t, mat.Equal(a, c))
	// Samples live in the range of K_c: they sum to zero like k_c, up to
	// the null eigenvector's column σ√λ₀ of B̃, where LAPACK's λ₀ is zero
	// only to rounding (|λ₀| ≤ N·ε·λ₁): |1ᵀk_c| ≤ √N·σ·√(N·ε·λ₁)·|u₀|,
	// |u₀| < 6 for these draws.
	bound := 6 * math.Sqrt(30) * math.Sqrt(d.sigma2*30*2.3e-16*d.values[0])
	for i := 0; i < 5; i++ {
		require.InDelta(t, 0, mat.Sum(a.RowView(i)), bound)
	}
	p := &Primal{Q: 1}
	require.NoError(t, p.Fit(x))
	pa, err := p.Sample(4, 9)
	require.NoError(t, err)
	pb, err := p.Sample(4, 9)
	require.NoError(t, err)
	require.True(t, mat.Equal(pa, pb))
}

// The primal marginal is N(μ, WWᵀ + σ²I).
func TestPrimalSampleMoments(t *testing.T) {
	x := randData(t, 100, 3, 10)
	p := &Primal{Q: 1}
	require.NoError(t, p.Fit(x))
	const m = 100000
	s, err := p.Sample(m, 11)
	require.NoError(t, err)
	mean := make([]float64, 3)
	for i := 0; i < m; i++ {
		for j := 0; j < 3; j++ {
			mean[j] += s.At(i, j) / m
		}
	}
	w := must(p.W())
	var want mat.Dense
	want.Mul(w, w.T())
	for j := 0; j < 3; j++ {
		want.Set(j, j, want.At(j, j)+p.NoiseVariance())
		require.InDelta(t, must(p.Mean())[j], mean[j], 6*math.Sqrt(want.At(j, j)/m))
	}
	sc := centred(s)
	var cov mat.SymDense
	cov.SymOuterK(1.0/m, sc.T())
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			se := math.Sqrt((want.At(i, i)*want.At(j, j) + want.At(i, j)*want.At(i, j)) / m)
			require.InDelta(t, want.At(i, j), cov.At(i, j), 6*se)
		}
	}
	// σ²_ML (Tipping & Bishop) is the mean of the d − q discarded
	// covariance eigenvalues.
	lam := must(p.Eigenvalues())
	require.InDelta(t, (lam[1]+lam[2])/(100*2), p.NoiseVariance(), 1e-14)
}

// Generating from q latent coordinates equals B̃u with the other N − q
// coordinates zero, and B̃'s column p is λ_p/√N·e_p for p ≤ q.
func TestGenerateLatent(t *testing.T) {
	x := randData(t, 25, 2, 12)
	d := &Dual{Q: 2, Kernel: rbf(1)}
	require.NoError(t, d.Fit(x))
	u := mat.NewDense(1, 2, []float64{0.5, -1})
	k, err := d.Generate(u)
	require.NoError(t, err)
	full := mat.NewDense(1, 25, nil)
	full.Set(0, 0, 0.5)
	full.Set(0, 1, -1)
	kf, err := d.Generate(full)
	require.NoError(t, err)
	require.Less(t, maxAbsDiff(k, kf), 1e-14)
	// B̃ column p is λ_p/√N e_p for p ≤ q.
	lam := must(d.Eigenvalues())
	e, err := linalg.SymEig(mustKc(t, d), 2)
	require.NoError(t, err)
	for i := 0; i < 25; i++ {
		want := (0.5*lam[0]*e.Vectors.At(i, 0) - lam[1]*e.Vectors.At(i, 1)) / math.Sqrt(25)
		require.InDelta(t, want, k.At(0, i), 1e-10)
	}
}

func mustKc(t *testing.T, d *Dual) *mat.SymDense {
	kc, err := d.TrainKernelVectors()
	require.NoError(t, err)
	n, _ := kc.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, kc.At(i, j))
		}
	}
	return s
}

// Well-separated points and a narrow kernel: the kernel vector of a
// training point pre-images to (almost) that point, exactly with one
// neighbour; a vector with no positive weight falls back to the mean.
func TestPreImage(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 10, 0, 0, 10, 10, 10})
	d := &Dual{Q: 2, Kernel: rbf(1)}
	require.NoError(t, d.Fit(x))
	kc, _ := d.TrainKernelVectors()
	got, fb, err := d.PreImage(kc, 0)
	require.NoError(t, err)
	require.Zero(t, fb)
	require.Less(t, maxAbsDiff(got, x), 1e-9)
	got1, _, err := d.PreImage(kc, 1)
	require.NoError(t, err)
	require.True(t, mat.Equal(got1, x))

	neg := mat.NewDense(1, 4, nil)
	for i, m := range d.center.RowMeans {
		neg.Set(0, i, -m-1)
	}
	mean, fb, err := d.PreImage(neg, 0)
	require.NoError(t, err)
	require.Equal(t, 1, fb)
	require.InDelta(t, 5, mean.At(0, 0), 1e-12)
	require.InDelta(t, 5, mean.At(0, 1), 1e-12)
}

// With the linear kernel the pre-images of the training kernel vectors
// scale with the data (a power of two c: exactly up to rounding), and no
// row falls back to the mean because the kernel is small or large.
func TestPreImageScaleInvariance(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 1, 2, 0.5, -1, 3, 4, -2, 1, 1, -3, 0.25})
	ref := &Dual{Q: 1, Kernel: kernel.Kernel{Kind: kernel.Linear}}
	require.NoError(t, ref.Fit(x))
	kc, _ := ref.TrainKernelVectors()
	want, fb, err := ref.PreImage(kc, 0)
	require.NoError(t, err)
	require.Zero(t, fb)
	for _, p := range []int{-200, -40, 40, 200} {
		c := math.Ldexp(1, p)
		xs := mat.DenseCopyOf(x)
		xs.Scale(c, xs)
		d := &Dual{Q: 1, Kernel: kernel.Kernel{Kind: kernel.Linear}}
		require.NoError(t, d.Fit(xs))
		kcs, _ := d.TrainKernelVectors()
		got, fb, err := d.PreImage(kcs, 0)
		require.NoError(t, err, "2^%d", p)
		require.Zero(t, fb, "2^%d: fell back to the mean", p)
		got.Scale(1/c, got)
		require.Less(t, maxAbsDiff(got, want), 1e-12, "2^%d", p)
	}
}

func TestErrors(t *testing.T) {
	x := randData(t, 10, 2, 13)
	lin := func(q int, s2 float64) error { return (&Dual{Q: q, Sigma2: s2}).Fit(x) }
	require.ErrorIs(t, lin(3, 0), status.ErrInvalid) // q > rank 2 of a linear kernel on 2-d data
	var re *status.RankError
	require.ErrorAs(t, lin(3, 0), &re)
	require.Equal(t, 2, re.Rank)
	require.ErrorIs(t, lin(0, 0), status.ErrInvalid)  // neither q nor σ²
	require.ErrorIs(t, lin(1, -1), status.ErrInvalid) // σ² < 0
	require.ErrorIs(t, lin(1, math.NaN()), status.ErrInvalid)
	require.ErrorIs(t, lin(0, 1e6), status.ErrInvalid) // σ² > λ_1/N
	require.ErrorIs(t, lin(10, 0), status.ErrInvalid)  // q ≥ N
	require.ErrorIs(t, lin(2, 1e6), status.ErrInvalid) // σ² > λ_q/N
	// The error names λ_q/N: λ_2 of the centred linear kernel is the
	// smaller eigenvalue of XcᵀXc.
	xc := mat.DenseCopyOf(x)
	for j := 0; j < 2; j++ {
		m := mat.Sum(xc.ColView(j)) / 10
		for i := 0; i < 10; i++ {
			xc.Set(i, j, xc.At(i, j)-m)
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1, xc.T())
	var es mat.EigenSym
	require.True(t, es.Factorize(&cov, false))
	got := regexp.MustCompile(`exceeds λ_q/N = (\S+) \(q = 2\)`).FindStringSubmatch(lin(2, 1e6).Error())
	require.Len(t, got, 2)
	named, err := strconv.ParseFloat(got[1], 64)
	require.NoError(t, err)
	require.InDelta(t, es.Values(nil)[0]/10, named, 1e-5*named)
	require.ErrorIs(t, (&Primal{Q: 2}).Fit(x), status.ErrInvalid) // q ≥ d
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, math.NaN())
	require.ErrorIs(t, (&Dual{Q: 1, Kernel: rbf(1)}).Fit(bad), status.ErrInvalid)
	require.ErrorIs(t, (&Primal{Q: 1}).Fit(bad), status.ErrInvalid)

	var unfitted Dual
	_, err = unfitted.Sample(1, 1)
	require.ErrorIs(t, err, ErrNotFitted)
	d := &Dual{Q: 1, Kernel: rbf(1)}
	require.NoError(t, d.Fit(x))
	_, err = d.Transform(mat.NewDense(2, 3, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = d.Reconstruct(mat.NewDense(2, 2, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = d.ProjectKernel(mat.NewDense(1, 9, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = d.Sample(0, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	top := &Dual{Q: 1, Kernel: rbf(1), Solver: eig.Auto{}}
	require.NoError(t, top.Fit(x))
	_, err = top.Sample(1, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorIs(t, (&Dual{Sigma2: 0.01, Solver: eig.Auto{}}).Fit(x), status.ErrInvalid)
}

// must unwraps an accessor of a fitted model.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Before a fit every accessor says ErrNotFitted; nothing panics.
func TestAccessorsBeforeFit(t *testing.T) {
	var p Primal
	var d Dual
	_, err := p.W()
	require.ErrorIs(t, err, ErrNotFitted)
	_, err = p.Mean()
	require.ErrorIs(t, err, ErrNotFitted)
	_, err = d.A()
	require.ErrorIs(t, err, ErrNotFitted)
	for _, l := range []interface {
		Eigenvalues() ([]float64, error)
		ExplainedVariance() (float64, error)
		PosteriorCov() (*mat.SymDense, error)
		LatentDim() int
	}{&p, &d} {
		_, err = l.Eigenvalues()
		require.ErrorIs(t, err, ErrNotFitted)
		_, err = l.ExplainedVariance()
		require.ErrorIs(t, err, ErrNotFitted)
		_, err = l.PosteriorCov()
		require.ErrorIs(t, err, ErrNotFitted)
		require.Zero(t, l.LatentDim())
	}
}

// The MAP projection in closed form with σ² > 0: h = M⁻¹Wᵀ(x − μ) with
// M = WᵀW + σ²I, computed here from W itself, for the primal model and
// for the dual with a linear kernel.
func TestMAPProjectionClosedForm(t *testing.T) {
	x := randData(t, 50, 5, 21)
	test := randData(t, 6, 5, 22)
	const q, s2 = 2, 0.2
	p := &Primal{Q: q, Sigma2: s2}
	require.NoError(t, p.Fit(x))
	w := must(p.W())
	mean := must(p.Mean())
	var m mat.Dense
	m.Mul(w.T(), w)
	for i := 0; i < q; i++ {
		m.Set(i, i, m.At(i, i)+s2)
	}
	tc := mat.DenseCopyOf(test)
	for i := 0; i < 6; i++ {
		for j := 0; j < 5; j++ {
			tc.Set(i, j, tc.At(i, j)-mean[j])
		}
	}
	var wtx, want mat.Dense
	wtx.Mul(w.T(), tc.T()) // q×6
	require.NoError(t, want.Solve(&m, &wtx))
	got, err := p.Transform(test)
	require.NoError(t, err)
	d := &Dual{Q: q, Sigma2: s2}
	require.NoError(t, d.Fit(x))
	gotDual, err := d.Transform(test)
	require.NoError(t, err)
	for i := 0; i < 6; i++ {
		for j := 0; j < q; j++ {
			require.InDelta(t, want.At(j, i), got.At(i, j), 1e-10, "primal (%d,%d)", i, j)
			require.InDelta(t, math.Abs(want.At(j, i)), math.Abs(gotDual.At(i, j)), 1e-10, "dual (%d,%d)", i, j)
		}
	}
}

// The dual model reports how its eigensolver ended.
func TestDualStatus(t *testing.T) {
	x := randData(t, 30, 4, 31)
	d := &Dual{Q: 2}
	require.Equal(t, status.NotRun, d.Status().Code)
	require.NoError(t, d.Fit(x))
	require.True(t, d.Status().Converged(), "%v", d.Status())
	top := &Dual{Q: 2, Solver: eig.Lanczos{}}
	require.NoError(t, top.Fit(x))
	require.True(t, top.Status().Converged(), "%v", top.Status())
}

// Transform and InverseTransform are the names every model uses: the
// primal InverseTransform is W h + μ, the dual one the kernel smoother's
// pre-image of Reconstruct(h); a Slice is accepted as input and nil is a
// typed error.
func TestTransformNames(t *testing.T) {
	x := randData(t, 50, 5, 3)
	view := x.Slice(0, 20, 0, 5)
	p := &Primal{Q: 2, Sigma2: 0.1}
	require.NoError(t, p.Fit(x))
	hp, err := p.Transform(view)
	require.NoError(t, err)
	back, err := p.InverseTransform(hp)
	require.NoError(t, err)
	var want mat.Dense
	want.Mul(hp, must(p.W()).T())
	mean := must(p.Mean())
	for i := 0; i < 20; i++ {
		for j := 0; j < 5; j++ {
			require.InDelta(t, want.At(i, j)+mean[j], back.At(i, j), 1e-12)
		}
	}
	d := &Dual{Q: 2, Sigma2: 0.001, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}
	require.NoError(t, d.Fit(x))
	hd, err := d.Transform(view)
	require.NoError(t, err)
	pre, err := d.InverseTransform(hd)
	require.NoError(t, err)
	kc, err := d.Reconstruct(hd)
	require.NoError(t, err)
	smooth, _, err := d.PreImage(kc, 0)
	require.NoError(t, err)
	require.True(t, mat.Equal(pre, smooth))
	require.Equal(t, 20, pre.RawMatrix().Rows)
	_, err = d.Transform(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = p.InverseTransform(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// chooseQ against its formulas: σ² = (trace − Σ_{p<q} λ_p)/(n·(dim − q))
// from the top q, Σ_{p≥q} max(λ_p, 0)/(n·(dim − q)) from all pairs; with q
// = 0 the largest q with σ² ≤ λ_q/n; typed errors for no spectrum, too
// large q and σ² above λ_q/n.
func TestChooseQFormulas(t *testing.T) {
	values := []float64{8, 4, 2, 1, -1e-18}
	const n, dim = 10, 5
	q, s2, err := chooseQ(values, true, 15, n, dim, 2, 0)
	require.NoError(t, err)
	require.Equal(t, 2, q)
	require.InDelta(t, (2+1+0.0)/(n*(dim-2)), s2, 1e-15)
	q, s2, err = chooseQ(values[:3], false, 15, n, dim, 2, 0)
	require.NoError(t, err)
	require.Equal(t, 2, q)
	require.InDelta(t, (15-8-4.0)/(n*(dim-2)), s2, 1e-15)
	// q from σ²: λ_q/n = 0.8, 0.4, 0.2, 0.1.
	for _, c := range []struct {
		s2 float64
		q  int
	}{{0.8, 1}, {0.5, 1}, {0.4, 2}, {0.2, 3}, {0.15, 3}} {
		q, s2, err = chooseQ(values, true, 15, n, dim, 0, c.s2)
		require.NoError(t, err)
		require.Equal(t, c.q, q, "σ² = %g", c.s2)
		require.Equal(t, c.s2, s2)
	}
	_, _, err = chooseQ(values, true, 15, n, dim, 0, 0.81)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, _, err = chooseQ(values[:4], true, 15, n, 4, 0, 0.05) // keeps every dimension
	require.ErrorIs(t, err, status.ErrInvalid)
	// A single pair is a spectrum; none is not.
	q, _, err = chooseQ([]float64{3}, true, 3, n, dim, 1, 0)
	require.NoError(t, err)
	require.Equal(t, 1, q)
	_, _, err = chooseQ(nil, true, 0, n, dim, 1, 0)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, _, err = chooseQ([]float64{0, 0}, true, 0, n, dim, 1, 0)
	require.ErrorIs(t, err, status.ErrInvalid)
	// q beyond the numerical rank, σ² above λ_q/n.
	_, _, err = chooseQ(values, true, 15, n, dim, 5, 0)
	var re *status.RankError
	require.ErrorAs(t, err, &re)
	require.Equal(t, 4, re.Rank)
	_, _, err = chooseQ(values, true, 15, n, dim, 2, 0.41)
	require.ErrorIs(t, err, status.ErrInvalid)
	q, s2, err = chooseQ(values, true, 15, n, dim, 2, 0.4)
	require.NoError(t, err)
	require.Equal(t, 2, q)
	require.Equal(t, 0.4, s2)
}

// Sample draws any positive number of rows, one included.
func TestSampleCounts(t *testing.T) {
	x := randData(t, 30, 4, 5)
	p := &Primal{Q: 2}
	require.NoError(t, p.Fit(x))
	for _, count := range []int{1, 2, 7} {
		s, err := p.Sample(count, 3)
		require.NoError(t, err)
		r, c := s.Dims()
		require.Equal(t, []int{count, 4}, []int{r, c})
	}
	_, err := p.Sample(0, 3)
	require.ErrorIs(t, err, status.ErrInvalid)
	d := &Dual{Q: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}
	require.NoError(t, d.Fit(x))
	ks, err := d.Sample(1, 3)
	require.NoError(t, err)
	r, _ := ks.Dims()
	require.Equal(t, 1, r)
}
