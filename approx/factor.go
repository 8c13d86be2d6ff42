package approx

import (
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/linalg"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"
)

// nySource is the data of a fit: kernel rows, and row i of the data in
// float64 (for the landmarks and the diagonal).
type nySource struct {
	n, dim int
	rows   *gram.KernelRows
	row    func(i int, dst []float64)
	// krow, when set, is row i as the kernel rows see it (Fit's shifted
	// float32 copy); nil means row.
	krow func(i int, dst []float64)
	f32  bool // store F in float32
	// data32 is the float32 data rows reads in place, if any, and
	// ownsData whether the fit made it (a map that keeps rows' functions
	// keeps it too: NystromMap.rowsData).
	data32   *linalg.Dense32
	ownsData bool
}

// pointRows are the data's rows idx as the kernel rows see them (row),
// gathered into a float64 matrix only when asked (dense): the integer and
// float32 kernel rows work from the indices alone, so on those paths the
// copy — len(idx)·d float64s of fresh memory — is never made.
type pointRows struct {
	idx []int
	dim int
	row func(i int, dst []float64)
	m   *mat.Dense
}

// dense returns the rows as a len(idx)×dim matrix, gathered on the first
// call.
func (p *pointRows) dense() *mat.Dense {
	if p.m == nil {
		p.m = mat.NewDense(len(p.idx), p.dim, nil)
		for a, i := range p.idx {
			p.row(i, p.m.RawRowView(a))
		}
	}
	return p.m
}

// newRows are a round's accepted pivots: their indices T, their rows of
// the data as the kernel rows see them (xt), their rows of F so far (ft,
// t×kc; nil when kc = 0), and L (t×t lower triangular, K(T, T) −
// F_T·F_Tᵀ = L·Lᵀ).
type newRows struct {
	idx   []int
	xt    *pointRows
	ft, l *mat.Dense
}

// factor is the storage of Fᵀ (m×n, one feature per row).
type factor interface {
	// extend appends a round's features: rows [kc, kc+t) of Fᵀ become
	// L⁻¹·(K(T, X) − F_T·Fᵀ), the pivots' columns set to L exactly (the
	// earlier pivots' to 0, so that the landmarks' rows of F are lower
	// triangular), and their squares leave the residual diagonal res.
	extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error
	// gather sets dst (len(idx)×kc) to the rows idx of F over its first
	// kc features (dst[a][e] = F[idx[a]][e]), reading one stored feature
	// row at a time.
	gather(idx []int, kc int, dst *mat.Dense)
	// feature sets out[a] to feature e of the point idx[a].
	feature(e int, idx []int, out []float64)
	// train returns F (n×kc) as a mat.Matrix: the transpose of the stored
	// rows.
	train(kc int) mat.Matrix
	// release drops the rounds' scratch (the storage of Fᵀ stays); the
	// factor takes no more rounds.
	release()
}

type factor64 struct {
	ft *mat.Dense
	gt *[]float64 // a t×n panel, reused: fresh pages are slow to touch
	tr *[]float64 // gather's transposed buffer, reused
}

func (f factor64) extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error {
	_, n := f.ft.Dims()
	t := len(r.idx)
	if cap(*f.gt) < t*n {
		*f.gt = make([]float64, t*n)
	}
	gt := mat.NewDense(t, n, (*f.gt)[:t*n])
	// G_Tᵀ = K(T, X) − F_T·Fᵀ (t×n): the kernel rows from the prepared
	// source (the data's shift and norms computed once), then one gemm.
	if err := rows.Cross(gt.RawMatrix().Data, n, r.xt.dense(), 0, n); err != nil {
		return err
	}
	if kc > 0 {
		linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, -1, r.ft.RawMatrix(), f.ft.Slice(0, kc, 0, n).(*mat.Dense).RawMatrix(), 1,
			gt.RawMatrix())
	}
	// F_newᵀ = L⁻¹·G_Tᵀ (t×n), in place, then the pivots' columns.
	linalg.B64.Trsm(blas.Left, blas.NoTrans, 1, lowerOf(r.l), gt.RawMatrix())
	for e := 0; e < t; e++ {
		row := gt.RawRowView(e)
		for _, p := range pivots {
			row[p] = 0
		}
		for a, p := range r.idx {
			row[p] = r.l.At(a, e)
		}
	}
	par.For(0, n, nil, func(lo, hi int) {
		rs := res[lo:hi]
		for e := 0; e < t; e++ {
			row := gt.RawRowView(e)[lo:hi]
			copy(f.ft.RawRowView(kc + e)[lo:hi], row)
			for a, z := range row {
				rs[a] -= z * z
			}
		}
	})
	return nil
}

func (f factor64) release() { *f.tr = nil }

