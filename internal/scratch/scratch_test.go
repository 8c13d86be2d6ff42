package scratch

import (
	"runtime"
	"unsafe"

	"testing"

	"github.com/stretchr/testify/require"
)

// Every lent buffer has the asked length and is zeroed, also when a buffer
// given back dirty is lent again; pooled lengths get their size class's
// capacity, others exactly their length.
func TestLentBuffersAreZeroed(t *testing.T) {
	for _, n := range []int{1, MinLen - 1, MinLen, MinLen + 1, 5000, 1 << 15, 117600, MaxLen - 1, MaxLen, MaxLen + 1} {
		for round := 0; round < 3; round++ {
			b := Float64s(n)
			require.Len(t, b, n)
			require.Equal(t, -1, firstNonZero(b), "n = %d, round %d", n, round)
			if n >= MinLen && n <= MaxLen {
				c := cap(b)
				require.Equal(t, 0, c&(c-1), "capacity %d of n = %d is a power of two", c, n)
				require.True(t, c >= n && c < 2*n, "capacity %d for n = %d", c, n)
			} else {
				require.Equal(t, n, cap(b))
			}
			for i := range b {
				b[i] = float64(i) + 0.5
			}
			Put(b)
		}
	}
}

// A buffer given back serves a shorter request of its class zeroed in
// full, not only in the part the last holder used.
func TestReuseAcrossLengths(t *testing.T) {
	b := Float64s(1 << 14)
	for i := range b {
		b[i] = 1
	}
	Put(b)
	for _, n := range []int{(1 << 13) + 1, 1 << 14, 12000} {
		c := Float64s(n)
		require.Equal(t, -1, firstNonZero(c), "n = %d", n)
		for i := range c {
			c[i] = -1
		}
		Put(c)
	}
}

// Slices whose capacity is not a size class, and nil, are dropped without
// harm; the class of a length is the smallest power of two that holds it.
func TestPutForeignAndClasses(t *testing.T) {
	Put(nil)
	Put(make([]float64, 5000))
	Put(make([]float64, 10, 1<<21))
	require.Equal(t, 0, class(MinLen))
	require.Equal(t, 1, class(MinLen+1))
	require.Equal(t, maxShift-minShift, class(MaxLen))
	for n := MinLen; n <= MaxLen; n = n*3/2 + 1 {
		c := 1 << (class(n) + minShift)
		require.True(t, c >= n && c/2 < n, "n = %d: class size %d", n, c)
	}
}

// firstNonZero returns the index of b's first non-zero entry, or -1.
func firstNonZero(b []float64) int {
	for i, v := range b {
		if v != 0 {
			return i
		}
	}
	return -1
}

// A pooled length is served from a buffer given back (the pool keeps it
// between a Put and the next Float64s on the same goroutine, barring a
// collection: at least once in ten tries), from the smallest and the
// largest pooled length alike; a length just outside the pooled range
// always gets a buffer of exactly its length.
func TestPooledLengthsAreReused(t *testing.T) {
	for _, n := range []int{MinLen, MinLen + 1, 3 * MinLen, MaxLen} {
		reused := false
		for try := 0; try < 10 && !reused; try++ {
			b := Float64s(n)
			Put(b)
			c := Float64s(n)
			reused = &b[0] == &c[0]
			Put(c)
		}
		require.True(t, reused, "n = %d was never served from a buffer given back", n)
	}
	for _, n := range []int{MinLen - 1, MaxLen + 1} {
		b := Float64s(n)
		Put(b)
		require.Equal(t, n, cap(Float64s(n)), "n = %d is not pooled", n)
	}
}

// Slices given back that were not lent — capacities that are no size
// class, or classes' lengths below their capacity — never make a later
// Float64s return less capacity than it was asked for.
func TestForeignSlicesNeverShortchange(t *testing.T) {
	for _, c := range []int{MinLen + 1, 5000, 3 * MinLen, 100000, MaxLen - 1} {
		Put(make([]float64, c))
		Put(make([]float64, 1, c))
	}
	for round := 0; round < 3; round++ {
		for n := MinLen; n <= MaxLen; n *= 2 {
			for _, m := range []int{n, n - 1} {
				if m < MinLen {
					continue
				}
				b := Float64s(m)
				require.Len(t, b, m)
				require.GreaterOrEqual(t, cap(b), m)
				Put(b)
			}
		}
	}
}

