package eig

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// Operator is a symmetric linear map on Rⁿ.
type Operator interface {
	Dim() int
	// Apply sets dst = A·x for an n×b block x (b ≥ 1). One call reads A
	// once. dst must not alias x. An error (shapes that do not match,
	// wrapping ErrInvalid; a cancelled pass; a lost process of a
	// distributed operator) leaves dst undefined, and solvers return it.
	Apply(dst, x *mat.Dense) error
}

// Matrixer is implemented by operators that hold an explicit matrix
// (float64, or float32 widened exactly); the Dense solver uses it instead
// of building the matrix through Apply. SymMatrix's result may be the
// operator's own storage: callers read its upper triangle and never write
// it, and not after the operator is released (Release).
type Matrixer interface {
	SymMatrix() *mat.SymDense
}

// Dense is a symmetric float64 matrix as an Operator. Apply reads only
// the upper triangle of the matrix's storage, once per call: OpenBLAS
// dsymv for one vector; for a block, gram.SymMulUpper's tile kernel or
// OpenBLAS dsymm, whichever linalg.SymmNative measured faster on this
// machine. It keeps a reference to the matrix and never writes it. It is
// safe for concurrent use if the matrix does not change.
type Dense struct {
	a *mat.SymDense
}

// contiguous returns column 0 of m as a contiguous slice: m's own data
// when its stride is 1, else a copy into buf (grown as needed).
func contiguous(m *mat.Dense, buf []float64, copyIn bool) []float64 {
	raw := m.RawMatrix()
	if raw.Stride == 1 {
		return raw.Data[:raw.Rows]
	}
	buf = buf[:raw.Rows]
	if copyIn {
		for i := range buf {
			buf[i] = raw.Data[i*raw.Stride]
		}
	}
	return buf
}

// NewDense wraps a (not copied, not modified).
func NewDense(a *mat.SymDense) (*Dense, error) {
	if a == nil || a.IsEmpty() {
		return nil, fmt.Errorf("eig: NewDense: empty matrix: %w", status.ErrInvalid)
	}
	if err := linalg.CheckFinite("eig: NewDense", a); err != nil {
		return nil, err
	}
	return &Dense{a: a}, nil
}

// Dim returns n.
func (d *Dense) Dim() int { return d.a.SymmetricDim() }

// SymMatrix returns the wrapped matrix.
func (d *Dense) SymMatrix() *mat.SymDense { return d.a }

// Apply sets dst = A·x.
func (d *Dense) Apply(dst, x *mat.Dense) error {
	n := d.Dim()
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	a := d.a.RawSymmetric()
	if b == 1 {
		// A strided vector (a column of a solver's basis) is copied:
		// dsymv with a stride reads it by gathers and ran 3× slower.
		xv := contiguous(x, make([]float64, n), true)
		yv := contiguous(dst, make([]float64, n), false)
		if n <= linalg.SmallSym {
			// gonum's dsymv: OpenBLAS's would wake its threads.
			gonumblas.Implementation{}.Dsymv(blas.Upper, n, 1, a.Data, a.Stride, xv, 1, 0, yv, 1)
		} else {
			linalg.B64.Symv(1, a, blas64.Vector{N: n, Inc: 1, Data: xv}, 0, blas64.Vector{N: n, Inc: 1, Data: yv})
		}
		if dr := dst.RawMatrix(); dr.Stride != 1 {
			for i, v := range yv {
				dr.Data[i*dr.Stride] = v
			}
		}
		return nil
	}
	if paths.Current().SymmNative {
		gram.SymMulUpper(d.a, x, dst)
		return nil
	}
	linalg.B64.Symm(blas.Left, 1, a, x.RawMatrix(), 0, dst.RawMatrix())
	return nil
}

