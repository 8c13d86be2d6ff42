package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func TestPaperSigma(t *testing.T) {
	// Entries 0…7 in a 4×2 matrix: mean 3.5, variance 5.25 (population).
	x := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	s, err := PaperSigma(Laplace, x)
	require.NoError(t, err)
	require.InDelta(t, 0.01*2*5.25, s, 1e-15)
	s, err = PaperSigma(Gaussian, x)
	require.NoError(t, err)
	require.InDelta(t, 0.1*math.Sqrt(2)*math.Sqrt(5.25), s, 1e-15)
	_, err = PaperSigma(Linear, x)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = PaperSigma(Gaussian, mat.NewDense(3, 2, nil))
	require.ErrorIs(t, err, status.ErrInvalid, "constant data")
}

func TestParseKindAndMedian(t *testing.T) {
	for name, want := range map[string]Kind{"linear": Linear, "rbf": Gaussian, "gaussian": Gaussian, "laplace": Laplace, "poly": Polynomial,
		"sigmoid": Sigmoid, "cosine": Cosine, "laplacian": Laplacian} {
		k, err := ParseKind(name)
		require.NoError(t, err)
		require.Equal(t, want, k)
		if name != "rbf" && name != "poly" {
			require.Equal(t, name, k.String()) // String's names parse back
		}
	}
	_, err := ParseKind("tanh")
	require.ErrorIs(t, err, status.ErrInvalid)
	x := mat.NewDense(3, 1, []float64{0, 1, 3}) // distances 1, 2, 3
	s, err := MedianSigma(x)
	require.NoError(t, err)
	require.InDelta(t, 2, s, 1e-15)
	_, err = MedianSigma(mat.NewDense(3, 1, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The RFF Gram matrix approaches the Gaussian one with an error that falls
// like 1/√D: the mean absolute error times √D stays within a factor 2 of
// its value at the smallest D, and D = 4096 is at least 5× better than 64.
func TestRFFApproachesGaussian(t *testing.T) {
	x, err := dataset.StandardNormal(40, 3, 1)
	require.NoError(t, err)
	const sigma = 1.5
	g, err := Gram(x, Kernel{Kind: Gaussian, Sigma: sigma})
	require.NoError(t, err)
	errAt := func(d int) float64 {
		total := 0.0
		const seeds = 8
		for seed := uint64(1); seed <= seeds; seed++ {
			r, err := NewRFF(3, d, sigma, seed)
			require.NoError(t, err)
			f, err := r.Map(x)
			require.NoError(t, err)
			var k mat.Dense
			k.Mul(f, f.T())
			for i := 0; i < 40; i++ {
				for j := 0; j < 40; j++ {
					total += math.Abs(k.At(i, j) - g.At(i, j))
				}
			}
		}
		return total / (seeds * 40 * 40)
	}
	base := errAt(64) * 8
	for _, d := range []int{256, 1024, 4096} {
		scaled := errAt(d) * math.Sqrt(float64(d))
		require.InDelta(t, 1, scaled/base, 0.5, "D=%d", d)
	}
	require.Less(t, errAt(4096), errAt(64)/5)

	// The draws themselves: phases uniform on [0, 2π) (mean π, variance
	// (2π)²/12), frequencies N(0, 1/σ²).
	big, err := NewRFF(3, 20000, sigma, 7)
	require.NoError(t, err)
	for _, b := range big.B {
		require.True(t, b >= 0 && b < 2*math.Pi, "phase %g", b)
	}
	require.InDelta(t, math.Pi, stat.Mean(big.B, nil), 0.05)
	require.InDelta(t, 4*math.Pi*math.Pi/12, stat.Variance(big.B, nil), 0.05*4*math.Pi*math.Pi/12)
	w := big.W.RawMatrix().Data
	require.InDelta(t, 0, stat.Mean(w, nil), 0.02/sigma)
	require.InDelta(t, 1/sigma, math.Sqrt(stat.Variance(w, nil)), 0.02/sigma)

	r, err := NewRFF(3, 100, sigma, 2)
	require.NoError(t, err)
	r.Normalize = true
	f, err := r.Map(x)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		require.InDelta(t, 1, mat.Norm(f.RowView(i), 2), 1e-12)
	}
	_, err = r.Map(mat.NewDense(2, 4, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewRFF(3, 10, 0, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	// {784, 1<<40}: frequencies past any machine's memory, refused before
	// they are drawn.
	for _, dims := range [][2]int{{0, 10}, {3, 0}, {-1, 5}, {3, -2}, {784, 1 << 40}} {
		_, err = NewRFF(dims[0], dims[1], 1, 1)
		require.ErrorIs(t, err, status.ErrInvalid, "d = %d, features = %d", dims[0], dims[1])
	}
	// A map whose features of these rows would not fit in memory (2¹¹ rows
	// of 2²² features, 64 GiB) refuses them.
	wide := &RFF{W: mat.NewDense(1, 1<<22, nil), B: make([]float64, 1<<22)}
	_, err = wide.Map(mat.NewDense(1<<11, 1, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = wide.Map(mat.NewDense(1, 1, nil))
	require.NoError(t, err)
}

func TestMedianDistanceBruteForce(t *testing.T) {
	x := randomData(9, 41, 4)
	var ds []float64
	for i := 0; i < 41; i++ {
		for j := i + 1; j < 41; j++ {
			s := 0.0
			for c := 0; c < 4; c++ {
				d := x.At(i, c) - x.At(j, c)
				s += d * d
			}
			ds = append(ds, math.Sqrt(s))
		}
	}
	sort.Float64s(ds)
	want := ds[len(ds)/2] // 820 pairs: even count, mean of the middle two
	want = 0.5 * (ds[len(ds)/2-1] + want)
	got, err := MedianDistance(x, 0)
	require.NoError(t, err)
	require.InDelta(t, want, got, 1e-12*want)
	got10, err := MedianDistance(x, 10)
	require.NoError(t, err)
	sub, err := MedianDistance(mat.DenseCopyOf(x.Slice(0, 10, 0, 4)), 0)
	require.NoError(t, err)
	require.Equal(t, sub, got10)
	_, err = MedianDistance(x, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
}

func randomData(seed uint64, n, d int) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 17))
	x := mat.NewDense(n, d, nil)
	x.Apply(func(_, _ int, _ float64) float64 { return r.NormFloat64() }, x)
	return x
}

// Gram through the kernel package agrees entry by entry with Eval, the
// formula, for every kind; bad kernels are errors.
func TestGramMatchesEval(t *testing.T) {
	x := randomData(4, 30, 5)
	y := randomData(5, 7, 5)
	x.SetRow(3, make([]float64, 5)) // a zero row: cosine 0 with every row
	zero, one := make([]float64, 5), []float64{1, 0, 0, 0, 0}
	require.Zero(t, Kernel{Kind: Cosine}.Eval(zero, one))
	require.Zero(t, Kernel{Kind: Cosine}.Eval(zero, zero))
	require.Equal(t, 1.0, Kernel{Kind: Cosine}.Eval(one, one))
	for _, k := range []Kernel{{Kind: Linear}, {Kind: Gaussian, Sigma: 2.5}, {Kind: Laplace, Sigma: 4},
		{Kind: Polynomial}, {Kind: Polynomial, Degree: 2, Gamma: 0.3, Coef0: 1}, {Kind: Polynomial, Degree: 2, Coef0Set: true},
		{Kind: Sigmoid}, {Kind: Sigmoid, Gamma: 0.4, Coef0: -0.5}, {Kind: Cosine}, {Kind: Laplacian}, {Kind: Laplacian, Gamma: 0.05}} {
		g, err := Gram(x, k)
		require.NoError(t, err)
		c, err := CrossGram(y, x, k)
		require.NoError(t, err)
		for i := 0; i < 30; i++ {
			for j := 0; j < 30; j++ {
				want := k.Eval(x.RawRowView(i), x.RawRowView(j))
				require.InDelta(t, want, g.At(i, j), 1e-12*math.Max(1, math.Abs(want)), "%v (%d,%d)", k.Kind, i, j)
			}
			for r := 0; r < 7; r++ {
				want := k.Eval(y.RawRowView(r), x.RawRowView(i))
				require.InDelta(t, want, c.At(r, i), 1e-12*math.Max(1, math.Abs(want)), "%v cross (%d,%d)", k.Kind, r, i)
			}
		}
	}
	for _, bad := range []Kernel{{Kind: Gaussian}, {Kind: Laplace, Sigma: math.Inf(1)}, {Kind: Kind(42)}, {Kind: Polynomial, Degree: -1},
		{Kind: Sigmoid, Degree: 2}, {Kind: Sigmoid, Gamma: math.NaN()}, {Kind: Sigmoid, Sigma: 1}, {Kind: Cosine, Gamma: 1},
		{Kind: Laplacian, Sigma: 1}, {Kind: Laplacian, Gamma: -1}, {Kind: Laplacian, Gamma: math.Inf(1)}} {
		_, err := Gram(x, bad)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", bad)
		_, err = Rows(x, bad, gram.GramOptions{})
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", bad)
	}
	require.Equal(t, "kind(42)", Kind(42).String())
}

// The polynomial kernel's defaults against the formula written out:
// (⟨x, y⟩/d + c₀)³ for Degree 0 and Gamma 0.
func TestPolynomialDefaults(t *testing.T) {
	x := randomData(6, 9, 4)
	k := Kernel{Kind: Polynomial, Coef0: 0.5}
	g, err := Gram(x, k)
	require.NoError(t, err)
	for i := 0; i < 9; i++ {
		for j := 0; j < 9; j++ {
			dot := 0.0
			for c := 0; c < 4; c++ {
				dot += x.At(i, c) * x.At(j, c)
			}
			want := math.Pow(dot/4+0.5, 3)
			require.InDelta(t, want, g.At(i, j), 1e-12*math.Max(1, math.Abs(want)))
		}
	}
}

// The bandwidth rules by name.
func TestBandwidthRules(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	p, err := Bandwidth("paper", Laplace, x)
	require.NoError(t, err)
	want, _ := PaperSigma(Laplace, x)
	require.Equal(t, want, p)
	m, err := Bandwidth("median", Gaussian, x)
	require.NoError(t, err)
	wantM, _ := MedianSigma(x)
	require.Equal(t, wantM, m)
	v, err := Bandwidth("2.5", Gaussian, x)
	require.NoError(t, err)
	require.Equal(t, 2.5, v)
	for _, bad := range []string{"foo", "-1", "0", "NaN", "Inf"} {
		_, err := Bandwidth(bad, Gaussian, x)
		require.ErrorIs(t, err, status.ErrInvalid, bad)
	}
}

// scikit-learn's γ for the Gaussian and Laplace kernels: Gamma instead of
// Sigma gives exp(−γ‖x − y‖²) and exp(−γ‖x − y‖), the same kernels as
// σ = 1/√(2γ) and σ = 1/γ; both, or a γ that is not positive and finite,
// are refused.
func TestGammaForDistanceKernels(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{0, 0, 1, 0, 0, 2, 3, 1, -1, 1})
	for _, c := range []struct {
		byGamma, bySigma Kernel
		eval             func(d2 float64) float64
	}{
		{Kernel{Kind: Gaussian, Gamma: 0.7}, Kernel{Kind: Gaussian, Sigma: 1 / math.Sqrt(1.4)}, func(d2 float64) float64 { return math.Exp(-0.7 * d2) }},
		{Kernel{Kind: Laplace, Gamma: 0.7}, Kernel{Kind: Laplace, Sigma: 1 / 0.7}, func(d2 float64) float64 { return math.Exp(-0.7 * math.Sqrt(d2)) }},
	} {
		require.NoError(t, c.byGamma.Check())
		g1, err := Gram(x, c.byGamma)
		require.NoError(t, err)
		g2, err := Gram(x, c.bySigma)
		require.NoError(t, err)
		for i := 0; i < 5; i++ {
			for j := 0; j < 5; j++ {
				d2 := math.Pow(x.At(i, 0)-x.At(j, 0), 2) + math.Pow(x.At(i, 1)-x.At(j, 1), 2)
				require.InDelta(t, c.eval(d2), g1.At(i, j), 1e-14, "%v (%d, %d)", c.byGamma.Kind, i, j)
				require.InDelta(t, g2.At(i, j), g1.At(i, j), 1e-14)
				require.InDelta(t, c.eval(d2), c.byGamma.Eval(x.RawRowView(i), x.RawRowView(j)), 1e-14)
			}
		}
		require.InDelta(t, c.bySigma.Sigma, c.byGamma.Bandwidth(), 1e-15)
	}
	for _, bad := range []Kernel{{Kind: Gaussian, Sigma: 1, Gamma: 1}, {Kind: Laplace, Gamma: -1}, {Kind: Gaussian, Gamma: math.Inf(1)}, {Kind: Gaussian}} {
		require.ErrorIs(t, bad.Check(), status.ErrInvalid, "%+v", bad)
	}
}

// scikit-learn's kernels written out from their definitions (sigmoid
// tanh(γ⟨x,y⟩ + c₀), cosine ⟨x,y⟩/(‖x‖‖y‖) with 0 for a zero row,
// laplacian exp(−γ‖x−y‖₁), γ = 1/d and c₀ = 1 unless given) against every
// path of the engine: the float64 Gram, the cross Gram, the float32 tiles
// (storage rounding 2⁻²⁴ relative to the largest entry), the on-demand
// rows in float64 and with float32 products (within their EntryBound)
// and float32 data read in place.
func TestScikitLearnKernelsEveryPath(t *testing.T) {
	const n, d = 37, 6
	x := randomData(21, n, d)
	for c := 0; c < d; c++ {
		x.Set(3, c, 0) // a zero row: cosine gives 0 against it
	}
	y := randomData(22, 5, d)
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	l1 := func(a, b []float64) (s float64) {
		for i := range a {
			s += math.Abs(a[i] - b[i])
		}
		return s
	}
	cases := []struct {
		k    Kernel
		want func(a, b []float64) float64
	}{
		{Kernel{Kind: Sigmoid}, func(a, b []float64) float64 { return math.Tanh(dot(a, b)/d + 1) }},
		{Kernel{Kind: Sigmoid, Gamma: 0.3, Coef0: 0, Coef0Set: true}, func(a, b []float64) float64 { return math.Tanh(0.3 * dot(a, b)) }},
		{Kernel{Kind: Polynomial}, func(a, b []float64) float64 { return math.Pow(dot(a, b)/d+1, 3) }},
		{Kernel{Kind: Cosine}, func(a, b []float64) float64 {
			na, nb := math.Sqrt(dot(a, a)), math.Sqrt(dot(b, b))
			if na == 0 || nb == 0 {
				return 0
			}
			return dot(a, b) / (na * nb)
		}},
		{Kernel{Kind: Laplacian}, func(a, b []float64) float64 { return math.Exp(-l1(a, b) / d) }},
		{Kernel{Kind: Laplacian, Gamma: 0.7}, func(a, b []float64) float64 { return math.Exp(-0.7 * l1(a, b)) }},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%v γ=%g c₀=%g", c.k.Kind, c.k.Gamma, c.k.Coef0)
		g, err := Gram(x, c.k)
		require.NoError(t, err)
		cross, err := CrossGram(y, x, c.k)
		require.NoError(t, err)
		tiles, err := GramTiles32(x, c.k, gram.GramOptions{})
		require.NoError(t, err)
		rows, err := Rows(x, c.k, gram.GramOptions{})
		require.NoError(t, err)
		rows32p, err := Rows(x, c.k, gram.GramOptions{Products: gram.ProductsFloat32})
		require.NoError(t, err)
		x32, err := linalg.NewDense32(n, d)
		require.NoError(t, err)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				x32.Data[i*d+j] = float32(x.At(i, j))
			}
		}
		rows32, err := Rows32(x32, c.k, gram.GramOptions{})
		require.NoError(t, err)
		blk := make([]float64, n*n)
		blk32p := make([]float64, n*n)
		blk32 := make([]float64, n*n)
		rows.Block(blk, n, 0, n, 0, n)
		rows32p.Block(blk32p, n, 0, n, 0, n)
		rows32.Block(blk32, n, 0, n, 0, n)
		top := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				top = math.Max(top, math.Abs(c.want(x.RawRowView(i), x.RawRowView(j))))
			}
		}
		for i := 0; i < n; i++ {
			xi := x.RawRowView(i)
			wi := make([]float64, d)
			for k := range wi {
				wi[k] = float64(x32.Data[i*d+k])
			}
			for j := 0; j < n; j++ {
				want := c.want(xi, x.RawRowView(j))
				tol := 1e-12 * math.Max(1, math.Abs(want))
				require.InDelta(t, want, g.At(i, j), tol, "%s Gram (%d,%d)", name, i, j)
				require.InDelta(t, want, blk[i*n+j], tol, "%s rows (%d,%d)", name, i, j)
				require.InDelta(t, want, tiles.At(i, j), 1.01*math.Ldexp(top, -24)+tol, "%s tiles (%d,%d)", name, i, j)
				b := rows32p.EntryBound(i, j, blk32p[i*n+j])
				require.InDelta(t, want, blk32p[i*n+j], 1.01*b+tol, "%s float32 products (%d,%d)", name, i, j)
				wj := make([]float64, d)
				for k := range wj {
					wj[k] = float64(x32.Data[j*d+k])
				}
				want32 := c.want(wi, wj) // the kernel of the stored float32 values
				require.InDelta(t, want32, blk32[i*n+j], 1.01*rows32.EntryBound(i, j, blk32[i*n+j])+1e-12*math.Max(1, math.Abs(want32)),
					"%s float32 data (%d,%d)", name, i, j)
			}
			for r := 0; r < 5; r++ {
				want := c.want(y.RawRowView(r), xi)
				require.InDelta(t, want, cross.At(r, i), 1e-12*math.Max(1, math.Abs(want)), "%s cross (%d,%d)", name, r, i)
			}
		}
	}
}

