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

func BenchmarkGram(b *testing.B) {
	for _, k := range []Kernel{{Kind: Gaussian, Sigma: 10}, {Kind: Laplace, Sigma: 10}, {Kind: Linear}} {
		for _, n := range []int{2000, 7000} {
			b.Run(fmt.Sprintf("%s/n=%d/d=784", k.Kind, n), func(b *testing.B) {
				x := randData(1, n, 784)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := Gram(x, k); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The float64 tile side (TileSize64 against TileSize): Gram build, one
// vector and an 8-vector block, on random data (the sides alternate within
// each size). Run with: go test -run '^$' -bench Tiles64Side -benchtime 5x ./linalg
func BenchmarkTiles64Side(b *testing.B) {
	for _, n := range []int{7000, 20000} {
		x := randData(2, n, 784)
		em := Kernel{Kind: Gaussian, Sigma: 10}.ElementMap(784)
		for _, t := range []int{TileSize, TileSize64} {
			var s *SymTiles64
			b.Run(fmt.Sprintf("n=%d/t=%d/gram", n, t), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var err error
					if s, err = GramTiles64Band(x, em, GramOptions{}, t, 0, (n+t-1)/t); err != nil {
						b.Fatal(err)
					}
				}
			})
			v, y := make([]float64, n), make([]float64, n)
			for i := range v {
				v[i] = 1 / float64(i+1)
			}
			b.Run(fmt.Sprintf("n=%d/t=%d/vector", n, t), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s.MulVec(y, v)
				}
			})
			xb, yb := randData(3, n, 8), randData(4, n, 8)
			b.Run(fmt.Sprintf("n=%d/t=%d/block8", n, t), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s.MulBlock(yb, xb)
				}
			})
		}
	}
}
