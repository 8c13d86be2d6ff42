package ppca_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/models/ppca"
)

// Points on a line with a little spread off it: one latent dimension
// carries almost all the variance, and σ² is the variance left over.
func ExamplePrimal() {
	x := mat.NewDense(6, 2, []float64{
		0, 0.1,
		1, 0.9,
		2, 2.1,
		3, 2.9,
		4, 4.1,
		5, 4.9,
	})
	m := &ppca.Primal{Q: 1}
	if err := m.Fit(x); err != nil {
		fmt.Println(err)
		return
	}
	ev, _ := m.ExplainedVariance()
	fmt.Printf("q = %d, σ² = %.5f, explained %.4f\n", m.LatentDim(), m.NoiseVariance(), ev)
	// Output:
	// q = 1, σ² = 0.00465, explained 0.9992
}
