package native

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The baseline and AVX2 builds of the basis products agree with the plain
// sums within rounding, on shapes that reach every block and remainder
// loop (four columns, eight block columns, four rows), strides included;
// a bad shape panics with the function's name instead of reading past
// the slices.
func TestBasisBuildsAgree(t *testing.T) {
	for _, sh := range []struct{ n, c, b int }{{1, 1, 1}, {3, 5, 3}, {9, 8, 16}, {13, 7, 11}, {64, 68, 8}} {
		ldv, ldw, ldh := sh.c+2, sh.b+1, sh.b+3
		v, w, h := make([]float64, sh.n*ldv), make([]float64, sh.n*ldw), make([]float64, sh.c*ldh)
		for i := range v {
			v[i] = math.Sin(float64(3*i + 1))
		}
		for i := range w {
			w[i] = math.Cos(float64(5*i + 2))
		}
		for i := range h {
			h[i] = math.Sin(float64(7*i + 3))
		}
		for _, bd := range []Build{Baseline(), AVX2()} {
			got := make([]float64, len(h))
			copy(got, h)
			bd.BasisTMul(sh.n, sh.c, sh.b, v, ldv, w, ldw, got, ldh)
			for k := 0; k < sh.c; k++ {
				for j := 0; j < sh.b; j++ {
					want, bound := h[k*ldh+j], math.Abs(h[k*ldh+j])
					for i := 0; i < sh.n; i++ {
						want += v[i*ldv+k] * w[i*ldw+j]
						bound += math.Abs(v[i*ldv+k] * w[i*ldw+j])
					}
					require.InDelta(t, want, got[k*ldh+j], 4*float64(sh.n+1)*0x1p-53*bound, "%s vᵀw %v", bd.Name(), sh)
				}
			}
			wg := make([]float64, len(w))
			copy(wg, w)
			bd.BasisSubMul(sh.n, sh.c, sh.b, v, ldv, h, ldh, wg, ldw)
			for i := 0; i < sh.n; i++ {
				for j := 0; j < sh.b; j++ {
					want, bound := w[i*ldw+j], math.Abs(w[i*ldw+j])
					for k := 0; k < sh.c; k++ {
						want -= v[i*ldv+k] * h[k*ldh+j]
						bound += math.Abs(v[i*ldv+k] * h[k*ldh+j])
					}
					require.InDelta(t, want, wg[i*ldw+j], 4*float64(sh.c+1)*0x1p-53*bound, "%s w − vh %v", bd.Name(), sh)
				}
			}
		}
	}
	require.PanicsWithValue(t, "native: BasisTMul: bad arguments n=2 c=3 b=2 ldv=3 ldx=2 ldy=2",
		func() { AVX2().BasisTMul(2, 3, 2, make([]float64, 5), 3, make([]float64, 4), 2, make([]float64, 6), 2) })
}

// Empty shapes are no work, never a refusal: no rows (H unchanged, W
// empty), no basis columns, no right-hand columns.
func TestBasisEmptyShapes(t *testing.T) {
	for _, bd := range []Build{Baseline(), AVX2()} {
		h := []float64{1, 2, 3, 4}
		bd.BasisTMul(0, 2, 2, nil, 2, nil, 2, h, 2)
		require.Equal(t, []float64{1, 2, 3, 4}, h)
		w := []float64{5, 6}
		bd.BasisSubMul(1, 0, 2, nil, 1, nil, 2, w, 2)
		bd.BasisSubMul(0, 2, 2, nil, 2, h, 2, nil, 2)
		bd.BasisTMul(2, 2, 0, []float64{1, 2, 3, 4}, 2, nil, 1, nil, 1)
		// An empty operand's stride is never read, whatever it is.
		bd.BasisSubMul(1, 0, 2, nil, 0, nil, 0, w, 2)
		bd.BasisTMul(3, 0, 2, nil, 5, []float64{1, 2, 3, 4, 5, 6}, 2, nil, 2)
		bd.BasisSubMul(3, 0, 2, nil, 5, nil, 0, []float64{1, 2, 3, 4, 5, 6}, 2)
		bd.BasisTMul(0, 2, 2, nil, 0, nil, 0, h, 2)
		require.Equal(t, []float64{1, 2, 3, 4}, h)
		// Dimensions up to C's int range are taken (here with nothing to
		// do); one more is refused.
		bd.BasisTMul(math.MaxInt32, 0, 0, nil, 0, nil, 0, nil, 0)
		require.Panics(t, func() { bd.BasisTMul(math.MaxInt32+1, 0, 0, nil, 0, nil, 0, nil, 0) })
		require.Equal(t, []float64{5, 6}, w)
		require.Panics(t, func() { bd.BasisTMul(-1, 2, 2, nil, 2, nil, 2, h, 2) })
		// One row is checked as any: W's stride below its columns, or V or
		// W too short, is refused before any read.
		require.Panics(t, func() { bd.BasisTMul(1, 2, 2, []float64{1, 2}, 2, []float64{1, 2}, 1, h, 2) })
		require.Panics(t, func() { bd.BasisTMul(1, 2, 2, []float64{1}, 2, []float64{1, 2}, 2, h, 2) })
		require.Panics(t, func() { bd.BasisSubMul(1, 2, 2, []float64{1, 2}, 2, h, 2, []float64{1}, 2) })
	}
}
