package native

/*
#cgo CFLAGS: -O3
void kd_tri_avx2_sytrd(int n, double *a, long lda, double *d, double *e, double *tau, double *y);
void kd_tri_base_sytrd(int n, double *a, long lda, double *d, double *e, double *tau, double *y);
void kd_tri_avx2_ormtr(int n, int k, const double *a, long lda, const double *tau, double *z, long ldz);
void kd_tri_base_ormtr(int n, int k, const double *a, long lda, const double *tau, double *z, long ldz);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// SymTridiag reduces the symmetric n×n matrix held in a — column-major
// lower storage, a[i+j·lda] for i ≥ j (a Go row-major upper triangle is
// the same memory) — to tridiagonal form T = Qᵀ·A·Q by Householder
// reflectors, as LAPACK's dsytd2 with uplo = 'L': d (n) gets T's
// diagonal, e (n−1 used) its subdiagonal, tau (n−1 used) the reflectors'
// scalars, and a's strict lower triangle the reflectors' vectors
// (Q = H(0)···H(n−2), H(i) = I − tau[i]·v·vᵀ, v[i+1] = 1, v[i+2:] in
// column i below the subdiagonal). The strict upper triangle is not
// touched. No BLAS: the level-2 steps are the package's own loops, so
// nothing wakes OpenBLAS's threads. In exact arithmetic T has A's
// eigenvalues; the reduction is backward stable as dsytd2's.
func (b Build) SymTridiag(n int, a []float64, lda int, d, e, tau []float64) {
	if n < 1 || lda < n || len(a) < (n-1)*lda+n || len(d) < n || len(e) < n-1 || len(tau) < n-1 {
		panic(fmt.Sprintf("native: SymTridiag: n %d, lda %d, len(a) %d, len(d) %d, len(e) %d, len(tau) %d",
			n, lda, len(a), len(d), len(e), len(tau)))
	}
	y := make([]float64, n)
	pe, pt := (*C.double)(nil), (*C.double)(nil)
	if n > 1 {
		pe, pt = (*C.double)(unsafe.Pointer(&e[0])), (*C.double)(unsafe.Pointer(&tau[0]))
	}
	pa, pd, py := (*C.double)(unsafe.Pointer(&a[0])), (*C.double)(unsafe.Pointer(&d[0])), (*C.double)(unsafe.Pointer(&y[0]))
	if b.avx2 {
		C.kd_tri_avx2_sytrd(C.int(n), pa, C.long(lda), pd, pe, pt, py)
	} else {
		C.kd_tri_base_sytrd(C.int(n), pa, C.long(lda), pd, pe, pt, py)
	}
}

// TridiagQ sets z (n×k, column-major, ldz ≥ n) to Q·z for the Q of a
// SymTridiag reduction held in a and tau (as LAPACK's dormtr with side
// 'L', uplo 'L', no transpose): the eigenvectors of A from those of T.
func (b Build) TridiagQ(n, k int, a []float64, lda int, tau []float64, z []float64, ldz int) {
	if n < 1 || k < 0 || lda < n || ldz < n || len(a) < (n-1)*lda+n || len(tau) < n-1 || (k > 0 && len(z) < (k-1)*ldz+n) {
		panic(fmt.Sprintf("native: TridiagQ: n %d, k %d, lda %d, ldz %d, len(a) %d, len(tau) %d, len(z) %d",
			n, k, lda, ldz, len(a), len(tau), len(z)))
	}
	if k == 0 || n == 1 {
		return
	}
	pa, pt, pz := (*C.double)(unsafe.Pointer(&a[0])), (*C.double)(unsafe.Pointer(&tau[0])), (*C.double)(unsafe.Pointer(&z[0]))
	if b.avx2 {
		C.kd_tri_avx2_ormtr(C.int(n), C.int(k), pa, C.long(lda), pt, pz, C.long(ldz))
	} else {
		C.kd_tri_base_ormtr(C.int(n), C.int(k), pa, C.long(lda), pt, pz, C.long(ldz))
	}
}
