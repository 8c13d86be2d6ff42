package native

/*
#cgo CFLAGS: -O3
#include <stdint.h>
int kd_has_vnni512(void);
long long kd_snap8_pack_base(int d, const double *v, const double *lo, const double *tol, const int *mid, double step, double inv, uint8_t *dst, int *sum, double *norm, float *x32);
long long kd_snap8_pack_avx2(int d, const double *v, const double *lo, const double *tol, const int *mid, double step, double inv, uint8_t *dst, int *sum, double *norm, float *x32);
void kd_i8_map_base(int t, int plo, int phi, int d4, const uint8_t *xp, const int8_t *y,
                    const int32_t *xs, const double *xn, const double *yn, double c, int laplace,
                    double *out, float *out32, int ldo);
void kd_i8_map_vnni(int t, int plo, int phi, int d4, const uint8_t *xp, const int8_t *y,
                    const int32_t *xs, const double *xn, const double *yn, double c, int laplace,
                    double *out, float *out32, int ldo);
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kdual/kdual/internal/bigmem"
)

// Kernel rows of 8-bit data by exact integer inner products.
//
// Data whose features are 8-bit levels (images: an integer 0…255 times a
// step, plus a column offset) have squared distances step²·‖k_x − k_y‖² in
// integer levels k. The AVX-512 VNNI instruction vpdpbusd multiplies 64
// unsigned bytes by 64 signed ones and adds each four adjacent products
// into a 32-bit lane: with the landmark's levels shifted to signed bytes
// (k_y − 128), x·y = Σ k_x·(k_y − 128) + 128·Σ k_x, exact in 32-bit
// integers while x·y ≤ d·255² < 2³¹, that is for d ≤ 33 000. One
// instruction does 64 multiply-adds where float32 FMA does 16, on a
// quarter of the bytes; the distances are then exact in float64 and the
// map (kd_exp8) is applied before the block leaves the registers.

// Int8MaxDim is the largest dimension whose inner products of levels fit
// 32-bit integers (d·255² < 2³¹).
const Int8MaxDim = 33000

// Int8Block is the number of points in a packed block.
const Int8Block = 64

// int8Rows is the landmark rows a register block computes at once; the
// landmarks passed to Int8Map must be readable to a multiple of it.
const int8Rows = 6

// HasInt8 reports whether the processor runs the VNNI kernel (AVX-512 F,
// BW, VNNI and FMA); Int8Map runs a portable loop elsewhere.
func HasInt8() bool { return hasVNNI }

var hasVNNI = C.kd_has_vnni512() != 0

// Int8Points are n points of d 8-bit levels packed for Int8Map: blocks
// of 64 points, each a sequence of 256-byte stripes (four features of four
// groups of sixteen points, each point's four levels adjacent), zero past
// n and d; with each point's level sum and squared norm (exact).
type Int8Points struct {
	N, D   int
	d4     int // features rounded up to a multiple of 4, over 4
	packed []uint8
	sums   []int32
	norms  []float64
}

// PackInt8 packs the n points whose levels level(i, dst) writes (d bytes
// each) into Int8Points. Safe to call level concurrently for different i.
func PackInt8(n, d int, level func(i int, dst []uint8)) (*Int8Points, error) {
	if n < 1 || d < 1 || d > Int8MaxDim {
		return nil, fmt.Errorf("native: PackInt8: %d points of %d features", n, d)
	}
	d4 := (d + 3) / 4
	nb := (n + Int8Block - 1) / Int8Block
	p := newInt8Points(n, d, d4, nb)
	parallelBlocks(nb, func(b int) {
		buf := make([]uint8, 4*d4) // zero past d
		base := p.packed[b*Int8Block*4*d4:]
		for i := 0; i < Int8Block && b*Int8Block+i < n; i++ {
			pt := b*Int8Block + i
			level(pt, buf[:d])
			var s, sq int64
			for _, v := range buf[:d] {
				s += int64(v)
				sq += int64(v) * int64(v)
			}
			p.sums[pt], p.norms[pt] = int32(s), float64(sq)
			off := (i/16)*64 + (i%16)*4
			for a4 := 0; a4 < d4; a4++ {
				copy(base[a4*256+off:a4*256+off+4], buf[4*a4:4*a4+4])
			}
		}
	})
	return p, nil
}

// newInt8Points allocates n points of d features in nb blocks, the packed
// levels asking for huge pages where they are on (bigmem.AdviseScratch).
func newInt8Points(n, d, d4, nb int) *Int8Points {
	p := &Int8Points{N: n, D: d, d4: d4, packed: make([]uint8, nb*Int8Block*4*d4),
		sums: make([]int32, nb*Int8Block), norms: make([]float64, nb*Int8Block)}
	bigmem.AdviseScratch(p.packed)
	return p
}

// Levels writes point i's d levels into dst.
func (p *Int8Points) Levels(i int, dst []uint8) {
	if i < 0 || i >= p.N || len(dst) < p.D {
		panic(fmt.Sprintf("native: Int8Points.Levels: point %d of %d, len(dst) %d", i, p.N, len(dst)))
	}
	b, r := i/Int8Block, i%Int8Block
	base := p.packed[b*Int8Block*4*p.d4+(r/16)*64+(r%16)*4:]
	full := p.D / 4
	for a4 := 0; a4 < full; a4++ {
		binary.LittleEndian.PutUint32(dst[4*a4:], binary.LittleEndian.Uint32(base[a4*256:]))
	}
	for a := 4 * full; a < p.D; a++ {
		dst[a] = base[(a/4)*256+a%4]
	}
}

// Subset packs the points idx of p (in that order) as new Int8Points.
func (p *Int8Points) Subset(idx []int) (*Int8Points, error) {
	return PackInt8(len(idx), p.D, func(i int, dst []uint8) { p.Levels(idx[i], dst) })
}

// Blocks returns the number of packed blocks.
func (p *Int8Points) Blocks() int { return len(p.sums) / Int8Block }

// Bytes returns the memory the packed points take.
func (p *Int8Points) Bytes() int64 { return int64(len(p.packed)) + 12*int64(len(p.sums)) }

// Int8Landmarks are t landmark rows for Int8Map: each row's levels less
// 128 as signed bytes, padded to the register block, and their squared
// norms in levels.
type Int8Landmarks struct {
	T     int
	rows  []int8
	norms []float64
}

// NewInt8Landmarks packs t rows of levels (level(j, dst) writes row j's d
// bytes) for points of dimension p.D.
func (p *Int8Points) NewInt8Landmarks(t int, level func(j int, dst []uint8)) *Int8Landmarks {
	w := 4 * p.d4
	padded := (t + int8Rows - 1) / int8Rows * int8Rows
	l := &Int8Landmarks{T: t, rows: make([]int8, padded*w), norms: make([]float64, t)}
	buf := make([]uint8, p.D)
	for j := 0; j < t; j++ {
		level(j, buf)
		var sq int64
		for a, v := range buf {
			l.rows[j*w+a] = int8(int(v) - 128)
			sq += int64(v) * int64(v)
		}
		l.norms[j] = float64(sq)
	}
	return l
}

// Landmarks returns points [i0, i1) of p as landmarks (what
// NewInt8Landmarks makes of their levels), read straight from the packed
// layout four levels at a time.
func (p *Int8Points) Landmarks(i0, i1 int) *Int8Landmarks {
	if i0 < 0 || i1 > p.N || i0 >= i1 {
		panic(fmt.Sprintf("native: Int8Points.Landmarks: points [%d, %d) of %d", i0, i1, p.N))
	}
	return p.landmarks(nil, i1-i0, func(j int) int { return i0 + j })
}

// LandmarksIn is Landmarks in the storage of l when it is large enough
// (l is then returned, its former rows gone), in new storage otherwise or
// when l is nil: for callers that make landmarks of many row ranges in turn.
func (p *Int8Points) LandmarksIn(l *Int8Landmarks, i0, i1 int) *Int8Landmarks {
	if i0 < 0 || i1 > p.N || i0 >= i1 {
		panic(fmt.Sprintf("native: Int8Points.LandmarksIn: points [%d, %d) of %d", i0, i1, p.N))
	}
	return p.landmarks(l, i1-i0, func(j int) int { return i0 + j })
}

// LandmarksOf returns the points idx of p, in that order, as landmarks
// (what NewInt8Landmarks makes of their levels), read straight from the
// packed layout four levels at a time.
func (p *Int8Points) LandmarksOf(idx []int) *Int8Landmarks {
	if len(idx) == 0 {
		panic("native: Int8Points.LandmarksOf: no points")
	}
	for _, i := range idx {
		if i < 0 || i >= p.N {
			panic(fmt.Sprintf("native: Int8Points.LandmarksOf: point %d of %d", i, p.N))
		}
	}
	return p.landmarks(nil, len(idx), func(j int) int { return idx[j] })
}

// landmarks makes t landmarks of the points at(0) … at(t−1), in the
// storage of reuse when it is not nil and large enough.
func (p *Int8Points) landmarks(reuse *Int8Landmarks, t int, at func(j int) int) *Int8Landmarks {
	w := 4 * p.d4
	padded := (t + int8Rows - 1) / int8Rows * int8Rows
	var l *Int8Landmarks
	if reuse != nil && cap(reuse.rows) >= padded*w && cap(reuse.norms) >= t {
		l = reuse
		l.T, l.rows, l.norms = t, l.rows[:padded*w], l.norms[:t]
		clear(l.rows[t*w:]) // the padding rows, zero as in new storage
	} else {
		l = &Int8Landmarks{T: t, rows: make([]int8, padded*w), norms: make([]float64, t)}
	}
	// A level v becomes v − 128, whose byte is v ^ 0x80; the features
	// past D, zero levels in the packing, must stay zero.
	tail := uint32(0x80808080)
	if r := p.D % 4; r != 0 {
		tail = 0x80808080 >> (8 * (4 - r))
	}
	for j := 0; j < t; j++ {
		i := at(j)
		l.norms[j] = p.norms[i]
		b, r := i/Int8Block, i%Int8Block
		base := p.packed[b*Int8Block*4*p.d4+(r/16)*64+(r%16)*4:]
		dst := unsafe.Slice((*byte)(unsafe.Pointer(&l.rows[j*w])), w)
		for a4 := 0; a4 < p.d4; a4++ {
			flip := uint32(0x80808080)
			if a4 == p.d4-1 {
				flip = tail
			}
			binary.LittleEndian.PutUint32(dst[4*a4:], binary.LittleEndian.Uint32(base[a4*256:])^flip)
		}
	}
	return l
}

// Int8Map sets out[j·ldo + i − lo] (j < y.T) to exp(c·δ) for the points
// lo ≤ i < hi, δ the squared distance in levels between point i and
// landmark j, or its square root when laplace is true; c ≤ 0 (the
// kernel's scale times step², or step for Laplace). Builds other than
// Baseline run the AVX-512 VNNI kernel where HasInt8, the rest a portable
// loop; both compute
// the integer products exactly and the same δ, so they agree to the
// rounding of the exponential. Safe for concurrent use on disjoint
// ranges; a range that starts or ends inside a block of 64 points
// computes the whole block (ranges on multiples of Int8Block do not).
func (b Build) Int8Map(p *Int8Points, y *Int8Landmarks, lo, hi int, c float64, laplace bool, out []float64, ldo int) {
	if !b.int8Args("Int8Map", p, y, lo, hi, c, len(out), ldo) {
		return
	}
	b.int8Call(p, y, lo, hi, c, laplace, (*C.double)(unsafe.Pointer(&out[0])), nil, ldo)
}

// Int8Map32 is Int8Map storing each value rounded to float32.
func (b Build) Int8Map32(p *Int8Points, y *Int8Landmarks, lo, hi int, c float64, laplace bool, out []float32, ldo int) {
	if !b.int8Args("Int8Map32", p, y, lo, hi, c, len(out), ldo) {
		return
	}
	b.int8Call(p, y, lo, hi, c, laplace, nil, (*C.float)(unsafe.Pointer(&out[0])), ldo)
}

// int8Args panics on arguments that do not fit and reports whether there
// is work.
func (b Build) int8Args(name string, p *Int8Points, y *Int8Landmarks, lo, hi int, c float64, size, ldo int) bool {
	if lo < 0 || hi > p.N || lo > hi || ldo < hi-lo || !(c <= 0) || (y.T > 0 && size < (y.T-1)*ldo+hi-lo) || len(y.norms) != y.T {
		panic(fmt.Sprintf("native: %s: points [%d,%d) of %d, ldo %d, c %g, output of %d", name, lo, hi, p.N, ldo, c, size))
	}
	return y.T > 0 && lo < hi
}

func (b Build) int8Call(p *Int8Points, y *Int8Landmarks, lo, hi int, c float64, laplace bool, o *C.double, o32 *C.float, ldo int) {
	xp, yr := (*C.uint8_t)(unsafe.Pointer(&p.packed[0])), (*C.int8_t)(unsafe.Pointer(&y.rows[0]))
	xs, xn := (*C.int32_t)(unsafe.Pointer(&p.sums[0])), (*C.double)(unsafe.Pointer(&p.norms[0]))
	yn := (*C.double)(unsafe.Pointer(&y.norms[0]))
	if b.avx2 && hasVNNI {
		C.kd_i8_map_vnni(C.int(y.T), C.int(lo), C.int(hi), C.int(p.d4), xp, yr, xs, xn, yn, C.double(c), cFlag(laplace), o, o32, C.int(ldo))
		return
	}
	C.kd_i8_map_base(C.int(y.T), C.int(lo), C.int(hi), C.int(p.d4), xp, yr, xs, xn, yn, C.double(c), cFlag(laplace), o, o32, C.int(ldo))
}

// PackSnap8 is PackInt8 of n rows of float64 values on an 8-bit grid
// (row(i) returns point i's d values): level k_j = ⌊(v_j − lo_j)/step + ½⌋
// must lie within tol_j of v_j and in 0…255 (NaN and infinities never do);
// each row is snapped and packed in one pass, in C. It returns the packed
// points and each row's Σ (k_j − mid_j)², or nil when an entry is off
// the grid. When x32 is not nil (len ≥ n·d) it also receives the shifted
// integers k_j − mid_j of row i in x32[i·d : (i+1)·d] (exact in float32),
// in the same pass (its contents are unspecified when the result is nil).
// row is called concurrently for different i.
func (b Build) PackSnap8(n, d int, row func(i int) []float64, lo, tol []float64, mid []int32, step float64, x32 []float32) (*Int8Points, []float64) {
	if n < 1 || d < 1 || d > Int8MaxDim || len(lo) < d || len(tol) < d || len(mid) < d || x32 != nil && len(x32) < n*d {
		panic(fmt.Sprintf("native: PackSnap8: %d points of %d features, %d minima, %d tolerances, %d shifts, %d floats", n, d, len(lo), len(tol), len(mid), len(x32)))
	}
	d4 := (d + 3) / 4
	nb := (n + Int8Block - 1) / Int8Block
	p := newInt8Points(n, d, d4, nb)
	shifted := make([]float64, n)
	var off atomic.Bool
	pl, pt, pm := (*C.double)(unsafe.Pointer(&lo[0])), (*C.double)(unsafe.Pointer(&tol[0])), (*C.int)(unsafe.Pointer(&mid[0]))
	inv := 1 / step
	parallelBlocks(nb, func(bl int) {
		for i := 0; i < Int8Block && bl*Int8Block+i < n && !off.Load(); i++ {
			pt2 := bl*Int8Block + i
			v := row(pt2)
			if len(v) < d {
				off.Store(true)
				return
			}
			dst := &p.packed[bl*Int8Block*4*d4+(i/16)*64+(i%16)*4]
			var f32 *C.float
			if x32 != nil {
				f32 = (*C.float)(unsafe.Pointer(&x32[pt2*d]))
			}
			var sq C.longlong
			if b.avx2 {
				sq = C.kd_snap8_pack_avx2(C.int(d), (*C.double)(unsafe.Pointer(&v[0])), pl, pt, pm, C.double(step), C.double(inv),
					(*C.uint8_t)(unsafe.Pointer(dst)), (*C.int)(unsafe.Pointer(&p.sums[pt2])), (*C.double)(unsafe.Pointer(&p.norms[pt2])), f32)
			} else {
				sq = C.kd_snap8_pack_base(C.int(d), (*C.double)(unsafe.Pointer(&v[0])), pl, pt, pm, C.double(step), C.double(inv),
					(*C.uint8_t)(unsafe.Pointer(dst)), (*C.int)(unsafe.Pointer(&p.sums[pt2])), (*C.double)(unsafe.Pointer(&p.norms[pt2])), f32)
			}
			if sq < 0 {
				off.Store(true)
				return
			}
			shifted[pt2] = float64(sq)
		}
	})
	if off.Load() {
		return nil, nil
	}
	return p, shifted
}

// parallelBlocks runs f(b) for b < nb on GOMAXPROCS goroutines.
func parallelBlocks(nb int, f func(b int)) {
	w := min(runtime.GOMAXPROCS(0), nb)
	var wg sync.WaitGroup
	for g := 0; g < w; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for b := g * nb / w; b < (g+1)*nb/w; b++ {
				f(b)
			}
		}(g)
	}
	wg.Wait()
}
