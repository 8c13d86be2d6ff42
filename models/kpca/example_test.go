package kpca_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
)

// Linear kernel PCA of points on a line is PCA: one component carries all
// the variance; the dual L-BFGS solver finds the same eigenvalue and, by
// the sign convention (the first of the largest entries of each vector is
// positive: here the first point's), the same scores.
func ExampleKPCA() {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3})
	for _, s := range []kpca.Solver{kpca.Eigen{Solver: eig.DenseSolver{}}, kpca.LBFGS{}} {
		m := &kpca.KPCA{Components: 1, Kernel: kernel.Kernel{Kind: kernel.Linear}, Solver: s}
		if err := m.Fit(x); err != nil {
			fmt.Println(err)
			return
		}
		vals, _ := m.Eigenvalues()
		z, _ := m.Transform(mat.NewDense(1, 2, []float64{4, 4}))
		fmt.Printf("%s: λ = %.6f, score of (4, 4) = %.6f\n", s.Name(), vals[0], z.At(0, 0))
	}
	// Output:
	// dense: λ = 10.000000, score of (4, 4) = -3.535534
	// lbfgs: λ = 10.000000, score of (4, 4) = -3.535534
}
