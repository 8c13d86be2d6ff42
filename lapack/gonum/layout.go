package gonum

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	"github.com/kdual/kdual/internal/par"
)

// gonum's LAPACK is row-major, Fortran's column-major. A row-major r×c
// matrix with stride ld is, in the same memory, the column-major c×r matrix
// Aᵀ with leading dimension ld. Every method below either works on that
// transposed view with the algebraically equivalent Fortran routine, or
// copies into a column-major buffer and back (see the package comment).

// tile is the block edge of the transposes: 64×64 float64 blocks, the
// fastest of 16, 32 and 64 (docs/measurements.md).
const tile = 64

// parallelFrom is the element count from which the transposes split their
// block rows over goroutines (internal/par, GOMAXPROCS of them).
const parallelFrom = 1 << 16

// blockRows runs f(b) for the block rows b = 0, …, nb−1, in parallel for
// large matrices.
func blockRows(nb, elems int, f func(b int)) {
	workers := 0
	if elems < parallelFrom {
		workers = 1
	}
	par.Each(workers, nb, 0, func(b int, _ []float64) { f(b) })
}

// transpose writes the transpose of the r×c row-major src (stride lds) into
// dst, a c×r row-major matrix with stride ldd: dst[j*ldd+i] = src[i*lds+j].
func transpose(r, c int, src []float64, lds int, dst []float64, ldd int) {
	blockRows((r+tile-1)/tile, r*c, func(b int) {
		i0 := b * tile
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				row := src[i*lds+j0 : i*lds+j1]
				col := dst[j0*ldd+i:]
				for k, v := range row {
					col[k*ldd] = v
				}
			}
		}
	})
}

// transposeSquare transposes the leading n×n block of a (stride lda) in place.
func transposeSquare(n int, a []float64, lda int) {
	blockRows((n+tile-1)/tile, n*n, func(b int) {
		i0 := b * tile
		i1 := min(i0+tile, n)
		for i := i0; i < i1; i++ {
			row := a[i*lda : i*lda+i1]
			for j := i + 1; j < i1; j++ {
				row[j], a[j*lda+i] = a[j*lda+i], row[j]
			}
		}
		for j0 := i1; j0 < n; j0 += tile {
			j1 := min(j0+tile, n)
			for i := i0; i < i1; i++ {
				row := a[i*lda+j0 : i*lda+j1]
				col := a[j0*lda+i:]
				for k := range row {
					row[k], col[k*lda] = col[k*lda], row[k]
				}
			}
		}
	})
}

// colMajor returns a column-major copy of the r×c row-major a (stride lda)
// with leading dimension max(1, r).
func colMajor(r, c int, a []float64, lda int) []float64 {
	ld := max(1, r)
	buf := make([]float64, ld*max(1, c))
	if r > 0 && c > 0 {
		transpose(r, c, a, lda, buf, ld)
	}
	return buf
}

// fromColMajor copies the column-major r×c buf (leading dimension max(1, r))
// back into the row-major a (stride lda).
func fromColMajor(r, c int, buf []float64, a []float64, lda int) {
	if r > 0 && c > 0 {
		transpose(c, r, buf, max(1, r), a, lda)
	}
}

func uploFlip(ul blas.Uplo) byte {
	if ul == blas.Upper {
		return 'L'
	}
	return 'U'
}

func uploByte(ul blas.Uplo) byte {
	if ul == blas.Upper {
		return 'U'
	}
	return 'L'
}

// transFlip is op for the transposed view: solving op(A) with A row-major is
// solving op'(Aᵀ) on the column-major view.
func transFlip(t blas.Transpose) byte {
	if t == blas.NoTrans {
		return 'T'
	}
	return 'N'
}

func transByte(t blas.Transpose) byte {
	if t == blas.NoTrans {
		return 'N'
	}
	return 'T'
}

func diagByte(d blas.Diag) byte {
	if d == blas.Unit {
		return 'U'
	}
	return 'N'
}

func sideFlip(s blas.Side) byte {
	if s == blas.Left {
		return 'R'
	}
	return 'L'
}

// normFlip is the norm of the transposed view: the 1-norm of A is the ∞-norm
// of Aᵀ; the max-abs and Frobenius norms are unchanged.
func normFlip(n lapack.MatrixNorm) byte {
	switch n {
	case lapack.MaxColumnSum:
		return 'I'
	case lapack.MaxRowSum:
		return 'O'
	}
	return byte(n)
}
