package kmvda

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/status"
)

// multiView makes v views of c classes with per samples each: view j of
// class i is a class centre seen through a view-specific linear map, plus
// noise.
func multiView(t testing.TB, v, c, per, d int, seed uint64) ([]*mat.Dense, [][]int) {
	t.Helper()
	rng := dataset.NewRand(seed)
	centres := make([][]float64, c)
	for i := range centres {
		centres[i] = make([]float64, d)
		for a := range centres[i] {
			centres[i][a] = 2 * rng.NormFloat64()
		}
	}
	views := make([]*mat.Dense, v)
	labels := make([][]int, v)
	for j := 0; j < v; j++ {
		mix := make([]float64, d*d)
		for a := range mix {
			mix[a] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		mj := mat.NewDense(d, d, mix)
		x := mat.NewDense(c*per, d, nil)
		for i := 0; i < c; i++ {
			for k := 0; k < per; k++ {
				row := make([]float64, d)
				for a := range row {
					row[a] = centres[i][a] + 0.3*rng.NormFloat64()
				}
				var y mat.VecDense
				y.MulVec(mj.T(), mat.NewVecDense(d, row))
				x.SetRow(i*per+k, y.RawVector().Data)
				labels[j] = append(labels[j], i)
			}
		}
		views[j] = x
	}
	return views, labels
}

// explicitH builds H^S and H^D of Eqs. 7 and 8 as n×n matrices.
func explicitH(labels [][]int) (hs, hd *mat.Dense) {
	var all []int
	for _, l := range labels {
		all = append(all, l...)
	}
	n := len(all)
	count := map[int]float64{}
	for _, l := range all {
		count[l]++
	}
	hs, hd = mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	for a := 0; a < n; a++ {
		hs.Set(a, a, 1)
		for b := 0; b < n; b++ {
			hd.Set(a, b, -1/float64(n))
			if all[a] == all[b] {
				hs.Set(a, b, hs.At(a, b)-1/count[all[a]])
				hd.Set(a, b, hd.At(a, b)+1/count[all[a]])
			}
		}
	}
	return hs, hd
}

func minEig(t *testing.T, a mat.Symmetric) (lo, hi float64) {
	var e mat.EigenSym
	require.True(t, e.Factorize(a, false))
	v := e.Values(nil)
	return v[0], v[len(v)-1]
}

func symOf(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

// Lemma 1: with equal class sizes, ‖H^D‖ = ‖H^S‖ = 1, and D, S are positive
// semi-definite; kdual's scatters equal X̃ᵀ H X̃ with X̃ = blockdiag(X_j).
func TestLemma1AndScatters(t *testing.T) {
	views, labels := multiView(t, 3, 4, 5, 3, 1)
	hs, hd := explicitH(labels)
	_, hsMax := minEig(t, symOf(hs))
	hdMin, hdMax := minEig(t, symOf(hd))
	require.InDelta(t, 1, hsMax, 1e-12)
	require.InDelta(t, 1, math.Max(hdMax, -hdMin), 1e-12)

	classOf := map[int]int{0: 0, 1: 1, 2: 2, 3: 3}
	sizes := []float64{15, 15, 15, 15}
	d, s := primalScatters(views, labels, classOf, sizes)
	xt := mat.NewDense(60, 9, nil)
	for j, x := range views {
		xt.Slice(20*j, 20*j+20, 3*j, 3*j+3).(*mat.Dense).Copy(x)
	}
	var want, tmp mat.Dense
	tmp.Mul(hd, xt)
	want.Mul(xt.T(), &tmp)
	require.True(t, mat.EqualApprox(d, &want, 1e-10))
	tmp.Mul(hs, xt)
	want.Mul(xt.T(), &tmp)
	require.True(t, mat.EqualApprox(s, &want, 1e-10))
	for _, m := range []*mat.SymDense{d, s} {
		lo, hi := minEig(t, m)
		require.GreaterOrEqual(t, lo, -1e-10*hi)
	}

	// The kernel form: D = KH^DK, S = KH^SK, also semi-definite.
	ks := make([]*mat.SymDense, 3)
	for j, x := range views {
		g, err := kernel.Gram(x, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2})
		require.NoError(t, err)
		ks[j] = g
	}
	dk, sk := dualScatters(ks, labels, classOf, sizes)
	k := blockDiag(ks)
	tmp.Reset()
	want.Reset()
	tmp.Mul(hd, k)
	want.Mul(k, &tmp)
	require.True(t, mat.EqualApprox(dk, &want, 1e-10))
	tmp.Mul(hs, k)
	want.Mul(k, &tmp)
	require.True(t, mat.EqualApprox(sk, &want, 1e-10))
	for _, m := range []*mat.SymDense{dk, sk} {
		lo, hi := minEig(t, m)
		require.GreaterOrEqual(t, lo, -1e-10*hi)
	}
}

// The generalised eigenpairs satisfy ‖Dz − λ(S + εI)z‖ ≤ 1e-9·‖D‖‖z‖.
func TestGEPResidual(t *testing.T) {
	views, labels := multiView(t, 2, 6, 4, 5, 2)
	for _, kind := range []Kind{Linear, RBF, RFF} {
		m := &Model{Kind: kind, Sigma: 3, Features: 64}
		require.NoError(t, m.Fit(views, labels))
		classOf := map[int]int{}
		var sizes []float64
		for i := 0; i < 6; i++ {
			classOf[i] = i
			sizes = append(sizes, 8)
		}
		var d, s *mat.SymDense
		var z *mat.Dense
		switch kind {
		case Linear:
			d, s = primalScatters(views, labels, classOf, sizes)
			z = stack(m.w)
		case RFF:
			feats := make([]*mat.Dense, 2)
			for j := range views {
				feats[j], _ = m.rff[j].Map(views[j])
			}
			d, s = primalScatters(feats, labels, classOf, sizes)
			z = stack(m.w)
		case RBF:
			ks := make([]*mat.SymDense, 2)
			for j, x := range views {
				ks[j], _ = kernel.Gram(x, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3})
			}
			d, s = dualScatters(ks, labels, classOf, sizes)
			z = stack(m.z)
		}
		vals, err := m.Eigenvalues()
		require.NoError(t, err)
		require.Equal(t, 5, len(vals), "l = c − 1")
		eps := m.Info().Epsilon
		dn := mat.Norm(d, 2)
		for c, lam := range vals {
			zc := z.ColView(c)
			var dz, sz mat.VecDense
			dz.MulVec(d, zc)
			sz.MulVec(s, zc)
			sz.AddScaledVec(&sz, eps, zc)
			dz.AddScaledVec(&dz, -lam, &sz)
			tol := 1e-9
			if m.Info().Form == "dual" && kind == RFF {
				// Found through the n-dimensional form, which squares the
				// conditioning of the feature Gram matrix.
				tol = 1e-5
			}
			require.Less(t, mat.Norm(&dz, 2), tol*dn*mat.Norm(zc, 2), "%v direction %d", kind, c)
		}
	}
}

