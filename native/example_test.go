package native_test

import (
	"fmt"

	"github.com/kdual/kdual/native"
)

// RBFMap turns inner products g_ij with squared norms into Gaussian kernel
// entries exp(c·(‖x_i‖² + ‖x_j‖² − 2g_ij)) in place, vectorised.
func ExampleRBFMap() {
	// Points 0 and 1 on a line: norms 0 and 1, inner products [[0 0] [0 1]].
	g := []float64{0, 0, 0, 1}
	norms := []float64{0, 1}
	native.RBFMap(2, 2, g, 2, norms, norms, -0.5, false)
	fmt.Printf("%.6f\n", g)
	// Output:
	// [1.000000 0.606531 0.606531 1.000000]
}
