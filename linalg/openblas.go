package linalg

import (
	"math"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/netlib/blas/netlib"

	"github.com/kdual/kdual/lapack"
)

// kdual reaches OpenBLAS explicitly: B64 and B32 are gonum's blas64 and
// blas32 package functions (same arguments, same structs) on OpenBLAS's
// CBLAS, and Mul, MulVec, SymOuterK and the others below are the gonum
// mat products kdual uses, computed there. None of them goes through
// gonum's global BLAS (blas64.Use), so a program that imports kdual keeps
// whatever BLAS it installed, and kdual runs on OpenBLAS whatever that is.
var ob netlib.Implementation

// BLAS64 is blas64's API on OpenBLAS; use the value B64.
type BLAS64 struct{}

// B64 is blas64's API on OpenBLAS.
var B64 BLAS64

// Gemm is blas64.Gemm: c = alpha·op(a)·op(b) + beta·c.
func (BLAS64) Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	m, n, k := gemmDims(tA, tB, a.Rows, a.Cols, b.Rows, b.Cols)
	ob.Dgemm(tA, tB, m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// gemmDims are the m, n, k of op(a)·op(b) for a ar×ac and b br×bc.
func gemmDims(tA, tB blas.Transpose, ar, ac, br, bc int) (m, n, k int) {
	m, k = ar, ac
	if tA != blas.NoTrans {
		m, k = ac, ar
	}
	n = bc
	if tB != blas.NoTrans {
		n = br
	}
	return m, n, k
}

// Gemv is blas64.Gemv: y = alpha·op(a)·x + beta·y.
func (BLAS64) Gemv(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector) {
	ob.Dgemv(t, a.Rows, a.Cols, alpha, a.Data, a.Stride, x.Data, x.Inc, beta, y.Data, y.Inc)
}

// Syrk is blas64.Syrk: c = alpha·op(a)·op(a)ᵀ + beta·c (c's triangle).
func (BLAS64) Syrk(t blas.Transpose, alpha float64, a blas64.General, beta float64, c blas64.Symmetric) {
	n, k := a.Rows, a.Cols
	if t != blas.NoTrans {
		n, k = a.Cols, a.Rows
	}
	ob.Dsyrk(c.Uplo, t, n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
}

// Symm is blas64.Symm: c = alpha·a·b + beta·c (side Left) or b·a.
func (BLAS64) Symm(s blas.Side, alpha float64, a blas64.Symmetric, b blas64.General, beta float64, c blas64.General) {
	m, n := a.N, b.Cols
	if s != blas.Left {
		m, n = b.Rows, a.N
	}
	ob.Dsymm(s, a.Uplo, m, n, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Symv is blas64.Symv: y = alpha·a·x + beta·y.
func (BLAS64) Symv(alpha float64, a blas64.Symmetric, x blas64.Vector, beta float64, y blas64.Vector) {
	ob.Dsymv(a.Uplo, a.N, alpha, a.Data, a.Stride, x.Data, x.Inc, beta, y.Data, y.Inc)
}

// Trsm is blas64.Trsm: b = alpha·op(a)⁻¹·b (side Left) or b·op(a)⁻¹.
func (BLAS64) Trsm(s blas.Side, tA blas.Transpose, alpha float64, a blas64.Triangular, b blas64.General) {
	ob.Dtrsm(s, a.Uplo, tA, a.Diag, b.Rows, b.Cols, alpha, a.Data, a.Stride, b.Data, b.Stride)
}

// Trmm is blas64.Trmm: b = alpha·op(a)·b (side Left) or b·op(a), in place.
func (BLAS64) Trmm(s blas.Side, tA blas.Transpose, alpha float64, a blas64.Triangular, b blas64.General) {
	ob.Dtrmm(s, a.Uplo, tA, a.Diag, b.Rows, b.Cols, alpha, a.Data, a.Stride, b.Data, b.Stride)
}

// Scal is blas64.Scal: x = alpha·x.
func (BLAS64) Scal(alpha float64, x blas64.Vector) { ob.Dscal(x.N, alpha, x.Data, x.Inc) }

// Dot is blas64.Dot.
func (BLAS64) Dot(x, y blas64.Vector) float64 {
	if x.N != y.N {
		panic("linalg: Dot: vectors of different lengths")
	}
	return ob.Ddot(x.N, x.Data, x.Inc, y.Data, y.Inc)
}

// Axpy is blas64.Axpy: y = alpha·x + y.
func (BLAS64) Axpy(alpha float64, x, y blas64.Vector) {
	if x.N != y.N {
		panic("linalg: Axpy: vectors of different lengths")
	}
	ob.Daxpy(x.N, alpha, x.Data, x.Inc, y.Data, y.Inc)
}

// BLAS32 is blas32's API on OpenBLAS; use the value B32.
type BLAS32 struct{}

// B32 is blas32's API on OpenBLAS.
var B32 BLAS32

// Gemm is blas32.Gemm.
func (BLAS32) Gemm(tA, tB blas.Transpose, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	m, n, k := gemmDims(tA, tB, a.Rows, a.Cols, b.Rows, b.Cols)
	ob.Sgemm(tA, tB, m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Syrk is blas32.Syrk.
func (BLAS32) Syrk(t blas.Transpose, alpha float32, a blas32.General, beta float32, c blas32.Symmetric) {
	n, k := a.Rows, a.Cols
	if t != blas.NoTrans {
		n, k = a.Cols, a.Rows
	}
	ob.Ssyrk(c.Uplo, t, n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
}

// Trsm is blas32.Trsm.
func (BLAS32) Trsm(s blas.Side, tA blas.Transpose, alpha float32, a blas32.Triangular, b blas32.General) {
	ob.Strsm(s, a.Uplo, tA, a.Diag, b.Rows, b.Cols, alpha, a.Data, a.Stride, b.Data, b.Stride)
}

// Trmm is blas32.Trmm: b = alpha·op(a)·b (side Left) or b·op(a), in place.
func (BLAS32) Trmm(s blas.Side, tA blas.Transpose, alpha float32, a blas32.Triangular, b blas32.General) {
	ob.Strmm(s, a.Uplo, tA, a.Diag, b.Rows, b.Cols, alpha, a.Data, a.Stride, b.Data, b.Stride)
}

// TriInverse returns the inverse of the n×n triangular matrix a (upper or
// lower as a.Uplo says, nonzero diagonal; the other triangle is not read)
// as an n×n Dense, triangular the same way and zero in the other
// triangle: OpenBLAS dtrsm on the identity. For the small factors of
// Cholesky QR and of the Nyström rounds, whose tall blocks are then
// multiplied by the inverse (a product runs faster than a triangular
// solve on them).
func TriInverse(a blas64.Triangular) *mat.Dense {
	inv := mat.NewDense(a.N, a.N, nil)
	for i := 0; i < a.N; i++ {
		inv.Set(i, i, 1)
	}
	B64.Trsm(blas.Left, blas.NoTrans, 1, a, inv.RawMatrix())
	return inv
}

// general returns a as a raw row-major matrix and whether it is
// transposed, for the matrices kdual passes to products: *mat.Dense,
// *mat.VecDense (a column), their transposes, and any mat.RawMatrixer;
// ok is false for others (a copy is made then).
func general(a mat.Matrix) (g blas64.General, t blas.Transpose) {
	t = blas.NoTrans
	if tr, ok := a.(mat.Transpose); ok {
		a, t = tr.Matrix, blas.Trans
	}
	switch m := a.(type) {
	case mat.RawMatrixer:
		return m.RawMatrix(), t
	case *mat.VecDense:
		v := m.RawVector()
		return blas64.General{Rows: v.N, Cols: 1, Stride: v.Inc, Data: v.Data}, t
	}
	return CopyOf(a).RawMatrix(), t
}

// overlaps reports whether dst's storage and a's share memory.
func overlaps(dst *mat.Dense, a mat.Matrix) bool {
	if tr, ok := a.(mat.Transpose); ok {
		a = tr.Matrix
	}
	var data []float64
	switch m := a.(type) {
	case mat.RawMatrixer:
		data = m.RawMatrix().Data
	case *mat.VecDense:
		data = m.RawVector().Data
	case mat.RawSymmetricer:
		data = m.RawSymmetric().Data
	}
	d := dst.RawMatrix().Data
	if len(data) == 0 || len(d) == 0 {
		return false
	}
	// Go slices overlap iff their address ranges do.
	d0, d1 := uintptrOf(d), uintptrOf(d)+uintptr(len(d))*8
	a0, a1 := uintptrOf(data), uintptrOf(data)+uintptr(len(data))*8
	return d0 < a1 && a0 < d1
}

func uintptrOf(s []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// reuse makes dst an r×c matrix: dst itself when it is already r×c, a
// fresh one when it is empty; otherwise it panics like gonum's Mul.
func reuse(dst *mat.Dense, r, c int) blas64.General {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
	}
	if dr, dc := dst.Dims(); dr != r || dc != c {
		panic(mat.ErrShape)
	}
	return dst.RawMatrix()
}

// Mul sets dst = a·b on OpenBLAS (dgemm), like dst.Mul(a, b): dst must be
// empty or of the product's shape; when it shares storage with a or b the
// product is formed in a temporary first, as gonum does. a and b may be
// *mat.Dense, *mat.VecDense, their transposes (mat's .T()) or any matrix
// (copied first).
func Mul(dst *mat.Dense, a, b mat.Matrix) {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ac != br {
		panic(mat.ErrShape)
	}
	if !dst.IsEmpty() && (overlaps(dst, a) || overlaps(dst, b)) {
		var tmp mat.Dense
		Mul(&tmp, a, b)
		dst.Copy(&tmp)
		return
	}
	c := reuse(dst, ar, bc)
	if ar == 0 || bc == 0 {
		return
	}
	if ac == 0 {
		for i := 0; i < ar; i++ {
			clear(c.Data[i*c.Stride : i*c.Stride+bc])
		}
		return
	}
	ga, ta := general(a)
	gb, tb := general(b)
	B64.Gemm(ta, tb, 1, ga, gb, 0, c)
}

// MulVec sets dst = a·x on OpenBLAS (dgemv), like dst.MulVec(a, x); dst
// must be empty or of length rows(a) and not share storage with x.
func MulVec(dst *mat.VecDense, a mat.Matrix, x mat.Vector) {
	r, c := a.Dims()
	if x.Len() != c {
		panic(mat.ErrShape)
	}
	if dst.IsEmpty() {
		dst.ReuseAsVec(r)
	}
	if dst.Len() != r {
		panic(mat.ErrShape)
	}
	y := dst.RawVector()
	if r == 0 {
		return
	}
	xv, ok := x.(*mat.VecDense)
	if !ok {
		xv = mat.NewVecDense(x.Len(), nil)
		for i := 0; i < x.Len(); i++ {
			xv.SetVec(i, x.AtVec(i))
		}
	}
	ga, t := general(a)
	xr := xv.RawVector()
	B64.Gemv(t, 1, ga, xr, 0, y)
}

// MulTo sets dst = a·b on OpenBLAS and returns dst (a fresh matrix when
// dst is nil).
func MulTo(dst *mat.Dense, a, b mat.Matrix) *mat.Dense {
	if dst == nil {
		dst = &mat.Dense{}
	}
	Mul(dst, a, b)
	return dst
}

// SymOuterK sets dst = alpha·x·xᵀ on OpenBLAS (dsyrk), like
// dst.SymOuterK(alpha, x): dst must be empty or rows(x)×rows(x).
func SymOuterK(dst *mat.SymDense, alpha float64, x mat.Matrix) {
	n, _ := x.Dims()
	if dst.IsEmpty() {
		dst.ReuseAsSym(n)
	}
	if dst.SymmetricDim() != n {
		panic(mat.ErrShape)
	}
	c := dst.RawSymmetric()
	g, t := general(x)
	B64.Syrk(t, alpha, g, 0, c)
}

// SymRankK sets dst = a + alpha·x·xᵀ on OpenBLAS (dsyrk), like
// dst.SymRankK(a, alpha, x); a may be dst itself.
func SymRankK(dst *mat.SymDense, a mat.Symmetric, alpha float64, x mat.Matrix) {
	n := a.SymmetricDim()
	if dst != a {
		if dst.IsEmpty() {
			dst.ReuseAsSym(n)
		}
		dst.CopySym(a)
	}
	g, t := general(x)
	B64.Syrk(t, alpha, g, 1, dst.RawSymmetric())
}

// SymRankOne sets dst = a + alpha·x·xᵀ, like dst.SymRankOne(a, alpha, x);
// a may be dst itself. Plain Go (O(n²), as dsyr).
func SymRankOne(dst *mat.SymDense, a mat.Symmetric, alpha float64, x mat.Vector) {
	n := a.SymmetricDim()
	if dst != a {
		if dst.IsEmpty() {
			dst.ReuseAsSym(n)
		}
		dst.CopySym(a)
	}
	raw := dst.RawSymmetric()
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = x.AtVec(i)
	}
	for i := 0; i < n; i++ {
		ax := alpha * xs[i]
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := i; j < n; j++ {
			row[j] += ax * xs[j]
		}
	}
}

// Dot returns aᵀb, like mat.Dot: OpenBLAS ddot for *mat.VecDense
// operands, plain Go otherwise.
func Dot(a, b mat.Vector) float64 {
	n := a.Len()
	if b.Len() != n {
		panic(mat.ErrShape)
	}
	if av, ok := a.(*mat.VecDense); ok {
		if bv, ok := b.(*mat.VecDense); ok {
			if n == 0 {
				return 0
			}
			return B64.Dot(av.RawVector(), bv.RawVector())
		}
	}
	s := 0.0
	for i := 0; i < n; i++ {
		s += a.AtVec(i) * b.AtVec(i)
	}
	return s
}

// Norm2 returns the Frobenius norm of a matrix or the Euclidean norm of a
// vector, like mat.Norm(a, 2): OpenBLAS dnrm2 for a *mat.VecDense, LAPACK
// dlange for a *mat.Dense (the computations gonum's mat makes on
// OpenBLAS), plain Go with scaling against overflow otherwise.
func Norm2(a mat.Matrix) float64 {
	r, c := a.Dims()
	switch m := a.(type) {
	case *mat.VecDense:
		v := m.RawVector()
		if v.N == 0 {
			return 0
		}
		return ob.Dnrm2(v.N, v.Data, v.Inc)
	case *mat.Dense:
		if r == 0 || c == 0 {
			return 0
		}
		raw := m.RawMatrix()
		// Row-major r×c is column-major c×r: the same Frobenius norm.
		return lapack.Dlange('F', c, r, raw.Data, raw.Stride)
	}
	scale, ssq := 0.0, 1.0
	add := func(v float64) {
		if v == 0 {
			return
		}
		if math.IsNaN(v) {
			scale = math.NaN()
			return
		}
		av := math.Abs(v)
		if scale < av {
			ssq = 1 + ssq*(scale/av)*(scale/av)
			scale = av
		} else {
			ssq += (av / scale) * (av / scale)
		}
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			add(a.At(i, j))
		}
	}
	if math.IsNaN(scale) {
		return scale
	}
	return scale * math.Sqrt(ssq)
}

// Copy copies the top-left min(rows) × min(cols) of a into dst and returns
// that size, like dst.Copy(a), in plain Go (gonum's own copies a transpose
// or a vector through the global BLAS).
func Copy(dst *mat.Dense, a mat.Matrix) (r, c int) {
	if dst.IsEmpty() {
		return 0, 0
	}
	ar, ac := a.Dims()
	dr, dc := dst.Dims()
	r, c = min(ar, dr), min(ac, dc)
	if a == mat.Matrix(dst) || r == 0 || c == 0 {
		return r, c
	}
	d := dst.RawMatrix()
	if overlaps(dst, a) {
		a = CopyOf(a)
	}
	copyInto(d, a, r, c)
	return r, c
}

// CopyOf returns a copy of a as a new *mat.Dense, like mat.DenseCopyOf, in
// plain Go.
func CopyOf(a mat.Matrix) *mat.Dense {
	r, c := a.Dims()
	if r == 0 || c == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(r, c, nil)
	copyInto(out.RawMatrix(), a, r, c)
	return out
}

func copyInto(d blas64.General, a mat.Matrix, r, c int) {
	t := false
	src := a
	if tr, ok := a.(mat.Transpose); ok {
		src, t = tr.Matrix, true
	}
	switch m := src.(type) {
	case mat.RawMatrixer:
		s := m.RawMatrix()
		for i := 0; i < r; i++ {
			row := d.Data[i*d.Stride : i*d.Stride+c]
			if !t {
				copy(row, s.Data[i*s.Stride:i*s.Stride+c])
				continue
			}
			for j := range row {
				row[j] = s.Data[j*s.Stride+i]
			}
		}
		return
	case *mat.VecDense:
		v := m.RawVector()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				k := i // a column: element (i, 0)
				if t {
					k = j // a row: element (0, j)
				}
				d.Data[i*d.Stride+j] = v.Data[k*v.Inc]
			}
		}
		return
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d.Data[i*d.Stride+j] = a.At(i, j)
		}
	}
}
