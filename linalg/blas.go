package linalg

import (
	"fmt"
	"github.com/kdual/kdual/internal/par"
	"math"

	"gonum.org/v1/gonum/mat"

	kdlapack "github.com/kdual/kdual/lapack/gonum"
	"github.com/kdual/kdual/status"
	// libopenblas is linked here; netlib's cgo package resolves against it.
	_ "github.com/kdual/kdual/native"
)

func init() {
	// The one piece of global state in kdual: gonum's BLAS (float64 and
	// float32) and gonum's LAPACK run on OpenBLAS, so every gonum
	// decomposition in the process does (package lapack/gonum).
	kdlapack.Use()
}

// ErrInvalid is wrapped by every error about bad input (status.ErrInvalid).
var ErrInvalid = status.ErrInvalid

func invalidf(format string, args ...any) error {
	return fmt.Errorf("linalg: "+format+": %w", append(args, ErrInvalid)...)
}

// CheckFinite returns an error wrapping ErrInvalid when a holds NaN or ±Inf.
// what names the argument in the message.
func CheckFinite(what string, a mat.Matrix) error {
	r, c := a.Dims()
	switch m := a.(type) {
	case *mat.Dense:
		raw := m.RawMatrix()
		for i := 0; i < r; i++ {
			if j := firstNonFinite(raw.Data[i*raw.Stride : i*raw.Stride+c]); j >= 0 {
				return invalidf("%s[%d,%d] = %g is not finite", what, i, j, raw.Data[i*raw.Stride+j])
			}
		}
		return nil
	case *mat.SymDense:
		raw := m.RawSymmetric()
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride+i : i*raw.Stride+c]
			if j := firstNonFinite(row); j >= 0 {
				return invalidf("%s[%d,%d] = %g is not finite", what, i, i+j, row[j])
			}
		}
		return nil
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return invalidf("%s[%d,%d] = %g is not finite", what, i, j, v)
			}
		}
	}
	return nil
}

// CheckFiniteSlice is CheckFinite for a vector.
func CheckFiniteSlice(what string, v []float64) error {
	if j := firstNonFinite(v); j >= 0 {
		return invalidf("%s[%d] = %g is not finite", what, j, v[j])
	}
	return nil
}

func firstNonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// MirrorUpper copies the upper triangle of the n×n row-major data (stride
// ld) into the lower one, so that the storage holds the full symmetric
// matrix. It works in cache-sized tiles, in parallel.
func MirrorUpper(n int, data []float64, ld int) {
	const tile = 64
	tiles := (n + tile - 1) / tile
	par.For(0, tiles, func(bi int) float64 { return float64(bi + 1) }, func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			i0, i1 := bi*tile, min(n, (bi+1)*tile)
			// Lower block row bi: entries (i, j) with j < i, from (j, i).
			for j0 := 0; j0 <= i0; j0 += tile {
				j1 := min(j0+tile, n)
				for i := i0; i < i1; i++ {
					row := data[i*ld:]
					for j := j0; j < min(j1, i); j++ {
						row[j] = data[j*ld+i]
					}
				}
			}
		}
	})
}

// Symmetrize makes a's storage hold both triangles (copying the upper one
// into the lower), so the raw data is a full dense matrix.
func Symmetrize(a *mat.SymDense) {
	raw := a.RawSymmetric()
	MirrorUpper(raw.N, raw.Data, raw.Stride)
}

// DenseOf returns a as a *mat.Dense for code that needs raw rows: a itself
// (a view, not a copy) when it is one, a copy otherwise; nil for a nil or
// empty matrix. Library functions take mat.Matrix, as gonum's do, and use
// it so that a Slice or a transpose can be passed without a type
// assertion; nothing is written through the result.
func DenseOf(a mat.Matrix) *mat.Dense {
	switch m := a.(type) {
	case nil:
		return nil
	case *mat.Dense:
		if m == nil || m.IsEmpty() {
			return nil
		}
		return m
	}
	if r, c := a.Dims(); r == 0 || c == 0 {
		return nil
	}
	return mat.DenseCopyOf(a)
}

// SymDenseOf returns a as a *mat.SymDense: a itself when it is one, a
// copy otherwise; nil for a nil or empty matrix.
func SymDenseOf(a mat.Symmetric) *mat.SymDense {
	switch m := a.(type) {
	case nil:
		return nil
	case *mat.SymDense:
		if m == nil || m.IsEmpty() {
			return nil
		}
		return m
	}
	n := a.SymmetricDim()
	if n == 0 {
		return nil
	}
	out := mat.NewSymDense(n, nil)
	out.CopySym(a)
	return out
}