func stack(parts []*mat.Dense) *mat.Dense {
	rows, cols := 0, 0
	for _, p := range parts {
		r, c := p.Dims()
		rows, cols = rows+r, c
	}
	out := mat.NewDense(rows, cols, nil)
	off := 0
	for _, p := range parts {
		r, _ := p.Dims()
		out.Slice(off, off+r, 0, cols).(*mat.Dense).Copy(p)
		off += r
	}
	return out
}

// With identical views MvDA is LDA: the same eigenvalues (at the same ε)
// and every view's direction equal to LDA's.
func TestIdenticalViewsIsLDA(t *testing.T) {
	views, labels := multiView(t, 1, 5, 6, 4, 3)
	x := views[0]
	m := &Model{}
	require.NoError(t, m.Fit([]*mat.Dense{x, x, x}, [][]int{labels[0], labels[0], labels[0]}))
	// LDA: S_b w = λ (S_w + εI) w from class means.
	classOf := map[int]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 4}
	sb, sw := primalScatters([]*mat.Dense{x}, [][]int{labels[0]}, classOf, []float64{6, 6, 6, 6, 6})
	// Cross-check S_w, S_b against the textbook sums.
	means := make([][]float64, 5)
	total := make([]float64, 4)
	for k := 0; k < 30; k++ {
		if means[labels[0][k]] == nil {
			means[labels[0][k]] = make([]float64, 4)
		}
		for a := 0; a < 4; a++ {
			means[labels[0][k]][a] += x.At(k, a) / 6
			total[a] += x.At(k, a) / 30
		}
	}
	for a := 0; a < 4; a++ {
		for b := 0; b < 4; b++ {
			w, bt := 0.0, 0.0
			for k := 0; k < 30; k++ {
				mu := means[labels[0][k]]
				w += (x.At(k, a) - mu[a]) * (x.At(k, b) - mu[b])
			}
			for i := 0; i < 5; i++ {
				bt += 6 * (means[i][a] - total[a]) * (means[i][b] - total[b])
			}
			require.InDelta(t, w, sw.At(a, b), 1e-9)
			require.InDelta(t, bt, sb.At(a, b), 1e-9)
		}
	}
	eps := m.Info().Epsilon
	tr := 0.0
	for a := 0; a < 4; a++ {
		tr += sw.At(a, a)
	}
	z, vals, _, _, err := solveGEP(nil, sb, sw, nil, 4, eps/(tr/4), 0)
	require.NoError(t, err)
	got, err := m.Eigenvalues()
	require.NoError(t, err)
	require.Len(t, got, 4)
	for c := 0; c < 4; c++ {
		require.InDelta(t, vals[c], got[c], 1e-9*vals[0])
		for j := 0; j < 3; j++ {
			w := m.w[j].ColView(c)
			ratio := mat.Dot(w, z.ColView(c)) / mat.Dot(z.ColView(c), z.ColView(c))
			for a := 0; a < 4; a++ {
				require.InDelta(t, ratio*z.At(a, c), w.AtVec(a), 1e-8*mat.Norm(w, 2))
			}
		}
	}
}

