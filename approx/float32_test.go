package approx

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// Float32 storage: the trace error is still exactly tr(K − F·Fᵀ)/tr(K) of
// the stored F (up to float32 rounding of F, relative 2⁻²⁴ an entry, so
// within 1e-5 of tr K), shrinks with m, pivots never repeat, the residual
// is positive semi-definite to float32 rounding, Map(X) = F to float32
// rounding, and with uniform landmarks (the same ones as float64) the
// factor equals the float64 one within the float32 bound.
func TestNystromFloat32(t *testing.T) {
	x := data(t, 150, 4, 11)
	n := 150
	// Far from the origin: the float32 copy is shifted by the mean, and
	// every kernel row must see the same shift.
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			x.Set(i, j, v+3+float64(j))
		}
	}
	for _, c := range []struct {
		sampler Sampler
		block   int
	}{{RPCholesky, 8}, {Uniform, 8}, {RPCholesky, 1}, {Uniform, 2}} {
		sampler := c.sampler
		prev := 1.0
		for _, m := range []int{6, 12, 24, 48} {
			ny, err := Nystrom{Rank: m, Sampler: sampler, Block: c.block, Seed: 3, Float32: true}.Fit(x, gauss)
			require.NoError(t, err)
			info := ny.Info()
			require.Equal(t, "float32", info.Precision)
			require.Equal(t, m, info.Rank)
			f := ny.Train()
			_, ok := f.(mat.Transpose).Matrix.(*linalg.Dense32)
			require.True(t, ok, "float32 storage")
			e := residual(t, x, gauss, f)
			tr := 0.0
			for i := 0; i < n; i++ {
				tr += e.At(i, i)
			}
			require.InDelta(t, tr/float64(n), info.TraceError, 1e-5, "%v m=%d", sampler, m)
			require.Less(t, info.TraceError, prev)
			prev = info.TraceError
			ev, err := linalg.SymEig(linalg.SymPart(e), 0)
			require.NoError(t, err)
			require.Greater(t, ev.Values[n-1], -1e-4, "K − K̂ ⪰ 0 to float32 rounding")
			seen := map[int]bool{}
			for _, p := range ny.Landmarks {
				require.False(t, seen[p])
				seen[p] = true
			}
			fx, err := ny.Map(x)
			require.NoError(t, err)
			var d mat.Dense
			d.Sub(fx, f)
			require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-4*mat.Norm(f, math.Inf(1)))
		}
	}
	// Uniform landmarks are the same in both precisions: F agrees — for
	// the Gaussian (kernel rows straight in float32, KernelRows.Rows32)
	// and a polynomial kernel (through the float64 panel; rank 10, below
	// the 15 of a quadratic on 4 features), and the Laplacian's in blocks of
	// 100 landmarks (more rows at once than the float64 panel holds).
	for _, c := range []struct {
		k        kernel.Kernel
		m, block int
	}{{gauss, 20, 8}, {kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Gamma: 0.05, Coef0: 1}, 10, 8},
		{kernel.Kernel{Kind: kernel.Laplacian, Gamma: 0.1}, 100, 100}} {
		k := c.k
		a, err := Nystrom{Rank: c.m, Sampler: Uniform, Block: c.block, Seed: 5}.Fit(x, k)
		require.NoError(t, err)
		b, err := Nystrom{Rank: c.m, Sampler: Uniform, Block: c.block, Seed: 5, Float32: true}.Fit(x, k)
		require.NoError(t, err)
		require.Equal(t, a.Landmarks, b.Landmarks)
		var d mat.Dense
		d.Sub(a.Train(), b.Train())
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-4*mat.Norm(a.Train(), math.Inf(1)), "%v", k.Kind)
	}
}

