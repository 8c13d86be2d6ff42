package native

/*
int kd_has_avx512vl(void);
*/
import "C"

// hasWide: the processor runs the AVX-512 kernels of wide.c (AVX-512 F,
// VL and DQ, and FMA).
var hasWide = detected && C.kd_has_avx512vl() != 0

// HasWide reports whether the processor runs the AVX-512 forms of the
// block kernels (AVX-512 F, VL and DQ, and FMA).
func HasWide() bool { return hasWide }

// WithWide returns b with the AVX-512 form of the float64-arithmetic block
// kernel (TileRowSymm64/32: symm), of the float32-arithmetic one
// (TileRowSymmS32: single) and of the one-vector kernel on float32 tiles
// (TileRowSymv: symv) switched on or off as asked; a form is switched on
// only where HasWide, so the result always runs here. Which forms are
// faster is a rule of package paths, not a measurement made here.
func (b Build) WithWide(symm, single, symv bool) Build {
	b.symm512, b.single512, b.symv512 = symm && hasWide && b.avx2, single && hasWide && b.avx2, symv && hasWide && b.avx2
	return b
}

// Wide512 reports which AVX-512 forms b runs: the float64-arithmetic
// block kernel, the float32-arithmetic one and the one-vector kernel.
func (b Build) Wide512() (symm, single, symv bool) { return b.symm512, b.single512, b.symv512 }

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
