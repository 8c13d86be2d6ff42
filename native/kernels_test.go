package native

import (
	"fmt"
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
	for c, s := range [][3]int{{1, 1, 1}, {4, 4, 8}, {5, 7, 13}, {9, 3, 64}, {13, 17, 7}, {8, 8, 0}, {5, 7, 13}, {4, 4, 8}} {
		m, n, d := s[0], s[1], s[2]
		lda, ldb, ldo := d+3, d+1, n+2
		if c >= 6 {
			lda, ldb, ldo = d, d, n // tight strides
		}
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
	// Empty tiles write nothing; negative sizes are refused.
	out := []float64{7, 7}
	require.NotPanics(t, func() { RBFTile(0, 2, out, 2, nil, []float64{0, 0}, -1, false) })
	require.NotPanics(t, func() { RBFTile(2, 0, out, 1, []float64{0, 0}, nil, -1, true) })
	require.Equal(t, []float64{7, 7}, out)
	require.Panics(t, func() { RBFTile(-1, 1, out, 1, ni, ni, -1, false) })
	require.Panics(t, func() { RBFTile(1, -1, out, 1, ni, ni, -1, false) })
}

func TestSymvBandMatchesProduct(t *testing.T) {
	if !HasDotKernel() {
		require.Panics(t, func() { SymvBand(1, []float64{1}, 1, []float64{1}, 0, 1, []float64{0}) })
		return
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for c, n := range []int{1, 3, 4, 5, 13, 37, 64, 1, 13} {
		lda := n + 2
		if c >= 7 {
			lda = n // tight stride
		}
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

// TileRowSymv and TileRowSymv64 add a row of stored tiles' contribution
// to y = A·x, on both builds: y_I += A_IJ·x_J and, except for a first
// tile on the diagonal, y_J += A_IJᵀ·x_I, against plain loops; bad
// arguments panic.
func TestTileRowSymvMatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, b := range testBuilds() {
		for _, tt := range []int{4, 8, 256} {
			for _, tiles := range []int{1, 3} {
				for _, diag := range []bool{false, true} {
					a := make([]float64, tiles*tt*tt)
					a32 := make([]float32, len(a))
					for i := range a {
						a32[i] = float32(rng.NormFloat64())
						a[i] = float64(a32[i])
					}
					xi, yi := randVec(rng, tt), randVec(rng, tt)
					xj, yj := randVec(rng, tiles*tt), randVec(rng, tiles*tt)
					wi, wj := append([]float64(nil), yi...), append([]float64(nil), yj...)
					for j := 0; j < tiles; j++ {
						for r := 0; r < tt; r++ {
							for c := 0; c < tt; c++ {
								v := a[j*tt*tt+r*tt+c]
								wi[r] += v * xj[j*tt+c]
								if !diag || j > 0 {
									wj[j*tt+c] += v * xi[r]
								}
							}
						}
					}
					for _, f32 := range []bool{false, true} {
						zi, zj := append([]float64(nil), yi...), append([]float64(nil), yj...)
						if f32 {
							b.TileRowSymv(tt, tiles, a32, xi, xj, zi, zj, diag)
						} else {
							b.TileRowSymv64(tt, tiles, a, xi, xj, zi, zj, diag)
						}
						tol := 1e-12 * float64(tt)
						for i := range zi {
							require.InDelta(t, wi[i], zi[i], tol, "%s t=%d tiles=%d diag=%v f32=%v y_I[%d]", b.Name(), tt, tiles, diag, f32, i)
						}
						for i := range zj {
							require.InDelta(t, wj[i], zj[i], tol, "%s t=%d tiles=%d diag=%v f32=%v y_J[%d]", b.Name(), tt, tiles, diag, f32, i)
						}
					}
				}
			}
		}
		v6 := make([]float64, 6)
		require.Panics(t, func() { b.TileRowSymv64(6, 1, make([]float64, 36), v6, v6, v6, v6, false) })
		require.Panics(t, func() { b.TileRowSymv(4, 2, make([]float32, 16), v6, v6, v6, v6, false) })
	}
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// TileRowSymm64 and TileRowSymm32 add a row of tiles' contribution to
// Y = A·X, on both builds, for packed tiles and for a strided full matrix
// with a narrower last tile, rows not a multiple of four, and blocks of
// 4, 8, 12 and 16 columns (the kernel's eight- and four-column paths):
// Y_I += A_IJ·X_J, Y_J += A_IJᵀ·X_I, and on a first diagonal tile (X_I
// and Y_I the start of X_J and Y_J) its upper triangle used both ways —
// the lower triangle is NaN and must not be read; bad arguments panic.
func TestTileRowSymmMatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	type shape struct {
		name string
		r    TileRow
	}
	shapes := []shape{
		{"packed", TileRow{M: 8, T: 8, Tiles: 3, Last: 8, Step: 64, Lda: 8}},
		{"packed-one", TileRow{M: 8, T: 8, Tiles: 1, Last: 8, Step: 64, Lda: 8}},
		{"full", TileRow{M: 8, T: 8, Tiles: 3, Last: 5, Step: 8, Lda: 23}},
		{"full-rows", TileRow{M: 6, T: 8, Tiles: 2, Last: 7, Step: 8, Lda: 15}},
		{"full-last-diag", TileRow{M: 7, T: 8, Tiles: 1, Last: 7, Step: 8, Lda: 7}},
	}
	for _, b := range testBuilds() {
		for _, sh := range shapes {
			for _, diag := range []bool{false, true} {
				r, ok := withDiag(sh.r, diag)
				if !ok {
					continue
				}
				for _, bp := range []int{4, 8, 12, 16} {
					a, a32 := tileRowData(rng, r)
					cols := r.cols()
					x, y := randVec(rng, cols*bp), randVec(rng, cols*bp)
					xi, yi := randVec(rng, r.M*bp), randVec(rng, r.M*bp)
					if diag {
						xi, yi = x[:r.M*bp], y[:r.M*bp]
					}
					// The reference, in separate arrays.
					wy := append([]float64(nil), y...)
					wyi := append([]float64(nil), yi...)
					if diag {
						wyi = wy[:r.M*bp]
					}
					refTileRow(r, a, bp, xi, x, wyi, wy, func(i, g int) int { return i*bp + g })
					for _, f32 := range []bool{false, true} {
						zy := append([]float64(nil), y...)
						zi := append([]float64(nil), yi...)
						if diag {
							zi = zy[:r.M*bp]
						}
						if f32 {
							b.TileRowSymm32(r, a32, bp, xi, x, zi, zy)
						} else {
							b.TileRowSymm64(r, a, bp, xi, x, zi, zy)
						}
						what := fmt.Sprintf("%s %s diag=%v bp=%d f32=%v", b.Name(), sh.name, diag, bp, f32)
						for i := range zy {
							require.InDelta(t, wy[i], zy[i], 1e-12, "%s Y_J[%d]", what, i)
						}
						if !diag {
							for i := range zi {
								require.InDelta(t, wyi[i], zi[i], 1e-12, "%s Y_I[%d]", what, i)
							}
						}
					}
				}
			}
		}
		v := make([]float64, 64)
		require.Panics(t, func() {
			b.TileRowSymm64(TileRow{M: 4, T: 4, Tiles: 1, Last: 4, Lda: 4}, make([]float64, 16), 6, v, v, v, v)
		})
		require.Panics(t, func() {
			b.TileRowSymm64(TileRow{M: 4, T: 4, Tiles: 2, Last: 4, Step: 16, Lda: 4}, make([]float64, 16), 4, v, v, v, v)
		})
		require.Panics(t, func() {
			b.TileRowSymm32(TileRow{M: 3, T: 4, Tiles: 1, Last: 4, Lda: 4, Diag: true}, make([]float32, 16), 4, v, v, v, v)
		})
		// Each operand one value short of its rows × bp: refused before the
		// kernel reads past it; exactly long enough: taken.
		row := TileRow{M: 4, T: 4, Tiles: 2, Last: 4, Step: 16, Lda: 4}
		ok := func(k int) []float64 { return make([]float64, k) }
		for arg := 0; arg < 4; arg++ {
			ops := [4][]float64{ok(4 * 8), ok(8 * 8), ok(4 * 8), ok(8 * 8)}
			ops[arg] = ops[arg][:len(ops[arg])-1]
			require.Panics(t, func() { b.TileRowSymm64(row, make([]float64, 32), 8, ops[0], ops[1], ops[2], ops[3]) }, "operand %d short", arg)
		}
		require.NotPanics(t, func() { b.TileRowSymm64(row, make([]float64, 32), 8, ok(32), ok(64), ok(32), ok(64)) })
	}
}

// MulT32Dot and MulT32Axpy add A·X and Aᵀ·X for a float32 A (with a row
// stride wider than its columns) and blocks in transposed layout, on both
// builds, against float64 loops over the same widened entries: odd sizes
// reach every tail (two rows at a time, four and eight columns), and
// entries outside the operands are left alone.
func TestMulT32MatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, b := range testBuilds() {
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
		// Vectors of exactly (bp−1)·ld + their length are enough; one
		// entry short of it panics.
		a := []float32{1, 2, 3, 4, 5, 6} // 2×3
		xt, yt := make([]float64, 3*5+3), make([]float64, 3*4+2)
		xt[0], xt[1], xt[2] = 1, 1, 1
		b.MulT32Dot(2, 3, a, 3, 4, xt, 5, yt, 4)
		require.Equal(t, []float64{6, 15}, yt[:2], b.Name())
		require.Panics(t, func() { b.MulT32Dot(2, 3, a, 3, 4, xt[:len(xt)-1], 5, yt, 4) })
		require.Panics(t, func() { b.MulT32Dot(2, 3, a, 3, 4, xt, 5, yt[:len(yt)-1], 4) })
		// A stride below one is refused as BLAS refuses it, even for an
		// empty product.
		require.Panics(t, func() { b.MulT32Dot(2, 0, a, 1, 4, xt, 0, yt, 4) })
		require.Panics(t, func() { b.MulT32Dot(0, 3, a, 3, 4, xt, 5, yt, 0) })
	}
}

// RBFMap32 gives exactly Widen then RBFMap, and RBFMap32To32 exactly that
// narrowed, Gaussian and Laplace, on both builds, with strides and a tail
// of fewer than four columns.
func TestRBFMap32EqualsWidenThenMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	for _, b := range testBuilds() {
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
			// To float32: the same values rounded, the padding untouched.
			got32 := make([]float32, (m-1)*ldo+n)
			want32 := make([]float32, (m-1)*ldo+n)
			for i := range got32 {
				got32[i], want32[i] = -7, -7
			}
			b.Narrow(m, n, want, ldo, want32, ldo)
			b.RBFMap32To32(m, n, src, lds, got32, ldo, ni, nj, -0.05, laplace)
			require.Equal(t, want32, got32, "%s laplace=%v to float32", b.Name(), laplace)
		}
		require.Panics(t, func() {
			b.RBFMap32(2, 3, make([]float32, 5), 3, make([]float64, 6), 3, make([]float64, 2), make([]float64, 3), -1, false)
		})
		require.Panics(t, func() {
			b.RBFMap32To32(2, 3, make([]float32, 6), 3, make([]float32, 5), 3, make([]float64, 2), make([]float64, 3), -1, false)
		})
		// No columns (or no rows): nothing to read, nothing written.
		out := []float64{9, 9, 9}
		require.NotPanics(t, func() { b.RBFMap32(3, 0, make([]float32, 2), 5, out, 5, make([]float64, 3), nil, -1, false) })
		require.NotPanics(t, func() { b.RBFMap32(0, 3, nil, 3, nil, 3, nil, make([]float64, 3), -1, false) })
		require.Equal(t, []float64{9, 9, 9}, out)
		// Scale 0 (c ≤ 0 holds): every entry exp(0) = 1; a positive scale
		// is refused.
		ones := make([]float64, 6)
		require.NotPanics(t, func() {
			b.RBFMap32(2, 3, []float32{1, 2, 3, 4, 5, 6}, 3, ones, 3, []float64{1, 2}, []float64{3, 4, 5}, 0, false)
		})
		require.Equal(t, []float64{1, 1, 1, 1, 1, 1}, ones)
		require.Panics(t, func() {
			b.RBFMap32(2, 3, make([]float32, 6), 3, ones, 3, make([]float64, 2), make([]float64, 3), 0.5, false)
		})
	}
}

