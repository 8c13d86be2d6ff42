package linalg

import (
	"fmt"
	"github.com/kdual/kdual/internal/par"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
)

// tiledSymm sets dst = A·x for a symmetric n×n matrix A seen as t×t tiles
// of its upper triangle, and an n×b block x: mulRow(I, bp, xi, xj, yi, yj)
// adds the contribution of tile row I, tiles (I, I) … (I, nt−1) (both sides
// of the diagonal; once on it), for blocks packed row-major with bp ≥ b
// columns (a multiple of 4, zero padded) and padded to ⌈n/t⌉·t rows; xj
// and yj start at row I·t. One call per tile row, not per tile: the
// native kernels are long C calls, and a call per tile from parallel
// goroutines ran 25–35 % slower (the Go scheduler's spinning threads).
// Bands of tile rows run in parallel goroutines (balanced by tile
// count), each with a private accumulator,
// summed at the end; within a band each tile is read once for all columns.
// Only the tile rows [i0, i1) are visited: for a band of the triangle, dst
// is that band's contribution to A·x (rows above the band are zero).
func tiledSymm(n, t, i0, i1 int, x, dst *mat.Dense, mulRow func(I, bp int, xi, xj, yi, yj []float64)) {
	r, b := x.Dims()
	dr, db := dst.Dims()
	if r != n || dr != n || db != b {
		panic(fmt.Sprintf("linalg: symmetric product: x %d×%d, dst %d×%d, n = %d", r, b, dr, db, n))
	}
	nt := (n + t - 1) / t
	pad := nt * t
	bp := (b + 3) / 4 * 4
	xp := make([]float64, pad*bp)
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		copy(xp[i*bp:i*bp+b], xr.Data[i*xr.Stride:i*xr.Stride+b])
	}
	workers := min(par.Workers(0), i1-i0)
	bounds := balancedBounds(i1-i0, workers, func(I int) float64 { return float64(nt - i0 - I) })
	for w := range bounds {
		bounds[w] += i0
	}
	acc := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		acc[w] = make([]float64, pad*bp)
		wg.Add(1)
		go func() {
			defer wg.Done()
			yw := acc[w]
			for I := bounds[w]; I < bounds[w+1]; I++ {
				mulRow(I, bp, xp[I*t*bp:(I+1)*t*bp], xp[I*t*bp:], yw[I*t*bp:(I+1)*t*bp], yw[I*t*bp:])
			}
		}()
	}
	wg.Wait()
	dd := dst.RawMatrix()
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dd.Data[i*dd.Stride : i*dd.Stride+b]
			for c := range row {
				v := 0.0
				for w := range acc {
					v += acc[w][i*bp+c]
				}
				row[c] = v
			}
		}
	})
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
func SymMulUpper(a *mat.SymDense, x, dst *mat.Dense) { SymMulUpperOn(native.Best(), a, x, dst) }

// SymMulUpperOn is SymMulUpper on the native build b.
func SymMulUpperOn(b native.Build, a *mat.SymDense, x, dst *mat.Dense) {
	raw := a.RawSymmetric()
	n, t := raw.N, symmTile
	nt := (n + t - 1) / t
	tiledSymm(n, t, 0, nt, x, dst, func(I, bp int, xi, xj, yi, yj []float64) {
		r := native.TileRow{M: min(t, n-I*t), T: t, Tiles: nt - I, Last: n - (nt-1)*t, Step: t, Lda: raw.Stride, Diag: true}
		b.TileRowSymm64(r, raw.Data[I*t*raw.Stride+I*t:], bp, xi, xj, yi, yj)
	})
}
