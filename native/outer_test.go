package native

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Outer32 adds F_B·(F_Bᵀ·X) to part for every build (AVX-512, AVX2, SSE2),
// both widths and chunk shapes off the kernel's blocks of 8 points and 4
// features, within float32 rounding of the float64 product (errors of
// order (r + w)·u of the sums of absolute products); it reads only the
// chunk's columns of f.
func TestOuter32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][3]int{{37, 21, 16}, {40, 64, 32}, {5, 3, 32}, {1, 1, 16}, {130, 128, 32}} {
		k, w, bp := shape[0], shape[1], shape[2]
		ldf := w + 5
		f := make([]float32, k*ldf)
		for i := range f {
			f[i] = float32(r.NormFloat64())
		}
		for e := 0; e < k; e++ {
			for j := w; j < ldf; j++ {
				f[e*ldf+j] = float32(math.NaN()) // outside the chunk: never read
			}
		}
		x := make([]float32, k*bp)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		// float64 reference: z = Fᵀx, want = prior + F·z, and the bound's
		// sums of absolute products.
		z := make([]float64, w*bp)
		za := make([]float64, w*bp)
		for j := 0; j < w; j++ {
			for c := 0; c < bp; c++ {
				for e := 0; e < k; e++ {
					p := float64(f[e*ldf+j]) * float64(x[e*bp+c])
					z[j*bp+c] += p
					za[j*bp+c] += math.Abs(p)
				}
			}
		}
		prior := make([]float32, k*bp)
		for i := range prior {
			prior[i] = float32(i%7) - 3
		}
		want, bound := make([]float64, k*bp), make([]float64, k*bp)
		u := 0x1p-24
		for e := 0; e < k; e++ {
			for c := 0; c < bp; c++ {
				s, a := float64(prior[e*bp+c]), math.Abs(float64(prior[e*bp+c]))
				for j := 0; j < w; j++ {
					fv := math.Abs(float64(f[e*ldf+j]))
					s += float64(f[e*ldf+j]) * z[j*bp+c]
					a += fv * (math.Abs(z[j*bp+c]) + float64(k+1)*u*za[j*bp+c])
				}
				want[e*bp+c], bound[e*bp+c] = s, 2*float64(k+w+2)*u*a
			}
		}
		for _, b := range testBuilds() {
			part := append([]float32(nil), prior...)
			zs, buf := make([]float32, w*bp), make([]float32, k*w)
			b.Outer32(k, w, f, ldf, nil, buf, bp, x, zs, part)
			for i, v := range part {
				require.InDelta(t, want[i], float64(v), bound[i]+1e-30, "shape %v entry %d build %+v", shape, i, b)
			}
		}
		// Centred on the way: the same as centring f beforehand, bit for
		// bit (each value rounded once, as the caller would).
		mean := make([]float64, k)
		fc := append([]float32(nil), f...)
		for e := range mean {
			mean[e] = 0.3*float64(e) - 1
			for j := 0; j < w; j++ {
				fc[e*ldf+j] = float32(float64(f[e*ldf+j]) - mean[e])
			}
		}
		for _, b := range testBuilds() {
			p1, p2 := make([]float32, k*bp), make([]float32, k*bp)
			b.Outer32(k, w, f, ldf, mean, make([]float32, k*w), bp, x, make([]float32, w*bp), p1)
			b.Outer32(k, w, fc, ldf, nil, make([]float32, k*w), bp, x, make([]float32, w*bp), p2)
			require.Equal(t, p2, p1, "shape %v build %+v", shape, b)
		}
	}
	buf := make([]float32, 6)
	require.Panics(t, func() {
		AVX2().Outer32(2, 3, make([]float32, 6), 3, nil, buf, 24, make([]float32, 48), make([]float32, 72), make([]float32, 48))
	})
	require.Panics(t, func() {
		AVX2().Outer32(2, 3, make([]float32, 4), 3, nil, buf, 16, make([]float32, 32), make([]float32, 48), make([]float32, 32))
	})
	require.Panics(t, func() {
		AVX2().Outer32(2, 3, make([]float32, 6), 3, []float64{1}, buf, 16, make([]float32, 32), make([]float32, 48), make([]float32, 32))
	})
}

// subnormalsWork reports whether float64 arithmetic on this thread still
// produces subnormal numbers (MXCSR's flush bits clear).
//
//go:noinline
func subnormalsWork(a, b float64) bool { return a*b != 0 && a*b < 0x1p-1022 }

// Products below 2⁻¹²⁶ come out as zero, and the calling thread computes
// subnormal numbers again after the call.
func TestOuter32Flush(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const k, w, bp = 4, 8, 16
	f := make([]float32, k*w)
	for i := range f {
		f[i] = 0x1p-70
	}
	x := make([]float32, k*bp)
	for i := range x {
		x[i] = 0x1p-70
	}
	for _, b := range testBuilds() {
		part := make([]float32, k*bp)
		b.Outer32(k, w, f, w, nil, make([]float32, k*w), bp, x, make([]float32, w*bp), part)
		require.True(t, subnormalsWork(0x1p-1000, 0x1p-40), "the flush bits stayed set")
		for _, v := range part {
			require.Zero(t, v)
		}
	}
}
