package gram

import (
	"fmt"
	"sync"

	"github.com/kdual/kdual/internal/par"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// tiledSymm sets dst = A·x for a symmetric n×n matrix A seen as t×t tiles
// of its upper triangle, and an n×b block x: row(I) describes tile row I,
// tiles (I, I) … (I, nt−1) (both sides of the diagonal; once on it), and
// returns its storage from the first tile on. One native call per tile
// row, not per tile: the native kernels are long C calls, and a call per
// tile from parallel goroutines ran 25–35 % slower (the Go scheduler's
// spinning threads). Blocks of up to symmTMax columns go to the kernel for
// transposed blocks (native.TileRowSymmT64/T32: each vector contiguous,
// padded to ⌈n/t⌉·t entries; symmTMax32 columns for float32 storage),
// wider ones to the row-major kernel
// (native.TileRowSymm64/32: rows of bp ≥ b columns, a multiple of 4, zero
// padded). Bands of tile rows run in parallel goroutines (balanced by tile
// count), each with a private accumulator, summed at the end; within a
// band each tile is read once for all columns. Only the tile rows
// [i0, i1) are visited: for a band of the triangle, dst is that band's
// contribution to A·x (rows above the band are zero).
func tiledSymm[T float32 | float64](b native.Build, n, t, i0, i1 int, x, dst *mat.Dense, row func(I int) (native.TileRow, []T)) {
	nb := symmDims(n, x, dst)
	nt := (n + t - 1) / t
	pad := nt * t
	xr := x.RawMatrix()
	// The block in the kernel's layout: entry (i, c) at xp[i*rs + c*cs];
	// size entries, as each worker's accumulator.
	trans := nb <= symmTMax
	if _, f32 := any(T(0)).(float32); f32 {
		trans = nb <= symmTMax32
	}
	bp := (nb + 3) / 4 * 4
	rs, cs, size := bp, 1, pad*bp
	if trans {
		rs, cs, size = 1, pad, pad*nb
	}
	xp := make([]float64, size)
	for i := 0; i < n; i++ {
		for c, v := range xr.Data[i*xr.Stride : i*xr.Stride+nb] {
			xp[i*rs+c*cs] = v
		}
	}
	acc := symmBands(nt, i0, i1, size, func(_, I int, yw []float64) {
		tr, a := row(I)
		if trans {
			xi, yi := xp[I*t:], yw[I*t:]
			mulTileRowT(b, tr, a, nb, xi, xi, pad, yi, yi, pad)
			return
		}
		mulTileRow(b, tr, a, bp, xp[I*t*bp:(I+1)*t*bp], xp[I*t*bp:], yw[I*t*bp:(I+1)*t*bp], yw[I*t*bp:])
	})
	sumBands(dst, acc, n, nb, rs, cs)
}

// tiledSymmS32 is tiledSymm for float32 tiles in float32 arithmetic
// (native.TileRowSymmS32): x is rounded to float32 once, in rows of bp ≥ b
// columns, a multiple of 8 (zero padded); Y is summed in float64.
func tiledSymmS32(b native.Build, n, t, i0, i1 int, x, dst *mat.Dense, row func(I int) (native.TileRow, []float32)) {
	nb := symmDims(n, x, dst)
	nt := (n + t - 1) / t
	pad := nt * t
	bp := (nb + 7) / 8 * 8
	xr := x.RawMatrix()
	xp := make([]float32, pad*bp)
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for c, v := range xr.Data[i*xr.Stride : i*xr.Stride+nb] {
				xp[i*bp+c] = float32(v)
			}
		}
	})
	ys := make([][]float32, min(par.Workers(0), i1-i0))
	for w := range ys {
		ys[w] = make([]float32, native.SymmSingleScratch(t, bp))
	}
	acc := symmBands(nt, i0, i1, pad*bp, func(w, I int, yw []float64) {
		tr, a := row(I)
		b.TileRowSymmS32(tr, a, bp, xp[I*t*bp:(I+1)*t*bp], xp[I*t*bp:], yw[I*t*bp:(I+1)*t*bp], yw[I*t*bp:], ys[w])
	})
	sumBands(dst, acc, n, nb, bp, 1)
}

// symmDims returns the columns of x, panicking unless x and dst are both
// n×b.
func symmDims(n int, x, dst *mat.Dense) int {
	r, nb := x.Dims()
	dr, db := dst.Dims()
	if r != n || dr != n || db != nb {
		panic(fmt.Sprintf("linalg: symmetric product: x %d×%d, dst %d×%d, n = %d", r, nb, dr, db, n))
	}
	return nb
}

