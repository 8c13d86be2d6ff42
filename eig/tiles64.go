package eig

import (
	"fmt"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
)

// Float64Tiles is a symmetric matrix kept exactly, in float64, as the
// 256×256 tiles of one triangle (gram.SymTiles64: 4n² bytes, half of a
// full matrix), applied by the native tile kernel in parallel bands, each
// stored entry read once per pass for all columns. It is how
// NewKernelOperator stores float64 kernel matrices when full storage would
// be resident in both triangles (huge pages) or its address space is too
// large (see float64Layout): the tiles are computed by small chunks that
// stay in cache, where a full n×n Gram written in place with huge pages
// spends much of its time in page faults (docs/measurements.md). Not safe for
// concurrent use.
type Float64Tiles struct {
	s *gram.SymTiles64
	v vecBufs
}

// NewFloat64Tiles adopts s, which must hold every tile row.
func NewFloat64Tiles(s *gram.SymTiles64) (*Float64Tiles, error) {
	if s == nil || s.N < 1 || s.I0 != 0 || s.I1 != s.NT {
		return nil, fmt.Errorf("eig: NewFloat64Tiles: want the whole triangle: %w", status.ErrInvalid)
	}
	return &Float64Tiles{s: s}, nil
}

// Dim returns n.
func (f *Float64Tiles) Dim() int { return f.s.N }

// Bytes returns the bytes of storage.
func (f *Float64Tiles) Bytes() int64 { return f.s.Bytes() }

// Apply sets dst = A·x.
func (f *Float64Tiles) Apply(dst, x *mat.Dense) error {
	n := f.s.N
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	if b == 1 {
		// One vector: the tile symv (a block kernel would pad it to 4
		// columns and do 4 times the work).
		f.v.apply(dst, x, n, f.s.MulVec)
		return nil
	}
	f.s.MulBlock(dst, x)
	return nil
}

// SymMatrix returns the matrix as a new n×n SymDense (for the dense
// solver, which needs every entry in LAPACK's layout): 8n² more bytes.
func (f *Float64Tiles) SymMatrix() *mat.SymDense {
	n, t := f.s.N, f.s.T
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	for I := 0; I < f.s.NT; I++ {
		for J := I; J < f.s.NT; J++ {
			tile := f.s.Tile(I, J)
			for r := 0; r < t && I*t+r < n; r++ {
				cols := min(t, n-J*t)
				copy(raw.Data[(I*t+r)*raw.Stride+J*t:(I*t+r)*raw.Stride+J*t+cols], tile[r*t:r*t+cols])
			}
		}
	}
	return a
}

// newFloat64Kernel computes the kernel matrix of x in the layout
// float64Layout chooses.
func newFloat64Kernel(src *gram.Source, o gram.GramOptions) (Operator, error) {
	n, _ := src.Dims()
	if full, _ := float64Layout(n); full {
		return newFloat64Full(src, o)
	}
	t := gram.TileSide64For(n)
	s, err := src.Tiles64Band(o, t, 0, (n+t-1)/t)
	if err != nil {
		return nil, err
	}
	return &Float64Tiles{s: s}, nil
}