// Fit32 reads float32 data in place: on the rows Fit would round (shifted
// by the mean) it takes the same landmarks and stores the same F, and it
// never writes the data.
func TestNystromFit32(t *testing.T) {
	x := data(t, 200, 3, 12)
	x32, err := shiftedFloat32(x, gauss)
	require.NoError(t, err)
	before := append([]float32(nil), x32.Data...)
	a, err := Nystrom{Rank: 30, Block: 8, Seed: 7, Float32: true}.Fit(x, gauss)
	require.NoError(t, err)
	b, err := Nystrom{Rank: 30, Block: 8, Seed: 7}.Fit32(x32, gauss)
	require.NoError(t, err)
	require.Equal(t, before, x32.Data)
	require.Equal(t, a.Landmarks, b.Landmarks)
	require.Equal(t, a.Info().TraceError, b.Info().TraceError)
	require.True(t, mat.Equal(a.Train(), b.Train()))
	// Rank-deficient float32 data stop at the rank.
	base := data(t, 4, 2, 13)
	dup, err := linalg.NewDense32(40, 2)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		for j := 0; j < 2; j++ {
			dup.Data[i*2+j] = float32(base.At(i%4, j))
		}
	}
	ny, err := Nystrom{Rank: 20, Block: 5}.Fit32(dup, gauss)
	require.NoError(t, err)
	require.Equal(t, 4, ny.Info().Rank)
	// Bad input.
	dup.Data[7] = float32(math.NaN())
	_, err = Nystrom{Rank: 3}.Fit32(dup, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Nystrom{Rank: 3}.Fit32(nil, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Nystrom{Rank: 300}.Fit32(x32, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Nystrom{Rank: 3}.Fit32(x32, kernel.Kernel{Kind: kernel.Gaussian})
	require.Error(t, err)
}

// Float32 data with landmarks on a sample: C computed again in chunks
// (crossStoreMax 0; chunks of 128 points, the last one short) gives the
// C_cC_cᵀ, means and trace error of C stored to float32 rounding (the same
// sgemm products and map, which OpenBLAS may round by the call's shape),
// and the same training scores; the stored map keeps C, the other only
// its rows. Its scores, each block of points multiplied as soon as it is
// mapped (gram.KernelRows.RangeRows32Each), are those of the chunk
// mapped whole and then multiplied (MulT32Into), bit for bit.
func TestNystromFit32Ranges(t *testing.T) {
	defer func(c int, b int64) { rangeChunk, crossStoreMax = c, b }(rangeChunk, crossStoreMax)
	x32, err := shiftedFloat32(data(t, 600, 40, 19), kernel.Kernel{Kind: kernel.Gaussian, Sigma: 6})
	require.NoError(t, err)
	fit := func(max int64) *NystromMap {
		rangeChunk, crossStoreMax = 128, max
		ny, err := Nystrom{Rank: 25, Seed: 4, Sample: 150}.Fit32(x32, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 6})
		require.NoError(t, err)
		require.Equal(t, max > 0, ny.cross != nil, "C stored")
		require.Equal(t, max == 0, ny.crossRows != nil, "C computed again")
		for e, l := range ny.Landmarks { // the caller's rows, widened
			for j, v := range x32.Row(l) {
				require.Equal(t, float64(v), ny.XL.At(e, j))
			}
		}
		return ny
	}
	stored, ranges := fit(1<<30), fit(0)
	require.Equal(t, stored.Landmarks, ranges.Landmarks)
	require.InEpsilon(t, stored.Info().TraceError, ranges.Info().TraceError, 1e-5)
	gs, ms, ok := stored.TrainGram()
	require.True(t, ok)
	gr, mr, ok := ranges.TrainGram()
	require.True(t, ok)
	require.True(t, mat.EqualApprox(gs, gr, 1e-5*mat.Norm(gs, math.Inf(1))))
	require.InDeltaSlice(t, ms, mr, 1e-5*floats.Norm(ms, math.Inf(1)))
	v := mat.NewDense(25, 3, nil)
	for i := 0; i < 25; i++ {
		for j := 0; j < 3; j++ {
			v.Set(i, j, math.Sin(float64(3*i+j+1)))
		}
	}
	a, b := mat.NewDense(600, 3, nil), mat.NewDense(600, 3, nil)
	require.NoError(t, stored.TrainScores(a, v))
	require.NoError(t, ranges.TrainScores(b, v))
	require.True(t, mat.EqualApprox(a, b, 1e-4*mat.Norm(a, math.Inf(1))))
	require.NotNil(t, ranges.crossEach)
	whole := *ranges
	whole.crossEach = nil
	for _, chunk := range []int{128, 600} { // one block a chunk, and three
		rangeChunk = chunk
		require.NoError(t, ranges.TrainScores(b, v))
		c := mat.NewDense(600, 3, nil)
		require.NoError(t, whole.TrainScores(c, v))
		require.Equal(t, b.RawMatrix().Data, c.RawMatrix().Data, "chunks of %d points", chunk)
	}
}

// 8-bit data (pixels over 255, with column offsets): where the processor
// runs the exact integer kernel rows (gram.NewKernelRowsInt8) the
// float32 fit takes them and says so; either way it takes the same
// landmarks as the float64 fit (exact kernel rows in both: the float64
// path's grid products are exact too), the trace errors agree to float32
// rounding and K − K̂ checks out against the explicit float64 kernel.
func TestNystromEightBit(t *testing.T) {
	const n, d = 180, 30
	x := mat.NewDense(n, d, nil)
	seed := uint32(3)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			seed = seed*1664525 + 1013904223
			lev := float64(seed>>24) * float64((i/60)+1) / 3 // three brightness clusters
			x.Set(i, j, math.Floor(lev)/255+0.1*float64(j))
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.2}
	a, err := Nystrom{Rank: 40, Seed: 4, Block: 16}.Fit(x, k)
	require.NoError(t, err)
	b, err := Nystrom{Rank: 40, Seed: 4, Block: 16, Float32: true, ResidualSample: 50}.Fit(x, k)
	require.NoError(t, err)
	if native.HasInt8() && paths.Current().Int8 {
		require.Equal(t, "int8", b.Info().Products)
	} else {
		require.NotEqual(t, "int8", b.Info().Products)
	}
	require.Equal(t, a.Landmarks, b.Landmarks)
	require.InDelta(t, a.Info().TraceError, b.Info().TraceError, 1e-6)
	e := residual(t, x, k, b.Train())
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += e.At(i, i)
	}
	require.InDelta(t, tr/float64(n), b.Info().TraceError, 1e-6)
	require.Greater(t, b.Info().ResidualNormLower, 0.0)
	require.LessOrEqual(t, b.Info().ResidualNormLower, b.Info().EigenvalueBound*(1+1e-6))
}

