package linalg

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/kdual/kdual/internal/par"

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

// BenchmarkGemm32: the float32 inner products of m landmarks with n points
// of depth d (A·Bᵀ, rows of depth contiguous), by OpenBLAS sgemm and by
// the packed kernel on GOMAXPROCS threads of its own (A packed beforehand,
// as a caller that keeps its landmarks packed does).
func BenchmarkGemm32(b *testing.B) {
	for _, c := range []struct{ m, n, d int }{{1000, 2048, 784}, {2000, 8192, 784}} {
		a, x := make([]float32, c.m*c.d), make([]float32, c.n*c.d)
		for i := range a {
			a[i] = float32(i%89)/89 - 0.5
		}
		for i := range x {
			x[i] = float32(i%83)/83 - 0.5
		}
		out := make([]float32, c.m*c.n)
		b.Run(fmt.Sprintf("m=%d/n=%d/sgemm", c.m, c.n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				B32.Gemm(blas.NoTrans, blas.Trans, 1, blas32.General{Rows: c.m, Cols: c.d, Stride: c.d, Data: a},
					blas32.General{Rows: c.n, Cols: c.d, Stride: c.d, Data: x}, 0, blas32.General{Rows: c.m, Cols: c.n, Stride: c.n, Data: out})
			}
		})
		if !native.HasWide() {
			continue
		}
		pa := make([]float32, native.Gemm32PackLen(c.m, c.d))
		native.Gemm32PackA(true, c.m, c.d, a, c.d, pa)
		threads := par.Workers(0)
		scr := make([]float32, native.Gemm32ScratchLen(threads, c.d))
		b.Run(fmt.Sprintf("m=%d/n=%d/packed", c.m, c.n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				native.Gemm32Run(true, threads, c.m, c.n, c.d, c.d, pa, x, c.d, scr, out, c.n)
			}
		})
	}
}
