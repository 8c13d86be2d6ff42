package gram

import "github.com/kdual/kdual/internal/par"

// dotTile is the side of the output tiles of native.DotNT: a 64×64 tile
// with d = 784 reads 2·64 rows (800 KB), which stay in L2.
const dotTile = 64

// tile is the output block [i0, i1) × [j0, j1).
type tile struct{ i0, i1, j0, j1 int }

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

// runTiles calls work on every tile from workers goroutines (0:
// GOMAXPROCS), each with its own scratch slice of scratchLen float64s (nil
// when 0). work must not call OpenBLAS.
func runTiles(workers int, tiles []tile, scratchLen int, work func(t tile, scratch []float64)) {
	par.Each(workers, len(tiles), scratchLen, func(i int, scratch []float64) { work(tiles[i], scratch) })
}
