package approx

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Strata draws one index from each of ns equal strata, in order.
func TestStrata(t *testing.T) {
	for _, c := range [][2]int{{10, 10}, {100, 7}, {1000, 333}, {5, 1}} {
		n, ns := c[0], c[1]
		pos := Strata(rng.New(3), n, ns)
		require.Len(t, pos, ns)
		for q, p := range pos {
			require.GreaterOrEqual(t, p, q*n/ns, "%v stratum %d", c, q)
			require.Less(t, p, (q+1)*n/ns, "%v stratum %d", c, q)
		}
	}
	// Uniform within a stratum: 400 draws of each of 10 strata of 100
	// rows hit every decile of the stratum (each with probability 1/10:
	// missing one has probability below 10·0.9⁴⁰⁰ ≈ 10⁻¹⁷).
	r := rng.New(11)
	var hits [10][10]int
	for d := 0; d < 400; d++ {
		for q, p := range Strata(r, 1000, 10) {
			hits[q][(p-100*q)/10]++
		}
	}
	for q := range hits {
		for dec, h := range hits[q] {
			require.Positive(t, h, "stratum %d, decile %d never drawn", q, dec)
		}
	}
}

// The sample rule: 2·Rank rows with float32 features, RPCholesky and no
// TraceTol when n ≥ 16·Rank and the updates saved, (n − 2·Rank)·Rank²/2,
// reach 2·10⁹ multiply-adds; all rows otherwise, or with Sample −1; a
// positive Sample with float64 features is refused.
func TestSampleRule(t *testing.T) {
	for _, c := range []struct {
		ny   Nystrom
		n    int
		f32  bool
		want int
	}{
		{Nystrom{Rank: 1000}, 20000, true, 2000},
		{Nystrom{Rank: 1000}, 16000, true, 2000},
		{Nystrom{Rank: 1000}, 15999, true, 15999}, // below 16·Rank
		{Nystrom{Rank: 2000}, 1000000, true, 4000},
		{Nystrom{Rank: 500}, 17000, true, 1000}, // saves 16000·500²/2 = 2·10⁹
		{Nystrom{Rank: 500}, 16999, true, 16999},
		{Nystrom{Rank: 250}, 16000, true, 16000}, // saves 4.7·10⁸
		{Nystrom{Rank: 250}, 64500, true, 500},   // saves 64000·250²/2 = 2·10⁹
		{Nystrom{Rank: 250}, 64499, true, 64499},
		{Nystrom{Rank: 1000}, 20000, false, 20000},
		{Nystrom{Rank: 1000, Sampler: Uniform}, 20000, true, 20000},
		{Nystrom{Rank: 1000, TraceTol: 0.1}, 20000, true, 20000},
		{Nystrom{Rank: 30, Sample: -1}, 600, true, 600},
		{Nystrom{Rank: 30, Sample: 200}, 600, true, 200},
		{Nystrom{Rank: 30, Sample: 1}, 600, true, 1},
		{Nystrom{Rank: 30, Sample: 900}, 600, true, 600},
		{Nystrom{Rank: 30}, 3000, true, 3000}, // saves too little
	} {
		require.Equal(t, c.want, c.ny.sampleSize(c.n, c.f32), "%+v n=%d f32=%v", c.ny, c.n, c.f32)
	}
	// The rule's shape at small sizes, with no work to save asked for.
	defer func(v float64) { sampleSaved = v }(sampleSaved)
	sampleSaved = 0
	require.Equal(t, 60, Nystrom{Rank: 30}.sampleSize(480, true))
	require.Equal(t, 479, Nystrom{Rank: 30}.sampleSize(479, true))
	big := data(t, 1300, 3, 2)
	s, err := Nystrom{Rank: 20, Float32: true}.Fit(big, gauss)
	require.NoError(t, err)
	require.Equal(t, 40, s.Info().Sample, "the rule at n = 65·Rank")
	all, err := Nystrom{Rank: 20, Float32: true, Sample: -1}.Fit(big, gauss)
	require.NoError(t, err)
	require.Zero(t, all.Info().Sample)
	_, _, ok := all.TrainGram()
	require.False(t, ok)
	x := data(t, 100, 3, 1)
	_, err = Nystrom{Rank: 5, Sample: 50}.Fit(x, gauss)
	require.ErrorIs(t, err, status.ErrInvalid)
	m, err := Nystrom{Rank: 5}.Fit(x, gauss)
	require.NoError(t, err)
	_, _, ok = m.TrainGram()
	require.False(t, ok, "float64 features: F from the rounds")
}

