package kernel_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
)

// The Gaussian kernel matrix of three points on a line, with the median
// distance as bandwidth.
func ExampleGram() {
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	sigma, _ := kernel.MedianDistance(x, 0)
	g, _ := kernel.Gram(x, kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma})
	fmt.Printf("σ = %g\n%.4f\n", sigma, mat.Formatted(g))
	// Output:
	// σ = 2
	// ⎡1.0000  0.8825  0.3247⎤
	// ⎢0.8825  1.0000  0.6065⎥
	// ⎣0.3247  0.6065  1.0000⎦
}