// symmBands runs row(w, I, acc) for the tile rows [i0, i1) of a matrix of
// nt tile rows in min(workers, i1 − i0) parallel bands (w is the band),
// balanced by tile count, each band with a private accumulator of size
// entries; it returns the accumulators.
func symmBands(nt, i0, i1, size int, row func(w, I int, acc []float64)) [][]float64 {
	workers := min(par.Workers(0), i1-i0)
	bounds := balancedBounds(i1-i0, workers, func(I int) float64 { return float64(nt - i0 - I) })
	for w := range bounds {
		bounds[w] += i0
	}
	acc := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		acc[w] = make([]float64, size)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for I := bounds[w]; I < bounds[w+1]; I++ {
				row(w, I, acc[w])
			}
		}()
	}
	wg.Wait()
	return acc
}

// sumBands sets the n×nb dst to the sum of the accumulators, whose entry
// (i, c) is at i·rs + c·cs.
func sumBands(dst *mat.Dense, acc [][]float64, n, nb, rs, cs int) {
	dd := dst.RawMatrix()
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dd.Data[i*dd.Stride : i*dd.Stride+nb]
			for c := range row {
				v := 0.0
				for w := range acc {
					v += acc[w][i*rs+c*cs]
				}
				row[c] = v
			}
		}
	})
}

// symmTMax and symmTMax32 are the widest blocks tiledSymm multiplies in
// transposed layout for float64 and float32 storage: up to them the
// transposed kernel is faster than the row-major one (docs/measurements.md).
const (
	symmTMax   = 4
	symmTMax32 = 6
)

// mulTileRow runs native.TileRowSymm64 or TileRowSymm32 on a's type.
func mulTileRow[T float32 | float64](b native.Build, r native.TileRow, a []T, bp int, xi, xj, yi, yj []float64) {
	switch a := any(a).(type) {
	case []float64:
		b.TileRowSymm64(r, a, bp, xi, xj, yi, yj)
	case []float32:
		b.TileRowSymm32(r, a, bp, xi, xj, yi, yj)
	}
}

// mulTileRowT runs native.TileRowSymmT64 or TileRowSymmT32 on a's type.
func mulTileRowT[T float32 | float64](b native.Build, r native.TileRow, a []T, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	switch a := any(a).(type) {
	case []float64:
		b.TileRowSymmT64(r, a, nb, xi, xj, ldx, yi, yj, ldy)
	case []float32:
		b.TileRowSymmT32(r, a, nb, xi, xj, ldx, yi, yj, ldy)
	}
}

// tiledSymv sets y = A·x for one vector, A symmetric n×n seen as t×t tiles
// of its upper triangle, visiting the tile rows [i0, i1) (a band: y is its
// contribution): mulRow(I, xi, xj, yi, yj) adds tile row I's part (xj and
// yj start at row I·t; one call per tile row, as tiledSymm). Bands
// of tile rows run in parallel goroutines (balanced by tile count), each
// with a private accumulator, summed at the end. x and y must not alias.
func tiledSymv(n, t, i0, i1 int, y, x []float64, mulRow func(I int, xi, xj, yi, yj []float64)) {
	if len(x) < n || len(y) < n {
		panic(fmt.Sprintf("linalg: symmetric product: vectors of %d and %d for n = %d", len(x), len(y), n))
	}
	nt := (n + t - 1) / t
	pad := nt * t
	xp := make([]float64, pad)
	copy(xp, x[:n])
	workers := min(par.Workers(0), i1-i0)
	bounds := balancedBounds(i1-i0, workers, func(I int) float64 { return float64(nt - i0 - I) })
	acc := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		acc[w] = make([]float64, pad)
		wg.Add(1)
		go func() {
			defer wg.Done()
			yw := acc[w]
			for I := i0 + bounds[w]; I < i0+bounds[w+1]; I++ {
				mulRow(I, xp[I*t:(I+1)*t], xp[I*t:], yw[I*t:(I+1)*t], yw[I*t:])
			}
		}()
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		v := 0.0
		for w := range acc {
			v += acc[w][i]
		}
		y[i] = v
	}
}

// symmTile is the tile side of SymMulUpper: a 256×256 float64 tile is
// 512 KB, read once per call with every column of the block.
const symmTile = 256