// TileRowSymmT64 and TileRowSymmT32 (transposed small blocks) agree with
// loops on both builds, for the shapes of TestTileRowSymmMatchesLoops and
// tiles whose width and row count are not multiples of four, nb = 1 … 5
// (pairs of vectors and an odd one), strides longer than the vectors; the
// lower triangle of a diagonal tile is NaN and must not be read; the
// entries of Y past each vector's end are not touched; bad arguments
// panic.
func TestTileRowSymmTMatchesLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	shapes := []TileRow{
		{M: 8, T: 8, Tiles: 3, Last: 8, Step: 64, Lda: 8},
		{M: 8, T: 8, Tiles: 3, Last: 5, Step: 8, Lda: 23},
		{M: 6, T: 8, Tiles: 2, Last: 7, Step: 8, Lda: 15},
		{M: 7, T: 8, Tiles: 1, Last: 7, Step: 8, Lda: 7},
		{M: 12, T: 12, Tiles: 2, Last: 10, Step: 12, Lda: 22},
	}
	for _, b := range testBuilds() {
		for _, r0 := range shapes {
			for _, diag := range []bool{false, true} {
				r, ok := withDiag(r0, diag)
				if !ok {
					continue
				}
				a, a32 := tileRowData(rng, r)
				cols := r.cols()
				ld := cols + 3
				for nb := 1; nb <= 5; nb++ {
					x, y := randVec(rng, nb*ld), randVec(rng, nb*ld)
					xi, yi := randVec(rng, nb*ld), randVec(rng, nb*ld)
					if diag {
						xi, yi = x, y
					}
					wy := append([]float64(nil), y...)
					wyi := append([]float64(nil), yi...)
					if diag {
						wyi = wy
					}
					refTileRow(r, a, nb, xi, x, wyi, wy, func(i, g int) int { return g*ld + i })
					for _, f32 := range []bool{false, true} {
						zy := append([]float64(nil), y...)
						zi := append([]float64(nil), yi...)
						if diag {
							zi = zy
						}
						if f32 {
							b.TileRowSymmT32(r, a32, nb, xi, x, ld, zi, zy, ld)
						} else {
							b.TileRowSymmT64(r, a, nb, xi, x, ld, zi, zy, ld)
						}
						what := fmt.Sprintf("%s %+v nb=%d f32=%v", b.Name(), r, nb, f32)
						for i := range zy {
							require.InDelta(t, wy[i], zy[i], 1e-12, "%s Y_J[%d]", what, i)
						}
						for i := range zi {
							require.InDelta(t, wyi[i], zi[i], 1e-12, "%s Y_I[%d]", what, i)
						}
					}
				}
			}
		}
		v := make([]float64, 64)
		require.Panics(t, func() {
			b.TileRowSymmT64(TileRow{M: 4, T: 4, Tiles: 1, Last: 4, Lda: 4}, make([]float64, 16), 2, v, v, 3, v, v, 4)
		})
		require.Panics(t, func() {
			b.TileRowSymmT64(TileRow{M: 4, T: 4, Tiles: 1, Last: 4, Lda: 4}, make([]float64, 16), 3, v, v, 31, v, v, 31)
		})
		require.Panics(t, func() {
			b.TileRowSymmT32(TileRow{M: 4, T: 4, Tiles: 2, Last: 4, Step: 16, Lda: 4}, make([]float32, 16), 1, v, v, 8, v, v, 8)
		})
	}
}

