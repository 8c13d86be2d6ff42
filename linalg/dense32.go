package linalg

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
)

// Dense32 is a row-major r×c float32 matrix (stride c): data sets and
// feature matrices too large for float64 (a million 784-pixel images take
// 3.1 GB in float32). It implements mat.Matrix — At widens one entry — so
// any gonum code can read it; the products that matter (OuterT32,
// MulT32, NewKernelRows32) read it by blocks, through OpenBLAS or the
// native kernels.
type Dense32 struct {
	Rows, Cols int
	Data       []float32 // len ≥ Rows·Cols
	mem        *bigmem.Float32s
	// keep is the storage a view (TopRows) reads: it keeps that storage
	// from being unmapped while the view is reachable; Free leaves it.
	keep *bigmem.Float32s
}

// TopRows returns the first r rows of m as a matrix that shares m's
// storage and keeps it mapped while the view is reachable (a Dense32 made
// by hand from m.Data would not). Free on the view does nothing; on m it
// ends both.
func (m *Dense32) TopRows(r int) *Dense32 {
	if r < 0 || r > m.Rows {
		panic(mat.ErrIndexOutOfRange)
	}
	keep := m.mem
	if keep == nil {
		keep = m.keep
	}
	return &Dense32{Rows: r, Cols: m.Cols, Data: m.Data[:r*m.Cols], keep: keep}
}

// NewDense32 allocates a zero r×c matrix outside the Go heap (so that a
// gigabyte-sized matrix does not let the collector's target double); Free
// returns the memory.
func NewDense32(r, c int) (*Dense32, error) {
	if r < 1 || c < 1 {
		return nil, invalidf("NewDense32: %d×%d", r, c)
	}
	mem, err := bigmem.NewFloat32s(r * c)
	if err != nil {
		return nil, fmt.Errorf("linalg: NewDense32 %d×%d: %w", r, c, err)
	}
	return &Dense32{Rows: r, Cols: c, Data: mem.Data, mem: mem}, nil
}

// Dense32Of rounds x to float32 (in a new matrix).
func Dense32Of(x *mat.Dense) (*Dense32, error) {
	if err := checkData("Dense32Of: x", x); err != nil {
		return nil, err
	}
	r, c := x.Dims()
	out, err := NewDense32(r, c)
	if err != nil {
		return nil, err
	}
	raw := x.RawMatrix()
	par.For(0, r, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := out.Data[i*c : (i+1)*c]
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				dst[j] = float32(v)
			}
		}
	})
	return out, nil
}

// Free releases the storage of a matrix from NewDense32; m must not be
// used afterwards. Harmless on other matrices.
func (m *Dense32) Free() {
	if m.mem != nil {
		m.mem.Free()
		m.mem = nil
		m.Data = nil
	}
}

// Dims returns the dimensions.
func (m *Dense32) Dims() (int, int) { return m.Rows, m.Cols }

// At returns entry (i, j) widened to float64.
func (m *Dense32) At(i, j int) float64 {
	if uint(i) >= uint(m.Rows) || uint(j) >= uint(m.Cols) {
		panic(mat.ErrIndexOutOfRange)
	}
	v := m.Data[i*m.Cols+j]
	// The entries live outside the Go heap and are unmapped by a cleanup
	// once m is unreachable: m must stay reachable until the entry is
	// read (a caller's last At could otherwise race with the unmapping).
	runtime.KeepAlive(m)
	return float64(v)
}

// T returns the transpose (a view).
func (m *Dense32) T() mat.Matrix { return mat.Transpose{Matrix: m} }

// Row returns row i (a view). Data and Row are views of memory outside the
// Go heap, valid while m is reachable and not freed: a caller that keeps
// only the slice must keep m alive (runtime.KeepAlive) while it uses it.
func (m *Dense32) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Bytes returns the bytes of the entries.
func (m *Dense32) Bytes() int64 { return 4 * int64(m.Rows) * int64(m.Cols) }

