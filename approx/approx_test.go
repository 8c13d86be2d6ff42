package approx

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func data(t *testing.T, n, d int, seed uint64) *mat.Dense {
	t.Helper()
	x, err := dataset.StandardNormal(n, d, seed)
	require.NoError(t, err)
	return x
}

var gauss = kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}

// residual returns K − F·Fᵀ explicitly.
func residual(t *testing.T, x *mat.Dense, k kernel.Kernel, f mat.Matrix) *mat.Dense {
	t.Helper()
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	e := mat.DenseCopyOf(g)
	var ff mat.Dense
	ff.Mul(f, f.T())
	e.Sub(e, &ff)
	return e
}

// With m = n landmarks the factor reproduces K to rounding; the reported
// trace error is exactly tr(K − K̂)/tr(K) of the explicit matrices and
// shrinks as m grows; the training points map to their training features.
func TestNystromExactAndTraceError(t *testing.T) {
	x := data(t, 120, 3, 1)
	for _, sampler := range []Sampler{RPCholesky, Uniform} {
		full, err := Nystrom{Rank: 120, Sampler: sampler, Block: 16}.Fit(x, gauss)
		require.NoError(t, err)
		e := residual(t, x, gauss, full.Train())
		require.Less(t, mat.Norm(e, math.Inf(1)), 1e-9, sampler.String())
		prev := 1.0
		for _, m := range []int{5, 10, 20, 40} {
			ny, err := Nystrom{Rank: m, Sampler: sampler, Block: 8, Seed: 3}.Fit(x, gauss)
			require.NoError(t, err)
			info := ny.Info()
			require.Equal(t, m, info.Rank)
			e := residual(t, x, gauss, ny.Train())
			tr := 0.0
			for i := 0; i < 120; i++ {
				tr += e.At(i, i)
			}
			require.InDelta(t, tr/120, info.TraceError, 1e-12, "%v m=%d", sampler, m)
			require.InDelta(t, tr, info.EigenvalueBound, 1e-10)
			require.Less(t, info.TraceError, prev, "%v: trace error shrinks with m", sampler)
			prev = info.TraceError
			// K − K̂ is positive semi-definite: its smallest eigenvalue is
			// ≥ −rounding.
			ev, err := linalg.SymEig(linalg.SymPart(e), 0)
			require.NoError(t, err)
			require.Greater(t, ev.Values[len(ev.Values)-1], -1e-10)
			// Map(X) = F.
			fx, err := ny.Map(x)
			require.NoError(t, err)
			var d mat.Dense
			d.Sub(fx, ny.Train())
			require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-8*mat.Norm(ny.Train(), math.Inf(1)))
		}
	}
}

// Pivots are never repeated, and a kernel of rank 5 (five distinct points
// repeated) stops at 5 landmarks, whatever m, for both samplers.
func TestNystromRankDeficient(t *testing.T) {
	base := data(t, 5, 2, 4)
	x := mat.NewDense(60, 2, nil)
	for i := 0; i < 60; i++ {
		copy(x.RawRowView(i), base.RawRowView(i%5))
	}
	for _, sampler := range []Sampler{RPCholesky, Uniform} {
		ny, err := Nystrom{Rank: 30, Sampler: sampler, Block: 7}.Fit(x, gauss)
		require.NoError(t, err)
		require.Equal(t, 5, ny.Info().Rank, sampler.String())
		seen := map[int]bool{}
		for _, p := range ny.Landmarks {
			require.False(t, seen[p], "pivot %d repeated", p)
			seen[p] = true
		}
		require.Less(t, ny.Info().TraceError, 1e-10)
	}
}