// CenterTrain subtracts the means from the stored features in place, in
// either precision, and refuses means of the wrong length; the means the
// float32 fit gathers on the way (by chunks of 4096 points: n = 5000 has
// two) are the features' column means.
func TestCenterTrain(t *testing.T) {
	for _, c := range []struct {
		f32 bool
		n   int
	}{{false, 90}, {true, 90}, {true, 5000}} {
		x := data(t, c.n, 3, 21)
		ny, err := Nystrom{Rank: 12, Seed: 2, Float32: c.f32}.Fit(x, gauss)
		require.NoError(t, err)
		before := mat.DenseCopyOf(ny.Train())
		mean := ColumnMeans(ny.Train())
		tm := ny.TrainMeans()
		require.Len(t, tm, 12)
		for e := range mean {
			require.InDelta(t, mean[e], tm[e], 1e-12*(math.Abs(mean[e])+1e-3), "%+v feature %d", c, e)
		}
		require.NoError(t, ny.CenterTrain(mean))
		after := ny.Train()
		for i := 0; i < c.n; i++ {
			for e := 0; e < 12; e++ {
				want := before.At(i, e) - mean[e]
				require.InDelta(t, want, after.At(i, e), 1e-7*(math.Abs(want)+1e-3), "%+v", c)
			}
		}
		for _, m := range ColumnMeans(after) {
			require.InDelta(t, 0, m, 1e-7)
		}
		require.ErrorIs(t, ny.CenterTrain(mean[:3]), status.ErrInvalid)
		ny.ReleaseTrain()
		require.ErrorIs(t, ny.CenterTrain(mean), status.ErrInvalid)
		require.Nil(t, ny.TrainMeans())
	}
}

