package linalg

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
)

// useDotKernel routes inner-product blocks to native.DotNT where the
// processor has it; tests turn it off to exercise the OpenBLAS path too.
var useDotKernel = true

// dotTile is the side of the output tiles of the tiled inner products: a
// 64×64 tile with d = 784 reads 2·64 rows (800 KB), which stay in L2.
const dotTile = 64

// tile is the output block [i0, i1) × [j0, j1).
type tile struct{ i0, i1, j0, j1 int }

// innerProducts sets out = A·Bᵀ for the rows of a (m×d) and b (n×d); when
// upper is true (a and b the same matrix) only the tiles on or above the
// diagonal are computed. after, when non-nil, is called on each finished
// tile by the goroutine that computed it (it must not call BLAS).
//
// With the AVX-512 kernel the tiles run in parallel goroutines; otherwise
// one dsyrk/dgemm call (OpenBLAS threads) computes everything and after then
// runs over the tiles in parallel.
func innerProducts(a, b *mat.Dense, out []float64, ldo int, upper bool, after func(t tile)) {
	m, d := a.Dims()
	n, _ := b.Dims()
	ar, br := a.RawMatrix(), b.RawMatrix()
	tiles := tilesOf(m, n, upper)
	kernel := useDotKernel && native.HasDotKernel()
	if !kernel {
		if upper {
			blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: m, Cols: d, Stride: ar.Stride, Data: ar.Data}, 0,
				blas64.Symmetric{N: m, Stride: ldo, Data: out, Uplo: blas.Upper})
		} else {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: m, Cols: d, Stride: ar.Stride, Data: ar.Data},
				blas64.General{Rows: n, Cols: d, Stride: br.Stride, Data: br.Data}, 0,
				blas64.General{Rows: m, Cols: n, Stride: ldo, Data: out})
		}
		if after == nil {
			return
		}
	}
	runTiles(tiles, 0, func(t tile, _ []float64) {
		if kernel {
			native.DotNT(t.i1-t.i0, t.j1-t.j0, d,
				ar.Data[t.i0*ar.Stride:], ar.Stride,
				br.Data[t.j0*br.Stride:], br.Stride,
				out[t.i0*ldo+t.j0:], ldo)
		}
		if after != nil {
			after(t)
		}
	})
}

// tilesOf lists the dotTile×dotTile output tiles of an m×n product; with
// upper, only those on or above the diagonal.
func tilesOf(m, n int, upper bool) []tile {
	var tiles []tile
	for i0 := 0; i0 < m; i0 += dotTile {
		j := 0
		if upper {
			j = i0
		}
		for j0 := j; j0 < n; j0 += dotTile {
			tiles = append(tiles, tile{i0, min(i0+dotTile, m), j0, min(j0+dotTile, n)})
		}
	}
	return tiles
}

// runTiles calls work on every tile from GOMAXPROCS goroutines, each with
// its own scratch slice of scratchLen float64s (nil when 0). work must not
// call OpenBLAS.
func runTiles(tiles []tile, scratchLen int, work func(t tile, scratch []float64)) {
	jobs := make(chan tile, len(tiles))
	for _, t := range tiles {
		jobs <- t
	}
	close(jobs)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []float64
			if scratchLen > 0 {
				scratch = make([]float64, scratchLen)
			}
			for t := range jobs {
				work(t, scratch)
			}
		}()
	}
	wg.Wait()
}
