package linalg

import "math"

// Levels8 is an n×d data set on an 8-bit grid stored as its levels: entry
// (i, j) is Step·Data[i·Cols + j] — 8-bit images (Step = 1/255 for pixels
// scaled to [0, 1]) in a quarter of float32's memory and an eighth of
// float64's (a million 784-pixel images take 784 MB).
type Levels8 struct {
	Rows, Cols int
	Step       float64
	Data       []uint8 // len ≥ Rows·Cols, row-major
}

// Dims returns the rows and columns.
func (x *Levels8) Dims() (int, int) { return x.Rows, x.Cols }

// Row writes row i's values Step·level into dst (len ≥ Cols).
func (x *Levels8) Row(i int, dst []float64) {
	for j, v := range x.Data[i*x.Cols : (i+1)*x.Cols] {
		dst[j] = x.Step * float64(v)
	}
}

// ReadRows copies rows [i0, i0 + len(dst)/Cols) into dst: x as a source
// of rows, like a file read in chunks.
func (x *Levels8) ReadRows(i0 int, dst []uint8) error {
	if len(dst)%x.Cols != 0 || i0 < 0 || i0+len(dst)/x.Cols > x.Rows {
		return invalidf("Levels8: rows %d … %d of %d", i0, i0+len(dst)/x.Cols, x.Rows)
	}
	copy(dst, x.Data[i0*x.Cols:])
	return nil
}

// Check reports an error unless x has at least one row and column, as
// many levels as its shape, and a finite positive Step.
func (x *Levels8) Check(what string) error {
	if x == nil || x.Rows < 1 || x.Cols < 1 {
		return invalidf("%s: empty 8-bit data", what)
	}
	if len(x.Data) < x.Rows*x.Cols {
		return invalidf("%s: %d levels for %d×%d", what, len(x.Data), x.Rows, x.Cols)
	}
	if !(x.Step > 0) || math.IsInf(x.Step, 0) {
		return invalidf("%s: step %g, want a finite positive step", what, x.Step)
	}
	return nil
}
