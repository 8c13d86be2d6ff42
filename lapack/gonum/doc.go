// Package gonum is gonum's LAPACK on OpenBLAS: Implementation satisfies
// gonum.org/v1/gonum/lapack.Float64, and Use installs it, so that every
// decomposition in gonum's mat (EigenSym, SVD, QR, LU, Cholesky, Eigen,
// solves, condition numbers) runs on the LAPACK inside libopenblas:
//
//	import kdlapack "github.com/kdual/kdual/lapack/gonum"
//
//	func main() {
//		kdlapack.Use() // gonum's LAPACK and BLAS now run on OpenBLAS
//		...
//	}
//
// Nothing is installed by importing a kdual package: kdual's own packages
// call OpenBLAS through linalg without touching gonum's globals, and Use is
// the only way gonum's mat comes to run here.
//
// # Semantics
//
// The methods keep gonum's contract exactly: row-major matrices, 0-based
// pivots and permutations, gonum's workspace queries (lwork == -1 stores the
// optimal length in work[0]; any lwork at or above gonum's minimum is
// accepted, and what the Fortran routine needs beyond the caller's work is
// allocated), the same ok and first results, and panics with gonum's
// messages on bad arguments (checked before any work is done; every
// argument of every method is checked against gonum's own with bad and
// boundary values, args_test.go). Where gonum's own fails with a runtime
// error (a pivot or permutation index out of range), this one panics with
// a "lapack: …" message before LAPACK could read outside the matrix.
// gonum's own test suite, gonum.org/v1/gonum/lapack/testlapack, runs
// against it.
//
// # Non-finite input
//
// gonum's decompositions report a NaN or an infinity in their input through
// ok = false, and LAPACK in libopenblas does not always: its dpotrf passes
// a NaN pivot, dgesdd calls a NaN an illegal argument (and never returns on
// an infinity), dggsvd3 returns finite values. So Dpotrf says false on a
// NaN in the triangle it reads, and Dsyev, Dgesvd, Dgeev and Dggsvd3 check
// their input first and return NaN values with ok = false (Dgeev: first =
// n). Checked against gonum's own LAPACK on every mat decomposition with
// NaN and ±Inf in several positions, a zero row, a zero matrix and 0×0
// (nan_test.go).
//
// # Layout
//
// A row-major r×c matrix with stride ld is, in the same memory, the
// column-major c×r matrix Aᵀ with leading dimension ld. Where an
// algebraically equivalent Fortran routine exists on that view it is called
// without a copy:
//
//   - Dpotrf, Dpotri, Dpocon, Dpstrf, Dpbtrf, Dpbcon, Dtrtri, Dtrcon, Dlansy:
//     the same routine with the other triangle (and for Dtrcon the 1- and
//     ∞-norms swapped). gonum's row-major band storage is LAPACK's
//     column-major band storage of the other triangle, byte for byte.
//   - Dgeqrf ↔ dgelqf, Dgelqf ↔ dgeqrf, Dorgqr ↔ dorglq, Dorglq ↔ dorgqr,
//     Dormqr ↔ dormlq and Dormlq ↔ dormqr with the side flipped: the QR
//     factors of A are the LQ factors of Aᵀ with the same reflectors.
//   - Dgesvd: the SVD of Aᵀ is V Σ Uᵀ, so LAPACK's U and Vᵀ of the view are
//     gonum's Vᵀ and U, written in place.
//   - Dlange, Dlantr (norms swapped), Dlapmr ↔ dlapmt, Dlapmt ↔ dlapmr;
//     Dlange's largest entry, 1- and ∞-norms of matrices from 2¹⁸ entries
//     are summed in Go on parallel goroutines instead (one pass of dlange
//     runs on one thread).
//   - Dpotrs, Dpbtrs, Dtrtrs, Dtbtrs: the factor in place; the right-hand
//     sides B are copied to column-major (no copy for one contiguous column).
//   - Dsyev: dsyevd in place, then one in-place transpose of the eigenvectors.
//   - Dgecon: LAPACK's dgecon loop (dlacn2, dtrsv, and dlatrs and drscl
//     from libopenblas when a plain solve leaves the safe range) written in
//     Go over the view, each triangular solve with the other triangle and
//     op, so the LU factors are read where they are.
//
// The rest copy to column-major buffers and back, because their pivoting or
// ordering has no equivalent on the transpose: Dgetrf (row pivoting), Dgetri
// and Dgetrs (the LU factors), Dgeqp3 (column pivoting), Dgels (B only),
// Dgeev and Dggsvd3. Square matrices are transposed in place (Dgetrf,
// Dgetri), and a square QR of order ≥ 256 is transposed in place for dgeqrf
// and dorgqr, which ran ~20% faster than dgelqf and dorglq here. The copies
// are O(n²), blocked and split over goroutines, next to O(n³) work.
//
// # Drivers
//
// Dsyev runs dsyevd (divide and conquer), and Dgesvd runs dgesdd for every
// combination of jobU and jobVT (unequal jobs run dgesdd with the larger
// job into scratch space): the same results as dsyev and dgesvd, and the
// drivers NumPy's eigh and svd call; measured faster here (docs/lapack.md).
//
// Every one of the 33 methods of lapack.Float64 calls LAPACK in libopenblas.
// The other exported methods (Dgeqr2, Dlarfg, Dlacn2, …, the unblocked and
// auxiliary routines that testlapack and gonum's own drivers call) are
// gonum's Go code, embedded; with Use they run on OpenBLAS's BLAS.
//
// # Threads
//
// Implementation has no state and is safe for concurrent use. LAPACK calls
// inside libopenblas use OpenBLAS's own thread pool; calling from many
// goroutines at once is correct but oversubscribes the cores.
package gonum

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	native "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Implementation is gonum's lapack.Float64 on OpenBLAS. The 33 methods of
// lapack.Float64 are its own; the embedded gonum implementation supplies the
// other exported routines.
type Implementation struct {
	native.Implementation
}

var _ lapack.Float64 = Implementation{}

// Use makes OpenBLAS gonum's float64 and float32 BLAS and Implementation
// gonum's LAPACK, for every later call in the process (gonum's blas64.Use,
// blas32.Use and lapack64.Use). Call it before using gonum concurrently.
func Use() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
	lapack64.Use(Implementation{})
}
