// Package par is kdual's one way of running Go loops on several
// goroutines: For (balanced chunks of an index range), Each (work items
// with a per-goroutine scratch buffer) and Pipeline (a producer and a
// consumer overlapping). The number of goroutines is explicit: every call
// takes workers, and 0 means GOMAXPROCS. None of them may run OpenBLAS in
// its bodies except where Pipeline says so: OpenBLAS has its own threads.
package par

import (
	"runtime"
	"sync"
)

// Workers resolves a worker count: w when positive, else GOMAXPROCS.
func Workers(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// minChunk is the range of cheap indices (For without a weight) below
// which For runs on the calling goroutine.
const minChunk = 64

// For runs body over [0, n) split into about 4·workers chunks on workers
// goroutines (0: GOMAXPROCS). weight(i) ≥ 0, when non-nil, is the relative
// cost of index i, used to balance triangular loops. Without a weight the
// indices are taken as cheap (points, entries): fewer than 64 run on the
// calling goroutine. Loops over a few costly items (blocks of rows, tiles,
// feature rows) use Blocks; a weighted For never runs serially for want of
// indices either.
func For(workers, n int, weight func(i int) float64, body func(lo, hi int)) {
	if weight == nil && n < minChunk {
		if n > 0 {
			body(0, n)
		}
		return
	}
	forRanges(workers, n, weight, body)
}

// Blocks runs body over [0, n) — n costly items: blocks of rows, tiles,
// whole feature rows — split into up to 4·workers chunks on workers
// goroutines (0: GOMAXPROCS), however few the items.
func Blocks(workers, n int, body func(lo, hi int)) {
	forRanges(workers, n, nil, body)
}

func forRanges(workers, n int, weight func(i int) float64, body func(lo, hi int)) {
	workers = Workers(workers)
	if n <= 1 || workers == 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	chunks := 4 * workers
	bounds := make([]int, 0, chunks+1)
	bounds = append(bounds, 0)
	if weight == nil {
		for c := 1; c < chunks; c++ {
			bounds = append(bounds, c*n/chunks)
		}
	} else {
		total := 0.0
		for i := 0; i < n; i++ {
			total += weight(i)
		}
		acc, next := 0.0, 1
		for i := 0; i < n && next < chunks; i++ {
			acc += weight(i)
			if acc >= total*float64(next)/float64(chunks) {
				bounds = append(bounds, i+1)
				next++
			}
		}
	}
	bounds = append(bounds, n)
	ranges := make([][2]int, 0, len(bounds))
	for c := 0; c+1 < len(bounds); c++ {
		if bounds[c] < bounds[c+1] {
			ranges = append(ranges, [2]int{bounds[c], bounds[c+1]})
		}
	}
	Each(workers, len(ranges), 0, func(i int, _ []float64) { body(ranges[i][0], ranges[i][1]) })
}

// Each calls work(i, scratch) for i = 0, …, n−1 from workers goroutines
// (0: GOMAXPROCS), each with its own scratch slice of scratchLen float64s
// (nil when 0), items taken in order as goroutines become free.
func Each(workers, n, scratchLen int, work func(i int, scratch []float64)) {
	workers = min(Workers(workers), n)
	if workers <= 1 {
		var scratch []float64
		if scratchLen > 0 {
			scratch = make([]float64, scratchLen)
		}
		for i := 0; i < n; i++ {
			work(i, scratch)
		}
		return
	}
	jobs := make(chan int, n)
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []float64
			if scratchLen > 0 {
				scratch = make([]float64, scratchLen)
			}
			for i := range jobs {
				work(i, scratch)
			}
		}()
	}
	wg.Wait()
}

// Pipeline runs produce(c) for c = 0, …, m−1 on the calling goroutine and
// consume(c) on a second goroutine as soon as produce(c) has returned, in
// order, with at most depth items in flight: produce(c) starts only after
// consume(c − depth) has finished, so the two stages may share a ring of
// depth buffers indexed c % depth. One of the stages may call OpenBLAS;
// the other then runs while OpenBLAS computes.
func Pipeline(m, depth int, produce, consume func(c int)) {
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