// Landmarks chosen on a sample: F_cᵀF_c and μ that come with the map are
// those of the features Train forms (F = K(X, L)·R⁻ᵀ); the trace error is
// tr(K − F·Fᵀ)/tr K of the explicit matrices; TrainScores is F_c·V; the
// training points map to their features; K − K̂ ⪰ 0 to float32 rounding;
// the residual's sampled lower bound is below the trace bound.
func TestNystromSample(t *testing.T) {
	const n = 600
	x := data(t, n, 5, 7)
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			x.Set(i, j, v+2+float64(j)) // away from the origin: the float32 copy is shifted
		}
	}
	checkSampled(t, x, false)
}

// The same on data on an 8-bit grid, whose integer kernel rows the map
// computes again instead of storing C (crossByRanges; the integer path
// forced on any processor, chunks of 128 points: C·Cᵀ and c̄ summed over
// five chunks, the last one short).
func TestNystromSampleRanges(t *testing.T) {
	defer func(o gram.GramOptions, c int, b int64) { rowOptions, rangeChunk, crossStoreMax = o, c, b }(rowOptions, rangeChunk, crossStoreMax)
	rowOptions.Int8, rangeChunk, crossStoreMax = gram.GridOn, 128, 0
	const n, d = 600, 6
	x := gridData(n, d, 41)
	checkSampled(t, x, true)
}

// On integer kernel rows computed again, TrainScores by blocks of
// scoreBlock points per goroutine (crossSerial) gives the bits of the
// chunked path, over blocks and chunks that end mid-way (n = 1000: seven
// blocks and three chunks, the last of each short).
func TestTrainScoresSerialBlocks(t *testing.T) {
	defer func(o gram.GramOptions, c int, b int64) { rowOptions, rangeChunk, crossStoreMax = o, c, b }(rowOptions, rangeChunk, crossStoreMax)
	rowOptions.Int8, rangeChunk, crossStoreMax = gram.GridOn, 384, 0
	const n, d, m = 1000, 5, 20
	x := gridData(n, d, 47)
	ny, err := Nystrom{Rank: m, Seed: 6, Float32: true, Sample: 200}.Fit(x, gauss)
	require.NoError(t, err)
	require.NotNil(t, ny.crossSerial)
	v := mat.NewDense(m, 3, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < 3; j++ {
			v.Set(i, j, math.Cos(float64(5*i+j)))
		}
	}
	a, b := mat.NewDense(n, 3, nil), mat.NewDense(n, 3, nil)
	require.NoError(t, ny.TrainScores(a, v))
	ny.crossSerial = nil
	require.NoError(t, ny.TrainScores(b, v))
	require.True(t, mat.Equal(a, b))
}

// gridData returns n×d data on an 8-bit grid of step 0.01 (levels drawn
// with seed): distances near the tests' σ, integer kernel rows.
func gridData(n, d int, seed uint64) *mat.Dense {
	r := rng.New(seed)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, 0.01*float64(r.IntN(256)))
		}
	}
	return x
}

// C (k×n float32) of float32 products is stored up to crossStoreMax
// bytes and computed again one byte past it; integer kernel rows are
// computed again whatever its size.
func TestCrossStoreRule(t *testing.T) {
	defer func(o gram.GramOptions, b int64) { rowOptions, crossStoreMax = o, b }(rowOptions, crossStoreMax)
	rowOptions.Int8 = gram.GridOn
	const n, d, m = 400, 5, 20
	for _, c := range []struct {
		max          int64
		grid, stored bool
	}{{4 * m * n, false, true}, {4*m*n - 1, false, false}, {1 << 62, true, false}, {0, true, false}} {
		x := data(t, n, d, 43)
		if c.grid {
			x = gridData(n, d, 43)
		}
		crossStoreMax = c.max
		ny, err := Nystrom{Rank: m, Seed: 2, Float32: true, Sample: 100}.Fit(x, gauss)
		require.NoError(t, err)
		require.Equal(t, c.grid, ny.Info().Products == "int8", "integer rows")
		require.Equal(t, c.stored, ny.cross != nil, "crossStoreMax %d, grid %v", c.max, c.grid)
		require.Equal(t, !c.stored, ny.crossRows != nil, "crossStoreMax %d, grid %v", c.max, c.grid)
	}
}

