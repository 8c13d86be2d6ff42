package eig

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// Centered applies the doubly centred M·A·M, M = I − 11ᵀ/n, of a symmetric
// operator A without forming or rewriting it: with the row means
// r = A·1/n and the column means x̄ of the block,
// M·A·M·x = A·x′ − 1·(rᵀx′), x′ = x − 1·x̄ᵀ. A pass costs one pass of A
// plus O(n·b). The row means take one pass of their own at construction
// (NewCentered) or ride along as one more column of the first Apply
// (NewCenteredDeferred). Kernel vectors of new points are centred
// consistently with Centering().
type Centered struct {
	op    Operator
	means []float64 // r = A·1/n; nil until known (NewCenteredDeferred)
	mean  float64   // 1ᵀA1/n²
	xc    *mat.Dense
	sym   *mat.SymDense // M·A·M, made by SymMatrix (lent by package scratch)
}

// NewCentered wraps op; it applies op once to the vector of ones.
func NewCentered(op Operator) (*Centered, error) {
	c, err := NewCenteredDeferred(op)
	if err != nil {
		return nil, err
	}
	if err := c.rowMeans(); err != nil {
		return nil, err
	}
	return c, nil
}

// NewCenteredDeferred wraps op as NewCentered does, without a pass of its
// own: the first Apply multiplies A by the centred block and the vector
// 1/n together, one column more, and keeps A·1/n as the row means. For an
// operator whose pass costs a kernel build (KernelOp) this saves one
// pass, and on a float64 matrix it keeps the single-vector pass (OpenBLAS's
// threaded dsymv) out of the fit; Centering or SymMatrix called before any
// Apply runs the pass then.
func NewCenteredDeferred(op Operator) (*Centered, error) {
	if op == nil || op.Dim() < 1 {
		return nil, fmt.Errorf("eig: NewCentered: empty operator: %w", status.ErrInvalid)
	}
	return &Centered{op: op}, nil
}

// rowMeans computes the row means by one pass of op on 1/n.
func (c *Centered) rowMeans() error {
	n := c.Dim()
	ones := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		ones.Set(i, 0, 1/float64(n))
	}
	r := mat.NewDense(n, 1, nil)
	if err := c.op.Apply(r, ones); err != nil {
		return err
	}
	return c.setMeans(r.RawMatrix().Data, r.RawMatrix().Stride)
}

// setMeans keeps r (entry i at r[i·stride]) as the row means, after
// checking them finite.
func (c *Centered) setMeans(r []float64, stride int) error {
	n := c.Dim()
	means, mean := make([]float64, n), 0.0
	for i := range means {
		means[i] = r[i*stride]
		mean += means[i]
	}
	if err := linalg.CheckFiniteSlice("row means", means); err != nil {
		return fmt.Errorf("eig: NewCentered: the kernel matrix has entries that are not finite (values past float64's range: check the kernel's parameters): %w", err)
	}
	c.means, c.mean = means, mean/float64(n)
	return nil
}

// Dim returns n.
func (c *Centered) Dim() int { return c.op.Dim() }

// Centering returns the statistics that centre the kernel rows of new
// points the way the operator centres A (running the pass of the row
// means if no Apply has yet).
func (c *Centered) Centering() (linalg.Centering, error) {
	if c.means == nil {
		if err := c.rowMeans(); err != nil {
			return linalg.Centering{}, err
		}
	}
	return linalg.Centering{RowMeans: append([]float64(nil), c.means...), Mean: c.mean}, nil
}

// Inner returns the wrapped operator.
func (c *Centered) Inner() Operator { return c.op }

