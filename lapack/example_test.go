package lapack_test

import (
	"fmt"

	"github.com/kdual/kdual/lapack"
)

// The eigenvalues of a 2×2 symmetric matrix held column-major, upper
// triangle used.
func ExampleDsyevd() {
	a := []float64{2, 0, 1, 2} // [2 1; 1 2], column-major; a[1] is below the diagonal, unused
	w := make([]float64, 2)
	if err := lapack.Dsyevd('N', 'U', 2, a, 2, w); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", w)
	// Output:
	// [1.0000 3.0000]
}