// refTileRow adds a row of tiles' contribution to Y = A·X by loops, for
// nb vectors whose entry (i, g) (row i of a block, vector g) is at index
// at(i, g) of xi, x, yi, y: Y_I += A_IJ·X_J into yi and Y_J += A_IJᵀ·X_I
// into y, and on a first diagonal tile its upper triangle both ways into y.
func refTileRow(r TileRow, a []float64, nb int, xi, x, yi, y []float64, at func(i, g int) int) {
	for j := 0; j < r.Tiles; j++ {
		width := r.T
		if j == r.Tiles-1 {
			width = r.Last
		}
		diag := r.Diag && j == 0
		for row := 0; row < r.M; row++ {
			for col := 0; col < width; col++ {
				if diag && col < row {
					continue
				}
				v := a[j*r.Step+row*r.Lda+col]
				jc := j*r.T + col
				for g := 0; g < nb; g++ {
					if diag {
						y[at(row, g)] += v * x[at(jc, g)]
						if col != row {
							y[at(jc, g)] += v * x[at(row, g)]
						}
						continue
					}
					yi[at(row, g)] += v * x[at(jc, g)]
					y[at(jc, g)] += v * xi[at(row, g)]
				}
			}
		}
	}
}

// tileRowData returns the storage of a row of tiles r, as float64 and the
// same values in float32, random, with the lower triangle of a diagonal
// first tile NaN (it must not be read).
func tileRowData(rng *rand.Rand, r TileRow) ([]float64, []float32) {
	alen := (r.Tiles-1)*r.Step + (r.M-1)*r.Lda + r.Last
	if r.Tiles > 1 {
		alen = max(alen, (r.Tiles-2)*r.Step+(r.M-1)*r.Lda+r.T)
	}
	a := make([]float64, alen)
	a32 := make([]float32, alen)
	for i := range a {
		a32[i] = float32(rng.NormFloat64())
		a[i] = float64(a32[i])
	}
	if r.Diag {
		for row := 1; row < r.M; row++ {
			for col := 0; col < row; col++ {
				a[row*r.Lda+col], a32[row*r.Lda+col] = math.NaN(), float32(math.NaN())
			}
		}
	}
	return a, a32
}

