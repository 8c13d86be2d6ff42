package linalg

import (
	"fmt"
	"testing"

	"github.com/kdual/kdual/native"
)

// Run with: go test -run '^$' -bench . ./linalg (or make bench-go).
func BenchmarkSymEig(b *testing.B) {
	for _, c := range []struct{ n, k int }{{2000, 0}, {2000, 20}, {5000, 20}} {
		b.Run(fmt.Sprintf("n=%d/k=%d", c.n, c.k), func(b *testing.B) {
			a := withSpectrum(1, harmonicSpectrum(c.n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := SymEig(a, c.k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// C·Cᵀ of float32 rows as a Nyström fit's C_cC_cᵀ takes them (a chunk of
// 2048 points at 1000 landmarks, of 8192 at 2000) by OpenBLAS ssyrk and
// by the packed kernel (docs/paths.md).
func BenchmarkSyrk32(b *testing.B) {
	for _, c := range []struct{ k, w int }{{1000, 2048}, {2000, 8192}} {
		data := make([]float32, c.k*c.w)
		for i := range data {
			data[i] = float32(i%89)/89 - 0.5
		}
		acc, pack := make([]float32, c.k*c.k), make([]float32, PackScratch32(c.k, c.w))
		for _, packed := range []bool{false, native.HasWide()} {
			name := map[bool]string{false: "ssyrk", true: "packed"}[packed]
			b.Run(fmt.Sprintf("k=%d/w=%d/%s", c.k, c.w, name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					Syrk32(packed, acc, c.k, c.w, data, c.w, pack)
				}
			})
		}
	}
}
