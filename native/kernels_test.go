package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireKernels reports whether this processor runs the kernels; where it
// does not, the kernels must refuse to run (the callers then use OpenBLAS,
// which package linalg's tests cover).
func requireKernels(t *testing.T) bool {
	t.Helper()
	if HasDotKernel() {
		return true
	}
	require.Panics(t, func() { DotNT(1, 1, 1, []float64{1}, 1, []float64{1}, 1, []float64{0}, 1) })
	require.Panics(t, func() { RBFTile(1, 1, []float64{0}, 1, []float64{0}, []float64{0}, -1, false) })
	require.Panics(t, func() { DotNT32(1, 1, 1, []float32{1}, 1, []float64{1}, 1, []float64{0}, 1) })
	return false
}

func TestDotNTMatchesLoops(t *testing.T) {
	if !requireKernels(t) {
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Shapes around the 4×4 register block and the 8-wide vectors.
	for _, s := range [][3]int{{1, 1, 1}, {4, 4, 8}, {5, 7, 13}, {9, 3, 64}, {13, 17, 7}, {8, 8, 0}} {
		m, n, d := s[0], s[1], s[2]
		lda, ldb, ldo := d+3, d+1, n+2
		a := make([]float64, m*lda)
		b := make([]float64, n*ldb)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		out := make([]float64, m*ldo)
		for i := range out {
			out[i] = math.NaN() // padding must stay untouched
		}
		DotNT(m, n, d, a, lda, b, ldb, out, ldo)
		a32 := make([]float32, len(a))
		for i, v := range a {
			a32[i] = float32(v)
		}
		out32 := make([]float64, m*ldo)
		DotNT32(m, n, d, a32, lda, b, ldb, out32, ldo)
		for i := 0; i < m; i++ {
			for j := 0; j < ldo; j++ {
				if j >= n {
					require.True(t, math.IsNaN(out[i*ldo+j]), "padding written")
					continue
				}
				want, want32, scale := 0.0, 0.0, 0.0
				for k := 0; k < d; k++ {
					want += a[i*lda+k] * b[j*ldb+k]
					want32 += float64(a32[i*lda+k]) * b[j*ldb+k]
					scale += math.Abs(a[i*lda+k] * b[j*ldb+k])
				}
				// Reordered summation: |Δ| ≤ d·ε·Σ|aₖbₖ|.
				require.InDelta(t, want, out[i*ldo+j], float64(d+1)*1.2e-16*scale+1e-300)
				// The float32 kernel sums the float32 values in float64.
				require.InDelta(t, want32, out32[i*ldo+j], float64(d+1)*1.2e-16*scale+1e-300)
			}
		}
	}
	require.Panics(t, func() { DotNT(2, 2, 3, make([]float64, 3), 3, make([]float64, 6), 3, make([]float64, 4), 2) })
}

func TestRBFTileMatchesMathExp(t *testing.T) {
	if !requireKernels(t) {
		return
	}
	rng := rand.New(rand.NewPCG(3, 4))
	m, n, ldo := 7, 29, 31
	for _, laplace := range []bool{false, true} {
		for _, c := range []float64{-1e-3, -0.5, -3, -200} {
			out := make([]float64, m*ldo)
			ni := make([]float64, m)
			nj := make([]float64, n)
			want := make([]float64, m*ldo)
			for j := range nj {
				nj[j] = 10 * rng.Float64()
			}
			for i := 0; i < m; i++ {
				ni[i] = 10 * rng.Float64()
				for j := 0; j < n; j++ {
					g := (rng.Float64()*2 - 1) * math.Sqrt(ni[i]*nj[j])
					if i == j {
						g = 0.5 * (ni[i] + nj[j]) // distance 0
					}
					out[i*ldo+j] = g
					d := math.Max(ni[i]+nj[j]-2*g, 0)
					if laplace {
						d = math.Sqrt(d)
					}
					want[i*ldo+j] = math.Exp(c * d)
				}
			}
			RBFTile(m, n, out, ldo, ni, nj, c, laplace)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					w := want[i*ldo+j]
					if w < math.Exp(-708) {
						require.Zero(t, out[i*ldo+j])
						continue
					}
					// Two ulp of relative error, plus the rounding of c·δ.
					require.InDelta(t, w, out[i*ldo+j], 4.5e-16*w*math.Max(1, math.Abs(math.Log(w))))
				}
			}
		}
	}
	// The exponential itself over its whole range, edge cases included.
	xs := []float64{0, math.Copysign(0, -1), -1e-300, -0.34657, -0.34658, -1, -10, -100, -700, -708, -708.5, -745, -1e6, math.Inf(-1)}
	for len(xs) < 1000 {
		xs = append(xs, -750*rng.Float64())
	}
	ni := make([]float64, 1)
	for _, x := range xs {
		// out = g with ni = nj = 0 gives δ = max(−2g, 0); g = −½ and c = x.
		out := []float64{-0.5}
		RBFTile(1, 1, out, 1, ni, ni, x, false)
		w := math.Exp(x)
		if x < -708 {
			require.Zero(t, out[0], "x=%g", x)
			continue
		}
		require.InDelta(t, w, out[0], 2.5e-16*w, "x=%g", x)
	}
}

