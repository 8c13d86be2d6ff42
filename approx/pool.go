package approx

import (
	"sync"
	"unsafe"
)

// bufPool lends a fit's scratch buffers out of memory that the fit wrote
// before and handed back, so that a later step writes pages that are
// already resident instead of fresh ones: a fresh page costs a fault on
// its first write, and a fit with its landmarks chosen on a sample (the
// sample's factor and scratch, then the completion's chunk, sums and
// k×k matrices) would otherwise touch each of its steps' buffers fresh
// (docs/measurements.md, "fresh pages in the sampled fit"). Every buffer
// is a []float64 (float32 ones are views of them: 8-byte aligned); f64
// and f32 return the smallest free buffer that is large enough, zeroed,
// or a new one; put64 and put32 hand a buffer back, and ignore one the
// pool did not lend (or got back already). What the pool lends changes
// no value a fit computes. A nil pool allocates and forgets. Safe for
// concurrent use.
type bufPool struct {
	mu   sync.Mutex
	free [][]float64
	lent map[*float64]bool
}

// f64 returns n zeroed float64s.
func (p *bufPool) f64(n int) []float64 {
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

// f32 returns n zeroed float32s (a view of ⌈n/2⌉ float64s).
func (p *bufPool) f32(n int) []float32 {
	if n == 0 {
		return nil
	}
	return f32s(p.f64((n+1)/2), n)
}

// f32s views the float64s of b as float32s: the first n ≤ 2·cap(b) of
// them, the view's capacity all of b.
func f32s(b []float64, n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), 2*cap(b))[:n]
}

// put64 hands b back (b must not be used afterwards).
func (p *bufPool) put64(b []float64) {
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

// put32 hands back a buffer from f32 (b must not be used afterwards).
func (p *bufPool) put32(b []float32) {
	if cap(b) < 2 {
		return
	}
	p.put64(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/2))
}
