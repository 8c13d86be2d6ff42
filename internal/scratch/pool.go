package scratch

import (
	"sync"
	"unsafe"
)

// Pool lends the buffers of one computation's steps out of memory that
// earlier steps wrote and gave back, so that a later step writes pages
// already resident instead of fresh ones, which cost a fault each on
// their first write: for a computation whose steps run one after another
// and whose buffers (megabytes, any size) outgrow the package's size
// classes, such as a Nyström fit on a sample and its completion
// (docs/measurements.md, "fresh pages in the sampled fit"). Unlike the
// package's pools it lives as long as its holder and holds what it is
// given: no collection drops a buffer, no size class rounds one up.
//
// Float64s returns the smallest free buffer large enough, cleared, or a
// new one; Float32s views float64 buffers as float32 (8-byte aligned);
// Put and Put32 give a buffer back and ignore one the pool did not lend,
// or got back already. The contents a holder sees never depend on an
// earlier holder. A nil *Pool allocates and forgets. Safe for concurrent
// use.
type Pool struct {
	mu   sync.Mutex
	free [][]float64
	lent map[*float64]bool
}

// Float64s returns n zeroed float64s.
func (p *Pool) Float64s(n int) []float64 {
	if p == nil || n == 0 {
		return make([]float64, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, b := range p.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
			best = i
		}
	}
	var b []float64
	if best >= 0 {
		b = p.free[best][:n]
		p.free[best] = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		clear(b)
	} else {
		b = make([]float64, n)
	}
	if p.lent == nil {
		p.lent = map[*float64]bool{}
	}
	p.lent[unsafe.SliceData(b)] = true
	return b
}

// Float32s returns n zeroed float32s: Float64s(⌈n/2⌉) viewed as float32.
func (p *Pool) Float32s(n int) []float32 {
	if n == 0 {
		return nil
	}
	return AsFloat32s(p.Float64s((n+1)/2), n)
}

// AsFloat32s views the memory of b as float32s: the first n ≤ 2·cap(b) of
// them, with the capacity of all of b.
func AsFloat32s(b []float64, n int) []float32 {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), 2*cap(b))[:n]
}

// Put gives b back (b must not be used afterwards).
func (p *Pool) Put(b []float64) {
	if p == nil || cap(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if base := unsafe.SliceData(b); p.lent[base] {
		delete(p.lent, base)
		p.free = append(p.free, b[:cap(b)])
	}
}

// Put32 gives back a buffer from Float32s (b must not be used
// afterwards).
func (p *Pool) Put32(b []float32) {
	if cap(b) < 2 {
		return
	}
	p.Put(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/2))
}