func TestSymvBandMatchesProduct(t *testing.T) {
	if !HasDotKernel() {
		require.Panics(t, func() { SymvBand(1, []float64{1}, 1, []float64{1}, 0, 1, []float64{0}) })
		return
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 4, 5, 13, 37, 64} {
		lda := n + 2
		a := make([]float64, n*lda)
		a32 := make([]float32, n*lda)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := rng.NormFloat64()
				a[i*lda+j] = v
				a[j*lda+i] = math.NaN() // the lower triangle must not be read
				if i == j {
					a[i*lda+i] = v
				}
				a32[i*lda+j] = float32(v)
			}
		}
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		// Two bands with private accumulators, as the callers use them.
		mid := n / 3
		y1, y2 := make([]float64, n), make([]float64, n)
		SymvBand(n, a, lda, x, 0, mid, y1)
		SymvBand(n, a, lda, x, mid, n, y2)
		z1, z2 := make([]float64, n), make([]float64, n)
		SymvBand32(n, a32, lda, x, 0, mid, z1)
		SymvBand32(n, a32, lda, x, mid, n, z2)
		for i := 0; i < n; i++ {
			want, want32, scale := 0.0, 0.0, 0.0
			for j := 0; j < n; j++ {
				lo, hi := min(i, j), max(i, j)
				want += a[lo*lda+hi] * x[j]
				want32 += float64(a32[lo*lda+hi]) * x[j]
				scale += math.Abs(a[lo*lda+hi] * x[j])
			}
			require.InDelta(t, want, y1[i]+y2[i], float64(n+1)*1.2e-16*scale, "n=%d row %d", n, i)
			require.InDelta(t, want32, z1[i]+z2[i], float64(n+1)*1.2e-16*scale, "n=%d row %d (float32)", n, i)
		}
	}
	require.Panics(t, func() { SymvBand(3, make([]float64, 9), 3, make([]float64, 3), 2, 1, make([]float64, 3)) })
}

// TileSymv64 adds a float64 tile's contribution to y = A·x, on both
// builds: y_I += A·x_J and, off the diagonal, y_J += Aᵀ·x_I, against plain
// loops; bad arguments panic.
func TestTileSymv64MatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, b := range []Build{Best(), Baseline()} {
		for _, tt := range []int{4, 8, 256} {
			for _, off := range []bool{false, true} {
				a := make([]float64, tt*tt)
				xi, xj := make([]float64, tt), make([]float64, tt)
				yi, yj := make([]float64, tt), make([]float64, tt)
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				for i := 0; i < tt; i++ {
					xi[i], xj[i], yi[i], yj[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
				}
				wi, wj := append([]float64(nil), yi...), append([]float64(nil), yj...)
				for r := 0; r < tt; r++ {
					for c := 0; c < tt; c++ {
						wi[r] += a[r*tt+c] * xj[c]
						if off {
							wj[c] += a[r*tt+c] * xi[r]
						}
					}
				}
				b.TileSymv64(tt, a, xi, xj, yi, yj, off)
				for i := 0; i < tt; i++ {
					require.InDelta(t, wi[i], yi[i], 1e-12*float64(tt), "%s t=%d off=%v y_I[%d]", b.Name(), tt, off, i)
					require.InDelta(t, wj[i], yj[i], 1e-12*float64(tt), "%s t=%d off=%v y_J[%d]", b.Name(), tt, off, i)
				}
			}
		}
		require.Panics(t, func() {
			b.TileSymv64(6, make([]float64, 36), make([]float64, 6), make([]float64, 6), make([]float64, 6), make([]float64, 6), true)
		})
	}
}