// The kernel smoother in closed form: weights v_i − min v (v = k_c +
// row means), x̂ = Σ w_i x_i / Σ w_i; nearest keeps the largest weights;
// weights summing to nothing (against the kernel's scale) give the
// training mean; bad shapes and scales are refused.
func TestSmootherClosedForm(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 0, 2, 0, 0, 4})
	means := []float64{0.5, 0.25, 0.25}
	// v = (0.5+0.5, 0.75+0.25, 0+0.25) = (1, 1, 0.25): w = (0.75, 0.75, 0).
	kc := mat.NewDense(2, 3, []float64{0.5, 0.75, 0, -0.5, -0.25, -0.25})
	got, fallback, err := Smoother(kc, means, x, 0, 1)
	require.NoError(t, err)
	require.Equal(t, 1, fallback, "the second row's v are all equal: no weight")
	require.InDeltaSlice(t, []float64{1, 0}, got.RawRowView(0), 1e-15) // (0.75·(0,0) + 0.75·(2,0))/1.5
	require.InDeltaSlice(t, []float64{2.0 / 3, 4.0 / 3}, got.RawRowView(1), 1e-15)
	// v = (1, 0.5, 0.75) → w = (0.5, 0, 0.25); nearest 1 keeps only x₀.
	kc1 := mat.NewDense(1, 3, []float64{0.5, 0.25, 0.5})
	got, _, err = Smoother(kc1, means, x, 0, 1)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{0, 4.0 / 3}, got.RawRowView(0), 1e-15) // (0.5·(0,0) + 0.25·(0,4))/0.75
	got, _, err = Smoother(kc1, means, x, 1, 1)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{0, 0}, got.RawRowView(0), 1e-15)
	_, _, err = Smoother(kc1, means[:2], x, 0, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, _, err = Smoother(kc1, means, x, 4, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, _, err = Smoother(kc1, means, x, 0, bad)
		require.ErrorIs(t, err, status.ErrInvalid, "scale %g", bad)
	}
	// Weights are measured against the kernel's scale, not 1: the same
	// vectors scaled by 2⁻⁶⁰ (a kernel of that size) give the same
	// pre-images, and no row falls back to the mean for its size alone.
	c := math.Ldexp(1, -60)
	small, smallMeans := mat.DenseCopyOf(kc1), []float64{means[0] * c, means[1] * c, means[2] * c}
	small.Scale(c, small)
	got, fallback, err = Smoother(small, smallMeans, x, 0, c)
	require.NoError(t, err)
	require.Zero(t, fallback)
	require.InDeltaSlice(t, []float64{0, 4.0 / 3}, got.RawRowView(0), 1e-15)
	// DiagonalMean: tr(K)/n from K_c and the centring.
	k := mat.NewSymDense(3, []float64{4, 1, 2, 1, 3, 0, 2, 0, 5})
	kcs := mat.NewSymDense(3, nil)
	kcs.CopySym(k)
	ce, err := linalg.CenterKernelInPlace(kcs)
	require.NoError(t, err)
	require.InDelta(t, 4.0, DiagonalMean(kcs, ce), 1e-14)
}