// CheckFinite32 returns an error wrapping ErrInvalid when x holds a NaN or
// an infinity, naming the first such row (the lowest, whichever goroutine
// finds one first).
func CheckFinite32(what string, x *Dense32) error {
	if x == nil || x.Rows < 1 || x.Cols < 1 || len(x.Data) < x.Rows*x.Cols {
		return invalidf("%s: empty data", what)
	}
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	par.For(0, x.Rows, nil, func(lo, hi int) {
		for i := lo; i < hi && int64(i) < bad.Load(); i++ {
			for _, v := range x.Row(i) {
				if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
					for old := bad.Load(); int64(i) < old && !bad.CompareAndSwap(old, int64(i)); old = bad.Load() {
					}
					return
				}
			}
		}
	})
	if i := bad.Load(); i < math.MaxInt64 {
		return invalidf("%s: row %d is not finite", what, i)
	}
	return nil
}

// outerPanel is the points per block of OuterT32.
const outerPanel = 8192

// OuterT32 returns the k×k matrix Σᵢ (fᵢ − μ)(fᵢ − μ)ᵀ over the columns
// fᵢ of ft (k×n: the features of n points, one feature per row), that is
// F_cᵀF_c for F = ftᵀ centred by μ (mean nil: not centred). Blocks of
// 8192 points are centred in float32 and multiplied by Syrk32 (OpenBLAS
// ssyrk, or kdual's packed kernel when packed); the blocks' sums are
// added in float64. Each entry's error is at most
// γ₈₁₉₂·Σᵢ|f_ic − μ_c|·|f_ic′ − μ_c′| plus the float32 rounding of the
// centred values (2u relative each), γ_p = p·u/(1 − p·u), u = 2⁻²⁴ — a
// worst-case bound of about 5·10⁻⁴ relative to the sum of absolute
// products; rounding errors of a sum of p terms typically grow like
// √p·u ≈ 5·10⁻⁶.
func OuterT32(ft *Dense32, mean []float64, packed bool) (*mat.SymDense, error) {
	k, n := ft.Dims()
	if mean != nil && len(mean) != k {
		return nil, invalidf("OuterT32: %d means for %d rows", len(mean), k)
	}
	p := min(outerPanel, n)
	var buf []float32 // the centred block (not needed without centring)
	if mean != nil {
		buf = make([]float32, k*p)
	}
	acc := make([]float32, k*k)
	out := mat.NewSymDense(k, nil)
	raw := out.RawSymmetric()
	for j0 := 0; j0 < n; j0 += p {
		w := min(p, n-j0)
		if mean == nil {
			// Not centred: the block is read in place (stride n).
			addPanel(raw, ft.Data[j0:], k, w, n, acc, nil, packed)
			continue
		}
		par.Blocks(0, k, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				src := ft.Data[r*n+j0 : r*n+j0+w]
				dst := buf[r*w : (r+1)*w]
				mu := mean[r]
				for j, v := range src {
					dst[j] = float32(float64(v) - mu)
				}
			}
		})
		addPanel(raw, buf[:k*w], k, w, w, acc, nil, packed)
	}
	return out, nil
}

// outerChunk is the points per call of native.Outer32 in OuterT32Mul: the
// chunk's k entries a point (1 MB at k = 2000) stay in cache between the
// kernel's two phases.
const outerChunk = 128

