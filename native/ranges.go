package native

/*
#cgo CFLAGS: -O3
void kd_colrange_avx2(int rows, int d, const double *x, long ld, double *lo, double *hi);
void kd_colrange_base(int rows, int d, const double *x, long ld, double *lo, double *hi);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// ColumnRange lowers lo[j] to x[i·ld + j] wherever that entry is smaller
// and raises hi[j] to it wherever it is larger, for rows i < rows and
// columns j < d: with lo and hi set to one row beforehand, the columns'
// minima and maxima. A NaN entry changes nothing (its comparisons are
// false), and a NaN already in lo or hi stays — Go's `if v < lo[j]` loop,
// at the speed of memory (vminpd and vmaxpd keep their second operand
// unless the first is strictly smaller or larger).
func (b Build) ColumnRange(rows, d int, x []float64, ld int, lo, hi []float64) {
	if rows < 1 || d < 1 {
		return
	}
	if ld < d || len(x) < (rows-1)*ld+d || len(lo) < d || len(hi) < d {
		panic(fmt.Sprintf("native: ColumnRange: %d rows of %d, stride %d, len(x) %d, len(lo) %d, len(hi) %d",
			rows, d, ld, len(x), len(lo), len(hi)))
	}
	px, pl, ph := (*C.double)(unsafe.Pointer(&x[0])), (*C.double)(unsafe.Pointer(&lo[0])), (*C.double)(unsafe.Pointer(&hi[0]))
	if b.avx2 {
		C.kd_colrange_avx2(C.int(rows), C.int(d), px, C.long(ld), pl, ph)
	} else {
		C.kd_colrange_base(C.int(rows), C.int(d), px, C.long(ld), pl, ph)
	}
}
