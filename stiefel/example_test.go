package stiefel_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/stiefel"
)

// trace is f(A) = −½Tr(AᵀDA) for D = diag(4, 3, 2, 1): its minimum over
// 4×2 matrices with orthonormal columns is −½(4 + 3).
type trace struct{}

func (trace) Eval(a, grad *mat.Dense) float64 {
	d := []float64{4, 3, 2, 1}
	f := 0.0
	for i := 0; i < 4; i++ {
		for j := 0; j < 2; j++ {
			grad.Set(i, j, -d[i]*a.At(i, j))
			f -= 0.5 * d[i] * a.At(i, j) * a.At(i, j)
		}
	}
	return f
}

func ExampleMinimize() {
	res, err := stiefel.Minimize(trace{}, 4, 2, nil, stiefel.Settings{})
	fmt.Printf("f = %.6f, %v, err %v, ‖AᵀA − I‖ < 1e-10: %v\n", res.F, res.Status.Code, err, stiefel.Defect(res.A) < 1e-10)
	// Output:
	// f = -3.500000, converged, err <nil>, ‖AᵀA − I‖ < 1e-10: true
}