// OuterT32Mul sets dst (k×b) to F_cᵀF_c·x for F = ftᵀ (ft k×n) centred by
// μ (mean nil: FᵀF·x) and x k×b without forming F_cᵀF_c: one read of F
// per 32 columns of x, by native.Outer32 on chunks of outerChunk points copied together
// and centred on the way (each value float32(f − μ), rounded once, as
// OuterT32 centres them), x rounded to float32 once and padded to 16 or 32
// columns; the chunks' results are added in float32 within blocks of
// outerPanel points (as OuterT32's blocks), and the blocks' sums in
// float64 in block order — the same bits whatever the goroutines. Each
// entry is within a few (k + outerPanel)·u of the sum of its absolute
// products (float32 arithmetic, u = 2⁻²⁴), plus the roundings of x and of
// the centred values. About 2·n·k·b multiply-adds: fewer than OuterT32's
// n·k²/2 when a solver needs fewer than k/(4b) products.
func OuterT32Mul(nb native.Build, ft *Dense32, mean []float64, x, dst *mat.Dense) error {
	k, n := ft.Dims()
	xr, b := x.Dims()
	dr, dc := dst.Dims()
	if xr != k || dr != k || dc != b {
		return invalidf("OuterT32Mul: F has %d features, x is %d×%d, dst %d×%d", k, xr, b, dr, dc)
	}
	if mean != nil && len(mean) != k {
		return invalidf("OuterT32Mul: %d means for %d features", len(mean), k)
	}
	if b > 32 {
		// Groups of 32 columns, a pass each.
		for c0 := 0; c0 < b; c0 += 32 {
			c1 := min(c0+32, b)
			if err := OuterT32Mul(nb, ft, mean, x.Slice(0, k, c0, c1).(*mat.Dense), dst.Slice(0, k, c0, c1).(*mat.Dense)); err != nil {
				return err
			}
		}
		return nil
	}
	bp := 16
	if b > 16 {
		bp = 32
	}
	x32 := make([]float32, k*bp)
	for e := 0; e < k; e++ {
		for c, v := range x.RawRowView(e) {
			x32[e*bp+c] = float32(v)
		}
	}
	blocks := (n + outerPanel - 1) / outerPanel
	sums := make([][]float64, blocks)
	par.Blocks(0, blocks, func(lo, hi int) {
		z, part := make([]float32, outerChunk*bp), make([]float32, k*bp)
		buf := make([]float32, k*outerChunk)
		for blk := lo; blk < hi; blk++ {
			clear(part)
			for j0 := blk * outerPanel; j0 < min((blk+1)*outerPanel, n); j0 += outerChunk {
				w := min(outerChunk, n-j0)
				nb.Outer32(k, w, ft.Data[j0:], n, mean, buf, bp, x32, z, part)
			}
			acc := make([]float64, k*bp)
			for i, v := range part {
				acc[i] = float64(v)
			}
			sums[blk] = acc
		}
	})
	acc := sums[0]
	for _, s := range sums[1:] {
		for i, v := range s {
			acc[i] += v
		}
	}
	for e := 0; e < k; e++ {
		copy(dst.RawRowView(e)[:b], acc[e*bp:e*bp+b])
	}
	return nil
}

// SubATA32 subtracts Aᵀ·A from dst (p×p, upper triangle) for A (k×p,
// row-major float32 in a, k·p values): the product by ssyrk in float32
// (float32 accumulation over the k rows) into acc (p² float32s of
// scratch; shorter allocates them), each entry subtracted in float64.
func SubATA32(dst *mat.SymDense, a []float32, k int, acc []float32) error {
	p := dst.SymmetricDim()
	if k < 1 || len(a) != k*p {
		return invalidf("SubATA32: %d values for %d×%d", len(a), k, p)
	}
	if len(acc) < p*p {
		acc = make([]float32, p*p)
	}
	acc = acc[:p*p]
	B32.Syrk(blas.Trans, -1, blas32.General{Rows: k, Cols: p, Stride: p, Data: a}, 0,
		blas32.Symmetric{Uplo: blas.Upper, N: p, Stride: p, Data: acc})
	addUpper(dst.RawSymmetric(), acc, p)
	return nil
}

// addUpper adds the upper triangle of the k×k float32 acc to raw's.
func addUpper(raw blas64.Symmetric, acc []float32, k int) {
	par.Blocks(0, k, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := raw.Data[r*raw.Stride+r : r*raw.Stride+k]
			for j, v := range acc[r*k+r : r*k+k] {
				dst[j] += float64(v)
			}
		}
	})
}