// Apply sets dst = M·A·M·x.
func (c *Centered) Apply(dst, x *mat.Dense) error {
	n := c.Dim()
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	// x′ in c.xc, with one more column for 1/n while the row means are
	// not known.
	w := b
	if c.means == nil {
		w = b + 1
	}
	if c.xc == nil || c.xc.RawMatrix().Cols != w {
		c.xc = mat.NewDense(n, w, nil)
	}
	xr, xc := x.RawMatrix(), c.xc.RawMatrix()
	colMean := make([]float64, b)
	for i := 0; i < n; i++ {
		for j, v := range xr.Data[i*xr.Stride : i*xr.Stride+b] {
			colMean[j] += v
		}
	}
	for j := range colMean {
		colMean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		src, d := xr.Data[i*xr.Stride:i*xr.Stride+b], xc.Data[i*xc.Stride:i*xc.Stride+w]
		for j, v := range src {
			d[j] = v - colMean[j]
		}
		if w > b {
			d[b] = 1 / float64(n)
		}
	}
	if w == b {
		if err := c.op.Apply(dst, c.xc); err != nil {
			return err
		}
	} else {
		wide := mat.NewDense(n, w, nil)
		if err := c.op.Apply(wide, c.xc); err != nil {
			return err
		}
		wr := wide.RawMatrix()
		if err := c.setMeans(wr.Data[b:], wr.Stride); err != nil {
			return err
		}
		linalg.Copy(dst, wide.Slice(0, n, 0, b))
		c.xc = nil // the next pass takes b columns
	}
	rx := make([]float64, b) // rᵀx′
	for i := 0; i < n; i++ {
		for j, v := range xc.Data[i*xc.Stride : i*xc.Stride+b] {
			rx[j] += c.means[i] * v
		}
	}
	dr := dst.RawMatrix()
	for i := 0; i < n; i++ {
		row := dr.Data[i*dr.Stride : i*dr.Stride+b]
		for j := range row {
			row[j] -= rx[j]
		}
	}
	return nil
}

// KernelOp is a kernel matrix as a matrix-free operator: it stores only
// the data (n×d, a private copy) and forms panels of the kernel on the
// fly in every Apply, so memory is O(n·d + n·b) plus one panel of
// panelRows × panelCols float64s, never n×n. A pass computes the upper
// triangle of the kernel by panels (gram.KernelRows.Block: OpenBLAS
// dgemm or sgemm, then the element map; exact integer products among the
// rows of an integer head, KernelRows.IntegerHead) and multiplies each
// panel into both sides of the diagonal (the native tile kernel where
// package paths takes it for float64 blocks, Paths.SymmNative, reading
// each entry once; else two dgemm):
// n²·d + 2n²·b flops, about one Gram build, so pair it with a solver that
// needs few passes (block Krylov with a large block). Not safe for
// concurrent use. The GramOptions' Context, when set, is checked before
// every panel of every pass for the operator's life: a pass stops within
// one panel once it has ended (status.Cancelled).
type KernelOp struct {
	kr   *gram.KernelRows
	buf  []float64
	rows int
	cols int
	// lo, hi: the rows of the triangle a pass forms (0 and n but in a
	// KernelBand).
	lo, hi int
	ctx    context.Context
	// tiles: each panel goes into both sides by the native tile kernel
	// (applyTiles) instead of two dgemm, where package paths takes the
	// tile kernel for float64 blocks (Paths.SymmNative).
	tiles bool
}

// Panel shape of KernelOp: 512 rows (dgemm at full rate) by 4096 columns,
// 16 MB.
const (
	kernelPanelRows = 512
	kernelPanelCols = 4096
)

// NewKernelOp returns the matrix-free kernel operator of the rows of x
// (copied, not modified).
func NewKernelOp(x *mat.Dense, k kernel.Kernel, o gram.GramOptions) (*KernelOp, error) {
	kr, err := kernel.Rows(x, k, o)
	if err != nil {
		return nil, err
	}
	return newKernelOp(kr, o), nil
}

// newKernelOp is the matrix-free operator of the kernel rows kr.
func newKernelOp(kr *gram.KernelRows, o gram.GramOptions) *KernelOp {
	n := kr.N()
	rows, cols := min(kernelPanelRows, n), min(kernelPanelCols, n)
	return &KernelOp{kr: kr, rows: rows, cols: cols, lo: 0, hi: n, ctx: o.Context, tiles: paths.Current().SymmNative}
}

