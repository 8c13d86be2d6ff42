package eig

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// One pass over the operator, float64 against float32 storage, for a single
// vector and a block of 20. Run with: go test -run '^$' -bench Apply ./eig
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{2000, 7000} {
		a := symWithSpectrum(1, spectrum(n, func(i int) float64 { return 1 / float64(i+1) }))
		d, _ := NewDense(a)
		f, _ := NewFloat32(a)
		for _, cols := range []int{1, 20} {
			x := mat.NewDense(n, cols, nil)
			x.Apply(func(i, j int, _ float64) float64 { return float64((i+j)%7) - 3 }, x)
			y := mat.NewDense(n, cols, nil)
			for _, op := range []struct {
				name string
				op   Operator
			}{{"float64", d}, {"float32", f}} {
				b.Run(fmt.Sprintf("%s/n=%d/b=%d", op.name, n, cols), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := op.op.Apply(y, x); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// Each solver on a known spectrum with slow decay, k = 20, tolerance 1e-8.
func BenchmarkSolvers(b *testing.B) {
	for _, n := range []int{2000, 7000} {
		a := symWithSpectrum(2, spectrum(n, func(i int) float64 { return 1 / float64(i+1) }))
		d, _ := NewDense(a)
		for _, sv := range solvers {
			if sv.dense && n > 2000 {
				continue
			}
			b.Run(fmt.Sprintf("%s/n=%d", sv.name, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := sv.make(1e-8).Solve(d, 20); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
