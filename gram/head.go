package gram

import (
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
)

// An integer head.
//
// A data set whose first rows lie on an 8-bit grid and whose later rows do
// not — 8-bit images followed by processed, augmented or noisy copies of
// them — fails the grid of Prepare as a whole, yet the kernel among its
// first h rows (h² of the n² entries) can still come from exact integer
// products. KernelRows finds the longest such head when it is made
// (int8Head) and computes Block's entries among the head's rows by
// native.Int8Map, every other entry as before; the head's entries are then
// those of the snapped rows to the rounding of the map, within any bound
// the float32 or float64 products guarantee.

// headMinRows is the fewest rows an integer head must have: below it the
// integer blocks would be too few to pay for finding them.
const headMinRows = gridSample

// int8Head returns the longest head of s's rows, at least headMinRows,
// that lies on one 8-bit grid, as a source of its own (its rows packed for
// native.Int8Map, its map scaled to its grid's units), or nil: when s lies
// on a grid already, its map is not a distance map, o or the processor
// does not take the integer path (GramOptions.Int8), d exceeds
// native.Int8MaxDim, or no head qualifies. It reads the first
// headMinRows rows, at most every row once more to find where the head
// ends, and the head twice (its ranges, then its levels).
func (s *gramSource) int8Head(o GramOptions) *gramSource {
	n, d := s.x.Rows, s.x.Cols
	if s.grid != nil || s.i8 != nil || s.x.Data == nil || !s.em.distance() || !o.int8Wanted() ||
		d > native.Int8MaxDim || n < headMinRows {
		return nil
	}
	first := gridOf(s.sub(0, headMinRows), s.workers, s.build)
	if first == nil {
		return nil
	}
	h := first.firstOff(s.x, s.workers)
	if h < headMinRows {
		return nil
	}
	x := s.sub(0, h)
	g := gridOf(x, s.workers, s.build)
	if g == nil || !g.bits8() {
		return nil
	}
	pts, norms := g.snapInt8(x)
	if pts == nil {
		return nil
	}
	hs := &gramSource{em: s.em, inner: s.inner, mp: s.mp, workers: s.workers, build: s.build, grid: g, i8: pts, norms: norms}
	hs.x = blas64.General{Rows: h, Cols: d, Stride: d}
	hs.em.C = g.scale(s.em)
	return hs
}

// sub returns rows [i0, i1) of s's float64 rows.
func (s *gramSource) sub(i0, i1 int) blas64.General {
	g := s.rows(i0, i1)
	g.Data = g.Data[:(i1-i0-1)*g.Stride+g.Cols]
	return g
}

// firstOff returns the first row of x with an entry off g's lattice
// (lo_j + step·k for an integer k, within the column's tolerance widened by
// the entry's own rounding, 16u·|v|), or x.Rows when every row is on it:
// the end of the head that g's lattice, read off the first rows, admits.
// The levels' range is not checked here (the head's own grid is).
func (g *grid) firstOff(x blas64.General, workers int) int {
	const u = 1.0 / (1 << 53)
	n, d := x.Rows, x.Cols
	var first atomic.Int64
	first.Store(int64(n))
	inv := 1 / g.step
	par.For(workers, n, nil, func(i0, i1 int) {
		for i := i0; i < i1 && int64(i) < first.Load(); i++ {
			for j, v := range x.Data[i*x.Stride : i*x.Stride+d] {
				r := v - g.lo[j]
				k := math.Round(r * inv)
				if !(math.Abs(r-k*g.step) <= g.tol[j]+16*u*(math.Abs(v)+math.Abs(g.lo[j]))) {
					for {
						cur := first.Load()
						if int64(i) >= cur || first.CompareAndSwap(cur, int64(i)) {
							return
						}
					}
				}
			}
		}
	})
	return int(first.Load())
}