// KernelBand is the rows [lo, hi) of a kernel matrix's upper triangle as
// a matrix-free operator forms them: a share of the triangle (package
// dist gives each rank one), its panels formed in every product and
// multiplied into both sides of the diagonal as KernelOp's are. Not safe
// for concurrent use.
type KernelBand struct {
	k KernelOp
}

// NewKernelBand returns the band of rows [lo, hi) of the kernel of kr's
// rows (0 ≤ lo < hi ≤ n); o.Context, when set, is checked before every
// panel of every product.
func NewKernelBand(kr *gram.KernelRows, lo, hi int, o gram.GramOptions) (*KernelBand, error) {
	n := kr.N()
	if lo < 0 || hi > n || lo >= hi {
		return nil, fmt.Errorf("eig: NewKernelBand: rows [%d, %d) of %d: %w", lo, hi, n, status.ErrInvalid)
	}
	k := newKernelOp(kr, o)
	k.lo, k.hi, k.rows = lo, hi, min(kernelPanelRows, hi-lo)
	return &KernelBand{k: *k}, nil
}

// MulBlock sets dst (n×b) to the band's part of K·x: for every entry
// K_ij of the band's rows on or right of the diagonal, K_ij·x_j into row i
// and, right of the diagonal block of its panel, K_ij·x_i into row j; the
// sum of the bands of a partition of the rows is K·x.
func (b *KernelBand) MulBlock(dst, x *mat.Dense) error {
	return b.k.Apply(dst, x)
}

// Bytes returns the memory the band holds: the kernel rows' data and one
// panel.
func (b *KernelBand) Bytes() int64 { return b.k.Bytes() }

// Dim returns n.
func (k *KernelOp) Dim() int { return k.kr.N() }

// Rows returns the kernel's row source (for kernel rows of new points).
func (k *KernelOp) Rows() *gram.KernelRows { return k.kr }

// IntegerHead returns how many leading rows of a matrix-free operator
// (KernelOp, centred or not) have their kernel among themselves computed by
// exact integer products (gram.KernelRows.IntegerHead); 0 for other
// operators.
func IntegerHead(op Operator) int {
	if c, ok := op.(*Centered); ok {
		op = c.op
	}
	if k, ok := op.(*KernelOp); ok {
		return k.kr.IntegerHead()
	}
	return 0
}

// Bytes returns the memory the operator holds: the data copy, norms and
// the panel.
func (k *KernelOp) Bytes() int64 { return k.kr.Bytes() + 8*int64(k.rows*k.cols) }

// Apply sets dst = K·x.
func (k *KernelOp) Apply(dst, x *mat.Dense) error {
	n := k.Dim()
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	if k.buf == nil {
		k.buf = make([]float64, k.rows*k.cols)
	}
	if k.tiles {
		return k.applyTiles(dst, x, b)
	}
	xg, yg := x.RawMatrix(), dst.RawMatrix()
	for i := 0; i < n; i++ {
		clear(yg.Data[i*yg.Stride : i*yg.Stride+b])
	}
	sub := func(g blas64.General, r0, r1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: b, Stride: g.Stride, Data: g.Data[r0*g.Stride:]}
	}
	ld := k.cols
	return k.panels(func(i0, i1, j0, j1 int) {
		p := blas64.General{Rows: i1 - i0, Cols: j1 - j0, Stride: ld, Data: k.buf}
		// y_I += K_IJ·x_J (the diagonal block, held whole, once).
		linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, 1, p, sub(xg, j0, j1), 1, sub(yg, i0, i1))
		// y_J += K_IJᵀ·x_I for the columns right of the diagonal block.
		off := max(0, i1-j0)
		if j1-j0 > off {
			q := blas64.General{Rows: i1 - i0, Cols: j1 - j0 - off, Stride: ld, Data: k.buf[off:]}
			linalg.B64.Gemm(blas.Trans, blas.NoTrans, 1, q, sub(xg, i0, i1), 1, sub(yg, j0+off, j1))
		}
	})
}

