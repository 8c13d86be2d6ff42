package kpca_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
)

// The README's quickstart (TestReadmeQuickstart keeps the two the same):
// fit kernel PCA on Iris, project new points, save the model and load it
// back.
func Example_quickstart() {
	iris, err := dataset.Iris() // 150×4 measurements and their species
	if err != nil {
		log.Fatal(err)
	}
	sigma, err := kernel.MedianDistance(iris.X, 1000) // the median heuristic
	if err != nil {
		log.Fatal(err)
	}
	m := &kpca.KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}}
	if err := m.Fit(iris.X); err != nil { // centred, solver and storage chosen for you
		log.Fatal(err)
	}
	vals, _ := m.Eigenvalues()
	z, _ := m.Transform(iris.X.Slice(0, 3, 0, 4)) // any mat.Matrix: here the first 3 flowers
	fmt.Printf("λ = %.4f %.4f (%s)\n", vals[0], vals[1], m.Info().Status)
	fmt.Printf("first flower: %.4f %.4f\n", z.At(0, 0), z.At(0, 1))

	var file bytes.Buffer // or an os.File: a NumPy .npz archive
	if err := m.Save(&file); err != nil {
		log.Fatal(err)
	}
	loaded, err := kpca.Load(&file)
	if err != nil {
		log.Fatal(err)
	}
	z2, _ := loaded.Transform(iris.X.Slice(0, 3, 0, 4))
	fmt.Println("loaded model, same scores:", z2.At(0, 0) == z.At(0, 0) && z2.At(2, 1) == z.At(2, 1))
	// Output:
	// λ = 43.9416 11.0513 (converged (direct: LAPACK backward error ‖Av − λv‖ ≤ n·ε·‖A‖))
	// first flower: 0.7565 0.0983
	// loaded model, same scores: true
}