// Projections of training points are Z_jᵀ k(X_j, x); cross-view 1-NN
// recognises the classes of well-separated data.
func TestProjectAndRank1(t *testing.T) {
	views, labels := multiView(t, 2, 8, 5, 6, 4)
	m := &Model{Kind: RBF, Sigma: 4}
	require.NoError(t, m.Fit(views, labels))
	p, err := m.Transform(1, views[1])
	require.NoError(t, err)
	g, err := kernel.Gram(views[1], kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4})
	require.NoError(t, err)
	var want mat.Dense
	want.Mul(g, m.z[1])
	require.True(t, mat.EqualApprox(p, &want, 1e-10))

	test, testLabels := multiView(t, 2, 8, 5, 6, 4) // the same distribution
	for _, kind := range []Kind{Linear, RBF, RFF} {
		m := &Model{Kind: kind, Sigma: 4, Features: 512}
		require.NoError(t, m.Fit(views, labels))
		gal, err := m.Transform(0, test[0])
		require.NoError(t, err)
		pr, err := m.Transform(1, test[1])
		require.NoError(t, err)
		acc, err := Rank1(gal, pr, testLabels[0], testLabels[1])
		require.NoError(t, err)
		require.Greater(t, acc, 0.9, "%v", kind)
	}
}

func TestErrors(t *testing.T) {
	views, labels := multiView(t, 2, 3, 2, 3, 5)
	m := &Model{}
	require.ErrorIs(t, m.Fit(views, labels[:1]), status.ErrInvalid)
	require.ErrorIs(t, m.Fit(views, [][]int{labels[0], labels[1][:3]}), status.ErrInvalid)
	bad := mat.DenseCopyOf(views[0])
	bad.Set(0, 0, math.NaN())
	require.ErrorIs(t, m.Fit([]*mat.Dense{bad, views[1]}, labels), status.ErrInvalid)
	// A class with a single sample in all views.
	lone := [][]int{{0, 0, 1, 1, 2, 9}, {0, 0, 1, 1, 2, 2}}
	require.ErrorIs(t, m.Fit(views, lone), status.ErrInvalid)
	require.ErrorIs(t, (&Model{Kind: RBF}).Fit(views, labels), status.ErrInvalid) // no σ
	_, err := m.Transform(0, views[0])
	require.ErrorIs(t, err, ErrNotFitted)
	require.NoError(t, m.Fit(views, labels))
	_, err = m.Transform(0, mat.NewDense(2, 5, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = m.Transform(3, views[0])
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Rank1(mat.NewDense(2, 2, nil), mat.NewDense(2, 3, nil), []int{0, 1}, []int{0, 1})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = ParseKind("cubic")
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The RFF problem solved in its n-dimensional dual form gives the primal
// form's eigenvalues and directions w = Fᵀz.
func TestRFFDualFormEqualsPrimal(t *testing.T) {
	views, labels := multiView(t, 2, 6, 3, 4, 6) // n = 36 < v·m = 64
	p := &Model{Kind: RFF, Sigma: 2, Features: 32, Dim: 4, forcePrimal: true}
	require.NoError(t, p.Fit(views, labels))
	require.Equal(t, "primal", p.Info().Form)
	d := &Model{Kind: RFF, Sigma: 2, Features: 32, Dim: 4}
	require.NoError(t, d.Fit(views, labels))
	require.Equal(t, "dual", d.Info().Form)
	require.InDelta(t, p.Info().Epsilon, d.Info().Epsilon, 1e-12*p.Info().Epsilon)
	pv, _ := p.Eigenvalues()
	dv, _ := d.Eigenvalues()
	for c := range pv {
		require.InDelta(t, pv[c], dv[c], 1e-8*pv[0])
	}
	for j := 0; j < 2; j++ {
		pp, err := p.Transform(j, views[j])
		require.NoError(t, err)
		dp, err := d.Transform(j, views[j])
		require.NoError(t, err)
		for c := 0; c < 4; c++ {
			// Same direction up to scale and sign.
			a, b := pp.ColView(c), dp.ColView(c)
			cos := mat.Dot(a, b) / (mat.Norm(a, 2) * mat.Norm(b, 2))
			require.InDelta(t, 1, math.Abs(cos), 1e-8, "view %d direction %d", j, c)
		}
	}
}

// Boundaries: a two-view RBF model saves and loads, a gallery
// and a probe of one item each score 0 or 1, kinds print their names and
// an unknown kind its number.
func TestBoundaries(t *testing.T) {
	views, labels := multiView(t, 2, 5, 4, 6, 11)
	m := &Model{Kind: RBF, Sigma: 3, Dim: 3}
	require.NoError(t, m.Fit(views, labels))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	l, err := Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	a, _ := m.Transform(1, views[1])
	b, _ := l.Transform(1, views[1])
	require.True(t, mat.Equal(a, b))

	one := mat.NewDense(1, 2, []float64{1, 2})
	acc, err := Rank1(one, one, []int{4}, []int{4})
	require.NoError(t, err)
	require.Equal(t, 1.0, acc)
	acc, err = Rank1(one, mat.NewDense(2, 2, []float64{1, 2, 0, 0}), []int{4}, []int{4, 5})
	require.NoError(t, err)
	require.Equal(t, 0.5, acc)
	_, err = Rank1(mat.NewDense(1, 2, nil), one, nil, []int{1})
	require.ErrorIs(t, err, status.ErrInvalid)

	require.Equal(t, "linear", Linear.String())
	require.Equal(t, "rbf", RBF.String())
	require.Equal(t, "rff", RFF.String())
	require.Equal(t, "Kind(3)", Kind(3).String())
	require.Equal(t, "Kind(-1)", Kind(-1).String())
	for _, k := range []Kind{Linear, RBF, RFF} {
		back, err := ParseKind(k.String())
		require.NoError(t, err)
		require.Equal(t, k, back)
	}
}

// Rank1's tie rule: of equally near gallery items the first counts.
func TestRank1Ties(t *testing.T) {
	gal := mat.NewDense(3, 1, []float64{1, 1, 5})
	probe := mat.NewDense(1, 1, []float64{1})
	acc, err := Rank1(gal, probe, []int{7, 8, 9}, []int{7})
	require.NoError(t, err)
	require.Equal(t, 1.0, acc)
	acc, err = Rank1(gal, probe, []int{8, 7, 9}, []int{7})
	require.NoError(t, err)
	require.Equal(t, 0.0, acc)
}

// The random features of view j are kernel.NewRFF(d, Features, σ,
// Seed + 7919·j), normalised; Features 0 means 1024 and Seed 0 means 1.
func TestRFFFeaturesPerView(t *testing.T) {
	views, labels := multiView(t, 3, 5, 4, 6, 13)
	for _, c := range []struct {
		m        Model
		features int
		seed     uint64
	}{
		{Model{Kind: RFF, Sigma: 3, Dim: 2}, 1024, 1},
		{Model{Kind: RFF, Sigma: 3, Dim: 2, Features: 40, Seed: 9}, 40, 9},
	} {
		m := c.m
		require.NoError(t, m.Fit(views, labels))
		require.Len(t, m.rff, 3)
		for j, x := range views {
			_, d := x.Dims()
			want, err := kernel.NewRFF(d, c.features, 3, c.seed+uint64(j)*7919)
			require.NoError(t, err)
			want.Normalize = true
			a, err := want.Map(x)
			require.NoError(t, err)
			b, err := m.rff[j].Map(x)
			require.NoError(t, err)
			require.True(t, mat.Equal(a, b), "view %d", j)
		}
	}
}

// A class needs two samples over all views, no more: one sample in each
// of two views fits.
func TestTwoSamplesPerClassFit(t *testing.T) {
	views, labels := multiView(t, 2, 4, 1, 3, 7)
	m := &Model{Kind: Linear}
	require.NoError(t, m.Fit(views, labels))
	labels[1][0] = 99 // class 0 now has one sample, class 99 one
	require.ErrorIs(t, (&Model{Kind: Linear}).Fit(views, labels), status.ErrInvalid)
}

// Reg 0 is the documented default 1e-3 (the same bits as spelled out;
// another value differs), and a negative Reg asks for no regularisation.
func TestDefaultRegularisation(t *testing.T) {
	views, labels := multiView(t, 2, 4, 5, 6, 17)
	fit := func(reg float64) []float64 {
		m := &Model{Kind: Linear, Reg: reg}
		require.NoError(t, m.Fit(views, labels))
		v, _ := m.Eigenvalues()
		return v
	}
	require.Equal(t, fit(1e-3), fit(0))
	require.NotEqual(t, fit(2e-3), fit(0))
	require.NotEqual(t, fit(-1), fit(0))
}

// Rank1's nearest neighbour is Euclidean: on a line with the gallery at 0
// and 2, the probe at 0.9 is nearest 0 and the one at 1.1 nearest 2 (a
// product ⟨p, g⟩ weighted other than 2 against ‖g‖² would move the
// boundary away from 1).
func TestRank1Euclidean(t *testing.T) {
	gallery := mat.NewDense(2, 1, []float64{0, 2})
	for _, c := range []struct {
		p     float64
		label int
	}{{0.9, 0}, {1.1, 1}, {-3, 0}, {5, 1}} {
		rate, err := Rank1(gallery, mat.NewDense(1, 1, []float64{c.p}), []int{0, 1}, []int{c.label})
		require.NoError(t, err)
		require.Equal(t, 1.0, rate, "probe %g", c.p)
	}
}
