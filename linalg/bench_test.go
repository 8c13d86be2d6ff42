package linalg

import (
	"fmt"
	"testing"
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
