package gram

import (
	"fmt"
	"math"
	"time"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/probe"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// Timings are the seconds Tune measured for each alternative (the best of
// several alternated runs of the same sample work; 0 where nothing was
// timed: a path this processor does not run).
type Timings struct {
	InnerBLAS, InnerNative float64
	MapGo, MapNative       float64
	GridDgemm, GridSgemm   float64
	Int8, Int8Sgemm        float64
	SymmBLAS, SymmTiled    float64
	SyrkBLAS, SyrkNative   float64
	GemmBLAS, GemmNative   float64
	Symm64, SymmSingle     float64
	// Wide: the block kernels in AVX2 and AVX-512 form (float64 blocks,
	// float32 blocks, one vector).
	Symm2, Symm512, Single2, Single512, Symv2, Symv512 float64
	HugeSeconds, SmallSeconds                          float64
}

// Tune times every alternative of package paths on this machine and
// returns the faster of each as a paths value (Source "tuned") with the
// timings, for a profile that later runs load when asked (`kdual tune`,
// `--profile`). It takes about a second and writes some 100 MB; no fit
// calls it. The inner products compare dgemm with native.DotNT on a
// 512×512 product of depth 256 (AVX-512 only); the map math.Exp with the
// native map on 128×512 entries; the integer grid dgemm with sgemm and
// widening (256×512, depth 784); 8-bit kernel rows native.Int8Map with
// sgemm and the map (48×1024, depth 784; VNNI only); block products dsymm
// with the tile kernel, then float32 tiles in float32 arithmetic against
// the faster (3072², 8 columns); C·Cᵀ of a 1000×2048 float32 block by
// ssyrk and by the packed kernel, and the products of 1000 landmarks with
// 2048 points of depth 784 by sgemm and by the packed kernel (AVX-512
// only); each AVX-512 kernel form against its AVX2
// form (taken only when 5 % faster); huge pages against 4 KB pages on the
// first touch of fresh memory (only under the system setting "madvise").
func Tune() (paths.Paths, Timings) {
	f := paths.Detect()
	p := paths.Rules(f)
	var t Timings
	p.InnerNative, t.InnerBLAS, t.InnerNative, p.MapNative, t.MapGo, t.MapNative = measureGramPaths()
	t.GridDgemm, t.GridSgemm = measureGrid()
	p.Grid = t.GridSgemm < t.GridDgemm
	if p.Int8 {
		t.Int8, t.Int8Sgemm = measureInt8()
		p.Int8 = t.Int8 < t.Int8Sgemm
	}
	t.SymmBLAS, t.SymmTiled = measureSymm()
	p.SymmNative = t.SymmTiled < t.SymmBLAS
	t.Symm64, t.SymmSingle = measureSingle(p.SymmNative)
	if native.HasWide() {
		t.SyrkBLAS, t.SyrkNative = measureSyrk()
		p.SyrkNative = t.SyrkNative < t.SyrkBLAS
		t.GemmBLAS, t.GemmNative = measureGemm()
		p.GemmNative = t.GemmNative < t.GemmBLAS
	}
	p.SingleBlocks = t.SymmSingle < t.Symm64
	if native.HasWide() {
		t.Symm2, t.Symm512, t.Single2, t.Single512, t.Symv2, t.Symv512 = measureWide()
		p.WideSymm = t.Symm512 < wideMargin*t.Symm2
		p.WideSingle = t.Single512 < wideMargin*t.Single2
		p.WideSymv = t.Symv512 < wideMargin*t.Symv2
	}
	if f.THP == "madvise" {
		if hs, ss, ok := bigmem.MeasureHuge(); ok {
			t.HugeSeconds, t.SmallSeconds = hs, ss
			p.HugePages = hs < ss
		}
	}
	p.Source = "tuned"
	ms := func(a, b float64) string {
		if a == 0 && b == 0 {
			return "not timed here (the alternative does not run on this machine or system): the rules' choice"
		}
		return fmt.Sprintf("measured %.3g ms against %.3g ms", 1e3*a, 1e3*b)
	}
	wide := "AVX-512 against AVX2: " + ms(0, 0)
	if t.Symm512 != 0 || t.Symm2 != 0 {
		wide = fmt.Sprintf("AVX-512 against AVX2: %s; %s; %s", ms(t.Symm512, t.Symm2), ms(t.Single512, t.Single2), ms(t.Symv512, t.Symv2))
	}
	why := map[string]string{
		"inner":      "native against dgemm: " + ms(t.InnerNative, t.InnerBLAS),
		"map":        "native against math.Exp: " + ms(t.MapNative, t.MapGo),
		"grid":       "sgemm and widening against dgemm: " + ms(t.GridSgemm, t.GridDgemm),
		"int8":       "integer rows against sgemm and map: " + ms(t.Int8, t.Int8Sgemm),
		"symm":       "tile kernel against dsymm: " + ms(t.SymmTiled, t.SymmBLAS),
		"syrk":       "packed kernel against ssyrk: " + ms(t.SyrkNative, t.SyrkBLAS),
		"gemm":       "packed kernel against sgemm: " + ms(t.GemmNative, t.GemmBLAS),
		"single":     "float32 blocks against float64 blocks: " + ms(t.SymmSingle, t.Symm64),
		"avx512":     wide,
		"huge pages": "first touch of 16 MB in huge against 4 KB pages: " + ms(t.HugeSeconds, t.SmallSeconds),
	}
	p.Reasons = nil
	for _, path := range paths.Known {
		c, _ := p.Choice(path)
		p.Reasons = append(p.Reasons, paths.Reason{Path: path, Choice: c, Why: why[path]})
	}
	return p, t
}

// wideMargin: an AVX-512 form must be this much faster to be chosen.
const wideMargin = 0.95

// measureWide times each AVX-512 block kernel against its AVX2 form: a
// 256×2048 row of float64 tiles (4 MB) and its float32 twin against blocks
// of eight vectors, and eight packed 256×256 float32 tiles against one
// vector; each form called four times per round, one untimed round, then
// five alternated, the best round of each.
func measureWide() (symm2, symm512, single2, single512, symv2, symv512 float64) {
	probe.Note()
	const m, cols, t, bp = 256, 2048, 256, 8
	r := native.TileRow{M: m, T: t, Tiles: cols / t, Last: t, Step: t, Lda: cols}
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
	ys := make([]float32, native.SymmSingleScratch(t, bp))
	narrow, wide := native.AVX2(), native.AVX2().WithWide(true, true, true)
	symm := func(b native.Build) func() { return func() { b.TileRowSymm64(r, a, bp, xi, xj, yi, yj) } }
	single := func(b native.Build) func() { return func() { b.TileRowSymmS32(r, a32, bp, xs, xsj, yi, yj, ys) } }
	symv := func(b native.Build) func() {
		return func() { b.TileRowSymv(t, cols/t, a32, xi[:t], xj[:cols], yi[:t], yj[:cols], false) }
	}
	four := func(f func()) func() {
		return func() {
			for i := 0; i < 4; i++ {
				f()
			}
		}
	}
	rounds := func(f, g func()) (float64, float64) {
		f, g = four(f), four(g)
		f()
		g()
		tf, tg := alternated(5, f, g)
		return tf / 4, tg / 4
	}
	symm2, symm512 = rounds(symm(narrow), symm(wide))
	single2, single512 = rounds(single(narrow), single(wide))
	symv2, symv512 = rounds(symv(narrow), symv(wide))
	return
}

// measureSyrk times C·Cᵀ of a 1000×2048 float32 block (the chunks of a
// Nyström fit's C_cC_cᵀ at 1000 landmarks) by OpenBLAS ssyrk and by the
// packed AVX-512 kernel (linalg.Syrk32): one untimed call each, then five
// alternated, the best of each.
func measureSyrk() (ssyrk, packed float64) {
	probe.Note()
	const k, w = 1000, 2048
	a := make([]float32, k*w)
	for i := range a {
		a[i] = float32(i%89)/89 - 0.5
	}
	acc, pack := make([]float32, k*k), make([]float32, linalg.PackScratch32(k, w))
	f := func() { linalg.Syrk32(false, acc, k, w, a, w, nil) }
	g := func() { linalg.Syrk32(true, acc, k, w, a, w, pack) }
	f()
	g()
	return alternated(5, f, g)
}

// measureGemm times the float32 products of 1000 landmarks with 2048
// points of depth 784 by OpenBLAS sgemm and by the packed kernel (the
// landmarks packed beforehand, as RangeRows32 packs them once).
func measureGemm() (sgemm, packed float64) {
	probe.Note()
	const m, n, d = 1000, 2048, 784
	a, x := make([]float32, m*d), &gramSource{x: blas64.General{Rows: n, Cols: d, Stride: d}, x32: make([]float32, n*d)}
	for i := range a {
		a[i] = float32(i%89)/89 - 0.5
	}
	for i := range x.x32 {
		x.x32[i] = float32(i%83)/83 - 0.5
	}
	land := &gramSource{x: blas64.General{Rows: m, Cols: d, Stride: d}, x32: a}
	out := make([]float32, m*n)
	run := packedProducts(m, d, a, x.x32, 0)
	f := func() { sgemm32Into(land, x, 0, m, 0, n, out, n) }
	g := func() { run(0, n, out, n) }
	f()
	g()
	return alternated(5, f, g)
}

// alternated runs f and g in turn rounds times and returns the best time
// of each.
func alternated(rounds int, f, g func()) (tf, tg float64) {
	tf, tg = math.Inf(1), math.Inf(1)
	for r := 0; r < rounds; r++ {
		t := time.Now()
		f()
		tf = math.Min(tf, time.Since(t).Seconds())
		t = time.Now()
		g()
		tg = math.Min(tg, time.Since(t).Seconds())
	}
	return tf, tg
}

// measureInt8 times the kernel rows of 48 landmarks against 1024 points of
// 784 levels both ways, on GOMAXPROCS goroutines as KernelRows runs them:
// native.Int8Map, and sgemm of the float32 integers then the fused widening
// map (native.RBFMap32); one untimed call of each, then the better of two
// alternated.
func measureInt8() (int8s, sgemm float64) {
	probe.Note()
	const m, n, d = 48, 1024, 784
	// Point i's levels: a window of one pseudo-random sequence.
	seq := make([]uint8, n+d)
	for i := range seq {
		seq[i] = uint8((i * 7919) % 251)
	}
	lev := func(i int, dst []uint8) { copy(dst, seq[i:i+d]) }
	pts, err := native.PackInt8(n, d, lev)
	if err != nil {
		return math.Inf(1), 0
	}
	land := pts.NewInt8Landmarks(m, lev)
	x32 := make([]float32, n*d)
	buf := make([]float32, m*n)
	ni, nj := make([]float64, m), make([]float64, n)
	for i := 0; i < n; i++ {
		for a, v := range seq[i : i+d] {
			x32[i*d+a] = float32(int(v) - 128)
			nj[i] += float64(x32[i*d+a]) * float64(x32[i*d+a])
		}
	}
	copy(ni, nj[:m])
	out := make([]float64, m*n)
	const c = -1e-6
	b := native.AVX2()
	f := func() {
		par.Blocks(0, n/native.Int8Block, func(lo, hi int) {
			b.Int8Map(pts, land, lo*native.Int8Block, hi*native.Int8Block, c, false, out[lo*native.Int8Block:], n)
		})
	}
	g := func() {
		linalg.B32.Gemm(blas.NoTrans, blas.Trans, 1, blas32.General{Rows: m, Cols: d, Stride: d, Data: x32[:m*d]},
			blas32.General{Rows: n, Cols: d, Stride: d, Data: x32}, 0, blas32.General{Rows: m, Cols: n, Stride: n, Data: buf})
		par.For(0, m, nil, func(lo, hi int) { b.RBFMap32(hi-lo, n, buf[lo*n:], n, out[lo*n:], n, ni[lo:hi], nj, c, false) })
	}
	f()
	g()
	return alternated(2, f, g)
}

func bestOf3(f func()) float64 {
	best := math.Inf(1)
	for r := 0; r < 3; r++ {
		t := time.Now()
		f()
		best = math.Min(best, time.Since(t).Seconds())
	}
	return best
}

// measureGramPaths times the inner-product paths (when there are two) and
// the two exponential maps.
func measureGramPaths() (innerNative bool, innerBLAS, innerNat float64, mapNative bool, mapGo, mapNat float64) {
	probe.Note()
	if native.HasDotKernel() {
		const m, d = 512, 256
		x := make([]float64, m*d)
		for i := range x {
			x[i] = float64((i*7919)%1000)/1000 - 0.5
		}
		out := make([]float64, m*m)
		a := blas64.General{Rows: m, Cols: d, Stride: d, Data: x}
		innerBLAS = bestOf3(func() {
			linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, a, a, 0, blas64.General{Rows: m, Cols: m, Stride: m, Data: out})
		})
		innerNat = bestOf3(func() {
			runTiles(0, tilesOf(m, m, false), 0, func(t tile, _ []float64) {
				native.DotNT(t.i1-t.i0, t.j1-t.j0, d, x[t.i0*d:], d, x[t.j0*d:], d, out[t.i0*m+t.j0:], m)
			})
		})
		innerNative = innerNat < innerBLAS
	}
	const mr, mc = 128, 512
	g := make([]float64, mr*mc)
	norms := make([]float64, mc)
	for i := range norms {
		norms[i] = 1 + float64(i%17)
	}
	fill := func() {
		for i := range g {
			g[i] = float64(i%31) / 31
		}
	}
	em := ElementMap{Kind: MapExpSq, C: -0.05}
	mapGo = bestOf3(func() { fill(); mapRows(g, mc, 0, mr, 0, mc, norms, norms, em, MapGo, native.AVX2()) })
	mapNat = bestOf3(func() { fill(); mapRows(g, mc, 0, mr, 0, mc, norms, norms, em, MapNative, native.AVX2()) })
	// fill is in both; the comparison stands.
	return innerNative, innerBLAS, innerNat, mapNat < mapGo, mapGo, mapNat
}

