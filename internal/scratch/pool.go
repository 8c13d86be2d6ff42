package scratch

import (
	"sync"
	"unsafe"

	"github.com/kdual/kdual/internal/bigmem"
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
// Float64s lends the smallest free piece large enough, cleared, or a new
// allocation (asking for huge pages where they are on:
// bigmem.AdviseScratch); a piece SplitMin or more float64s longer than asked is
// split, the rest staying free, and a piece given back joins the free
// pieces of the same allocation on either side of it, so that two steps
// can share one earlier step's buffer and a later step can have it whole
// again. Float32s views float64 buffers as float32 (8-byte aligned); Put
// and Put32 give a buffer back and ignore one the pool did not lend, or
// got back already. The contents a holder sees never depend on an earlier
// holder. A nil *Pool allocates and forgets. Safe for concurrent use.
type Pool struct {
	mu      sync.Mutex
	free    []piece
	lent    map[*float64]piece
	nextAlc int
}

// SplitMin is the least rest (float64s) for which Float64s splits a free
// piece: below it the whole piece is lent.
const SplitMin = 4096

// piece is memory the pool holds: b (len = cap: all of it) within the
// allocation alloc; only pieces of one allocation are ever joined.
type piece struct {
	b     []float64
	alloc int
}

func (c piece) start() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(c.b))) }
func (c piece) end() uintptr   { return c.start() + uintptr(len(c.b))*8 }

// Float64s returns n zeroed float64s.
func (p *Pool) Float64s(n int) []float64 {
	if p == nil || n == 0 {
		return make([]float64, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, c := range p.free {
		if len(c.b) >= n && (best < 0 || len(c.b) < len(p.free[best].b)) {
			best = i
		}
	}
	var c piece
	if best >= 0 {
		c = p.free[best]
		p.free[best] = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		if len(c.b)-n >= SplitMin {
			p.free = append(p.free, piece{c.b[n:], c.alloc})
			c.b = c.b[:n:n]
		}
		clear(c.b[:n])
	} else {
		c = piece{make([]float64, n), p.nextAlc}
		bigmem.AdviseScratch(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.b))), 8*n))
		p.nextAlc++
	}
	if p.lent == nil {
		p.lent = map[*float64]piece{}
	}
	p.lent[unsafe.SliceData(c.b)] = c
	return c.b[:n]
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
	c, ok := p.lent[unsafe.SliceData(b)]
	if !ok {
		return
	}
	delete(p.lent, unsafe.SliceData(b))
	for i := 0; i < len(p.free); {
		f := p.free[i]
		switch {
		case f.alloc != c.alloc:
			i++
			continue
		case f.end() == c.start():
			c.b = unsafe.Slice(unsafe.SliceData(f.b), len(f.b)+len(c.b))
		case c.end() == f.start():
			c.b = unsafe.Slice(unsafe.SliceData(c.b), len(c.b)+len(f.b))
		default:
			i++
			continue
		}
		p.free[i] = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	}
	p.free = append(p.free, c)
}

// Put32 gives back a buffer from Float32s (b must not be used
// afterwards).
func (p *Pool) Put32(b []float32) {
	if cap(b) < 2 {
		return
	}
	p.Put(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/2))
}