// Float32 is a symmetric matrix kept in float32 half storage
// (gram.SymTiles32: one triangle in 256×256 tiles, 2n² bytes, a quarter
// of the float64 Dense) and applied in float64 arithmetic: only the
// storage is rounded, so ‖A₃₂ − A‖₂ ≤ ‖A₃₂ − A‖_F ≤ 2⁻²⁴‖A‖_F. Apply
// reads every stored tile once, for one vector or a whole block, through
// vectorised tile kernels in parallel bands. Not safe for concurrent use.
type Float32 struct {
	s *gram.SymTiles32
	v vecBufs
}

// NewFloat32 rounds the symmetric matrix a (upper triangle read) into
// half storage.
func NewFloat32(a *mat.SymDense) (*Float32, error) {
	if a == nil || a.IsEmpty() {
		return nil, fmt.Errorf("eig: NewFloat32: empty matrix: %w", status.ErrInvalid)
	}
	s, err := gram.TilesFromSym(a)
	if err != nil {
		return nil, err
	}
	return &Float32{s: s}, nil
}

// NewFloat32Tiles adopts s (for matrices built in float32 from the start,
// gram.GramTiles32) without copying.
func NewFloat32Tiles(s *gram.SymTiles32) (*Float32, error) {
	if s == nil || s.N < 1 || s.Data == nil {
		return nil, fmt.Errorf("eig: NewFloat32Tiles: empty matrix: %w", status.ErrInvalid)
	}
	return &Float32{s: s}, nil
}

// Dim returns n.
func (f *Float32) Dim() int { return f.s.N }

// Tiles returns the storage.
func (f *Float32) Tiles() *gram.SymTiles32 { return f.s }

// Bytes returns the bytes of storage.
func (f *Float32) Bytes() int64 { return f.s.Bytes() }

// Free releases the storage at once (it is otherwise released when the
// operator becomes unreachable); f must not be used afterwards.
func (f *Float32) Free() { f.s.Free() }

// Apply sets dst = A·x.
func (f *Float32) Apply(dst, x *mat.Dense) error {
	n := f.s.N
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	if b == 1 {
		f.v.apply(dst, x, n, f.s.MulVec)
		return nil
	}
	f.s.MulBlock(dst, x)
	return nil
}

// SymMatrix returns the stored matrix widened to float64 (exactly: every
// float32 is a float64) as a new n×n SymDense, for the dense solver: 8n²
// more bytes, one copy, where building it through Apply would cost n
// block products (and carry their rounding). The tile rows are widened
// in parallel.
func (f *Float32) SymMatrix() *mat.SymDense {
	n, t := f.s.N, f.s.T
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	par.For(0, f.s.NT, func(I int) float64 { return float64(f.s.NT - I) }, func(lo, hi int) {
		for I := lo; I < hi; I++ {
			for J := I; J < f.s.NT; J++ {
				tile := f.s.Tile(I, J)
				cols := min(t, n-J*t)
				for r := 0; r < t && I*t+r < n; r++ {
					dst := raw.Data[(I*t+r)*raw.Stride+J*t : (I*t+r)*raw.Stride+J*t+cols]
					for c, v := range tile[r*t : r*t+cols] {
						dst[c] = float64(v)
					}
				}
			}
		}
	})
	return a
}

// vecBufs holds contiguous copies of a one-column block and its image, for
// the tile operators' one-vector products.
type vecBufs struct{ x, y []float64 }

// apply copies x's single column (any stride) into v.x, sets v.y =
// mul(v.x) and writes it into dst's column.
func (v *vecBufs) apply(dst, x *mat.Dense, n int, mul func(y, x []float64)) {
	if len(v.x) != n {
		v.x, v.y = make([]float64, n), make([]float64, n)
	}
	xr := x.RawMatrix()
	for i := range v.x {
		v.x[i] = xr.Data[i*xr.Stride]
	}
	mul(v.y, v.x)
	dr := dst.RawMatrix()
	for i, val := range v.y {
		dr.Data[i*dr.Stride] = val
	}
}

