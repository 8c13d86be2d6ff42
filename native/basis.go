package native

/*
#cgo CFLAGS: -O3
void kd_vtw_avx2(int n, int c, int b, const double *v, long ldv, const double *w, long ldw, double *h, long ldh);
void kd_vtw_base(int n, int c, int b, const double *v, long ldv, const double *w, long ldw, double *h, long ldh);
void kd_submul_avx2(int n, int c, int b, const double *v, long ldv, const double *h, long ldh, double *w, long ldw);
void kd_submul_base(int n, int c, int b, const double *v, long ldv, const double *h, long ldh, double *w, long ldw);
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// checkBasis panics unless v (n×c, stride ldv), x (n×b, stride ldx) and
// y (c×b, stride ldy) are long enough for their shapes.
func checkBasis(what string, n, c, b int, v []float64, ldv int, x []float64, ldx int, y []float64, ldy int) {
	if n < 0 || c < 0 || b < 0 || max(n, c, b) > math.MaxInt32 ||
		(n > 0 && c > 0 && (ldv < c || len(v) < (n-1)*ldv+c)) ||
		(n > 0 && b > 0 && (ldx < b || len(x) < (n-1)*ldx+b)) ||
		(c > 0 && b > 0 && (ldy < b || len(y) < (c-1)*ldy+b)) {
		panic(fmt.Sprintf("native: %s: bad arguments n=%d c=%d b=%d ldv=%d ldx=%d ldy=%d", what, n, c, b, ldv, ldx, ldy))
	}
}

// BasisTMul adds Vᵀ·W to H for the n rows of V (c columns, row stride
// ldv), W (b columns, stride ldw) and H (c×b, stride ldh), all float64
// and row-major: H[k][j] += Σ_i V[i][k]·W[i][j], each sum over i
// ascending, one multiply-add at a time (fused in the AVX2 build), added
// to H at the end. Safe for concurrent use on disjoint H.
func (bd Build) BasisTMul(n, c, b int, v []float64, ldv int, w []float64, ldw int, h []float64, ldh int) {
	checkBasis("BasisTMul", n, c, b, v, ldv, w, ldw, h, ldh)
	if n == 0 || c == 0 || b == 0 {
		return
	}
	pv, pw, ph := (*C.double)(unsafe.Pointer(&v[0])), (*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&h[0]))
	if bd.avx2 {
		C.kd_vtw_avx2(C.int(n), C.int(c), C.int(b), pv, C.long(ldv), pw, C.long(ldw), ph, C.long(ldh))
		return
	}
	C.kd_vtw_base(C.int(n), C.int(c), C.int(b), pv, C.long(ldv), pw, C.long(ldw), ph, C.long(ldh))
}

// BasisSubMul subtracts V·H from W for the same shapes: W[i][j] −=
// Σ_k V[i][k]·H[k][j], each sum over k ascending from W[i][j], one
// multiply-add at a time (fused in the AVX2 build). Safe for concurrent
// use on disjoint rows of W.
func (bd Build) BasisSubMul(n, c, b int, v []float64, ldv int, h []float64, ldh int, w []float64, ldw int) {
	checkBasis("BasisSubMul", n, c, b, v, ldv, w, ldw, h, ldh)
	if n == 0 || c == 0 || b == 0 {
		return
	}
	pv, pw, ph := (*C.double)(unsafe.Pointer(&v[0])), (*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&h[0]))
	if bd.avx2 {
		C.kd_submul_avx2(C.int(n), C.int(c), C.int(b), pv, C.long(ldv), ph, C.long(ldh), pw, C.long(ldw))
		return
	}
	C.kd_submul_base(C.int(n), C.int(c), C.int(b), pv, C.long(ldv), ph, C.long(ldh), pw, C.long(ldw))
}
