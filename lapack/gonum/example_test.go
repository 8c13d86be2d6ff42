package gonum_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	kdlapack "github.com/kdual/kdual/lapack/gonum"
)

// An existing gonum program needs one call to run its decompositions on
// OpenBLAS's LAPACK; nothing else changes.
func ExampleUse() {
	kdlapack.Use()

	a := mat.NewSymDense(3, []float64{
		2, -1, 0,
		-1, 2, -1,
		0, -1, 2,
	})
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		panic("no convergence")
	}
	fmt.Printf("eigenvalues %.4f\n", eig.Values(nil))

	var chol mat.Cholesky
	if !chol.Factorize(a) {
		panic("not positive definite")
	}
	fmt.Printf("det %.4f\n", chol.Det())
	// Output:
	// eigenvalues [0.5858 2.0000 3.4142]
	// det 4.0000
}