// Counting wraps an operator and counts its use: Passes is the number of
// Apply calls, MatVecs the number of columns they processed. The wrapper
// is not Distributed even when Op is: do not wrap a row-distributed
// operator (the solvers count its passes in Result).
type Counting struct {
	Op      Operator
	Passes  int
	MatVecs int
}

// Dim returns the wrapped operator's dimension.
func (c *Counting) Dim() int { return c.Op.Dim() }

// SymMatrix forwards to the wrapped operator's matrix when it has one (nil
// otherwise), so a dense solver reads it directly instead of building it by
// applying the operator to the identity.
func (c *Counting) SymMatrix() *mat.SymDense {
	if m, ok := c.Op.(Matrixer); ok {
		return m.SymMatrix()
	}
	return nil
}

// Apply counts and forwards.
func (c *Counting) Apply(dst, x *mat.Dense) error {
	_, b := x.Dims()
	c.Passes++
	c.MatVecs += b
	return c.Op.Apply(dst, x)
}

// checkApply returns b, or an error wrapping ErrInvalid when the shapes do
// not fit the n×n operator.
func checkApply(n int, dst, x *mat.Dense) (int, error) {
	r, b := x.Dims()
	dr, db := dst.Dims()
	if r != n || dr != n || db != b || b < 1 {
		return 0, fmt.Errorf("eig: Apply: x is %d×%d and dst %d×%d, operator is %d×%d: %w", r, b, dr, db, n, n, status.ErrInvalid)
	}
	return b, nil
}

// WithContext returns op with ctx checked before every Apply: once ctx has
// ended, Apply returns status.Cancelled (wrapping status.ErrStopped and
// the context's cause) without touching dst, so a solver stops within one
// pass. Operators whose single pass is long (KernelOp) check a context of
// their own between panels too. A Distributed operator stays Distributed;
// its parts must then see the same cancellation (a part that stops alone
// leaves the others waiting in their reductions).
func WithContext(ctx context.Context, op Operator) Operator {
	c := &ctxOp{op: op, ctx: ctx}
	if d, ok := op.(Distributed); ok {
		return ctxDistOp{c, d}
	}
	return c
}

type ctxDistOp struct {
	*ctxOp
	d Distributed
}

func (c ctxDistOp) GlobalDim() int       { return c.d.GlobalDim() }
func (c ctxDistOp) RowOffset() int       { return c.d.RowOffset() }
func (c ctxDistOp) Reduction() Reduction { return c.d.Reduction() }

type ctxOp struct {
	op     Operator
	ctx    context.Context
	passes int
}

func (c *ctxOp) Dim() int { return c.op.Dim() }

func (c *ctxOp) Apply(dst, x *mat.Dense) error {
	if c.ctx.Err() != nil {
		return status.Cancelled(context.Cause(c.ctx), fmt.Sprintf("before pass %d", c.passes+1))
	}
	c.passes++
	return c.op.Apply(dst, x)
}

// SymMatrix passes the wrapped operator's explicit matrix on (for the
// dense solver), nil when it has none or the context has ended (the
// solver then calls Apply, which reports the cancellation; a LAPACK
// eigensolve already running is not interrupted).
func (c *ctxOp) SymMatrix() *mat.SymDense {
	if c.ctx.Err() != nil {
		return nil
	}
	if m, ok := c.op.(Matrixer); ok {
		return m.SymMatrix()
	}
	return nil
}

// WithParts returns w, an operator wrapping op (counting, watching its
// passes), as an eig.Distributed operator with op's parts when op is one,
// else w itself: wrappers then keep a distributed operator distributed.
func WithParts(w, op Operator) Operator {
	d, ok := op.(Distributed)
	if !ok {
		return w
	}
	if _, already := w.(Distributed); already {
		return w
	}
	return partsOp{Operator: w, d: d}
}

type partsOp struct {
	Operator
	d Distributed
}

func (p partsOp) GlobalDim() int       { return p.d.GlobalDim() }
func (p partsOp) RowOffset() int       { return p.d.RowOffset() }
func (p partsOp) Reduction() Reduction { return p.d.Reduction() }