// R, assembled round by round, is exactly the landmarks' stored rows of F
// (lower triangular), in both precisions, and K(L, L) = R·Rᵀ to rounding.
func TestNystromFactorR(t *testing.T) {
	x := data(t, 200, 4, 23)
	for _, f32 := range []bool{false, true} {
		for _, rank := range []int{37, 200} {
			ny := Nystrom{Rank: rank, Seed: 7, Block: 16, Float32: f32}
			if rank == 200 {
				// One round of 200 uniform landmarks (float32: several
				// panels of kernel rows).
				ny.Block, ny.Sampler = 0, Uniform
			}
			fit, err := ny.Fit(x, gauss)
			require.NoError(t, err)
			f := fit.Train()
			e := residual(t, x, gauss, f)
			tr := 0.0
			for i := 0; i < 200; i++ {
				tr += e.At(i, i)
			}
			require.InDelta(t, tr/200, fit.Info().TraceError, 1e-5, "float32=%v rank %d", f32, rank)
			if rank == 200 {
				require.Less(t, mat.Norm(e, math.Inf(1)), 1e-3, "m = n reproduces K")
			}
			k := len(fit.Landmarks)
			require.Equal(t, []int{k, k}, []int{fit.R.RawMatrix().Rows, fit.R.RawMatrix().Cols})
			for a, p := range fit.Landmarks {
				for e := 0; e < k; e++ {
					require.Equal(t, f.At(p, e), fit.R.At(a, e), "float32=%v rank %d landmark %d feature %d", f32, rank, a, e)
				}
			}
			var rrt mat.Dense
			rrt.Mul(fit.R, fit.R.T())
			g, err := kernel.Gram(fit.XL, gauss)
			require.NoError(t, err)
			tol := 1e-10
			if f32 {
				tol = 1e-5
			}
			for a := 0; a < k; a++ {
				for e := 0; e < k; e++ {
					require.InDelta(t, g.At(a, e), rrt.At(a, e), tol)
				}
			}
		}
	}
}

// squares is the plain loop — rs[a] −= f_ea² for e = 0, 1, …, sums[e] =
// Σ_a f_ea — bit for bit, for every count of rows (its blocks of four and
// the rest) and widths that are not multiples of anything.
func TestSquaresIsThePlainLoop(t *testing.T) {
	const ld = 37
	for rows := 0; rows <= 9; rows++ {
		for _, w := range []int{1, 5, 37} {
			f := make([]float32, rows*ld+w)
			for i := range f {
				f[i] = float32(math.Sin(float64(7*i+rows))) * 3
			}
			rs, want := make([]float64, w), make([]float64, w)
			for a := range rs {
				rs[a] = 100 + float64(a)/3
				want[a] = rs[a]
			}
			wantSums := make([]float64, rows)
			for e := 0; e < rows; e++ {
				for a := 0; a < w; a++ {
					v := float64(f[e*ld+a])
					want[a] -= v * v
					wantSums[e] += v
				}
			}
			sums := make([]float64, rows)
			squares(rs, f, ld, rows, sums)
			require.Equal(t, want, rs, "rows %d, width %d", rows, w)
			require.Equal(t, wantSums, sums, "rows %d, width %d", rows, w)
		}
	}
}