// A Pool lends zeroed buffers of the asked length, the smallest free one
// that is large enough (the memory given back, whatever it held), and a
// new one when none is; float32 buffers are views of float64 ones and go
// back the same way; a buffer it did not lend, or got back already, is
// ignored; a nil Pool allocates.
func TestPoolBestFit(t *testing.T) {
	addr := func(b []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	var p Pool
	big, small := p.Float64s(1000), p.Float64s(300)
	for i := range big {
		big[i] = 1
	}
	for i := range small {
		small[i] = 2
	}
	p.Put(big)
	p.Put(small)
	p.Put(small)                 // twice: once only
	p.Put(make([]float64, 5000)) // foreign: ignored
	p.Put(big[10:])              // not a lent buffer's start: ignored
	b := p.Float64s(200)         // the smallest that fits: small's memory
	require.Len(t, b, 200)
	require.Equal(t, addr(small), addr(b))
	require.Equal(t, make([]float64, 200), b)
	c := p.Float64s(301) // big's memory
	require.Equal(t, addr(big), addr(c))
	require.Equal(t, make([]float64, 301), c)
	d := p.Float64s(10) // nothing free: new
	require.NotEqual(t, addr(big), addr(d))
	require.NotEqual(t, addr(small), addr(d))
	p.Put(c)
	f := p.Float32s(1999) // a view of big's 1000 float64s
	require.Len(t, f, 1999)
	require.Equal(t, addr(big), uintptr(unsafe.Pointer(unsafe.SliceData(f))))
	for _, v := range f {
		require.Zero(t, v)
	}
	p.Put32(f)
	require.Equal(t, addr(big), addr(p.Float64s(1000)))
	var none *Pool
	require.Equal(t, make([]float64, 7), none.Float64s(7))
	require.Len(t, none.Float32s(7), 7)
	none.Put(b) // harmless
	require.Nil(t, AsFloat32s(nil, 0))
}

// A rest of exactly SplitMin is split off and lent next, from where the
// first buffer ends; a one-value buffer goes back and is lent again.
func TestPoolSplitEdge(t *testing.T) {
	addr := func(b []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	var p Pool
	whole := p.Float64s(100 + SplitMin)
	p.Put(whole)
	first := p.Float64s(100)
	require.Equal(t, addr(whole), addr(first))
	require.Equal(t, 100, cap(first), "split: the rest is not first's")
	rest := p.Float64s(SplitMin)
	require.Equal(t, addr(whole)+100*8, addr(rest), "the rest of exactly SplitMin is free")
	one := p.Float64s(1)
	p.Put(one)
	require.Equal(t, addr(one), addr(p.Float64s(1)), "a one-value buffer goes back")
}

// A free piece SplitMin or more longer than asked is split: buffers lent
// at once never overlap, the pieces of one allocation given back in any
// order join, so a later buffer as long as the whole is its memory
// again.
func TestPoolSplitsAndJoins(t *testing.T) {
	addr := func(b []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	const whole = 6 * SplitMin
	for _, order := range [][3]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}} {
		var p Pool
		base := p.Float64s(whole)
		other := p.Float64s(whole + SplitMin/2) // another allocation, free beside it
		p.Put(base)
		p.Put(other)
		a, f, c := p.Float64s(2*SplitMin), p.Float32s(2*SplitMin), p.Float64s(SplitMin+7)
		views := [][]float64{a, unsafe.Slice((*float64)(unsafe.Pointer(&f[0])), SplitMin), c}
		for i, v := range views {
			require.Zero(t, v[len(v)-1])
			for j := range v {
				v[j] = float64(i + 1)
			}
			lo, hi := addr(v), addr(v)+uintptr(cap(v))*8
			require.True(t, lo >= addr(base) && hi <= addr(base)+whole*8, "part %d outside the piece it was split from", i)
		}
		for i, v := range views {
			for _, x := range v {
				require.Equal(t, float64(i+1), x, "part %d was overwritten by another", i)
			}
		}
		require.Equal(t, 2*SplitMin, cap(f), "a split piece is lent with its length as capacity")
		for _, i := range order {
			switch i {
			case 0:
				p.Put(a)
			case 1:
				p.Put32(f)
			case 2:
				p.Put(c)
			}
		}
		again := p.Float64s(whole)
		require.Equal(t, addr(base), addr(again), "order %v: the pieces did not join", order)
		require.Equal(t, make([]float64, whole), again)
		// base is lent again and other free: a buffer longer than other
		// is a new one, other's length is other.
		longer := p.Float64s(whole + SplitMin)
		require.NotEqual(t, addr(other), addr(longer))
		require.Equal(t, addr(other), addr(p.Float64s(whole+SplitMin/2)))
	}
}

// Collect collects exactly when the memory a collection scans is at most
// its bound: a cycle runs (NumGC grows) under a bound above ScanBytes,
// none under a bound below it.
func TestCollect(t *testing.T) {
	keep := make([]*[64]byte, 1<<14) // a scannable heap of about 1 MB
	for i := range keep {
		keep[i] = new([64]byte)
	}
	runtime.GC()
	scan := ScanBytes()
	require.Greater(t, scan, uint64(len(keep)*8), "the scannable heap holds keep")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	require.True(t, Collect(scan+1<<20))
	runtime.ReadMemStats(&after)
	require.Greater(t, after.NumGC, before.NumGC)
	scan = ScanBytes()
	runtime.ReadMemStats(&before)
	require.False(t, Collect(scan/2))
	runtime.ReadMemStats(&after)
	require.Equal(t, before.NumGC, after.NumGC)
	runtime.KeepAlive(keep)
}
