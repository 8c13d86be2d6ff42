package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
)

// GramFloat32 returns the n×n kernel matrix of the rows of x rounded to
// float32, row-major with both triangles stored: half the memory of Gram
// (n = 60 000 takes 14.4 GB), for matrices too large for float64. Each
// 64×64 tile is computed in float64 (inner products, map) and rounded
// once, so entries are within half an ulp of float32 of the float64 ones.
// Cost as Gram; no n×n float64 matrix is ever formed.
func GramFloat32(x *mat.Dense, k Kernel) ([]float32, error) {
	if err := checkData("GramFloat32: x", x); err != nil {
		return nil, err
	}
	if err := k.check(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	out := make([]float32, n*n)
	norms := rowSqNorms(x)
	f := k.elementMap(d)
	distance := k.Kind == Gaussian || k.Kind == Laplace
	c, laplace := k.rbfScale()
	kernel := useDotKernel && native.HasDotKernel()
	xr := x.RawMatrix()
	tiles := tilesOf(n, n, true)
	finish := func(t tile, buf []float64) {
		tm, tn := t.i1-t.i0, t.j1-t.j0
		if distance && kernel {
			native.RBFTile(tm, tn, buf, dotTile, norms[t.i0:t.i1], norms[t.j0:t.j1], c, laplace)
		}
		for i := 0; i < tm; i++ {
			gi := t.i0 + i
			for j := 0; j < tn; j++ {
				gj := t.j0 + j
				if gj < gi {
					continue
				}
				v := buf[i*dotTile+j]
				if f != nil && !(distance && kernel) {
					v = f(v, norms[gi], norms[gj])
				}
				if distance && gi == gj {
					v = 1
				}
				out[gi*n+gj] = float32(v)
				out[gj*n+gi] = float32(v)
			}
		}
	}
	if !kernel {
		// One OpenBLAS dgemm per tile, serially (OpenBLAS threads inside).
		buf := make([]float64, dotTile*dotTile)
		for _, t := range tiles {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: t.i1 - t.i0, Cols: d, Stride: xr.Stride, Data: xr.Data[t.i0*xr.Stride:]},
				blas64.General{Rows: t.j1 - t.j0, Cols: d, Stride: xr.Stride, Data: xr.Data[t.j0*xr.Stride:]}, 0,
				blas64.General{Rows: t.i1 - t.i0, Cols: t.j1 - t.j0, Stride: dotTile, Data: buf})
			finish(t, buf)
		}
		return out, nil
	}
	runTiles(tiles, dotTile*dotTile, func(t tile, buf []float64) {
		native.DotNT(t.i1-t.i0, t.j1-t.j0, d, xr.Data[t.i0*xr.Stride:], xr.Stride,
			xr.Data[t.j0*xr.Stride:], xr.Stride, buf, dotTile)
		finish(t, buf)
	})
	return out, nil
}

// CenterKernel32 centres the n×n float32 kernel matrix (both triangles
// stored) in place like CenterKernel, with the means in float64.
func CenterKernel32(data []float32, n int) (Centering, error) {
	if n < 1 || len(data) != n*n {
		return Centering{}, invalidf("CenterKernel32: %d values for n = %d", len(data), n)
	}
	c := Centering{RowMeans: make([]float64, n)}
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range data[i*n : (i+1)*n] {
			s += float64(v)
		}
		c.RowMeans[i] = s / float64(n)
		c.Mean += c.RowMeans[i]
	}
	c.Mean /= float64(n)
	parallelFor(n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := data[i*n : (i+1)*n]
			shift := c.Mean - c.RowMeans[i]
			for j := range row {
				row[j] = float32(float64(row[j]) + shift - c.RowMeans[j])
			}
		}
	})
	return c, nil
}