// Adaptive mode: TraceTol stops as soon as the trace error is below it.
// RPCholesky reaches a given trace error with fewer landmarks than uniform
// sampling on clustered data (seeded).
func TestNystromAdaptiveAndSamplers(t *testing.T) {
	x := data(t, 400, 4, 5)
	// Clusters of very different sizes.
	for i := 0; i < 400; i++ {
		row := x.RawRowView(i)
		shift := 0.0
		if i%20 == 0 {
			shift = 8
		}
		for j := range row {
			row[j] = 0.3*row[j] + shift*float64(j%2)
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5}
	rp, err := Nystrom{Rank: 400, TraceTol: 1e-2, Block: 10, Seed: 1}.Fit(x, k)
	require.NoError(t, err)
	require.LessOrEqual(t, rp.Info().TraceError, 1e-2)
	un, err := Nystrom{Rank: 400, Sampler: Uniform, TraceTol: 1e-2, Block: 10, Seed: 1}.Fit(x, k)
	require.NoError(t, err)
	require.LessOrEqual(t, un.Info().TraceError, 1e-2)
	require.Less(t, rp.Info().Rank, un.Info().Rank, "rpcholesky %d landmarks, uniform %d", rp.Info().Rank, un.Info().Rank)
}

func TestBadInput(t *testing.T) {
	x := data(t, 10, 2, 6)
	for _, ny := range []Nystrom{{Rank: 0}, {Rank: 11}, {Rank: 3, TraceTol: -1}, {Rank: 3, Sampler: Sampler(7)}} {
		_, err := ny.Fit(x, gauss)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", ny)
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 1, math.NaN())
	_, err := Nystrom{Rank: 3}.Fit(bad, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	// 8-bit data with one bad entry: the integer path refuses them and
	// the check names the entry.
	pix := mat.NewDense(40, 3, nil)
	for i := 0; i < 40; i++ {
		for j := 0; j < 3; j++ {
			pix.Set(i, j, float64((i*37+j*11)%256)/255)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		b := mat.DenseCopyOf(pix)
		b.Set(17, 2, v)
		_, err = Nystrom{Rank: 3, Float32: true}.Fit(b, gauss)
		require.ErrorIs(t, err, status.ErrInvalid, "%g", v)
	}
	_, err = Nystrom{Rank: 3, Float32: true}.Fit(pix, gauss)
	require.NoError(t, err)
	_, err = Nystrom{Rank: 3}.Fit(nil, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	// A kernel whose values overflow (the cubic polynomial of entries
	// near 10⁶⁰) is refused naming the row, not "no landmark accepted";
	// entries whose squared norms overflow are refused before any kernel
	// value, whatever the kernel.
	big := mat.DenseCopyOf(x)
	big.Scale(1e60, big)
	_, err = Nystrom{Rank: 3}.Fit(big, kernel.Kernel{Kind: kernel.Polynomial, Degree: 3})
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "past float64's range")
	big.Scale(1e150, big)
	for _, k := range []kernel.Kernel{gauss, {Kind: kernel.Linear}, {Kind: kernel.Cosine}} {
		_, err = Nystrom{Rank: 3}.Fit(big, k)
		require.ErrorIs(t, err, status.ErrInvalid, "%v", k.Kind)
		require.ErrorContains(t, err, "overflow float64", "%v", k.Kind)
	}
	// Float32 features of data beyond float32's range are refused (they
	// gave NaN or lost their digits), float64 ones taken.
	for _, p := range []int{-70, 70} {
		far := mat.DenseCopyOf(x)
		far.Scale(math.Ldexp(1, p), far)
		lin := kernel.Kernel{Kind: kernel.Linear}
		_, err = Nystrom{Rank: 3, Float32: true}.Fit(far, lin)
		require.ErrorIs(t, err, status.ErrInvalid, "2^%d", p)
		require.ErrorContains(t, err, "float32's range", "2^%d", p)
		_, err = Nystrom{Rank: 3}.Fit(far, lin)
		require.NoError(t, err, "2^%d float64", p)
	}
	_, err = RFF{Features: 0}.Fit(x, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	one, err := RFF{Features: 1}.Fit(x, gauss) // the least count is a map
	require.NoError(t, err)
	require.Equal(t, 1, one.Info().Rank)
	_, err = RFF{Features: 8}.Fit(x, kernel.Kernel{Kind: kernel.Laplace, Sigma: 1})
	require.ErrorIs(t, err, status.ErrInvalid)
	// Factors and features past the machine's memory: refused before they
	// are allocated (they died out of memory).
	_, err = RFF{Features: 1 << 40}.Fit(x, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	line := mat.NewDense(1<<18, 1, nil)
	for i := 0; i < 1<<18; i++ {
		line.Set(i, 0, float64(i))
	}
	for _, f32 := range []bool{false, true} {
		_, err = Nystrom{Rank: 1 << 18, Float32: f32, Sample: -1}.Fit(line, gauss)
		require.ErrorIs(t, err, status.ErrInvalid, "float32 %v", f32)
	}
}

// Random features: the error of Z·Zᵀ against K shrinks like 1/√D (seeded,
// averaged over seeds: 16× the features, about a quarter of the error).
func TestRFFError(t *testing.T) {
	x := data(t, 80, 3, 7)
	g, err := kernel.Gram(x, gauss)
	require.NoError(t, err)
	errAt := func(features int) float64 {
		s := 0.0
		for seed := uint64(1); seed <= 8; seed++ {
			m, err := RFF{Features: features, Seed: seed}.Fit(x, gauss)
			require.NoError(t, err)
			var zz mat.Dense
			zz.Mul(m.Train(), m.Train().T())
			zz.Sub(&zz, g)
			s += mat.Norm(&zz, 2) / mat.Norm(g, 2)
		}
		return s / 8
	}
	e1, e16 := errAt(64), errAt(1024)
	require.InDelta(t, 0.25, e16/e1, 0.1, "errors %g and %g", e1, e16)
}

// The residual-norm estimate is a lower bound of ‖K − K̂‖₂ (the explicit
// one), which the trace bounds from above.
func TestResidualNormBounds(t *testing.T) {
	x := data(t, 150, 3, 8)
	ny, err := Nystrom{Rank: 12, ResidualSample: 60, Seed: 2}.Fit(x, gauss)
	require.NoError(t, err)
	e := residual(t, x, gauss, ny.Train())
	ev, err := linalg.SymEig(linalg.SymPart(e), 1)
	require.NoError(t, err)
	norm := ev.Values[0]
	info := ny.Info()
	require.Greater(t, info.ResidualNormLower, 0.0)
	require.LessOrEqual(t, info.ResidualNormLower, norm*(1+1e-10))
	require.GreaterOrEqual(t, info.EigenvalueBound, norm)
}

// With every row in the residual sample the bound is the explicit
// residual's largest eigenvalue: to float64 rounding with float64
// features, to float32 products (relative 10⁻⁵) with float32 ones, on
// plain data and on 8-bit data (integer kernel rows where the processor
// has them).
func TestResidualNormAllRows(t *testing.T) {
	eight := data(t, 120, 4, 12)
	for i, v := range eight.RawMatrix().Data {
		eight.RawMatrix().Data[i] = math.Round(v*40) / 255
	}
	for _, c := range []struct {
		x   *mat.Dense
		f32 bool
		tol float64
	}{{data(t, 120, 3, 10), false, 1e-10}, {data(t, 120, 3, 10), true, 1e-5}, {eight, true, 1e-5}} {
		n, _ := c.x.Dims()
		ny, err := Nystrom{Rank: 10, ResidualSample: n, Seed: 3, Float32: c.f32}.Fit(c.x, gauss)
		require.NoError(t, err)
		e := residual(t, c.x, gauss, ny.Train())
		ev, err := linalg.SymEig(linalg.SymPart(e), 1)
		require.NoError(t, err)
		require.InDelta(t, ev.Values[0], ny.Info().ResidualNormLower, c.tol*ev.Values[0], "float32 %v", c.f32)
	}
}

// A tiny residual sample still gives a lower bound; a sample of one row
// gives that row's residual diagonal k(x,x) − ‖f(x)‖².
func TestResidualNormSmallSample(t *testing.T) {
	x := data(t, 40, 2, 9)
	ny, err := Nystrom{Rank: 5, ResidualSample: 3}.Fit(x, gauss)
	require.NoError(t, err)
	e := residual(t, x, gauss, ny.Train())
	ev, err := linalg.SymEig(linalg.SymPart(e), 1)
	require.NoError(t, err)
	require.LessOrEqual(t, ny.Info().ResidualNormLower, ev.Values[0]*(1+1e-10))
	one, err := Nystrom{Rank: 5, ResidualSample: 1}.Fit(x, gauss)
	require.NoError(t, err)
	e = residual(t, x, gauss, one.Train())
	lower, found := one.Info().ResidualNormLower, false
	for i := 0; i < 40; i++ {
		found = found || math.Abs(e.At(i, i)-lower) <= 1e-12
	}
	require.Positive(t, lower)
	require.True(t, found, "%g is no row's residual diagonal", lower)
}

// Kernels without a unit diagonal (linear, polynomial): the diagonal comes
// from the kernel itself, the reported trace error is tr(K − K̂)/tr(K) of
// the explicit matrices, and a kernel of rank r (linear on d = 3: r = 3;
// (γ⟨x, y⟩ + 1)² on d = 3: r = 10) stops at r landmarks with K reproduced.
func TestNystromNonDistanceKernels(t *testing.T) {
	x := data(t, 90, 3, 6)
	for _, c := range []struct {
		k    kernel.Kernel
		rank int
	}{
		{kernel.Kernel{Kind: kernel.Linear}, 3},
		{kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Gamma: 0.5, Coef0: 1}, 10},
	} {
		g, err := kernel.Gram(x, c.k)
		require.NoError(t, err)
		trK := 0.0
		for i := 0; i < 90; i++ {
			trK += g.At(i, i)
		}
		for _, sampler := range []Sampler{RPCholesky, Uniform} {
			few, err := Nystrom{Rank: 2, Sampler: sampler, Seed: 2}.Fit(x, c.k)
			require.NoError(t, err)
			e := residual(t, x, c.k, few.Train())
			tr := 0.0
			for i := 0; i < 90; i++ {
				tr += e.At(i, i)
			}
			require.InDelta(t, tr/trK, few.Info().TraceError, 1e-12, "%v %v", c.k.Kind, sampler)
			require.Greater(t, few.Info().TraceError, 1e-3)
			all, err := Nystrom{Rank: 40, Sampler: sampler, Seed: 2}.Fit(x, c.k)
			require.NoError(t, err)
			require.Equal(t, c.rank, all.Info().Rank, "%v %v", c.k.Kind, sampler)
			e = residual(t, x, c.k, all.Train())
			require.Less(t, mat.Norm(e, math.Inf(1)), 1e-9*mat.Norm(g, math.Inf(1)), "%v %v", c.k.Kind, sampler)
		}
	}
}

// A map rebuilt from its landmarks and factor (as a loaded model does)
// maps points as the fitted one; a factor of the wrong shape or with a
// diagonal entry that is not positive (the last one included) is refused.
func TestNewNystromMap(t *testing.T) {
	x := data(t, 80, 3, 8)
	ny, err := Nystrom{Rank: 12, Seed: 4}.Fit(x, gauss)
	require.NoError(t, err)
	back, err := NewNystromMap(gauss, ny.XL, ny.R, ny.Info())
	require.NoError(t, err)
	a, err := ny.Map(x)
	require.NoError(t, err)
	b, err := back.Map(x)
	require.NoError(t, err)
	require.True(t, mat.Equal(a, b))
	require.Equal(t, ny.Info(), back.Info())
	require.Nil(t, back.Train())
	k, _ := ny.R.Dims()
	for _, i := range []int{0, k - 1} {
		bad := mat.DenseCopyOf(ny.R)
		bad.Set(i, i, 0)
		_, err = NewNystromMap(gauss, ny.XL, bad, ny.Info())
		require.ErrorIs(t, err, status.ErrInvalid, "diagonal %d", i)
	}
	_, err = NewNystromMap(gauss, ny.XL, ny.R.Slice(0, k-1, 0, k-1).(*mat.Dense), ny.Info())
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewNystromMap(kernel.Kernel{Kind: kernel.Gaussian}, ny.XL, ny.R, ny.Info())
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The zero-valued options are the documented defaults (same landmarks and
// factor as spelled out; another value differs): Block min(Rank, 256),
// Cutoff 1e-12, Seed 1.
func TestNystromDefaultsAreDocumented(t *testing.T) {
	x := data(t, 700, 4, 9)
	fit := func(ny Nystrom) *NystromMap {
		m, err := ny.Fit(x, gauss)
		require.NoError(t, err)
		return m
	}
	same := func(a, b *NystromMap) bool {
		if len(a.Landmarks) != len(b.Landmarks) {
			return false
		}
		for i := range a.Landmarks {
			if a.Landmarks[i] != b.Landmarks[i] {
				return false
			}
		}
		return mat.Equal(a.R, b.R)
	}
	for _, c := range []struct{ zero, spelled, other Nystrom }{
		{Nystrom{Rank: 300}, Nystrom{Rank: 300, Block: 256, Cutoff: 1e-12, Seed: 1}, Nystrom{Rank: 300, Block: 255}},
		{Nystrom{Rank: 40}, Nystrom{Rank: 40, Block: 40}, Nystrom{Rank: 40, Block: 39}},
		{Nystrom{Rank: 40}, Nystrom{Rank: 40, Seed: 1}, Nystrom{Rank: 40, Seed: 2}},
		{Nystrom{Rank: 40, Sampler: Uniform}, Nystrom{Rank: 40, Sampler: Uniform, Seed: 1}, Nystrom{Rank: 40, Sampler: Uniform, Seed: 2}},
	} {
		z := fit(c.zero)
		require.True(t, same(z, fit(c.spelled)), "%+v against %+v", c.zero, c.spelled)
		require.False(t, same(z, fit(c.other)), "%+v against %+v", c.zero, c.other)
	}
}

// Random features have no trace error: their Info's JSON leaves it out;
// Nyström's always has it, 0 included.
func TestInfoJSONTraceError(t *testing.T) {
	b, err := json.Marshal(Info{Method: "rff", Rank: 5})
	require.NoError(t, err)
	require.NotContains(t, string(b), "trace_error")
	require.Contains(t, string(b), `"rank":5`)
	b, err = json.Marshal(Info{Method: "nystrom", Rank: 5})
	require.NoError(t, err)
	require.Contains(t, string(b), `"trace_error":0`)
}

// The float32 copy of the data for distance kernels is shifted by the
// exact column means (summed in blocks of 256 rows: several blocks here);
// other kernels are copied unshifted.
func TestShiftedFloat32(t *testing.T) {
	x := data(t, 700, 3, 10)
	for i := 0; i < 700; i++ {
		x.Set(i, 1, x.At(i, 1)+5) // a mean far from 0
	}
	mean := make([]float64, 3)
	for i := 0; i < 700; i++ {
		for j := 0; j < 3; j++ {
			mean[j] += x.At(i, j) / 700
		}
	}
	got, err := shiftedFloat32(x, gauss)
	require.NoError(t, err)
	defer got.Free()
	for _, i := range []int{0, 255, 256, 511, 699} {
		for j := 0; j < 3; j++ {
			require.InDelta(t, float32(x.At(i, j)-mean[j]), got.Row(i)[j], 1e-6, "row %d col %d", i, j)
		}
	}
	// Exactly: the column sums of blocks of 256 rows, added in block
	// order (the same bits whatever the number of goroutines).
	exact := make([]float64, 3)
	for b0 := 0; b0 < 700; b0 += 256 {
		part := make([]float64, 3)
		for i := b0; i < min(b0+256, 700); i++ {
			for j := range part {
				part[j] += x.At(i, j)
			}
		}
		for j := range exact {
			exact[j] += part[j]
		}
	}
	for i := 0; i < 700; i++ {
		for j := 0; j < 3; j++ {
			require.Equal(t, float32(x.At(i, j)-exact[j]/700), got.Row(i)[j], "row %d col %d", i, j)
		}
	}
	means := columnMeans(x)
	for j := range exact {
		require.Equal(t, exact[j]/700, means[j], "the mean of column %d to the bit", j)
	}
	require.Equal(t, 256, meanBlock)
	lin, err := shiftedFloat32(x, kernel.Kernel{Kind: kernel.Linear})
	require.NoError(t, err)
	defer lin.Free()
	require.Equal(t, float32(x.At(300, 1)), lin.Row(300)[1])
}

// A kernel of small scale (trace far below 1) is approximated like any
// other: the trace error is relative.
func TestNystromSmallScale(t *testing.T) {
	x := data(t, 50, 3, 12)
	x.Scale(1e-4, x)
	lin := kernel.Kernel{Kind: kernel.Linear}
	ny, err := Nystrom{Rank: 10}.Fit(x, lin)
	require.NoError(t, err)
	require.Equal(t, 3, ny.Info().Rank)
	require.Less(t, ny.Info().TraceError, 1e-10)
	_, err = Nystrom{Rank: 10}.Fit(mat.NewDense(4, 2, nil), lin)
	require.ErrorIs(t, err, status.ErrInvalid, "a zero kernel")
}

// ColumnMeans reads F in any of its forms — dense, the transpose of a
// dense or float32 matrix, or any other matrix — with the same means.
func TestColumnMeansForms(t *testing.T) {
	f := mat.NewDense(3, 2, []float64{1, 10, 2, 20, 6, 30})
	want := []float64{3, 20}
	ft := mat.DenseCopyOf(f.T())
	f32, err := linalg.Dense32Of(ft)
	require.NoError(t, err)
	defer f32.Free()
	for name, m := range map[string]mat.Matrix{
		"dense": f, "transposed": ft.T(), "float32": mat.Transpose{Matrix: f32},
		"other": mat.NewDiagDense(2, []float64{3, 5}),
	} {
		got := ColumnMeans(m)
		if name == "other" {
			require.Equal(t, []float64{1.5, 2.5}, got, name)
			continue
		}
		require.Equal(t, want, got, name)
	}
}
