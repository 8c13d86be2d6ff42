package linalg_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// The top two eigenpairs of a symmetric matrix, decreasing, with signs
// fixed (the largest entry of each vector positive).
func ExampleSymEig() {
	a := mat.NewSymDense(3, []float64{
		2, 1, 0,
		1, 2, 0,
		0, 0, 1,
	})
	e, err := linalg.SymEig(a, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f; v1 = (%.4f, %.4f, ·); v2 = (·, ·, %.4f)\n", e.Values, e.Vectors.At(0, 0), e.Vectors.At(1, 0), e.Vectors.At(2, 1))
	// Output:
	// [3.0000 1.0000]; v1 = (0.7071, 0.7071, ·); v2 = (·, ·, 1.0000)
}