// Check refuses a γ that is not positive and finite when σ is unset, and
// a σ so small that 1/(2σ²) overflows; Bandwidth gives σ = 1/√(2γ) for a
// kernel set by γ.
func TestCheckGammaAndTinySigma(t *testing.T) {
	for _, g := range []float64{-1, math.Inf(1), math.NaN()} {
		for _, kind := range []Kind{Gaussian, Laplace} {
			err := Kernel{Kind: kind, Gamma: g}.Check()
			require.ErrorIs(t, err, status.ErrInvalid, "γ = %g", g)
			require.Contains(t, err.Error(), fmt.Sprintf("γ = %g must be positive and finite", g), "the message names γ, not the σ it would give")
		}
	}
	require.ErrorIs(t, Kernel{Kind: Gaussian, Sigma: 1e-300}.Check(), status.ErrInvalid)
	require.NoError(t, Kernel{Kind: Gaussian, Sigma: 1e-100}.Check())
	require.NoError(t, Kernel{Kind: Gaussian, Gamma: 0.5}.Check())
	require.InDelta(t, 1, Kernel{Kind: Gaussian, Gamma: 0.5}.Bandwidth(), 1e-15)
	require.InDelta(t, 0.1, Kernel{Kind: Gaussian, Gamma: 50}.Bandwidth(), 1e-15)
	require.Equal(t, 2.0, Kernel{Kind: Gaussian, Sigma: 2}.Bandwidth())
}

