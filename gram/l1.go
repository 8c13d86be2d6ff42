package gram

import (
	"math"

	"github.com/kdual/kdual/internal/par"
)

// l1Products sets out (stride ld, out[0] = entry (i0, j0)) to the L1
// distances ‖a_i − b_j‖₁ of rows [i0, i1) of a and [j0, j1) of b, in
// float64 (rows stored in float32 are widened), rows in parallel. With
// upper set (a diagonal block of a Gram, a = b) only the entries with
// j ≥ i are written and the others cleared, as dsyrk leaves them.
func l1Products(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int, upper bool) {
	d := a.x.Cols
	par.For(a.workers, i1-i0, nil, func(lo, hi int) {
		bufI := make([]float64, d)
		bufJ := make([]float64, d)
		for r := lo; r < hi; r++ {
			xi := a.rowOf(i0+r, bufI)
			row := out[r*ld : r*ld+j1-j0]
			c0 := 0
			if upper {
				c0 = max(0, i0+r-j0)
				clear(row[:c0])
			}
			for c := c0; c < j1-j0; c++ {
				xj := b.rowOf(j0+c, bufJ)
				v := 0.0
				for k, e := range xi {
					v += math.Abs(e - xj[k])
				}
				row[c] = v
			}
		}
	})
}

// rowOf returns row i of the source: the stored float64 row, or the
// float32 row widened into buf (len d).
func (s *gramSource) rowOf(i int, buf []float64) []float64 {
	d := s.x.Cols
	if s.x.Data != nil {
		return s.x.Data[i*s.x.Stride : i*s.x.Stride+d]
	}
	for k, e := range s.x32[i*d : (i+1)*d] {
		buf[k] = float64(e)
	}
	return buf
}