// MulT32Dot and MulT32Axpy add A·X and Aᵀ·X for a float32 A (with a row
// stride wider than its columns) and blocks in transposed layout, on both
// builds, against float64 loops over the same widened entries: odd sizes
// reach every tail (two rows at a time, four and eight columns), and
// entries outside the operands are left alone.
func TestMulT32MatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, b := range []Build{Best(), Baseline()} {
		for _, sz := range [][3]int{{1, 1, 4}, {5, 3, 4}, {7, 13, 8}, {64, 37, 12}, {300, 257, 20}} {
			m, n, bp := sz[0], sz[1], sz[2]
			lda, ld := n+3, max(m, n)+5
			a := make([]float32, (m-1)*lda+n)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			xt := make([]float64, bp*ld)
			for i := range xt {
				xt[i] = rng.NormFloat64()
			}
			for _, dot := range []bool{true, false} {
				yt := make([]float64, bp*ld)
				for i := range yt {
					yt[i] = rng.NormFloat64()
				}
				want := append([]float64(nil), yt...)
				for g := 0; g < bp; g++ {
					for r := 0; r < m; r++ {
						for c := 0; c < n; c++ {
							v := float64(a[r*lda+c])
							if dot {
								want[g*ld+r] += v * xt[g*ld+c]
							} else {
								want[g*ld+c] += v * xt[g*ld+r]
							}
						}
					}
				}
				if dot {
					b.MulT32Dot(m, n, a, lda, bp, xt, ld, yt, ld)
				} else {
					b.MulT32Axpy(m, n, a, lda, bp, xt, ld, yt, ld)
				}
				for i := range want {
					require.InDelta(t, want[i], yt[i], 1e-13*float64(max(m, n)), "%s m=%d n=%d bp=%d dot=%v entry %d", b.Name(), m, n, bp, dot, i)
				}
			}
		}
		require.Panics(t, func() { b.MulT32Dot(2, 3, make([]float32, 6), 3, 3, make([]float64, 12), 3, make([]float64, 12), 3) })
		require.Panics(t, func() { b.MulT32Axpy(2, 3, make([]float32, 6), 3, 4, make([]float64, 8), 2, make([]float64, 8), 2) })
	}
}

// RBFMap32 gives exactly Widen then RBFMap, Gaussian and Laplace, on both
// builds, with strides and a tail of fewer than four columns.
func TestRBFMap32EqualsWidenThenMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	for _, b := range []Build{Best(), Baseline()} {
		for _, laplace := range []bool{false, true} {
			m, n, lds, ldo := 9, 23, 27, 25
			src := make([]float32, (m-1)*lds+n)
			for i := range src {
				src[i] = float32(rng.NormFloat64() * 3)
			}
			ni, nj := make([]float64, m), make([]float64, n)
			for i := range ni {
				ni[i] = 10 + rng.Float64()
			}
			for j := range nj {
				nj[j] = 10 + rng.Float64()
			}
			got := make([]float64, (m-1)*ldo+n)
			want := make([]float64, (m-1)*ldo+n)
			for i := range got {
				got[i], want[i] = -7, -7
			}
			b.Widen(m, n, src, lds, want, ldo)
			b.RBFMap(m, n, want, ldo, ni, nj, -0.05, laplace)
			b.RBFMap32(m, n, src, lds, got, ldo, ni, nj, -0.05, laplace)
			require.Equal(t, want, got, "%s laplace=%v", b.Name(), laplace)
		}
		require.Panics(t, func() {
			b.RBFMap32(2, 3, make([]float32, 5), 3, make([]float64, 6), 3, make([]float64, 2), make([]float64, 3), -1, false)
		})
	}
}