// withDiag returns r with Diag set to diag, and whether that row is valid
// (a diagonal first tile is square).
func withDiag(r TileRow, diag bool) (TileRow, bool) {
	first := r.T
	if r.Tiles == 1 {
		first = r.Last
	}
	r.Diag = diag
	return r, !diag || r.M == first
}

// TileRowSymmS32 (float32 arithmetic) agrees with float64 loops over the
// same float32 tiles within its stated bound, (γ_64 + 2⁻²⁴)·(|A|·|X|) per
// entry, on both builds: tiles of more than 64 rows and columns (the
// partial sums go into Y every 64 columns and every 64 rows), rows not a
// multiple of four, a narrower last tile, packed and strided storage, a
// diagonal first tile whose lower triangle is NaN, and blocks of 8, 16 and
// 24 columns; bad arguments panic.
func TestTileRowSymmS32WithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	const u = 1.0 / (1 << 24)
	gamma := SymmSingleChunk * u / (1 - SymmSingleChunk*u)
	shapes := []struct {
		name string
		r    TileRow
	}{
		{"packed", TileRow{M: 136, T: 136, Tiles: 3, Last: 136, Step: 136 * 136, Lda: 136}},
		{"full", TileRow{M: 134, T: 136, Tiles: 2, Last: 101, Step: 136, Lda: 290}},
		{"full-last-diag", TileRow{M: 70, T: 72, Tiles: 1, Last: 70, Step: 72, Lda: 75}},
		{"small", TileRow{M: 7, T: 8, Tiles: 2, Last: 5, Step: 8, Lda: 13}},
	}
	for _, b := range testBuilds() {
		for _, sh := range shapes {
			for _, diag := range []bool{false, true} {
				r, ok := withDiag(sh.r, diag)
				if !ok {
					continue
				}
				for _, bp := range []int{8, 16, 24} {
					a, a32 := tileRowData(rng, r)
					cols := r.cols()
					x, y := randVec(rng, cols*bp), randVec(rng, cols*bp)
					xi, yi := randVec(rng, r.M*bp), randVec(rng, r.M*bp)
					if diag {
						xi, yi = x[:r.M*bp], y[:r.M*bp]
					}
					x32, xi32 := make([]float32, len(x)), make([]float32, len(xi))
					for i, v := range x {
						x32[i] = float32(v)
					}
					for i, v := range xi {
						xi32[i] = float32(v)
					}
					if diag {
						xi32 = x32[:r.M*bp]
					}
					// The exact product (of the unrounded X) and |A|·|X|.
					wy, wyi := append([]float64(nil), y...), append([]float64(nil), yi...)
					abs := func(v []float64) []float64 {
						w := make([]float64, len(v))
						for i, e := range v {
							w[i] = math.Abs(e)
						}
						return w
					}
					ay, ayi := make([]float64, len(y)), make([]float64, len(yi))
					if diag {
						wyi, ayi = wy[:r.M*bp], ay[:r.M*bp]
					}
					at := func(i, g int) int { return i*bp + g }
					refTileRow(r, a, bp, xi, x, wyi, wy, at)
					axi, ax := abs(xi), abs(x)
					if diag {
						axi = ax[:r.M*bp]
					}
					refTileRow(r, abs(a), bp, axi, ax, ayi, ay, at)

					zy, zi := append([]float64(nil), y...), append([]float64(nil), yi...)
					if diag {
						zi = zy[:r.M*bp]
					}
					ys := make([]float32, SymmSingleScratch(r.T, bp))
					for i := range ys {
						ys[i] = float32(math.NaN()) // scratch: overwritten before use
					}
					b.TileRowSymmS32(r, a32, bp, xi32, x32, zi, zy, ys)
					what := fmt.Sprintf("%s %s diag=%v bp=%d", b.Name(), sh.name, diag, bp)
					check := func(side string, want, got, bound []float64) {
						for i := range want {
							tol := (gamma+u)*bound[i]*(1+1e-6) + 1e-12
							require.InDelta(t, want[i], got[i], tol, "%s %s[%d]", what, side, i)
						}
					}
					check("Y_J", wy, zy, ay)
					if !diag {
						check("Y_I", wyi, zi, ayi)
					}
				}
			}
		}
		v := make([]float64, 64)
		f := make([]float32, SymmSingleScratch(4, 8))
		r := TileRow{M: 4, T: 4, Tiles: 1, Last: 4, Lda: 4}
		require.NotPanics(t, func() { b.TileRowSymmS32(r, make([]float32, 16), 8, f, f, v, v, f) })
		require.Panics(t, func() { b.TileRowSymmS32(r, make([]float32, 16), 4, f, f, v, v, f) })
		require.Panics(t, func() { b.TileRowSymmS32(r, make([]float32, 16), 8, f, f, v, v, f[:len(f)-1]) })
		require.Panics(t, func() { b.TileRowSymmS32(r, make([]float32, 16), 8, f[:31], f, v, v, f) })
	}
}

