package kpca

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// levelsData is n rows of d levels in four noisy clusters.
func levelsData(n, d int, seed uint64) *linalg.Levels8 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := &linalg.Levels8{Rows: n, Cols: d, Step: 1.0 / 255, Data: make([]uint8, n*d)}
	for i := 0; i < n; i++ {
		c := r.IntN(4)
		for j := 0; j < d; j++ {
			x.Data[i*d+j] = uint8(min(255, max(0, 50*c+4*j+r.IntN(60))))
		}
	}
	return x
}

// A streamed fit whose sample is every row is the in-memory fit on the
// same rows (FitLevels8, the same seed): the same landmarks, eigenvalues
// within the float32 features' rounding, the same scores up to each
// component's sign, and the trace error over all rows that of the
// in-memory map; the scores arrive in order, chunk by chunk.
func TestStreamAgreesInMemory(t *testing.T) {
	t.Run("rules", func(t *testing.T) { streamAgrees(t) })
	// Without the integer kernel rows: the float32 and float64 fallbacks.
	p := paths.Current()
	off := p
	off.Int8 = false
	require.NoError(t, paths.Set(off))
	defer func() { require.NoError(t, paths.Set(p)) }()
	t.Run("no int8", func(t *testing.T) { streamAgrees(t) })
}

func streamAgrees(t *testing.T) {
	x := levelsData(2500, 24, 5)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.6}
	const m, s = 120, 5
	mem := &KPCA{Components: s, Kernel: k, Approx: approx.Nystrom{Rank: m, Seed: 7}}
	require.NoError(t, mem.FitLevels8(context.Background(), x))
	var got []float64
	next := 0
	res, err := Stream{Components: s, Kernel: k, Rank: m, Step: x.Step, Sample: x.Rows, Chunk: 700, Seed: 7,
		Scores: func(i0 int, sc *mat.Dense) error {
			require.Equal(t, next, i0, "chunks out of order")
			r, c := sc.Dims()
			require.Equal(t, s, c)
			next += r
			for i := 0; i < r; i++ {
				got = append(got, sc.RawRowView(i)...)
			}
			return nil
		}}.Fit(x)
	require.NoError(t, err)
	require.Equal(t, x.Rows, next)
	require.Equal(t, 2, res.Passes)
	info := mem.Info()
	require.Equal(t, info.Approx.Rank, res.Rank)
	vals, _ := mem.Eigenvalues()
	for i := range vals {
		require.InDelta(t, vals[i], res.Values[i], 1e-5*vals[0], "eigenvalue %d", i)
	}
	require.InDelta(t, info.Approx.TraceError, res.TraceError, 1e-5)
	ms, _ := mem.Scores()
	for j := 0; j < s; j++ {
		sign := 1.0
		if ms.At(0, j)*got[j] < 0 {
			sign = -1
		}
		for i := 0; i < x.Rows; i++ {
			require.InDelta(t, ms.At(i, j), sign*got[i*s+j], 1e-3*math.Sqrt(vals[0]), "score (%d, %d)", i, j)
		}
	}
}

// The sample's landmarks are chosen among every row of the sample, as its
// documentation says, also at a size where Nyström's default rule would
// choose them on a sub-sample (n ≥ 16·m and (n − 2m)·m²/2 ≥ 2·10⁹
// multiply-adds saved): the streamed fit whose sample is every row has the
// landmarks of FitLevels8 with Sample −1 on the same rows, and not those
// of the default rule's sub-sample.
func TestStreamSampleIsWhole(t *testing.T) {
	const n, d, m = 110000, 8, 200
	x := levelsData(n, d, 9)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.8}
	res, err := Stream{Components: 3, Kernel: k, Rank: m, Step: x.Step, Sample: n, Seed: 4}.Fit(x)
	require.NoError(t, err)
	require.Equal(t, n, res.Sample)
	whole, err := approx.Nystrom{Rank: m, Seed: 4, Sample: -1}.FitLevels8(x, k)
	require.NoError(t, err)
	require.Equal(t, whole.Landmarks, res.Landmarks)
	rule, err := approx.Nystrom{Rank: m, Seed: 4}.FitLevels8(x, k)
	require.NoError(t, err)
	require.Equal(t, 2*m, rule.Info().Sample, "the default rule takes a sub-sample at this size")
	require.NotEqual(t, rule.Landmarks, res.Landmarks)
}

