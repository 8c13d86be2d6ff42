// Package scratch lends the float64 buffers of a small fit's temporaries
// (the shifted data, the kernel matrix, its centred copy, LAPACK's work
// copy) so that a program fitting many small problems reuses their memory
// instead of handing it to the garbage collector at every fit, which would
// then run, and return to the system pages that the next fit touches
// again, about once a fit (docs/measurements.md).
//
// Float64s(n) lends a zeroed slice of length n; Put(b) gives it back once
// its holder, and everything that read it, is done with it. Buffers are
// pooled by size class (powers of two from MinLen to MaxLen elements) in
// sync.Pools, so the runtime may drop them at any collection: a buffer
// that is not given back, or was dropped, only costs an allocation.
// Lengths outside [MinLen, MaxLen] are allocated and dropped as usual.
// The contents a holder sees never depend on an earlier holder (every
// lent buffer is cleared), so results are the same bits either way.
package scratch

import (
	"math/bits"
	"sync"
)

// MinLen and MaxLen bound the lengths that are pooled: below MinLen an
// allocation costs less than the pool; above MaxLen (8 MiB) buffers are
// large enough that their own arithmetic dwarfs their allocation, and
// kdual maps the largest ones itself (internal/bigmem).
const (
	MinLen = 1 << minShift
	MaxLen = 1 << maxShift
)

const minShift, maxShift = 12, 20

var pools [maxShift - minShift + 1]sync.Pool

// class returns the size class of a length n in [MinLen, MaxLen]: the
// index of the smallest power of two ≥ n, counted from MinLen.
func class(n int) int { return bits.Len(uint(n-1)) - minShift }

// Float64s returns a zeroed slice of length n; its capacity is the size
// class's (a power of two) when n is pooled.
func Float64s(n int) []float64 {
	if n < MinLen || n > MaxLen {
		return make([]float64, n)
	}
	c := class(n)
	if p, ok := pools[c].Get().(*[]float64); ok {
		b := (*p)[:n]
		clear(b)
		return b
	}
	return make([]float64, n, 1<<(c+minShift))
}

// Put gives b back for a later Float64s. b, and every slice of its
// memory, must not be used afterwards. Slices not lent by Float64s are
// taken too when their capacity is a size class; others are dropped.
func Put(b []float64) {
	c := cap(b)
	if c < MinLen || c > MaxLen || c&(c-1) != 0 {
		return
	}
	b = b[:c]
	pools[class(c)].Put(&b)
}