// TileRowSymmS32 adds a row's float32 partial sum into Y at least every
// SymmSingleChunk columns: with a row of ones against 1 followed by 135
// values just under 2⁻²⁴, a float32 sum loses each small value (1 + x
// rounds to 1), so one chain over all 136 columns is off by about 135·2⁻²⁴
// and breaks the stated bound, where chains of 64 lose at most 63 of them.
func TestTileRowSymmS32ChunksPartialSums(t *testing.T) {
	const u = 1.0 / (1 << 24)
	gamma := SymmSingleChunk * u / (1 - SymmSingleChunk*u)
	const m, n, bp = 4, 136, 8
	r := TileRow{M: m, T: n, Tiles: 1, Last: n, Step: n, Lda: n}
	a := make([]float32, m*n)
	for i := range a {
		a[i] = 1
	}
	small := float32(u * (1 - 1.0/1024))
	xj := make([]float32, n*bp)
	for c := 0; c < n; c++ {
		for g := 0; g < bp; g++ {
			xj[c*bp+g] = small
			if c == 0 {
				xj[c*bp+g] = 1
			}
		}
	}
	exact := 1 + float64(n-1)*float64(small)
	for _, b := range testBuilds() {
		xi := make([]float32, m*bp)
		yi, yj := make([]float64, m*bp), make([]float64, n*bp)
		b.TileRowSymmS32(r, a, bp, xi, xj, yi, yj, make([]float32, SymmSingleScratch(n, bp)))
		for i, v := range yi {
			require.InDelta(t, exact, v, (gamma+u)*exact, "%s Y_I[%d]", b.Name(), i)
		}
	}
}

