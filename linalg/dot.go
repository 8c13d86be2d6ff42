package linalg

import (
	"runtime"
	"sync"
)

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

// maxWorkers is the number of goroutines a parallel loop uses.
func maxWorkers() int { return runtime.GOMAXPROCS(0) }

// pipeline runs produce(c) for c = 0, …, m−1 on the calling goroutine and
// consume(c) on a second goroutine as soon as produce(c) has returned, in
// order, with at most depth items in flight: produce(c) starts only after
// consume(c − depth) has finished, so the two stages may share a ring of
// depth buffers indexed c % depth. Only one of the stages may call
// OpenBLAS; the other then runs while OpenBLAS computes, instead of
// waiting for the cores or leaving OpenBLAS's threads spinning idle.
func pipeline(m, depth int, produce, consume func(c int)) {
	if m <= 0 {
		return
	}
	ready := make(chan int, depth)
	free := make(chan struct{}, depth)
	for i := 0; i < depth; i++ {
		free <- struct{}{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range ready {
			consume(c)
			free <- struct{}{}
		}
	}()
	for c := 0; c < m; c++ {
		<-free
		produce(c)
		ready <- c
	}
	close(ready)
	<-done
}
