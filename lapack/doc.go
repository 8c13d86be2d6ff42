// Package lapack is a thin binding to the Fortran LAPACK routines inside
// libopenblas.
//
// Conventions:
//   - Matrices are column-major, as LAPACK wants them, with a leading
//     dimension ld ≥ max(1, rows). A row-major symmetric matrix is the same
//     matrix in column-major order with the other triangle, so callers flip
//     uplo instead of copying; package linalg does this for kdual.
//   - Every argument is checked in Go before the call: a wrong enum, a short
//     slice or a negative dimension is a programmer error and panics with the
//     "lapack: " prefix. LAPACK's own info < 0 is reported the same way.
//   - info > 0 (no convergence, a matrix that is not positive definite, an
//     exactly singular factor) is returned as an *Error, which wraps one of
//     the sentinel errors ErrNotConverged, ErrNotPositiveDefinite or
//     ErrSingular for use with errors.Is.
//   - Workspace queries (lwork = −1) are done inside. A *Workspace keeps its
//     buffers across calls so that loops allocate nothing; the package-level
//     functions use a fresh one per call.
//   - Integers are 32-bit at the C boundary; pivots are 0-based in Go.
package lapack