// CenterRows32 subtracts mean[r] from every entry of row r of ft in
// place, each difference computed in float64 and rounded once: F − 1μᵀ
// for F = ftᵀ, the values OuterT32 would centre block by block
// (ShiftRows32, its row sums dropped).
func CenterRows32(ft *Dense32, mean []float64) error {
	k, n := ft.Dims()
	if len(mean) != k {
		return invalidf("CenterRows32: %d means for %d rows", len(mean), k)
	}
	ShiftRows32(ft.Data, n, n, mean, make([]float64, k))
	return nil
}

// MulT32 returns the n×s matrix (F − 1μᵀ)·W for F = ftᵀ (ft k×n) and W
// k×s (mean nil: F·W) by native.MulT32Rows on Fᵀ in place, or
// native.MulT32Axpy on blocks of points copied together, in parallel:
// exact products of the stored values in float64 arithmetic.
func MulT32(ft *Dense32, w *mat.Dense, mean []float64) (*mat.Dense, error) {
	k, n := ft.Dims()
	if wr, _ := w.Dims(); wr != k {
		return nil, invalidf("MulT32: W has %d rows, F has %d columns", wr, k)
	}
	if mean != nil && len(mean) != k {
		return nil, invalidf("MulT32: %d means for %d columns", len(mean), k)
	}
	_, s := w.Dims()
	out := mat.NewDense(n, s, nil)
	MulT32Into(out, ft, w, mean)
	return out, nil
}

// Blocks of the native float32 products (native.MulT32Axpy/MulT32Dot):
// mt32Points points of F per goroutine task in MulT32Into (their k rows
// of the stored Fᵀ, k·mt32Points float32s, stay in L2 while every vector
// of the block passes over them), mt32Cols columns of Fᵀ per sweep in
// MulTVec32 (the block of X in transposed layout, b·mt32Cols float64s,
// stays in L2 while the rows stream past it). Both beat widening blocks
// to float64 for OpenBLAS dgemm several times (docs/measurements.md).
const mt32Points, mt32Cols = 64, 4096

// mt32Run is the points per goroutine task of MulT32Into where it reads
// Fᵀ in place (native.MulT32Rows): each of the k rows is read as a run of
// mt32Run float32s, and the task's bp·mt32Run float64 results stay in L2.
const mt32Run = 1024

// MulT32Into is MulT32 into dst (n×s); the shapes are the caller's to
// check.
func MulT32Into(out *mat.Dense, ft *Dense32, w *mat.Dense, mean []float64) {
	mulT32Into(out, ft, w, mean, native.Best())
}

// mulT32Into is MulT32Into on build b: T32Scores.Block on blocks of
// mt32Run points in parallel.
func mulT32Into(out *mat.Dense, ft *Dense32, w *mat.Dense, mean []float64, b native.Build) {
	_, n := ft.Dims()
	_, s := w.Dims()
	plan := newT32Scores(w, mean, b)
	par.Blocks(0, (n+mt32Run-1)/mt32Run, func(lo, hi int) {
		var scratch T32Scratch
		for blk := lo; blk < hi; blk++ {
			c0 := blk * mt32Run
			cols := min(mt32Run, n-c0)
			plan.Block(out.Slice(c0, c0+cols, 0, s).(*mat.Dense), ft.Data[c0:], n, cols, &scratch)
		}
	})
}

// T32Scores computes MulT32's products block by block of points, on the
// caller's goroutine, for callers that make the blocks of Fᵀ themselves
// (in parallel, while they are in cache): W transposed, padded and μᵀW
// formed once. Where the build runs the float64-arithmetic block kernel
// in AVX-512 (native.Best does where the processor has it), Fᵀ is read in
// place by native.MulT32Rows; elsewhere blocks of mt32Points points are
// copied together for MulT32Axpy. Each entry is one FMA chain from zero
// over F's columns in both, less (μᵀW)_j, so the AVX-512 and AVX2 builds
// and any blocking of the points give the same values (the SSE2 baseline
// rounds each product).
type T32Scores struct {
	k, s, bp int
	wt, mw   []float64
	b        native.Build
}