// measureGrid times the float64 products of a 256×784 panel against 512
// rows by dgemm and the same products on an integer grid by sgemm, widened
// to float64 (what the Gram engine does with them), after one untimed call
// of each; the faster of two runs counts.
func measureGrid() (dgemm, sgemm float64) {
	probe.Note()
	const m, n, d = 256, 512, 784
	x := make([]float64, n*d)
	x32 := make([]float32, n*d)
	for i := range x {
		x32[i] = float32((i*7919)%256 - 128)
		x[i] = float64(x32[i]) / 255
	}
	out := make([]float64, m*n)
	buf := make([]float32, m*n)
	a := blas64.General{Rows: m, Cols: d, Stride: d, Data: x}
	b := blas64.General{Rows: n, Cols: d, Stride: d, Data: x}
	o := blas64.General{Rows: m, Cols: n, Stride: n, Data: out}
	a32 := blas32.General{Rows: m, Cols: d, Stride: d, Data: x32}
	b32 := blas32.General{Rows: n, Cols: d, Stride: d, Data: x32}
	o32 := blas32.General{Rows: m, Cols: n, Stride: n, Data: buf}
	dg := func() { linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, o) }
	sg := func() {
		linalg.B32.Gemm(blas.NoTrans, blas.Trans, 1, a32, b32, 0, o32)
		par.For(0, m, nil, func(lo, hi int) { native.AVX2().Widen(hi-lo, n, buf[lo*n:], n, out[lo*n:], n) })
	}
	dg()
	sg()
	best := func(f func()) float64 {
		t := time.Now()
		f()
		a := time.Since(t).Seconds()
		t = time.Now()
		f()
		return math.Min(a, time.Since(t).Seconds())
	}
	return best(dg), best(sg)
}

