package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/native"
)

// addPanel adds the panel's outer product — the k rows of w values at
// stride ld in data — to raw's upper triangle: the upper triangle of F·Fᵀ
// in float32 into acc (k² float32, overwritten) by Syrk32 (pack its
// scratch), then each entry added in float64.
func addPanel(raw blas64.Symmetric, data []float32, k, w, ld int, acc, pack []float32, packed bool) {
	Syrk32(packed, acc, k, w, data, ld, pack)
	addUpper(raw, acc, k)
}

// syrkDepth is the points per packed block of the native Syrk32: the
// block's 48 columns (three panels, 96 KB) stay in L2 while every row
// tile passes over them, and the whole packed block (2 MB at k = 1000)
// mostly in L2 and L3; 512 and 1024 were the fastest of 256 … 2048 at
// k = 1000 and 2000 (docs/measurements.md, "The packed C·Cᵀ kernel").
const syrkDepth = 512

// syrkRows is the rows per task of the native Syrk32: their panels stay
// in L2 while the column blocks pass.
const syrkRows = 128

// PackScratch32 is the length of the scratch with which the packed
// kernel of Syrk32 (AddOuterRows32, AddShiftedOuterRows32) takes no
// buffer of its own for k rows of w points: one packed block.
func PackScratch32(k, w int) int {
	return native.Syrk32PackLen(k, min(syrkDepth, w, outerPanel))
}

// Syrk32 sets the upper triangle of acc (k×k, row-major, stride k) to
// F·Fᵀ in float32 for F the k rows of w values at stride ld in data: by
// OpenBLAS ssyrk, or where packed is true by native.Syrk32Run (its
// AVX-512 forms where the processor has them) on blocks of syrkDepth
// points packed into pack (PackScratch32 long; shorter: one is lent by
// package scratch), tasks of syrkRows rows shared among GOMAXPROCS
// threads of its own (par.Workers), each block's sums added in block
// order — the same bits whatever the threads. Entries below the diagonal
// are scratch. Each entry is a float32 sum of w products, within about
// w·u of the sum of their absolute values (u = 2⁻²⁴), either way. Which is faster is a rule of
// package paths (SyrkNative), which callers read through package gram
// (gram.PackedSyrk).
func Syrk32(packed bool, acc []float32, k, w int, data []float32, ld int, pack []float32) {
	if !packed {
		B32.Syrk(blas.NoTrans, 1, blas32.General{Rows: k, Cols: w, Stride: ld, Data: data}, 0,
			blas32.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: acc[:k*k]})
		return
	}
	if w == 0 {
		clear(acc[:k*k]) // ssyrk's result on no points
		return
	}
	syrkNative(native.HasWide(), acc, k, w, data, ld, nil, nil, pack)
}

// syrkNative is Syrk32's packed product, its AVX-512 form when wide, of
// the values shifted as Syrk32Pack says when shift is not nil (sums, k
// of them, then set to their row sums).
func syrkNative(wide bool, acc []float32, k, w int, data []float32, ld int, shift, sums []float64, pack []float32) {
	depth := min(syrkDepth, w)
	size := native.Syrk32PackLen(k, depth)
	if len(pack) < size {
		pb := scratch.Float64s((size + 1) / 2)
		defer scratch.Put(pb)
		pack = scratch.AsFloat32s(pb, size)
	}
	if shift != nil {
		clear(sums[:k])
	}
	native.Syrk32Run(wide, min(par.Workers(0), (k+syrkRows-1)/syrkRows), k, depth, w, data, ld, shift, sums, pack, acc, k, syrkRows)
}

// AddOuterRows32 adds F·Fᵀ to dst (k×k, upper triangle) for F the k rows
// (k = dst's size) of w values at stride ld ≥ w in data — columns of a
// wider matrix, read in place: Syrk32 (its packed kernel when packed) on
// panels of outerPanel points into acc (k² float32s of scratch; nil
// allocates them; pack the packed kernel's, PackScratch32 long or lent),
// each panel's sum added in float64 in panel order — for a whole Dense32
// (w = ld = its columns) the values OuterT32 without centring adds for
// the same panels.
func AddOuterRows32(dst *mat.SymDense, data []float32, w, ld int, packed bool, acc, pack []float32) error {
	k := dst.SymmetricDim()
	if w < 1 || ld < w || len(data) < (k-1)*ld+w {
		return invalidf("AddOuterRows32: %d rows of %d at stride %d in %d values", k, w, ld, len(data))
	}
	if len(acc) < k*k {
		acc = make([]float32, k*k)
	}
	raw := dst.RawSymmetric()
	for j0 := 0; j0 < w; j0 += outerPanel {
		addPanel(raw, data[j0:], k, min(outerPanel, w-j0), ld, acc, pack, packed)
	}
	return nil
}

