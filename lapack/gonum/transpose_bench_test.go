package gonum

import "testing"

func BenchmarkTransposeSquare2000(b *testing.B) {
	n := 2000
	a := make([]float64, n*n)
	for i := range a {
		a[i] = float64(i)
	}
	for b.Loop() {
		transposeSquare(n, a, n)
	}
}

func BenchmarkTranspose2000(b *testing.B) {
	n := 2000
	a := make([]float64, n*n)
	c := make([]float64, n*n)
	for b.Loop() {
		transpose(n, n, a, n, c, n)
	}
}