// checkSampled fits x with the landmarks chosen on a sample of 150 rows
// (m = 30; ranges: whether the map computes its kernel rows again) and
// checks it against the explicit features and kernel.
func checkSampled(t *testing.T, x *mat.Dense, ranges bool) {
	const m = 30
	n, _ := x.Dims()
	fit := func() *NystromMap {
		ny, err := Nystrom{Rank: m, Seed: 5, Float32: true, Sample: 150, ResidualSample: 60}.Fit(x, gauss)
		require.NoError(t, err)
		require.Equal(t, ranges, ny.crossRows != nil && ny.cross == nil, "kernel rows computed again")
		return ny
	}
	a := fit()
	info := a.Info()
	require.Equal(t, 150, info.Sample)
	require.Equal(t, m, info.Rank)
	seen := map[int]bool{}
	for e, l := range a.Landmarks {
		require.False(t, seen[l], "landmark %d repeated", l)
		seen[l] = true
		require.Equal(t, x.RawRowView(l), a.XL.RawRowView(e))
	}
	g, mu, ok := a.TrainGram()
	require.True(t, ok)
	require.Len(t, mu, m)

	f := a.Train()
	_, ok = f.(mat.Transpose).Matrix.(*linalg.Dense32)
	require.True(t, ok, "float32 storage")
	_, _, ok = a.TrainGram()
	require.False(t, ok, "F formed: no kernel rows left")
	fc := mat.DenseCopyOf(f)
	means := ColumnMeans(f)
	kept := a.TrainMeans() // the formed F's means, kept on the way
	for e := 0; e < m; e++ {
		require.InDelta(t, means[e], mu[e], 1e-5*(1+math.Abs(mu[e])), "μ_%d", e)
		require.InDelta(t, means[e], kept[e], 1e-12*(1+math.Abs(means[e])), "TrainMeans_%d", e)
		for i := 0; i < n; i++ {
			fc.Set(i, e, fc.At(i, e)-means[e])
		}
	}
	var want mat.Dense
	want.Mul(fc.T(), fc)
	scale := mat.Norm(&want, math.Inf(1))
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			require.InDelta(t, want.At(i, j), g.At(i, j), 1e-5*scale, "F_cᵀF_c[%d,%d]", i, j)
		}
	}
	e := residual(t, x, gauss, f)
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += e.At(i, i)
	}
	require.InDelta(t, tr/float64(n), info.TraceError, 1e-5)
	require.InDelta(t, tr, info.EigenvalueBound, 1e-5*float64(n))
	ev, err := linalg.SymEig(linalg.SymPart(e), 0)
	require.NoError(t, err)
	require.Greater(t, ev.Values[n-1], -1e-4, "K − K̂ ⪰ 0 to float32 rounding")
	require.Greater(t, info.ResidualNormLower, 0.0)
	require.LessOrEqual(t, info.ResidualNormLower, ev.Values[0]*(1+1e-4))
	y, err := a.Map(x)
	require.NoError(t, err)
	var d mat.Dense
	d.Sub(y, f)
	require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-4*mat.Norm(f, math.Inf(1)), "Map(X) = F")

	// The same fit again (the same landmarks): its scores from the kernel
	// rows are F_c·V for the top eigenvectors V of F_cᵀF_c.
	b := fit()
	require.Equal(t, a.Landmarks, b.Landmarks)
	gb, _, ok := b.TrainGram()
	require.True(t, ok)
	top, err := linalg.SymEig(gb, 0)
	require.NoError(t, err)
	v := mat.DenseCopyOf(top.Vectors.Slice(0, m, 0, 4))
	got := mat.NewDense(n, 4, nil)
	require.NoError(t, b.TrainScores(got, v))
	var ref mat.Dense
	ref.Mul(fc, v)
	var ds mat.Dense
	ds.Sub(got, &ref)
	require.Less(t, mat.Norm(&ds, math.Inf(1)), 1e-4*mat.Norm(&ref, math.Inf(1)))
	require.ErrorIs(t, b.TrainScores(mat.NewDense(n-1, 4, nil), v), status.ErrInvalid)
	b.ReleaseTrain()
	_, _, ok = b.TrainGram()
	require.False(t, ok)
	require.ErrorIs(t, b.TrainScores(got, v), status.ErrInvalid)
	require.Nil(t, b.Train())
}

