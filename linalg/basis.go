package linalg

import (
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
)

// basisRows is the rows of the basis each native call reads (c columns of
// them, 8·c·basisRows bytes, stay in L2 while every group of columns
// passes over them); basisBlocks bounds the partial sums of BasisTMul.
const basisRows, basisBlocks = 256, 64

// BasisTMul sets h (c×b) = vᵀ·w for a tall basis v (n×c) and a block w
// (n×b) by native.BasisTMul (AVX2 where the processor has it), reading v
// once: the rows are cut into at most basisBlocks blocks of a size fixed
// by n alone, each block's sum is taken in order of its rows, and the
// blocks' sums are added in order — the same bits whatever the
// goroutines. The shapes are the caller's to check.
func BasisTMul(h, v, w *mat.Dense) {
	n, c := v.Dims()
	_, b := w.Dims()
	vr, wr, hr := v.RawMatrix(), w.RawMatrix(), h.RawMatrix()
	for k := 0; k < c; k++ {
		clear(hr.Data[k*hr.Stride : k*hr.Stride+b])
	}
	if n == 0 {
		return
	}
	size := max(8*basisRows, (n+basisBlocks-1)/basisBlocks)
	blocks := (n + size - 1) / size
	nb := native.AVX2()
	sums := make([][]float64, blocks)
	par.Each(0, blocks, 0, func(q int, _ []float64) {
		part := make([]float64, c*b)
		for r0 := q * size; r0 < min((q+1)*size, n); r0 += basisRows {
			rows := min(basisRows, (q+1)*size-r0, n-r0)
			nb.BasisTMul(rows, c, b, vr.Data[r0*vr.Stride:], vr.Stride, wr.Data[r0*wr.Stride:], wr.Stride, part, b)
		}
		sums[q] = part
	})
	for _, part := range sums {
		for k := 0; k < c; k++ {
			row := hr.Data[k*hr.Stride : k*hr.Stride+b]
			for j, x := range part[k*b : (k+1)*b] {
				row[j] += x
			}
		}
	}
}

// BasisSubMul sets w −= v·h for v n×c, h c×b and w n×b by
// native.BasisSubMul, in parallel over the rows (each row's sum the same
// whatever the goroutines). The shapes are the caller's to check.
func BasisSubMul(w, v, h *mat.Dense) {
	n, c := v.Dims()
	_, b := w.Dims()
	vr, wr, hr := v.RawMatrix(), w.RawMatrix(), h.RawMatrix()
	nb := native.AVX2()
	par.For(0, n, nil, func(lo, hi int) {
		for r0 := lo; r0 < hi; r0 += basisRows {
			rows := min(basisRows, hi-r0)
			nb.BasisSubMul(rows, c, b, vr.Data[r0*vr.Stride:], vr.Stride, hr.Data, hr.Stride, wr.Data[r0*wr.Stride:], wr.Stride)
		}
	})
}