func (f factor64) gather(idx []int, kc int, dst *mat.Dense) {
	gatherRows(idx, kc, dst, f.tr, f.feature)
}

func (f factor64) feature(e int, idx []int, out []float64) {
	row := f.ft.RawRowView(e)
	for a, i := range idx {
		out[a] = row[i]
	}
}

// gatherT sets dst (kc×len(idx)) to the first kc features of the points
// idx, one feature a row (dst[e][a] = F[idx[a]][e]): gather's transpose,
// written as read, for products that take Fᵀ.
func gatherT(f factor, idx []int, kc int, dst *mat.Dense) {
	par.Blocks(0, kc, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			f.feature(e, idx, dst.RawRowView(e))
		}
	})
}

// gatherRows sets dst (len(idx)×kc) from feature rows: fill(e, idx, out)
// puts feature e of the points idx in out; the rows are gathered into a
// transposed buffer (sequential writes) and transposed in 64×64 blocks.
func gatherRows(idx []int, kc int, dst *mat.Dense, scratch *[]float64, fill func(e int, idx []int, out []float64)) {
	p := len(idx)
	tr := grow(scratch, kc*p)
	par.Blocks(0, kc, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			fill(e, idx, tr[e*p:(e+1)*p])
		}
	})
	raw := dst.RawMatrix()
	const blk = 64
	for a0 := 0; a0 < p; a0 += blk {
		for e0 := 0; e0 < kc; e0 += blk {
			for a := a0; a < min(a0+blk, p); a++ {
				row := raw.Data[a*raw.Stride:]
				for e := e0; e < min(e0+blk, kc); e++ {
					row[e] = tr[e*p+a]
				}
			}
		}
	}
}

func (f factor64) train(kc int) mat.Matrix {
	_, n := f.ft.Dims()
	return f.ft.Slice(0, kc, 0, n).(*mat.Dense).T()
}

// crossChunk is the kernel rows factor32 computes at once where they come
// through a float64 panel (kernels without KernelRows.Rows32: maps other
// than the Gaussian and Laplace ones, or the Go map).
const crossChunk = 64

// factor32 keeps Fᵀ in float32 and builds each round's rows there in
// float32 arithmetic: the kernel rows K(T, X) rounded into the new rows
// (straight from the exact integer kernel of 8-bit data or from float32
// products, gram.KernelRows.Rows32, else from a float64 panel), −F_T·Fᵀ
// added by sgemm, then multiplied by L⁻¹ (computed in float64, rounded
// once to float32) by strmm. The rounding this adds is of the order of
// what the float32 update makes anyway (entries of G off by about
// 2⁻²⁴·(|K| + |F_T·Fᵀ|), and t·2⁻²⁴ of |L⁻¹|·|G| from the product, in F);
// the residual diagonal subtracts the squares of the stored values, so
// the trace error is that of the stored F.
type factor32 struct {
	ft   *linalg.Dense32
	gt   *[]float64 // the float64 panel of kernel rows that lack Rows32
	tr   *[]float64 // gather's transposed buffer, reused
	fs   *[]float32 // F_T in float32, reused
	l32  []float32  // L⁻¹ in float32 (t×t, t ≤ the block), reused
	sums []float64  // each stored feature's sum over the points
}

func (f factor32) extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error {
	n := f.ft.Cols
	t := len(r.idx)
	dst := f.ft.Data[kc*n : (kc+t)*n]
	dg := blas32.General{Rows: t, Cols: n, Stride: n, Data: dst}
	if err := rows32Into(rows, r.xt, dst, n, f.gt); err != nil {
		return err
	}
	// − F_T·Fᵀ, added by sgemm (β = 1).
	if kc > 0 {
		if cap(*f.fs) < t*kc {
			*f.fs = make([]float32, t*kc)
		}
		fs := (*f.fs)[:t*kc]
		for j := 0; j < t; j++ {
			for e, v := range r.ft.RawRowView(j) {
				fs[j*kc+e] = float32(v) // exact: gathered from float32
			}
		}
		linalg.B32.Gemm(blas.NoTrans, blas.NoTrans, -1, blas32.General{Rows: t, Cols: kc, Stride: kc, Data: fs},
			blas32.General{Rows: kc, Cols: n, Stride: n, Data: f.ft.Data[:kc*n]}, 1, dg)
	}
	// F_newᵀ = L⁻¹·G_Tᵀ by strmm in place with L⁻¹ (formed in float64 by
	// dtrsm on the t×t identity, then rounded): OpenBLAS's strsm on the
	// t×n block ran at a third of sgemm's rate, strmm at about sgemm's
	// (docs/measurements.md).
	inv := linalg.TriInverse(lowerOf(r.l))
	l32 := f.l32[:t*t]
	clear(l32)
	for a := 0; a < t; a++ {
		for e := 0; e <= a; e++ {
			l32[a*t+e] = float32(inv.At(a, e))
		}
	}
	linalg.B32.Trmm(blas.Left, blas.NoTrans, 1, blas32.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: t, Stride: t, Data: l32}, dg)
	for e := 0; e < t; e++ {
		row := dst[e*n : (e+1)*n]
		for _, p := range pivots {
			row[p] = 0
		}
		for a, p := range r.idx {
			row[p] = float32(r.l.At(a, e))
		}
	}
	// The squares leave the residual diagonal; the features' sums (for
	// their means) come along, by chunks of points added in chunk order.
	const chunk = 4096
	parts := make([]float64, (n+chunk-1)/chunk*t)
	par.Blocks(0, (n+chunk-1)/chunk, func(c0, c1 int) {
		for c := c0; c < c1; c++ {
			lo, hi := c*chunk, min((c+1)*chunk, n)
			squares(res[lo:hi], dst[lo:], n, t, parts[c*t:(c+1)*t])
		}
	})
	for c := 0; c < (n+chunk-1)/chunk; c++ {
		for e := 0; e < t; e++ {
			f.sums[kc+e] += parts[c*t+e]
		}
	}
	return nil
}

