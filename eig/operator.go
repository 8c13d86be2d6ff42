package eig

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
)

// useNative routes products to the native AVX-512 kernels where the
// processor has them; tests turn it off to exercise the portable paths.
var useNative = true

func nativeKernels() bool { return useNative && native.HasDotKernel() }

// Operator is a symmetric linear map on Rⁿ.
type Operator interface {
	Dim() int
	// Apply sets dst = A·x for an n×b block x (b ≥ 1). One call reads A
	// once. dst must not alias x.
	Apply(dst, x *mat.Dense)
}

// Matrixer is implemented by operators that hold an explicit float64
// matrix; the Dense solver uses it instead of building the matrix through
// Apply.
type Matrixer interface {
	SymMatrix() *mat.SymDense
}

// Dense is a symmetric float64 matrix as an Operator. Apply costs one pass
// over the n² entries. It is not safe for concurrent use.
type Dense struct {
	a  *mat.SymDense
	xt []float64 // b×n transpose of the block, reused
	sv symvBands
}

// NewDense wraps a. Apply uses both triangles of a's storage, so NewDense
// copies the upper triangle into the lower one in place (matrices from
// package linalg already hold both; nothing changes for them).
func NewDense(a *mat.SymDense) (*Dense, error) {
	if a == nil || a.IsEmpty() {
		return nil, fmt.Errorf("eig: NewDense: empty matrix: %w", ErrInvalid)
	}
	if err := linalg.CheckFinite("eig: NewDense", a); err != nil {
		return nil, err
	}
	linalg.Symmetrize(a)
	return &Dense{a: a}, nil
}

// Dim returns n.
func (d *Dense) Dim() int { return d.a.SymmetricDim() }

// SymMatrix returns the wrapped matrix.
func (d *Dense) SymMatrix() *mat.SymDense { return d.a }

// Apply sets dst = A·x. Where the processor has AVX-512 a single vector
// (b = 1) goes through native.SymvBand, which reads only the upper
// triangle (half the bytes of a dgemv), and a block through native.DotNT,
// one row band per core; both measured faster than the OpenBLAS build the
// project was developed on. Elsewhere OpenBLAS dgemv/dgemm run it.
func (d *Dense) Apply(dst, x *mat.Dense) {
	n := d.Dim()
	b := checkApply(n, dst, x)
	raw := d.a.RawSymmetric()
	if nativeKernels() && b == 1 {
		d.sv.apply(n, dst, x, func(xv []float64, lo, hi int, y []float64) {
			native.SymvBand(n, raw.Data, raw.Stride, xv, lo, hi, y)
		})
		return
	}
	if nativeKernels() {
		d.xt = transposeInto(d.xt, x)
		dr := dst.RawMatrix()
		rowBands(n, func(lo, hi int) {
			native.DotNT(hi-lo, b, n, raw.Data[lo*raw.Stride:], raw.Stride, d.xt, n, dr.Data[lo*dr.Stride:], dr.Stride)
		})
		return
	}
	a := blas64.General{Rows: n, Cols: n, Stride: raw.Stride, Data: raw.Data}
	if b == 1 {
		xr, dr := x.RawMatrix(), dst.RawMatrix()
		blas64.Gemv(blas.NoTrans, 1, a, blas64.Vector{N: n, Inc: xr.Stride, Data: xr.Data}, 0,
			blas64.Vector{N: n, Inc: dr.Stride, Data: dr.Data})
		return
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, x.RawMatrix(), 0, dst.RawMatrix())
}

// Float32 is a symmetric matrix stored in float32 (half the memory and
// bandwidth of Dense: n = 60 000 takes 14.4 GB) applied in float64
// arithmetic: only the storage is rounded. Not safe for concurrent use.
type Float32 struct {
	n  int
	a  []float32 // row-major n×n, both triangles
	xt []float64
	sv symvBands
}

// NewFloat32 rounds the symmetric matrix a (upper triangle read) to float32.
func NewFloat32(a *mat.SymDense) (*Float32, error) {
	if a == nil || a.IsEmpty() {
		return nil, fmt.Errorf("eig: NewFloat32: empty matrix: %w", ErrInvalid)
	}
	if err := linalg.CheckFinite("eig: NewFloat32", a); err != nil {
		return nil, err
	}
	n := a.SymmetricDim()
	raw := a.RawSymmetric()
	f := &Float32{n: n, a: make([]float32, n*n)}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := float32(raw.Data[i*raw.Stride+j])
			f.a[i*n+j], f.a[j*n+i] = v, v
		}
	}
	return f, nil
}