// panels computes the kernel's upper triangle panel by panel into k.buf
// (rows [i0, i1), columns [j0, j1), stride k.cols; j0 = i0 on the
// diagonal) and hands each to update, checking the context before each.
func (k *KernelOp) panels(update func(i0, i1, j0, j1 int)) error {
	n := k.Dim()
	for i0 := k.lo; i0 < k.hi; i0 += k.rows {
		i1 := min(i0+k.rows, k.hi)
		for j0 := i0; j0 < n; j0 += k.cols {
			j1 := min(j0+k.cols, n)
			if k.ctx != nil && k.ctx.Err() != nil {
				return status.Cancelled(context.Cause(k.ctx), fmt.Sprintf("matrix-free pass at rows %d–%d, columns %d–%d", i0, i1, j0, j1))
			}
			k.kr.Block(k.buf, k.cols, i0, i1, j0, j1)
			update(i0, i1, j0, j1)
		}
	}
	return nil
}

// SymMatrix returns M·A·M explicitly when the wrapped operator holds a
// float64 matrix, for the dense solver; nil otherwise. It is made at the
// first call into an n×n buffer of c's own (the wrapped matrix is not
// changed) and kept until Release gives the buffer back.
func (c *Centered) SymMatrix() *mat.SymDense {
	if c.sym != nil {
		return c.sym
	}
	m, ok := c.op.(Matrixer)
	if !ok {
		return nil
	}
	if c.means == nil && c.rowMeans() != nil {
		return nil // the solver then takes the matrix by passes
	}
	a := m.SymMatrix()
	if a == nil {
		return nil
	}
	n := a.SymmetricDim()
	out := mat.NewSymDense(n, scratch.Float64s(n*n))
	out.CopySym(a)
	raw := out.RawSymmetric()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		shift := c.mean - c.means[i]
		for j := i; j < n; j++ {
			row[j] += shift - c.means[j]
		}
	}
	linalg.Symmetrize(out)
	c.sym = out
	return out
}

// free gives SymMatrix's buffer back (Release).
func (c *Centered) free() {
	if c.sym != nil {
		scratch.Put(c.sym.RawSymmetric().Data)
		c.sym = nil
	}
}

// updateVectors is how many n-vectors the native both-sides update holds
// during a pass of a block of b columns (b + 1 in the first pass, which
// carries the row means' column): X and Y padded to a multiple of 4
// columns, and the workers' Y_I accumulators (at most one more: the
// workers are at most n/512, each with 512 rows).
func updateVectors(b int) int { return 3 * ((b + 4) / 4 * 4) }

// applyTiles is Apply with each panel multiplied into both sides by
// gram.PanelSymm (the native tile kernel: each entry read once, where the
// two dgemm pack the panel twice), the block padded to a multiple of 4
// columns.
func (k *KernelOp) applyTiles(dst, x *mat.Dense, b int) error {
	n := k.Dim()
	bp := (b + 3) / 4 * 4
	xp := make([]float64, n*bp)
	yp := make([]float64, n*bp)
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		copy(xp[i*bp:i*bp+b], xr.Data[i*xr.Stride:i*xr.Stride+b])
	}
	acc := make([][]float64, min(par.Workers(0), max(1, (k.hi-k.lo)/k.rows)))
	for w := range acc {
		acc[w] = make([]float64, k.rows*bp)
	}
	err := k.panels(func(i0, i1, j0, j1 int) {
		gram.PanelSymm(k.buf, k.cols, i0, i1, j0, j1, xp, yp, bp, acc)
	})
	if err != nil {
		return err
	}
	yg := dst.RawMatrix()
	for i := 0; i < n; i++ {
		copy(yg.Data[i*yg.Stride:i*yg.Stride+b], yp[i*bp:i*bp+b])
	}
	return nil
}