// testBuilds: every build this processor runs, and Best.
func testBuilds() []Build { return append(Builds(), Best()) }

// The AVX-512 forms: WithWide switches on only what the processor runs,
// Best is the written rule (both block kernels in AVX-512 where present,
// the one-vector kernel in AVX2), and Builds lists the all-wide build where
// the processor has AVX-512.
func TestWideRule(t *testing.T) {
	all := AVX2().WithWide(true, true, true)
	s, g, v := all.Wide512()
	require.Equal(t, [3]bool{hasWide, hasWide, hasWide}, [3]bool{s, g, v})
	s, g, v = Baseline().WithWide(true, true, true).Wide512()
	require.False(t, s || g || v, "the SSE2 build has no AVX-512 forms")
	require.Equal(t, AVX2().WithWide(true, true, false), Best())
	_, ok := Wide()
	require.Equal(t, hasWide, ok)
	if hasWide {
		require.Contains(t, Builds(), Build{avx2: true, symm512: true, single512: true, symv512: true})
	}
}

// A build's name is its instruction set, then its AVX-512 kernels if any
// (the form kdual info prints).
func TestBuildName(t *testing.T) {
	require.Equal(t, "sse2", Baseline().Name())
	require.Equal(t, "avx2+fma", Build{avx2: true}.Name())
	require.Equal(t, "avx2+fma, avx-512: float64-arithmetic blocks, one vector", Build{avx2: true, symm512: true, symv512: true}.Name())
	require.Equal(t, "sse2, avx-512: float32-arithmetic blocks", Build{single512: true}.Name())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// MulT32Rows reads a wide-stride A in place: against float64 loops on a
// Y that is not zero, and on a zero Y the same values as MulT32Axpy's
// AVX2 form (one FMA chain per entry): one and several blocks of rows
// with a partial last one, groups of eight and four vectors, columns with
// and without a tail past the last sixteen. Without the AVX-512 block
// kernel it does nothing and says so.
func TestMulT32Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 3))
	for _, b := range testBuilds() {
		if symm, _, _ := b.Wide512(); !symm {
			y := []float64{1, 2, 3, 4}
			require.False(t, b.MulT32Rows(1, 1, []float32{1}, 1, 4, make([]float64, 4), 1, y, 1), b.Name())
			require.Equal(t, []float64{1, 2, 3, 4}, y)
			continue
		}
		for _, sz := range [][3]int{{1, 16, 4}, {16, 33, 8}, {17, 64, 12}, {40, 1024, 20}, {100, 7, 4}, {33, 250, 24}} {
			m, n, bp := sz[0], sz[1], sz[2]
			lda, ld := 3*n+5, max(m, n)+3
			a := make([]float32, (m-1)*lda+n)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			xt := make([]float64, bp*ld)
			y := make([]float64, bp*ld)
			for i := range xt {
				xt[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			want := append([]float64(nil), y...)
			for g := 0; g < bp; g++ {
				for r := 0; r < m; r++ {
					for c := 0; c < n; c++ {
						want[g*ld+c] += float64(a[r*lda+c]) * xt[g*ld+r]
					}
				}
			}
			require.True(t, b.MulT32Rows(m, n, a, lda, bp, xt, ld, y, ld))
			for i := range want {
				require.InDelta(t, want[i], y[i], 1e-13*float64(m+1), "m=%d n=%d bp=%d entry %d", m, n, bp, i)
			}
			zero, axpy := make([]float64, bp*ld), make([]float64, bp*ld)
			b.MulT32Rows(m, n, a, lda, bp, xt, ld, zero, ld)
			AVX2().MulT32Axpy(m, n, a, lda, bp, xt, ld, axpy, ld)
			for i := range zero {
				require.True(t, zero[i] == axpy[i], "m=%d n=%d bp=%d entry %d: %g and %g", m, n, bp, i, zero[i], axpy[i])
			}
		}
		require.Panics(t, func() { b.MulT32Rows(2, 3, make([]float32, 6), 3, 4, make([]float64, 8), 2, make([]float64, 8), 2) })
	}
}

// The slice checks of DotNT, DotNT32 and TileRowSymmT64 sit exactly at
// the lengths their docs state: those lengths run, one element less in
// any argument panics (an off-by-one check would read past a slice in C).
func TestSliceChecksAtTheBoundary(t *testing.T) {
	if HasDotKernel() {
		const m, n, d, lda, ldb, ldo = 3, 2, 5, 6, 7, 4
		la, lb, lo := (m-1)*lda+d, (n-1)*ldb+d, (m-1)*ldo+n
		DotNT(m, n, d, make([]float64, la), lda, make([]float64, lb), ldb, make([]float64, lo), ldo)
		DotNT32(m, n, d, make([]float32, la), lda, make([]float64, lb), ldb, make([]float64, lo), ldo)
		// No rows of A or of B: no work, whatever the slices; no columns:
		// every product is the empty sum 0.
		DotNT(0, n, d, nil, lda, nil, ldb, nil, ldo)
		DotNT(m, 0, d, nil, lda, nil, ldb, nil, ldo)
		DotNT32(0, n, d, nil, lda, nil, ldb, nil, ldo)
		DotNT32(m, 0, d, nil, lda, nil, ldb, nil, ldo)
		for _, f := range []func(out []float64){
			func(out []float64) { DotNT(m, n, 0, nil, 0, nil, 0, out, ldo) },
			func(out []float64) { DotNT32(m, n, 0, nil, 0, nil, 0, out, ldo) },
		} {
			out := make([]float64, lo)
			for i := range out {
				out[i] = 7
			}
			f(out)
			for i := 0; i < m; i++ {
				require.Equal(t, make([]float64, n), out[i*ldo:i*ldo+n], "d = 0, row %d", i)
			}
		}
		for k := 0; k < 3; k++ {
			l := [3]int{la, lb, lo}
			l[k]--
			require.Panics(t, func() {
				DotNT(m, n, d, make([]float64, l[0]), lda, make([]float64, l[1]), ldb, make([]float64, l[2]), ldo)
			}, "DotNT, argument %d one short", k)
			require.Panics(t, func() {
				DotNT32(m, n, d, make([]float32, l[0]), lda, make([]float64, l[1]), ldb, make([]float64, l[2]), ldo)
			}, "DotNT32, argument %d one short", k)
		}
	}
	r := TileRow{M: 4, T: 4, Tiles: 2, Last: 3, Step: 16, Lda: 4}
	const nb, ld = 2, 8
	alen := (r.Tiles-1)*r.Step + (r.M-1)*r.Lda + r.Last
	li, lj := (nb-1)*ld+r.M, (nb-1)*ld+r.cols()
	b := Best()
	b.TileRowSymmT64(r, make([]float64, alen), nb, make([]float64, li), make([]float64, lj), ld, make([]float64, li), make([]float64, lj), ld)
	for k := 0; k < 5; k++ {
		l := [5]int{alen, li, lj, li, lj}
		l[k]--
		require.Panics(t, func() {
			b.TileRowSymmT64(r, make([]float64, l[0]), nb, make([]float64, l[1]), make([]float64, l[2]), ld,
				make([]float64, l[3]), make([]float64, l[4]), ld)
		}, "TileRowSymmT64, argument %d one short", k)
	}
}

// RBFMap on a single row and on a single column: each entry is
// exp(c·δ), δ = max(ni + nj − 2g, 0) (its square root for laplace).
func TestRBFMapThinBlocks(t *testing.T) {
	const c = -0.7
	for _, b := range testBuilds() {
		for _, laplace := range []bool{false, true} {
			for _, dims := range [][2]int{{1, 3}, {3, 1}, {1, 1}} {
				m, n := dims[0], dims[1]
				ni, nj := []float64{1, 2, 3}[:m], []float64{0.5, 1.5, 2.5}[:n]
				out := make([]float64, m*n)
				want := make([]float64, m*n)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						g := 0.25 * float64(i+j)
						out[i*n+j] = g
						d := math.Max(ni[i]+nj[j]-2*g, 0)
						if laplace {
							d = math.Sqrt(d)
						}
						want[i*n+j] = math.Exp(c * d)
					}
				}
				b.RBFMap(m, n, out, n, ni, nj, c, laplace)
				for i := range want {
					require.InDelta(t, want[i], out[i], 1e-14*want[i], "%s %d×%d laplace=%v entry %d", b.Name(), m, n, laplace, i)
				}
			}
		}
	}
}