// AddShiftedOuterRows32 adds Y·Yᵀ to dst (k×k, upper triangle) for Y the
// k rows of F (w ≤ 8192 values at stride ld in data) shifted by shift,
// y_aj = float32(float64(f_aj) − shift[a]) rounded once, and sets sums[a]
// to Σ_j y_aj in float64 over j ascending (ShiftRows32's values): Y·Yᵀ
// and the sums are those of ShiftRows32 then AddOuterRows32 with the same
// packed, to the bit. data may be overwritten (the ssyrk path shifts it in
// place; the packed kernel shifts the values as it packs them and leaves
// data as it was). acc and pack as AddOuterRows32's.
func AddShiftedOuterRows32(dst *mat.SymDense, data []float32, w, ld int, shift, sums []float64, packed bool, acc, pack []float32) error {
	k := dst.SymmetricDim()
	if w < 1 || w > outerPanel || ld < w || len(data) < (k-1)*ld+w || len(shift) != k || len(sums) != k {
		return invalidf("AddShiftedOuterRows32: %d rows of %d at stride %d in %d values, %d shifts, %d sums", k, w, ld, len(data), len(shift), len(sums))
	}
	if !packed {
		ShiftRows32(data, ld, w, shift, sums)
		return AddOuterRows32(dst, data, w, ld, false, acc, pack)
	}
	if len(acc) < k*k {
		acc = make([]float32, k*k)
	}
	syrkNative(native.HasWide(), acc, k, w, data, ld, shift, sums, pack)
	addUpper(dst.RawSymmetric(), acc, k)
	return nil
}

// ShiftRows32 shifts each of the len(shift) rows of y (row a the cw values
// at y[a·ld:]) by shift[a], each value rounded once, y_aj ←
// float32(y_aj − shift[a]), and sets sums[a] to the row's sum of the
// shifted values in float64 over j ascending — the bits of the plain
// loop —, blocks of rows on GOMAXPROCS goroutines, four rows at a time in
// each: four independent sums in flight instead of one chain of dependent
// additions.
func ShiftRows32(y []float32, ld, cw int, shift, sums []float64) {
	par.Blocks(0, len(shift), func(lo, hi int) {
		shiftRows(y[lo*ld:], ld, cw, shift[lo:hi], sums[lo:hi])
	})
}

func shiftRows(y []float32, ld, cw int, shift, sums []float64) {
	a := 0
	for ; a+4 <= len(shift); a += 4 {
		r0 := y[a*ld : a*ld+cw]
		r1 := y[(a+1)*ld : (a+1)*ld+cw][:len(r0)]
		r2 := y[(a+2)*ld : (a+2)*ld+cw][:len(r0)]
		r3 := y[(a+3)*ld : (a+3)*ld+cw][:len(r0)]
		s0, s1, s2, s3 := shift[a], shift[a+1], shift[a+2], shift[a+3]
		var t0, t1, t2, t3 float64
		for j := range r0 {
			v0 := float32(float64(r0[j]) - s0)
			v1 := float32(float64(r1[j]) - s1)
			v2 := float32(float64(r2[j]) - s2)
			v3 := float32(float64(r3[j]) - s3)
			r0[j], r1[j], r2[j], r3[j] = v0, v1, v2, v3
			t0 += float64(v0)
			t1 += float64(v1)
			t2 += float64(v2)
			t3 += float64(v3)
		}
		sums[a], sums[a+1], sums[a+2], sums[a+3] = t0, t1, t2, t3
	}
	for ; a < len(shift); a++ {
		r, sa, t := y[a*ld:a*ld+cw], shift[a], 0.0
		for j, v := range r {
			r[j] = float32(float64(v) - sa)
			t += float64(r[j])
		}
		sums[a] = t
	}
}