// The kernels' properties hold on data, and where a kernel is said not
// to have one, data show it: entries ≥ 0 (NonNegative), k(x, x) = 1
// (UnitDiagonal), k(x + c, y + c) = k(x, y) (ShiftInvariant), Gram
// matrices without negative eigenvalues (PSD; the sigmoid's has one).
func TestKernelPropertiesOnData(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n, d = 30, 4
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, 2*r.NormFloat64())
		}
	}
	for j := 0; j < d; j++ {
		x.Set(0, j, 0) // the cosine kernel is 0 at x = 0
	}
	shift := []float64{3, -1, 0.5, 7}
	kernels := []Kernel{{Kind: Linear}, {Kind: Gaussian, Sigma: 2}, {Kind: Laplace, Sigma: 3}, {Kind: Polynomial, Degree: 3, Gamma: 0.5},
		{Kind: Sigmoid, Gamma: 2, Coef0: -1}, {Kind: Cosine}, {Kind: Laplacian, Gamma: 0.3}}
	for _, k := range kernels {
		neg, diag, shifted := false, true, true
		for i := 0; i < n; i++ {
			xi := x.RawRowView(i)
			if math.Abs(k.Eval(xi, xi)-1) > 1e-15 {
				diag = false
			}
			xs := make([]float64, d)
			for j := range xs {
				xs[j] = xi[j] + shift[j]
			}
			for l := 0; l < n; l++ {
				xl := x.RawRowView(l)
				v := k.Eval(xi, xl)
				neg = neg || v < 0
				ls := make([]float64, d)
				for j := range ls {
					ls[j] = xl[j] + shift[j]
				}
				if math.Abs(k.Eval(xs, ls)-v) > 1e-12*math.Max(1, math.Abs(v)) {
					shifted = false
				}
			}
		}
		require.Equal(t, k.NonNegative(), !neg, "%v NonNegative", k.Kind)
		require.Equal(t, k.UnitDiagonal(), diag, "%v UnitDiagonal", k.Kind)
		require.Equal(t, k.ShiftInvariant(), shifted, "%v ShiftInvariant", k.Kind)
		g, err := Gram(x, k)
		require.NoError(t, err)
		var es mat.EigenSym
		require.True(t, es.Factorize(g, false))
		vals := es.Values(nil)
		top := math.Max(math.Abs(vals[0]), math.Abs(vals[n-1]))
		require.Equal(t, k.PSD(), vals[0] >= -1e-10*top, "%v PSD: smallest eigenvalue %g of %g", k.Kind, vals[0], top)
	}
}