// squares subtracts from rs, for each of the t feature rows e of f (row e
// at f[e·ld:], len(rs) points), the squares of its entries, and puts the
// row's sum in sums[e]: entry a of rs loses rows 0, 1, … t−1 in that
// order, each sum runs over a ascending — the bits of the plain loop —,
// four rows at a time so that each entry of rs is loaded and stored once
// per four rows.
func squares(rs []float64, f []float32, ld, t int, sums []float64) {
	w := len(rs)
	e := 0
	for ; e+4 <= t; e += 4 {
		r0, r1, r2, r3 := f[e*ld:e*ld+w], f[(e+1)*ld:(e+1)*ld+w], f[(e+2)*ld:(e+2)*ld+w], f[(e+3)*ld:(e+3)*ld+w]
		var s0, s1, s2, s3 float64
		for a := range rs {
			v0, v1, v2, v3 := float64(r0[a]), float64(r1[a]), float64(r2[a]), float64(r3[a])
			x := rs[a]
			x -= v0 * v0
			x -= v1 * v1
			x -= v2 * v2
			x -= v3 * v3
			rs[a] = x
			s0 += v0
			s1 += v1
			s2 += v2
			s3 += v3
		}
		sums[e], sums[e+1], sums[e+2], sums[e+3] = s0, s1, s2, s3
	}
	for ; e < t; e++ {
		sum := 0.0
		for a, z := range f[e*ld : e*ld+w] {
			v := float64(z)
			rs[a] -= v * v
			sum += v
		}
		sums[e] = sum
	}
}

func (f factor32) release() { *f.tr, *f.fs = nil, nil }

func (f factor32) gather(idx []int, kc int, dst *mat.Dense) {
	gatherRows(idx, kc, dst, f.tr, f.feature)
}

func (f factor32) feature(e int, idx []int, out []float64) {
	row := f.ft.Row(e)
	for a, i := range idx {
		out[a] = float64(row[i])
	}
}

func (f factor32) train(kc int) mat.Matrix {
	return f.ft.TopRows(kc).T()
}

// grow returns (*b)[:size], allocating when the capacity is short.
func grow(b *[]float64, size int) []float64 {
	if cap(*b) < size {
		*b = make([]float64, size)
	}
	return (*b)[:size]
}

// rows32Into sets dst (len(xr.idx) rows of n float32s) to the kernel rows
// K(T, X) of the data's rows xr: in float32 directly (the exact integer
// kernel of 8-bit data, or float32 products, gram.KernelRows.Rows32; xr
// never gathered), else through a float64 panel of crossChunk rows at a
// time (*gt, allocated once: its size stays fixed whatever len(xr.idx),
// so no call leaves a larger one behind; at n = 10⁶ a panel of t rows is
// 8t MB).
func rows32Into(rows *gram.KernelRows, xr *pointRows, dst []float32, n int, gt *[]float64) error {
	if rows.Rows32(xr.idx, dst, n) {
		return nil
	}
	if *gt == nil {
		*gt = make([]float64, crossChunk*n)
	}
	xt := xr.dense()
	t, d := xt.Dims()
	for a0 := 0; a0 < t; a0 += crossChunk {
		a1 := min(a0+crossChunk, t)
		g := (*gt)[:(a1-a0)*n]
		if err := rows.Cross(g, n, xt.Slice(a0, a1, 0, d).(*mat.Dense), 0, n); err != nil {
			return err
		}
		out := dst[a0*n : a1*n]
		par.For(0, len(g), nil, func(lo, hi int) {
			for i, v := range g[lo:hi] {
				out[lo+i] = float32(v)
			}
		})
	}
	return nil
}
