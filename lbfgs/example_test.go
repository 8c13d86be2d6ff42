package lbfgs_test

import (
	"fmt"

	"github.com/kdual/kdual/lbfgs"
)

// rosen is Rosenbrock's function, minimum 0 at (1, 1).
type rosen struct{}

func (rosen) Func(x, g []float64) float64 {
	a, b := 1-x[0], x[1]-x[0]*x[0]
	g[0] = -2*a - 400*x[0]*b
	g[1] = 200 * b
	return a*a + 100*b*b
}

func ExampleMinimize() {
	res, err := lbfgs.Minimize(rosen{}, []float64{-1.2, 1}, lbfgs.Settings{})
	fmt.Printf("x = (%.6f, %.6f), %v, err %v\n", res.X[0], res.X[1], res.Status.Code, err)
	// Output:
	// x = (1.000000, 1.000000), converged, err <nil>
}
