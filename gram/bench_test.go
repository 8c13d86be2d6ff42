package gram

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/linalg"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

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

// One pass over float32 half storage (SymTiles32, n = 20 000, 0.83 GB of
// tiles) against the bound of the exact-operator issue: for b = 1, 8, 32
// float64 vectors in and out, a pass should take at most
// 1.25·max(stored bytes / read bandwidth, 2n²b / GEMM rate), both rates
// measured in the same run — the read bandwidth as the faster of gonum's
// sasum and a parallel Go sum over the tiles, the rate as a 3000³ OpenBLAS
// dgemm for the passes in float64 arithmetic, sgemm for those in float32
// (SingleBlocks, b = 8 and 32 again). Reports seconds per pass, the bound
// and their ratio. Run with:
// OPENBLAS_CORETYPE=… go test -run '^$' -bench Tiles32PassBound -benchtime 3x ./gram
func BenchmarkTiles32PassBound(b *testing.B) {
	n := 20000
	s, err := NewSymTiles32(n)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Free()
	par.For(0, len(s.Data), nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.Data[i] = float32(i%977) / 977
		}
	})
	best := func(reps int, f func()) float64 {
		t := math.Inf(1)
		for r := 0; r < reps; r++ {
			start := time.Now()
			f()
			t = math.Min(t, time.Since(start).Seconds())
		}
		return t
	}
	// The faster of gonum's sasum and a parallel Go sum with eight
	// accumulators: the bound takes the best read rate seen.
	sums := make([]float32, 64)
	read := float64(s.Bytes()) / math.Min(best(5, func() {
		blas32.Asum(blas32.Vector{N: len(s.Data), Inc: 1, Data: s.Data})
	}), best(5, func() {
		par.For(0, len(s.Data)/8, nil, func(lo, hi int) {
			var a [8]float32
			for _, v := range [][]float32{s.Data[8*lo : 8*hi]} {
				for i := 0; i+8 <= len(v); i += 8 {
					a[0] += v[i]
					a[1] += v[i+1]
					a[2] += v[i+2]
					a[3] += v[i+3]
					a[4] += v[i+4]
					a[5] += v[i+5]
					a[6] += v[i+6]
					a[7] += v[i+7]
				}
			}
			sums[lo%64] += a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
		})
	}))
	const g = 3000
	a := make([]float64, g*g)
	for i := range a {
		a[i] = float64(i%7) - 3
	}
	c := make([]float64, g*g)
	rate := 2 * g * g * g / best(3, func() {
		m := blas64.General{Rows: g, Cols: g, Stride: g, Data: a}
		linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, 1, m, m, 0, blas64.General{Rows: g, Cols: g, Stride: g, Data: c})
	})
	a32, c32 := make([]float32, g*g), make([]float32, g*g)
	for i := range a32 {
		a32[i] = float32(i%7) - 3
	}
	rate32 := 2 * g * g * g / best(3, func() {
		m := blas32.General{Rows: g, Cols: g, Stride: g, Data: a32}
		linalg.B32.Gemm(blas.NoTrans, blas.NoTrans, 1, m, m, 0, blas32.General{Rows: g, Cols: g, Stride: g, Data: c32})
	})
	// b = 8 and 32 in float64 arithmetic (bound with the dgemm rate) and
	// in float32 arithmetic (SingleBlocks; bound with the sgemm rate).
	for _, run := range []struct {
		cols   int
		single bool
	}{{1, false}, {8, false}, {32, false}, {8, true}, {32, true}} {
		cols := run.cols
		name := fmt.Sprintf("b=%d", cols)
		if run.single {
			name += "/float32"
		}
		b.Run(name, func(b *testing.B) {
			s.SingleBlocks = run.single
			defer func() { s.SingleBlocks = false }()
			rate := rate
			if run.single {
				rate = rate32
			}
			x := mat.NewDense(n, cols, nil)
			x.Apply(func(i, j int, _ float64) float64 { return float64((i*7+j)%13) - 6 }, x)
			y := mat.NewDense(n, cols, nil)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if cols == 1 {
					s.MulVec(y.RawMatrix().Data, x.RawMatrix().Data)
				} else {
					s.MulBlock(y, x)
				}
			}
			pass := time.Since(start).Seconds() / float64(b.N)
			bound := math.Max(float64(s.Bytes())/read, 2*float64(n)*float64(n)*float64(cols)/rate)
			b.ReportMetric(pass, "s/pass")
			b.ReportMetric(bound, "s-bound")
			b.ReportMetric(pass/bound, "pass/bound")
			b.ReportMetric(read/1e9, "read-GB/s")
			b.ReportMetric(rate/1e9, "gemm-GFLOP/s")
		})
	}
}

// The first touch of a float32 half-stored matrix: NewSymTiles32 makes its
// fresh pages resident (bigmem.Populate) before any product, which is
// part of every float32 Gram's time. n from KDUAL_BENCH_N (default
// 20 000; the paper's protocol is 60 000: 7.27 GB). Reports GB/s. Run
// with: KDUAL_BENCH_N=60000 go test -run '^$' -bench NewSymTiles32 -benchtime 1x ./linalg
func BenchmarkNewSymTiles32(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("KDUAL_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s, err := NewSymTiles32(n)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Bytes())/1e9/time.Since(start).Seconds(), "GB/s")
		b.ReportMetric(float64(s.Bytes())/1e9, "GB")
		s.Free()
	}
}
