package linalg

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/kdual/kdual/internal/par"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/status"
	// libopenblas is linked here; netlib's cgo package resolves against it.
	_ "github.com/kdual/kdual/native"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("linalg: "+format+": %w", append(args, status.ErrInvalid)...)
}

func checkData(what string, x *mat.Dense) error {
	if x == nil || x.IsEmpty() {
		return invalidf("%s: empty data", what)
	}
	return CheckFinite(what, x)
}

// CheckFinite returns an error wrapping ErrInvalid when a holds NaN or ±Inf.
// what names the argument in the message.
func CheckFinite(what string, a mat.Matrix) error {
	r, c := a.Dims()
	switch m := a.(type) {
	case *mat.Dense:
		raw := m.RawMatrix()
		row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+c] }
		if i := firstBadRow(r, row); i >= 0 {
			j := firstNonFinite(row(i))
			return invalidf("%s[%d,%d] = %g is not finite", what, i, j, raw.Data[i*raw.Stride+j])
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

// firstBadRow returns the lowest i < n whose row(i) holds a NaN or an
// infinity, or −1, scanning the rows in parallel: each row is summed as
// Σ x·0, which is 0 exactly when every x is finite.
func firstBadRow(n int, row func(i int) []float64) int {
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi && int64(i) < bad.Load(); i++ {
			v := row(i)
			var s0, s1, s2, s3 float64
			k := 0
			for ; k+4 <= len(v); k += 4 {
				s0 += v[k] * 0
				s1 += v[k+1] * 0
				s2 += v[k+2] * 0
				s3 += v[k+3] * 0
			}
			for ; k < len(v); k++ {
				s0 += v[k] * 0
			}
			if s0+s1+s2+s3 != 0 {
				for {
					old := bad.Load()
					if int64(i) >= old || bad.CompareAndSwap(old, int64(i)) {
						break
					}
				}
				return
			}
		}
	})
	if b := bad.Load(); b != math.MaxInt64 {
		return int(b)
	}
	return -1
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
		if r, c := m.Dims(); r == 0 || c == 0 {
			return nil // a view of no rows or no columns
		}
		return m
	}
	if r, c := a.Dims(); r == 0 || c == 0 {
		return nil
	}
	return CopyOf(a)
}

// CopyDense returns a copy of a (contiguous rows), written by parallel
// blocks of rows: a fresh buffer's first touch costs a page fault per
// 4 KB, which one core pays as slowly as mat.DenseCopyOf's single loop
// (docs/measurements.md). nil for nil or empty a.
func CopyDense(a *mat.Dense) *mat.Dense {
	if a == nil || a.IsEmpty() {
		return nil
	}
	r, c := a.Dims()
	src := a.RawMatrix()
	out := mat.NewDense(r, c, nil)
	dst := out.RawMatrix().Data
	par.For(0, r, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(dst[i*c:(i+1)*c], src.Data[i*src.Stride:i*src.Stride+c])
		}
	})
	return out
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
