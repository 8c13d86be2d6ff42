// Package linalg is the thin layer the rest of kdual talks to for dense
// linear algebra, reaching OpenBLAS explicitly (B64, B32) and never through
// gonum's global BLAS, which importing it leaves alone. It offers what
// kdual's solvers and models need:
//
//   - SymEig: all or the top k eigenpairs of a symmetric matrix (LAPACK
//     dsyevd or dsyevr; up to order SmallSym kdual's own tridiagonal
//     reduction, then dsterf/dstein or dstevr), eigenvalues in decreasing
//     order, eigenvector signs fixed so the largest-magnitude entry of each
//     is positive;
//   - QR (thin, by Householder) and Orthonormalize, Cholesky and LU with
//     solves;
//   - Dense32, a float32 row-major matrix, and its products;
//   - centring of a kernel matrix in place, keeping the row means needed
//     to centre the kernel rows of new points.
//
// Kernel matrices themselves (the Gram engine, kernel rows, float32 tiles)
// are package gram's.
//
// Conventions: matrices are gonum's row-major *mat.Dense and *mat.SymDense.
// Inputs are never modified unless the name says so (…InPlace, Center…).
// A *mat.SymDense returned by this package stores both triangles, so its raw
// data can also be used as a general dense matrix; inputs need only the
// upper triangle, as gonum defines. High-level functions return errors
// wrapping ErrInvalid (bad input: NaN, Inf, shapes, k out of range) or a
// lapack sentinel (a matrix that is not positive definite, no
// convergence); they do not panic on user input.
package linalg