// FitLevels8 on 8-bit levels with the integer kernel rows and without them
// (the float32 copy, centred for the shift-invariant kernel) takes the
// float64 fit's landmarks on the same values (on every row, or on a sample
// of them), its trace error to float32 rounding, and the residual K − K̂ of its features checks out against the
// explicit float64 kernel of the levels.
func TestFitLevels8Paths(t *testing.T) {
	const n, d = 160, 24
	lv := &linalg.Levels8{Rows: n, Cols: d, Step: 1.0 / 255, Data: make([]uint8, n*d)}
	seed := uint32(9)
	for i := range lv.Data {
		seed = seed*1664525 + 1013904223
		lv.Data[i] = uint8(min(255, int(seed>>24)/((i/d)%3+1)+40*((i/d)%3)))
	}
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64(lv.Data[i*d+j])*lv.Step)
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.1}
	ref, err := Nystrom{Rank: 30, Seed: 2, Sample: -1}.Fit(x, k)
	require.NoError(t, err)
	sampled, err := Nystrom{Rank: 30, Seed: 2, Sample: 100, Float32: true}.Fit(x, k)
	require.NoError(t, err)
	p := paths.Current()
	defer func() { require.NoError(t, paths.Set(p)) }()
	for _, int8On := range []bool{true, false} {
		q := p
		q.Int8 = int8On
		require.NoError(t, paths.Set(q))
		m, err := Nystrom{Rank: 30, Seed: 2, Sample: -1}.FitLevels8(lv, k)
		require.NoError(t, err, "int8 %v", int8On)
		require.Equal(t, ref.Landmarks, m.Landmarks, "int8 %v", int8On)
		require.InDelta(t, ref.Info().TraceError, m.Info().TraceError, 1e-6, "int8 %v", int8On)
		e := residual(t, x, k, m.Train())
		tr := 0.0
		for i := 0; i < n; i++ {
			tr += e.At(i, i)
		}
		require.InDelta(t, tr/float64(n), m.Info().TraceError, 1e-6, "int8 %v", int8On)
		// Landmarks chosen on a sample of 100 rows: the float64 fit's too.
		sm, err := Nystrom{Rank: 30, Seed: 2, Sample: 100}.FitLevels8(lv, k)
		require.NoError(t, err, "int8 %v, sampled", int8On)
		require.Equal(t, sampled.Landmarks, sm.Landmarks, "int8 %v, sampled", int8On)
		for e, l := range sm.Landmarks {
			require.Equal(t, x.RawRowView(l), sm.XL.RawRowView(e), "int8 %v, sampled: landmark %d's row", int8On, e)
		}
		require.InDelta(t, sampled.Info().TraceError, sm.Info().TraceError, 1e-6, "int8 %v, sampled", int8On)
	}
}

// A map that computes C's kernel rows again (crossStoreMax 0) reads the
// float32 data after the fit has returned: Fit's own shifted copy, which
// the map then owns, and Fit32's caller's data, which the map keeps
// reachable although the caller holds it no longer. Collections between
// the fit and the scores change nothing; ReleaseTrain lets both go (the
// caller's data untouched).
func TestRowsDataOutlivesTheFit(t *testing.T) {
	defer func(c int, b int64) { rangeChunk, crossStoreMax = c, b }(rangeChunk, crossStoreMax)
	rangeChunk, crossStoreMax = 128, 0
	x := data(t, 600, 40, 19)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 6}
	v := mat.NewDense(25, 3, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = math.Cos(float64(i))
	}
	collect := func() {
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(time.Millisecond) // cleanups run on their own goroutine
		}
	}
	fitted := map[string]func() *NystromMap{
		"Fit's copy": func() *NystromMap {
			ny, err := Nystrom{Rank: 25, Seed: 4, Sample: 150, Float32: true}.Fit(x, k)
			require.NoError(t, err)
			require.True(t, ny.ownsRows)
			return ny
		},
		"Fit32's data": func() *NystromMap {
			x32, err := shiftedFloat32(x, k) // no reference left here after the fit
			require.NoError(t, err)
			ny, err := Nystrom{Rank: 25, Seed: 4, Sample: 150}.Fit32(x32, k)
			require.NoError(t, err)
			require.False(t, ny.ownsRows)
			return ny
		},
	}
	for name, fit := range fitted {
		ny := fit()
		require.NotNil(t, ny.crossRows, name)
		require.NotNil(t, ny.rowsData, name)
		first := mat.NewDense(600, 3, nil)
		require.NoError(t, ny.TrainScores(first, v), name)
		collect()
		again := mat.NewDense(600, 3, nil)
		require.NoError(t, ny.TrainScores(again, v), name)
		require.Equal(t, first.RawMatrix().Data, again.RawMatrix().Data, name)
		kept := ny.rowsData
		ny.ReleaseTrain()
		require.Nil(t, ny.rowsData, name)
		if name == "Fit32's data" {
			require.NotZero(t, kept.Row(3)[0], "the caller's data is not freed by the map")
		}
	}
}