// Empty products — no rows or no columns — are no-ops on empty operands,
// for every build and each of the three float32-matrix kernels.
func TestMulT32Empty(t *testing.T) {
	for _, b := range testBuilds() {
		for _, mn := range [][2]int{{0, 5}, {3, 0}, {0, 0}} {
			m, n := mn[0], mn[1]
			lda := max(1, n)
			require.NotPanics(t, func() {
				b.MulT32Dot(m, n, nil, lda, 4, nil, max(1, n), nil, max(1, m))
				b.MulT32Axpy(m, n, nil, lda, 4, nil, max(1, m), nil, max(1, n))
				b.MulT32Rows(m, n, nil, lda, 4, nil, max(1, m), nil, max(1, n))
			}, "%s m=%d n=%d", b.Name(), m, n)
		}
	}
}

// validTileRow asks for every tile's last entry: the last (Last columns)
// and the one before it (T columns), which lies further out when the tiles
// start less than T − Last apart; rows of length M·Lda, and none for no
// rows.
func TestValidTileRow(t *testing.T) {
	r := TileRow{M: 1, T: 8, Tiles: 3, Last: 2, Step: 4, Lda: 8}
	require.False(t, validTileRow(r, 11), "the middle tile ends at 12")
	require.True(t, validTileRow(r, 12))
	r = TileRow{M: 3, T: 8, Tiles: 2, Last: 8, Step: 8, Lda: 16}
	require.False(t, validTileRow(r, 2*16+15))
	require.True(t, validTileRow(r, 2*16+16))
	require.True(t, validTileRow(TileRow{M: 0, T: 8, Tiles: 2, Last: 8, Step: 8, Lda: 16}, 0))
	require.False(t, validTileRow(TileRow{M: 1, T: 8, Tiles: 1, Last: 9, Step: 8, Lda: 16}, 100), "a last tile wider than T")
}