// NewFloat32From adopts data, a row-major n×n symmetric matrix with both
// triangles stored, without copying (for matrices built in float32 from
// the start, too large to exist in float64).
func NewFloat32From(n int, data []float32) (*Float32, error) {
	if n < 1 || len(data) != n*n {
		return nil, fmt.Errorf("eig: NewFloat32From: %d values for n = %d: %w", len(data), n, ErrInvalid)
	}
	return &Float32{n: n, a: data}, nil
}

// Dim returns n.
func (f *Float32) Dim() int { return f.n }

// Apply sets dst = A·x, reading the float32 entries once and computing in
// float64 (native.SymvBand32 for one vector, reading the upper triangle
// only, and native.DotNT32 for blocks where the processor has AVX-512; a
// Go loop otherwise).
func (f *Float32) Apply(dst, x *mat.Dense) {
	n := f.n
	b := checkApply(n, dst, x)
	if nativeKernels() && b == 1 {
		f.sv.apply(n, dst, x, func(xv []float64, lo, hi int, y []float64) {
			native.SymvBand32(n, f.a, n, xv, lo, hi, y)
		})
		return
	}
	f.xt = transposeInto(f.xt, x)
	dr := dst.RawMatrix()
	xt := f.xt
	if nativeKernels() {
		rowBands(n, func(lo, hi int) {
			native.DotNT32(hi-lo, b, n, f.a[lo*n:], n, xt, n, dr.Data[lo*dr.Stride:], dr.Stride)
		})
		return
	}
	rowBands(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := f.a[i*n : (i+1)*n]
			for c := 0; c < b; c++ {
				col := xt[c*n : (c+1)*n]
				s := 0.0
				for j, v := range row {
					s += float64(v) * col[j]
				}
				dr.Data[i*dr.Stride+c] = s
			}
		}
	})
}

// Counting wraps an operator and counts its use: Passes is the number of
// Apply calls, MatVecs the number of columns they processed.
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
func (c *Counting) Apply(dst, x *mat.Dense) {
	_, b := x.Dims()
	c.Passes++
	c.MatVecs += b
	c.Op.Apply(dst, x)
}

func checkApply(n int, dst, x *mat.Dense) int {
	r, b := x.Dims()
	dr, db := dst.Dims()
	if r != n || dr != n || db != b || b < 1 {
		panic(fmt.Sprintf("eig: Apply: x is %d×%d and dst %d×%d, operator is %d×%d", r, b, dr, db, n, n))
	}
	return b
}

// transposeInto returns buf (grown as needed) holding xᵀ row-major (b×n).
func transposeInto(buf []float64, x *mat.Dense) []float64 {
	n, b := x.Dims()
	if cap(buf) < n*b {
		buf = make([]float64, n*b)
	}
	buf = buf[:n*b]
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+b]
		for c, v := range row {
			buf[c*n+i] = v
		}
	}
	return buf
}

// rowBands runs body on GOMAXPROCS contiguous row bands in parallel. body
// must not call OpenBLAS.
func rowBands(n int, body func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/64))
	if w <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < w; t++ {
		lo, hi := t*n/w, (t+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}

// symvBands runs a symmetric matrix-vector product as bands of rows of the
// upper triangle in parallel, each with a private accumulator, summed at
// the end. Bands are balanced by the triangle's work Σ(n − i).
type symvBands struct {
	x   []float64
	acc [][]float64
}

func (s *symvBands) apply(n int, dst, x *mat.Dense, band func(x []float64, lo, hi int, y []float64)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/256))
	if len(s.acc) != w || len(s.x) != n {
		s.x = make([]float64, n)
		s.acc = make([][]float64, w)
		for t := range s.acc {
			s.acc[t] = make([]float64, n)
		}
	}
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		s.x[i] = xr.Data[i*xr.Stride]
	}
	bounds := make([]int, w+1)
	total := float64(n) * float64(n+1) / 2
	t, acc := 1, 0.0
	for i := 0; i < n && t < w; i++ {
		acc += float64(n - i)
		if acc >= total*float64(t)/float64(w) {
			bounds[t] = i + 1
			t++
		}
	}
	bounds[w] = n
	var wg sync.WaitGroup
	for t := 0; t < w; t++ {
		clear(s.acc[t])
		wg.Add(1)
		go func() {
			defer wg.Done()
			band(s.x, bounds[t], bounds[t+1], s.acc[t])
		}()
	}
	wg.Wait()
	dr := dst.RawMatrix()
	for i := 0; i < n; i++ {
		v := 0.0
		for t := range s.acc {
			v += s.acc[t][i]
		}
		dr.Data[i*dr.Stride] = v
	}
}
