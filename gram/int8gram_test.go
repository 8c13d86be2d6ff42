package gram

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/status"
)

// The stored Gram matrix of 8-bit data by exact integer products
// (GramOptions.Int8 on; the VNNI kernel and the portable loop): every
// entry within a few ulp of the kernel of the exact integer distances,
// exactly symmetric with a unit diagonal; UpperOnly leaves the lower
// triangle untouched; the float32 tiles hold the same entries rounded to
// float32 (EntryRel 2⁻²⁴); progress reaches its total; a cancelled build
// stops. Sizes cross the 512-row panel and the 64-point blocks.
func TestGramInt8(t *testing.T) {
	const n, d = 700, 37
	k := pixelInts(12, n, d)
	dist := func(i, j int) int64 {
		var s int64
		for a := 0; a < d; a++ {
			e := k[i*d+a] - k[j*d+a]
			s += e * e
		}
		return s
	}
	for _, centred := range []bool{false, true} {
		x := pixelData(k, n, d, centred)
		for _, baseline := range []bool{false, true} {
			for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 1.5}, {Kind: Laplace, Sigma: 0.9}} {
				o := GramOptions{Int8: GridOn, Baseline: baseline}
				var last, total int64
				// Each report counts the upper triangle's entries of
				// the rows finished: a prefix [0, i1) holds
				// i1·n − i1(i1−1)/2 of them, i1 ≥ 1.
				prefix := map[int64]bool{}
				for i1 := int64(1); i1 <= n; i1++ {
					prefix[i1*n-i1*(i1-1)/2] = true
				}
				o.Progress = func(done, tot int64) {
					require.GreaterOrEqual(t, done, last, "progress went back")
					require.True(t, prefix[done], "progress %d is no row prefix's entry count", done)
					last, total = done, tot
				}
				g, err := GramWith(x, kern, o)
				require.NoError(t, err)
				require.Equal(t, total, last)
				require.Equal(t, int64(n)*(n+1)/2, total)
				o.Progress = nil
				o.UpperOnly = true
				up, err := GramWith(x, kern, o)
				require.NoError(t, err)
				o.UpperOnly = false
				// The tiles' build reports its progress panel by panel:
				// never decreasing, never past the total (the upper
				// triangle's entries), and the total at the end.
				var seen []int64
				o.Progress = func(done, tot int64) {
					require.Equal(t, int64(n)*(n+1)/2, tot)
					seen = append(seen, done)
				}
				tiles, err := GramTiles32(x, kern.ElementMap(d), o)
				require.NoError(t, err)
				o.Progress = nil
				require.NotEmpty(t, seen)
				for q, v := range seen {
					require.LessOrEqual(t, v, int64(n)*(n+1)/2, "progress %d", q)
					if q > 0 {
						require.GreaterOrEqual(t, v, seen[q-1], "progress %d went back", q)
					}
				}
				require.Equal(t, int64(n)*(n+1)/2, seen[len(seen)-1])
				require.Equal(t, 1.0/(1<<24), tiles.EntryRel)
				band, err := GramTiles64Band(x, kern.ElementMap(d), o, 128, 1, 4) // rows 128…511
				require.NoError(t, err)
				lo, hi := band.Rows()
				require.Equal(t, [2]int{128, 512}, [2]int{lo, hi})
				ur := up.RawSymmetric().Data
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						want := exactKernel(kern, dist(i, j))
						got := g.At(i, j)
						switch {
						case i == j && got != 1:
							t.Fatalf("diagonal (%d) = %v", i, got)
						case math.Abs(got-want) > 4e-15*want:
							t.Fatalf("(%d,%d) = %v, want %v (%v centred=%v baseline=%v)", i, j, got, want, kern.Kind, centred, baseline)
						case got != g.At(j, i):
							t.Fatalf("(%d,%d) not symmetric", i, j)
						case j < i && ur[i*n+j] != 0:
							t.Fatalf("UpperOnly wrote (%d,%d)", i, j)
						case j >= i && ur[i*n+j] != got:
							t.Fatalf("UpperOnly (%d,%d) = %v, want %v", i, j, ur[i*n+j], got)
						case math.Abs(tiles.At(i, j)-want) > 0x1p-24*want+4e-15:
							t.Fatalf("tile (%d,%d) = %v, want %v", i, j, tiles.At(i, j), want)
						case i >= lo && i < hi && j >= i/128*128 && band.At(i, j) != got:
							t.Fatalf("float64 tile (%d,%d) = %v, want %v", i, j, band.At(i, j), got)
						}
					}
				}
				tiles.Free()
			}
		}
		// Cancelled before it starts: nothing is built.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := GramWith(x, Kernel{Kind: Gaussian, Sigma: 1}, GramOptions{Int8: GridOn, Context: ctx})
		require.ErrorIs(t, err, status.ErrStopped)
		_, err = GramTiles32(x, Kernel{Kind: Gaussian, Sigma: 1}.ElementMap(d), GramOptions{Int8: GridOn, Context: ctx})
		require.ErrorIs(t, err, status.ErrStopped)
	}
	// Int8 off: the float32 grid path, the same entries to rounding.
	x := pixelData(k, n, d, true)
	a, err := GramWith(x, Kernel{Kind: Gaussian, Sigma: 1.5}, GramOptions{Int8: GridOn})
	require.NoError(t, err)
	b, err := GramWith(x, Kernel{Kind: Gaussian, Sigma: 1.5}, GramOptions{Int8: GridOff})
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(a, b, 1e-14))
}

// The integer levels are packed once: a source prepared with the integer
// path on keeps the levels Prepare packed through its Gram builds, and one
// prepared with it off packs them on the first build that asks for the
// integer path — the same matrix either way, to rounding of the float32
// grid path it would otherwise take.
func TestGramInt8PacksOnFirstUse(t *testing.T) {
	const n, d = 130, 21
	x := pixelData(pixelInts(21, n, d), n, d, false)
	em := Kernel{Kind: Gaussian, Sigma: 2.5}.ElementMap(d)
	on := GramOptions{Grid: GridOn, Int8: GridOn}
	off := GramOptions{Grid: GridOn, Int8: GridOff}
	gram := func(src *Source, o GramOptions) []float64 {
		out := make([]float64, n*n)
		require.NoError(t, src.GramInto(o, out, n))
		return out
	}
	packed, err := Prepare(x, em, on, false)
	require.NoError(t, err)
	levels := packed.s.i8
	require.NotNil(t, levels)
	want := gram(packed, on)
	require.Same(t, levels, packed.s.i8, "levels packed again")
	lazy, err := Prepare(x, em, off, false)
	require.NoError(t, err)
	require.Nil(t, lazy.s.i8)
	float := gram(lazy, off)
	require.Nil(t, lazy.s.i8, "levels packed for a build without the integer path")
	got := gram(lazy, on)
	require.NotNil(t, lazy.s.i8, "the integer path asked for, no levels packed")
	require.Equal(t, want, got)
	for i := range want {
		require.InDelta(t, want[i], float[i], 4e-15*want[i]+1e-300, "entry %d", i)
	}
}
