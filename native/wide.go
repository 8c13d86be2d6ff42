package native

/*
int kd_has_avx512vl(void);
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"sync"
	"time"
)

// hasWide: the processor runs the AVX-512 kernels of wide.c (AVX-512 F,
// VL and DQ, and FMA).
var hasWide = detected && C.kd_has_avx512vl() != 0

// WideProbe is what WideKernels measured: whether the AVX-512 forms of the
// block kernels run here and, for each, the best time of the probe's block
// product on the AVX2 and the AVX-512 form (zero when not measured).
type WideProbe struct {
	// Supported: the processor has AVX-512 F, VL and DQ and FMA.
	Supported bool
	// Symm, Single and Symv: Best uses the AVX-512 form of the
	// float64-arithmetic block kernel (TileRowSymm64/32), of the
	// float32-arithmetic one (TileRowSymmS32) and of the one-vector kernel
	// on float32 tiles (TileRowSymv).
	Symm, Single, Symv bool
	// Seconds of one probe product.
	Symm2, Symm512, Single2, Single512, Symv2, Symv512 float64
	// Reason says how the choice was made.
	Reason string
}

var (
	wideOnce  sync.Once
	wideProbe WideProbe
)

// WideKernels measures once per process whether the AVX-512 block kernels
// are faster than the AVX2 ones on this processor, and returns the verdict.
// Some processors run 512-bit operations at full width, some as two halves
// or at a lower clock, so the choice is timed, not assumed: a 256×2048 row
// of float64 tiles (4 MB) and its float32 twin against blocks of eight
// vectors, and eight packed 256×256 float32 tiles against one vector,
// each form called four times per round, one untimed round then five
// alternated, the best round of each compared; an AVX-512 form is taken
// only when at least 5 % faster. KDUAL_AVX512=on or off overrides the
// measurement (on: where supported). About 20 ms, on the first call of
// Best.
func WideKernels() WideProbe {
	wideOnce.Do(func() { wideProbe = probeWide(os.Getenv("KDUAL_AVX512")) })
	return wideProbe
}

// wideMargin: the AVX-512 form must be this much faster to be chosen.
const wideMargin = 0.95

func probeWide(env string) WideProbe {
	p := WideProbe{Supported: hasWide}
	if !hasWide {
		p.Reason = "the processor lacks AVX-512 F/VL/DQ"
		return p
	}
	switch env {
	case "on":
		p.Symm, p.Single, p.Symv = true, true, true
		p.Reason = "KDUAL_AVX512=on"
		return p
	case "off":
		p.Reason = "KDUAL_AVX512=off"
		return p
	}
	const m, cols, t, bp = 256, 2048, 256, 8
	r := TileRow{M: m, T: t, Tiles: cols / t, Last: t, Step: t, Lda: cols}
	a := make([]float64, m*cols)
	a32 := make([]float32, m*cols)
	for i := range a {
		a[i] = float64(i%97)/97 - 0.5
		a32[i] = float32(a[i])
	}
	xi, xj := make([]float64, m*bp), make([]float64, cols*bp)
	yi, yj := make([]float64, m*bp), make([]float64, cols*bp)
	xs, xsj := make([]float32, m*bp), make([]float32, cols*bp)
	for i := range xj {
		xj[i] = float64(i%13) - 6
		xsj[i] = float32(xj[i])
	}
	for i := range xi {
		xi[i] = float64(i%7) - 3
		xs[i] = float32(xi[i])
	}
	ys := make([]float32, t*bp)
	narrow, wide := Build{avx2: true}, Build{avx2: true, symm512: true, single512: true, symv512: true}
	symm := func(b Build) func() { return func() { b.TileRowSymm64(r, a, bp, xi, xj, yi, yj) } }
	single := func(b Build) func() { return func() { b.TileRowSymmS32(r, a32, bp, xs, xsj, yi, yj, ys) } }
	p.Symm2, p.Symm512 = alternate(symm(narrow), symm(wide))
	p.Single2, p.Single512 = alternate(single(narrow), single(wide))
	symv := func(b Build) func() {
		return func() { b.TileRowSymv(t, cols/t, a32, xi[:t], xj[:cols], yi[:t], yj[:cols], false) }
	}
	p.Symv2, p.Symv512 = alternate(symv(narrow), symv(wide))
	p.Symm = p.Symm512 < wideMargin*p.Symm2
	p.Single = p.Single512 < wideMargin*p.Single2
	p.Symv = p.Symv512 < wideMargin*p.Symv2
	p.Reason = fmt.Sprintf("measured: float64-arithmetic blocks %.3g ms (avx-512) against %.3g ms (avx2), "+
		"float32-arithmetic blocks %.3g against %.3g ms, one vector %.3g against %.3g ms",
		1e3*p.Symm512, 1e3*p.Symm2, 1e3*p.Single512, 1e3*p.Single2, 1e3*p.Symv512, 1e3*p.Symv2)
	return p
}

// alternate times f and g in turn (one untimed round, then five) and
// returns the best time of one call of each.
func alternate(f, g func()) (tf, tg float64) {
	const calls = 4
	round := func(h func()) float64 {
		start := time.Now()
		for i := 0; i < calls; i++ {
			h()
		}
		return time.Since(start).Seconds() / calls
	}
	round(f)
	round(g)
	tf, tg = math.Inf(1), math.Inf(1)
	for i := 0; i < 5; i++ {
		tf = math.Min(tf, round(f))
		tg = math.Min(tg, round(g))
	}
	return tf, tg
}

// Wide is the AVX2 build with every AVX-512 block kernel, whatever the
// measurement said; ok is false (and the build the AVX2 one) where the
// processor lacks AVX-512. For tests and measurements.
func Wide() (b Build, ok bool) {
	if !hasWide {
		return AVX2(), false
	}
	return Build{avx2: true, symm512: true, single512: true, symv512: true}, true
}

// Builds lists every build this processor runs: the SSE2 baseline, then
// AVX2 and the AVX-512 block kernels where present. For tests.
func Builds() []Build {
	bs := []Build{Baseline()}
	if detected {
		bs = append(bs, AVX2())
	}
	if w, ok := Wide(); ok {
		bs = append(bs, w)
	}
	return bs
}