// T32Scratch is one goroutine's scratch for T32Scores.Block (its zero
// value is ready; it grows to the largest block).
type T32Scratch struct {
	yt  []float64
	buf []float32
}

// NewT32Scores prepares W (k×s) and mean (nil or k values) for Block.
func NewT32Scores(w *mat.Dense, mean []float64) *T32Scores {
	return newT32Scores(w, mean, native.Best())
}

func newT32Scores(w *mat.Dense, mean []float64, b native.Build) *T32Scores {
	k, s := w.Dims()
	p := &T32Scores{k: k, s: s, bp: (s + 3) / 4 * 4, mw: make([]float64, s), b: b}
	p.wt = make([]float64, p.bp*k)
	for r := 0; r < k; r++ {
		for j, v := range w.RawRowView(r) {
			p.wt[j*k+r] = v
			if mean != nil {
				p.mw[j] += mean[r] * v
			}
		}
	}
	return p
}

// Block sets out (cols×s) to the products for the cols points whose k
// rows of Fᵀ start at ft with stride ld (ft[r·ld + i] is point i's
// feature r). The shapes are the caller's to check.
func (p *T32Scores) Block(out *mat.Dense, ft []float32, ld, cols int, sc *T32Scratch) {
	k, bp := p.k, p.bp
	if len(sc.yt) < bp*cols {
		sc.yt = make([]float64, bp*cols)
	}
	yt := sc.yt[:bp*cols]
	clear(yt) // the kernels add to it
	if symm512, _, _ := p.b.Wide512(); symm512 {
		p.b.MulT32Rows(k, cols, ft, ld, bp, p.wt, k, yt, cols)
	} else {
		// The block's k rows of mt32Points entries, copied together: the
		// kernel then streams them instead of striding through Fᵀ.
		if len(sc.buf) < k*mt32Points {
			sc.buf = make([]float32, k*mt32Points)
		}
		for c0 := 0; c0 < cols; c0 += mt32Points {
			w := min(mt32Points, cols-c0)
			for r := 0; r < k; r++ {
				copy(sc.buf[r*w:(r+1)*w], ft[r*ld+c0:r*ld+c0+w])
			}
			p.b.MulT32Axpy(k, w, sc.buf, w, bp, p.wt, k, yt[c0:], cols)
		}
	}
	ob := out.RawMatrix()
	for i := 0; i < cols; i++ {
		row := ob.Data[i*ob.Stride : i*ob.Stride+p.s]
		for j := range row {
			row[j] = yt[j*cols+i] - p.mw[j]
		}
	}
}

// MulTVec32 sets dst (k×b) = ft·x for x n×b (half a pass of a low-rank
// operator) by native.MulT32Dot, in parallel over the rows of ft and in
// sweeps of mt32Cols columns: exact products of the stored values in
// float64 arithmetic; the shapes are the caller's to check.
func MulTVec32(ft *Dense32, x *mat.Dense, dst *mat.Dense) {
	k, n := ft.Dims()
	_, b := x.Dims()
	bp := (b + 3) / 4 * 4
	xt := make([]float64, bp*n)
	xr := x.RawMatrix()
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j, v := range xr.Data[i*xr.Stride : i*xr.Stride+b] {
				xt[j*n+i] = v
			}
		}
	})
	zt := make([]float64, bp*k)
	nat := native.AVX2() // as above
	for c0 := 0; c0 < n; c0 += mt32Cols {
		cols := min(mt32Cols, n-c0)
		par.Blocks(0, k, func(lo, hi int) {
			nat.MulT32Dot(hi-lo, cols, ft.Data[lo*n+c0:], n, bp, xt[c0:], n, zt[lo:], k)
		})
	}
	dr := dst.RawMatrix()
	for r := 0; r < k; r++ {
		row := dr.Data[r*dr.Stride : r*dr.Stride+b]
		for j := range row {
			row[j] = zt[j*k+r]
		}
	}
}
