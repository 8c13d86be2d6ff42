package eig_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
)

// The two largest eigenvalues of a 5×5 tridiagonal matrix (2 on the
// diagonal, −1 beside it: λ_j = 2 − 2cos(jπ/6)).
func ExampleBlockKrylov() {
	n := 5
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		a.SetSym(i, i, 2)
		if i > 0 {
			a.SetSym(i, i-1, -1)
		}
	}
	op, _ := eig.NewDense(a)
	res, err := eig.BlockKrylov{Block: 2}.Solve(op, 2)
	fmt.Printf("%.6f %v %v\n", res.Values, res.Status.Code, err)
	// Output:
	// [3.732051 3.000000] converged <nil>
}