// A kernel written as a model file's Spec reads back as the same kernel,
// c₀ of the polynomial and sigmoid kernels resolved and marked set.
func TestSpecRoundTrip(t *testing.T) {
	for _, k := range []Kernel{{Kind: Linear}, {Kind: Gaussian, Sigma: 2}, {Kind: Gaussian, Gamma: 0.5}, {Kind: Laplace, Sigma: 3},
		{Kind: Polynomial, Degree: 2, Gamma: 0.5}, {Kind: Polynomial, Degree: 3, Coef0: 0, Coef0Set: true}, {Kind: Sigmoid, Gamma: 1, Coef0: 2, Coef0Set: true},
		{Kind: Cosine}, {Kind: Laplacian, Gamma: 0.3}} {
		s := k.Spec()
		require.Equal(t, k.Kind.String(), s.Kind)
		back, err := s.Kernel()
		require.NoError(t, err, "%+v", k)
		x, y := []float64{1, 2, -0.5}, []float64{0.3, -1, 2}
		require.Equal(t, k.Eval(x, y), back.Eval(x, y), "%+v", k)
		if k.Kind == Polynomial || k.Kind == Sigmoid {
			require.True(t, s.Coef0Set)
			require.Equal(t, k.C0(), s.Coef0)
		}
	}
	// An old file's polynomial kernel without coef0_set: c₀ as written.
	old, err := Spec{Kind: "polynomial", Degree: 2, Gamma: 1}.Kernel()
	require.NoError(t, err)
	require.Equal(t, 9.0, old.Eval([]float64{1, 2}, []float64{1, 1}), "(1·3 + 0)²")
	_, err = Spec{Kind: "gaussian", Sigma: -1}.Kernel()
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Spec{Kind: "wavelet"}.Kernel()
	require.ErrorIs(t, err, status.ErrInvalid)
}