// The streamed fit's memory does not grow with n: the heap's high-water
// mark over the passes (sampled every half millisecond) stays within the
// stated formula (Stream.Bytes) plus the Go runtime's slack, for n and
// for four times n with the same sample; without Scores it makes one
// pass. Bad options are typed errors; a cancelled context stops it.
func TestStreamMemoryAndErrors(t *testing.T) {
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.6}
	const m, s, chunk, d = 60, 3, 512, 24
	// A low GC target keeps the garbage of finished chunks from counting
	// as held memory.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	peak := func(x *linalg.Levels8) (int64, *StreamResult) {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var hi atomic.Int64
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ms runtime.MemStats
			for {
				select {
				case <-done:
					return
				case <-time.After(500 * time.Microsecond):
				}
				runtime.ReadMemStats(&ms)
				if v := int64(ms.HeapInuse) - int64(base.HeapInuse); v > hi.Load() {
					hi.Store(v)
				}
			}
		}()
		res, err := Stream{Components: s, Kernel: k, Rank: m, Step: x.Step, Sample: 2000, Chunk: chunk, Seed: 2,
			Scores: func(int, *mat.Dense) error { return nil }}.Fit(x)
		close(done)
		wg.Wait()
		require.NoError(t, err)
		return hi.Load(), res
	}
	small, res1 := peak(levelsData(20000, d, 8))
	large, res4 := peak(levelsData(80000, d, 8))
	bound := res1.Bytes + Stream{}.sampleBytes(2000, d, m) + 2<<20
	t.Logf("peaks %d and %d bytes, bound %d", small, large, bound)
	require.Equal(t, res1.Bytes, res4.Bytes, "the formula does not depend on n")
	require.Less(t, small, bound, "n = 20 000: %d bytes at the peak, formula %d", small, bound)
	require.Less(t, large, bound, "n = 80 000: %d bytes at the peak, formula %d", large, bound)

	x := levelsData(3000, d, 9)
	res, err := Stream{Components: s, Kernel: k, Rank: m, Step: x.Step}.Fit(x)
	require.NoError(t, err)
	require.Equal(t, 1, res.Passes, "no scores asked: one pass")
	require.Equal(t, 3000, res.Sample, "the rule's sample is capped at n")
	require.Equal(t, 16384, res.Chunk, "Chunk 0 means 16 384")
	// The stated formula, term by term: 2·c·d + 12·c·m + 16·c·s + 32·c +
	// 16·m² and the packed block, 4·(3·⌈m/48⌉ panels of 16·min(c, 512) + 16).
	require.Equal(t, int64(2*5*7+12*5*3+16*5*2+32*5+16*3*3+4*3*(16*5+16)), Stream{}.Bytes(3, 5, 7, 2))
	require.Equal(t, int64(2*16384*784+12*16384*1000+16*16384*20+32*16384+16*1000*1000+4*63*(16*512+16)), Stream{}.Bytes(1000, 16384, 784, 20))
	// Each refusal names what was wrong.
	for _, c := range []struct {
		bad  Stream
		says string
	}{
		{Stream{Components: 0, Kernel: k, Rank: m, Step: x.Step}, "Components 0"},
		{Stream{Components: s, Kernel: k, Rank: 0, Step: x.Step}, "Rank 0"},
		{Stream{Components: s, Kernel: k, Rank: 3001, Step: x.Step}, "Rank 3001"},
		{Stream{Components: s, Kernel: k, Rank: m, Step: 0}, "Step 0"},
		{Stream{Components: s, Kernel: k, Rank: m, Step: -x.Step}, "Step -"},
		{Stream{Components: s, Kernel: k, Rank: m, Step: math.Inf(1)}, "Step +Inf"},
		{Stream{Components: s, Kernel: k, Rank: m, Step: x.Step, Chunk: -1}, "Chunk -1"},
		{Stream{Components: s, Kernel: k, Rank: m, Step: x.Step, Sample: -1}, "Sample -1"},
		{Stream{Components: s, Kernel: kernel.Kernel{Kind: kernel.Linear}, Rank: m, Step: x.Step}, "unit diagonal"},
	} {
		_, err := c.bad.Fit(x)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", c.bad)
		require.ErrorContains(t, err, c.says, "%+v", c.bad)
	}
	// No columns, or one row: refused before anything is read.
	for _, empty := range []*linalg.Levels8{{Rows: 5, Cols: 0, Step: x.Step}, {Rows: 1, Cols: 3, Step: x.Step, Data: []uint8{1, 2, 3}}} {
		_, err := Stream{Components: 1, Kernel: k, Rank: 1, Step: x.Step}.Fit(empty)
		require.ErrorIs(t, err, status.ErrInvalid, "%d×%d", empty.Rows, empty.Cols)
		require.ErrorContains(t, err, fmt.Sprintf("%d rows of %d levels", empty.Rows, empty.Cols))
	}
	// Two rows: a centred kernel of rank 1 at most, so one component
	// (two gave float32 noise as a second eigenvalue); uncentred, two.
	two := &linalg.Levels8{Rows: 2, Cols: 3, Step: x.Step, Data: []uint8{0, 0, 0, 255, 255, 255}}
	_, err = Stream{Components: 2, Kernel: k, Rank: 2, Step: x.Step}.Fit(two)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "n − 1")
	_, err = Stream{Components: 1, Kernel: k, Rank: 2, Step: x.Step}.Fit(two)
	require.NoError(t, err)
	_, err = Stream{Components: 2, Kernel: k, Rank: 2, Step: x.Step, NoCenter: true}.Fit(two)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Stream{Components: s, Kernel: k, Rank: m, Step: x.Step, Context: ctx}.Fit(x)
	require.Error(t, err)
	st, ok := status.StatusOf(err)
	require.True(t, ok)
	require.Equal(t, status.Stopped, st.Code)
	require.ErrorIs(t, err, context.Canceled)
}