// The landmarks of a sampled fit are RPCholesky's on the sample's rows
// (Strata, seeded by Seed), whatever the sample's own size — no sample
// within the sample — and a kernel of low rank stops at its rank with a
// trace error and bound near zero.
func TestNystromSampleLandmarks(t *testing.T) {
	const n, m, ns = 2000, 20, 1300 // ns ≥ 16·m: the rule would sample again
	defer func(v float64) { sampleSaved = v }(sampleSaved)
	sampleSaved = 0 // the rule's saving met at this size
	x := data(t, n, 4, 9)
	a, err := Nystrom{Rank: m, Seed: 5, Float32: true, Sample: ns}.Fit(x, gauss)
	require.NoError(t, err)
	pos := Strata(rng.New(5^sampleSeed), n, ns)
	xs := mat.NewDense(ns, 4, nil)
	for q, i := range pos {
		xs.SetRow(q, x.RawRowView(i))
	}
	b, err := Nystrom{Rank: m, Seed: 5, Float32: true, Sample: -1}.Fit(xs, gauss)
	require.NoError(t, err)
	want := make([]int, len(b.Landmarks))
	for e, l := range b.Landmarks {
		want[e] = pos[l]
	}
	require.Equal(t, want, a.Landmarks)
	require.Equal(t, ns, a.Info().Sample)

	lin := kernel.Kernel{Kind: kernel.Linear}
	x3 := data(t, 1000, 3, 4)
	c, err := Nystrom{Rank: 10, Seed: 2, Float32: true, Sample: 200}.Fit(x3, lin)
	require.NoError(t, err)
	info := c.Info()
	require.Equal(t, 3, info.Rank, "the linear kernel of 3 columns has rank 3")
	require.Less(t, info.EigenvalueBound, 1e-3, "tr(K − K̂) ≈ 0 (tr K ≈ 3000)")
	require.Less(t, info.TraceError, 1e-6)
	// Rank 2 of 3: the trace error is relative to tr K = Σ‖x‖² (not n).
	c, err = Nystrom{Rank: 2, Seed: 2, Float32: true, Sample: 200}.Fit(x3, lin)
	require.NoError(t, err)
	info = c.Info()
	trK := 0.0
	for i := 0; i < 1000; i++ {
		trK += mat.Dot(x3.RowView(i), x3.RowView(i))
	}
	require.Greater(t, info.EigenvalueBound, 0.05*trK/3, "one direction of three is left out")
	require.InDelta(t, info.EigenvalueBound/trK, info.TraceError, 1e-9)
	e := residual(t, x3, lin, c.Train())
	tr := 0.0
	for i := 0; i < 1000; i++ {
		tr += e.At(i, i)
	}
	require.InDelta(t, tr, info.EigenvalueBound, 1e-5*trK)
}

// A context that ends once the sample's rounds are done stops the fit in
// the kernel rows over all points, with status.Cancelled (ErrStopped); one
// that ends earlier stops the rounds.
func TestNystromSampleCancelled(t *testing.T) {
	defer func(o gram.GramOptions, c int, b int64) { rowOptions, rangeChunk, crossStoreMax = o, c, b }(rowOptions, rangeChunk, crossStoreMax)
	grid := gridData(3000, 4, 12)
	// Off the grid (C stored), then on it with C computed again in chunks.
	for _, x := range []*mat.Dense{data(t, 3000, 4, 12), grid} {
		if x == grid {
			rowOptions.Int8, rangeChunk, crossStoreMax = gram.GridOn, 500, 0
		}
		for _, at := range []int{10, 20} {
			ctx, cancel := context.WithCancel(context.Background())
			ny := Nystrom{Rank: 20, Block: 10, Seed: 3, Float32: true, Sample: 200, Context: ctx,
				Progress: func(landmarks, rank int) {
					if landmarks >= at {
						cancel()
					}
				}}
			_, err := ny.Fit(x, gauss)
			require.ErrorIs(t, err, status.ErrStopped, "cancelled at %d landmarks", at)
			if at == 20 && x == grid {
				require.Contains(t, err.Error(), "the kernel rows of point 0 of 3000", "stopped between chunks")
			}
			cancel()
		}
	}
}

// crossByRanges's chunks: a tenth of the points rounded up to 256, within
// [2048, rangeChunk] and never more than the points.
func TestRangeWidth(t *testing.T) {
	for _, c := range []struct{ n, w int }{
		{100, 100}, {2000, 2000}, {2048, 2048}, {20000, 2048}, {20481, 2304},
		{50000, 5120}, {81920, 8192}, {1000000, 8192},
	} {
		require.Equal(t, c.w, rangeWidth(c.n), "n = %d", c.n)
	}
}

// A fit collects garbage before its buffers only where its factor and
// data reach collectMin bytes (4·n·(k + d)), and a sampled fit's own fit
// never (its completion does); the scanned heap here is far below
// collectScanMax.
func TestCollectBeforeLargeFits(t *testing.T) {
	gcs := func(ny Nystrom, n, d int) uint32 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		ny.collect(n, d)
		runtime.ReadMemStats(&b)
		return b.NumGC - a.NumGC
	}
	const d = 784
	large := collectMin/(4*(100+d)) + 1
	require.Zero(t, gcs(Nystrom{Rank: 100}, large-2, d), "below collectMin")
	require.Equal(t, uint32(1), gcs(Nystrom{Rank: 100}, large, d), "at collectMin")
	require.Zero(t, gcs(Nystrom{Rank: 100, ofSample: true}, large, d), "a sampled fit's own fit")
}
