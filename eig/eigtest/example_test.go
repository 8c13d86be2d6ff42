package eigtest_test

import (
	"fmt"

	"github.com/kdual/kdual/eig/eigtest"
)

// The suite's matrices have known spectra: Q·diag(λ)·Qᵀ with a seeded Q.
func ExampleWithSpectrum() {
	lambda := eigtest.Spectrum(3, func(i int) float64 { return float64(3 - i) })
	a := eigtest.WithSpectrum(1, lambda)
	fmt.Printf("trace %.6f\n", a.At(0, 0)+a.At(1, 1)+a.At(2, 2))
	// Output:
	// trace 6.000000
}
