package par

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Every index is visited exactly once, for every worker count, balanced
// or not; Each gives every goroutine its own scratch; Pipeline consumes in
// order and never more than depth ahead.
func TestEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 7} {
		for _, n := range []int{0, 1, 63, 64, 1000} {
			for _, weighted := range []bool{false, true} {
				seen := make([]int32, n)
				var w func(int) float64
				if weighted {
					w = func(i int) float64 { return float64(n - i) }
				}
				For(workers, n, w, func(lo, hi int) {
					if hi <= lo {
						t.Errorf("workers %d n %d weighted %v: an empty range [%d, %d)", workers, n, weighted, lo, hi)
					}
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("workers %d n %d weighted %v: index %d visited %d times", workers, n, weighted, i, c)
					}
				}
				clear(seen)
				Blocks(workers, n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("Blocks: workers %d n %d: index %d visited %d times", workers, n, i, c)
					}
				}
			}
		}
	}
	var count int32
	Each(3, 50, 4, func(i int, scratch []float64) {
		if len(scratch) != 4 {
			t.Errorf("scratch of %d", len(scratch))
		}
		scratch[0]++ // private: no race with other goroutines
		atomic.AddInt32(&count, 1)
	})
	if count != 50 {
		t.Fatalf("Each ran %d items", count)
	}
	// Every worker count, one worker included, hands out scratch of the
	// length asked (none for 0), and runs every item once.
	for _, workers := range []int{1, 2, 5} {
		for _, length := range []int{0, 1, 3} {
			var ran int32
			Each(workers, 7, length, func(i int, scratch []float64) {
				if len(scratch) != length {
					t.Errorf("workers %d: scratch of %d, want %d", workers, len(scratch), length)
				}
				atomic.AddInt32(&ran, 1)
			})
			if ran != 7 {
				t.Errorf("workers %d, scratch %d: ran %d of 7", workers, length, ran)
			}
		}
	}
	var order []int
	inFlight, maxInFlight := int32(0), int32(0)
	Pipeline(20, 3, func(c int) {
		if v := atomic.AddInt32(&inFlight, 1); v > atomic.LoadInt32(&maxInFlight) {
			atomic.StoreInt32(&maxInFlight, v)
		}
	}, func(c int) {
		order = append(order, c)
		atomic.AddInt32(&inFlight, -1)
	})
	for i, c := range order {
		if c != i {
			t.Fatalf("consumed out of order: %v", order)
		}
	}
	if len(order) != 20 || maxInFlight > 3 {
		t.Fatalf("%d consumed, %d in flight at most (depth 3)", len(order), maxInFlight)
	}
}

// Blocks and a weighted For run few items on several goroutines (each
// item here waits until a second one has started, so a serial run would
// never finish); For without a weight keeps fewer than 64 cheap indices on
// the calling goroutine (one range).
func TestFewCostlyItemsInParallel(t *testing.T) {
	for _, run := range []func(n int, body func(lo, hi int)){
		func(n int, body func(lo, hi int)) { Blocks(2, n, body) },
		func(n int, body func(lo, hi int)) { For(2, n, func(int) float64 { return 1 }, body) },
	} {
		started := make(chan struct{}, 2)
		done := make(chan struct{})
		go func() {
			run(2, func(lo, hi int) {
				started <- struct{}{}
				for len(started) < 2 {
					runtime.Gosched()
				}
			})
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("two items ran one after the other")
		}
	}
	calls := 0
	For(2, 63, nil, func(lo, hi int) {
		calls++
		if lo != 0 || hi != 63 {
			t.Errorf("range [%d, %d)", lo, hi)
		}
	})
	if calls != 1 {
		t.Fatalf("%d ranges for 63 cheap indices", calls)
	}
}
