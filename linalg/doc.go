// Package linalg is the thin layer the rest of kdual talks to for dense
// linear algebra.
//
// Importing it installs gonum/netlib's cgo BLAS as gonum's blas64
// implementation, once, so every gonum mat product runs on OpenBLAS. On top
// of that it offers what kdual's solvers and models need:
//
//   - SymEig: all or the top k eigenpairs of a symmetric matrix (LAPACK
//     dsyevd or dsyevr), eigenvalues in decreasing order, eigenvector signs
//     fixed so the largest-magnitude entry of each is positive;
//   - QR (thin, by Householder) and Orthonormalize, Cholesky with solves;
//   - Gram matrices of the linear, Gaussian, Laplace and polynomial kernels,
//     built with BLAS-3 (dsyrk for K(X, X), dgemm for K(X, Y)) and an
//     element-wise map run in parallel Go;
//   - kernel centring in place, keeping the row means needed to centre the
//     kernel rows of new points.
//
// Conventions: matrices are gonum's row-major *mat.Dense and *mat.SymDense.
// Inputs are never modified unless the name says so (…InPlace, Center…).
// A *mat.SymDense returned by this package stores both triangles, so its raw
// data can also be used as a general dense matrix; inputs need only the
// upper triangle, as gonum defines. High-level functions return errors
// wrapping ErrInvalid (bad input: NaN, Inf, shapes, k out of range, a
// non-positive bandwidth) or a lapack sentinel (a matrix that is not
// positive definite, no convergence); they do not panic on user input.
package linalg