// RowsInt8 takes data on an 8-bit grid to the integer path (the same
// blocks as Rows to rounding), declines other data with nil and no error,
// and refuses empty data and a bad kernel.
func TestRowsInt8(t *testing.T) {
	const n, d = 40, 6
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64((5*i+3*j)%256)/255) // 8-bit levels, as images are stored
		}
	}
	k := Kernel{Kind: Gaussian, Sigma: 0.8}
	o := gram.GramOptions{Int8: gram.GridOn}
	kr, err := RowsInt8(x, k, o)
	require.NoError(t, err)
	require.NotNil(t, kr)
	require.True(t, kr.Int8())
	ref, err := Rows(x, k, gram.GramOptions{})
	require.NoError(t, err)
	got, want := make([]float64, n*n), make([]float64, n*n)
	kr.Block(got, n, 0, n, 0, n)
	ref.Block(want, n, 0, n, 0, n)
	for i := range got {
		require.InDelta(t, want[i], got[i], 1e-12)
	}
	off := mat.DenseCopyOf(x)
	off.Set(3, 2, 0.5/255) // off the grid
	kr, err = RowsInt8(off, k, o)
	require.NoError(t, err)
	require.Nil(t, kr)
	_, err = RowsInt8(nil, k, o)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = RowsInt8(&mat.Dense{}, k, o)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = RowsInt8(x, Kernel{Kind: Gaussian, Sigma: -1}, o)
	require.ErrorIs(t, err, status.ErrInvalid)
}