// SymMulUpper sets dst = A·x for the symmetric matrix a and an n×b block
// x (b ≥ 1), reading only the upper triangle of a's storage, each entry
// once, in float64 (native.TileSymm64 on 256×256 tiles in parallel
// bands). dst must not alias x; neither a nor x is modified.
func SymMulUpper(a *mat.SymDense, x, dst *mat.Dense) {
	SymMulUpperOn(paths.Current().Build(), a, x, dst)
}

// SymMulUpperOn is SymMulUpper on the native build b.
func SymMulUpperOn(b native.Build, a *mat.SymDense, x, dst *mat.Dense) {
	raw := a.RawSymmetric()
	n, t := raw.N, symmTile
	nt := (n + t - 1) / t
	tiledSymm(b, n, t, 0, nt, x, dst, func(I int) (native.TileRow, []float64) {
		r := native.TileRow{M: min(t, n-I*t), T: t, Tiles: nt - I, Last: n - (nt-1)*t, Step: t, Lda: raw.Stride, Diag: true}
		return r, raw.Data[I*t*raw.Stride+I*t:]
	})
}

// panelTile is the tile side of PanelSymm: a tile's rows of X_J and Y_J,
// eight columns at a time, stay in L1 at blocks of 60 columns.
const panelTile = 256

// PanelSymm adds one panel's contribution to Y = A·X for a symmetric A,
// reading each entry of the panel once: the panel holds rows [i0, i1) ×
// columns [j0, j1) of A (row-major, stride ld; j0 = i0 for a panel on the
// diagonal, whose lower triangle is then not read, else j0 ≥ i1). X and Y
// are n×bp row-major (bp a multiple of 4). Y_J += A_IJᵀ·X_I goes into y
// (for the columns right of the diagonal block), Y_I += A_IJ·X_J into the
// accumulators acc, one per goroutine, each of at least (i1−i0)·bp
// entries and zero on entry, which are then added into y's rows in their
// order and cleared (the same bits for the same len(acc)). The tile kernel
// (native.TileRowSymm64, tiles of 256 columns split among the goroutines)
// runs on the build of package paths. A diagonal panel whose rows are not
// whole tiles and whose columns go past them (the last panel of a band of
// rows) goes as its diagonal block, then the columns right of it.
func PanelSymm(panel []float64, ld, i0, i1, j0, j1 int, x, y []float64, bp int, acc [][]float64) {
	PanelSymmOn(paths.Current().Build(), panel, ld, i0, i1, j0, j1, x, y, bp, acc)
}

// PanelSymmOn is PanelSymm on the native build b.
func PanelSymmOn(b native.Build, panel []float64, ld, i0, i1, j0, j1 int, x, y []float64, bp int, acc [][]float64) {
	const t = panelTile
	if j0 == i0 && j1 > i1 && (i1-i0)%t != 0 {
		PanelSymmOn(b, panel, ld, i0, i1, i0, i1, x, y, bp, acc)
		PanelSymmOn(b, panel[i1-i0:], ld, i0, i1, i1, j1, x, y, bp, acc)
		return
	}
	tiles := (j1 - j0 + t - 1) / t
	nw := min(len(acc), tiles)
	var wg sync.WaitGroup
	for w := 0; w < nw; w++ {
		t0, t1 := w*tiles/nw, (w+1)*tiles/nw
		wg.Add(1)
		go func() {
			defer wg.Done()
			yi := acc[w]
			for s0 := i0; s0 < i1; s0 += t {
				m := min(t, i1-s0)
				ks, diag := t0, false
				if j0 == i0 {
					// The slab's diagonal tile, and none left of it.
					if sd := (s0 - i0) / t; ks <= sd {
						ks, diag = sd, true
					}
				}
				if ks >= t1 {
					continue
				}
				c0, c1 := j0+ks*t, min(j0+t1*t, j1)
				cnt := (c1 - c0 + t - 1) / t
				r := native.TileRow{M: m, T: t, Tiles: cnt, Last: c1 - c0 - (cnt-1)*t, Step: t, Lda: ld, Diag: diag}
				b.TileRowSymm64(r, panel[(s0-i0)*ld+c0-j0:], bp, x[s0*bp:(s0+m)*bp], x[c0*bp:c1*bp],
					yi[(s0-i0)*bp:(s0-i0+m)*bp], y[c0*bp:c1*bp])
			}
		}()
	}
	wg.Wait()
	rows := y[i0*bp : i1*bp]
	for _, a := range acc[:nw] {
		a = a[:len(rows)]
		for q, v := range a {
			rows[q] += v
		}
		clear(a)
	}
}
