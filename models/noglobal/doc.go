// Package noglobal holds one test: every fit of kdual's models runs with
// gonum's global BLAS and LAPACK replaced by implementations that panic,
// which proves that kdual reaches OpenBLAS only explicitly (linalg.B64,
// linalg.Mul, package lapack) and never through gonum's globals
// (blas64.Use, blas32.Use, lapack64.Use), which belong to the program.
package noglobal