// probeMatrix is the block-product probes' matrix: 3072×3072 symmetric
// (72 MB, larger than the caches as the operators' matrices are), only its
// upper triangle written (in parallel rows; the float64 products read no
// other), with an 8-column block and its product's destination.
func probeMatrix() (sa *mat.SymDense, xb, yb *mat.Dense) {
	const ns, bs = 3072, 8
	sa = mat.NewSymDense(ns, nil)
	araw := sa.RawSymmetric()
	par.For(0, ns, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := araw.Data[i*araw.Stride+i : i*araw.Stride+ns]
			for j := range row {
				row[j] = float64((i+j)%97) / 97
			}
		}
	})
	xb = mat.NewDense(ns, bs, nil)
	for i := 0; i < ns; i++ {
		xb.Set(i, i%bs, 1)
	}
	return sa, xb, mat.NewDense(ns, bs, nil)
}

// measureSymm times OpenBLAS dsymm against SymMulUpper on probeMatrix.
func measureSymm() (dsymm, tiled float64) {
	probe.Note()
	sa, xb, yb := probeMatrix()
	araw := sa.RawSymmetric()
	dsymm = bestOf3(func() { linalg.B64.Symm(blas.Left, 1, araw, xb.RawMatrix(), 0, yb.RawMatrix()) })
	tiled = bestOf3(func() { SymMulUpper(sa, xb, yb) })
	return dsymm, tiled
}

// measureSingle times probeMatrix stored as float32 tiles (19 MB) with the
// blocks in float32 arithmetic against the faster float64 product (native
// says which): one untimed call each, then in turn, seven rounds, the
// fastest of each — a few milliseconds apart, so that a change in the
// machine's speed meets both. It returns the two times.
func measureSingle(native bool) (float64s, single float64) {
	probe.Note()
	sa, xb, yb := probeMatrix()
	araw := sa.RawSymmetric()
	f64 := func() { linalg.B64.Symm(blas.Left, 1, araw, xb.RawMatrix(), 0, yb.RawMatrix()) }
	if native {
		f64 = func() { SymMulUpper(sa, xb, yb) }
	}
	s32, err := TilesFromSym(sa)
	if err != nil {
		return 0, 0 // not reached: the probe's matrix is finite
	}
	defer s32.Free()
	s32.SingleBlocks = true
	f64()
	s32.MulBlock(yb, xb)
	return alternated(7, f64, func() { s32.MulBlock(yb, xb) })
}
