package native

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Syrk32Pack lays every row's values out point by point in panels of 16
// (zeros past k), shifted and summed as a plain loop does when asked, the
// AVX-512 form writing the same values and sums as the baseline, at edges
// of the panels and of the squares it transposes; Syrk32Tiles's two
// forms agree on exact integer products, each entry the plain sum.
func TestSyrk32Forms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 15, 16, 17, 40, 48, 50, 100} {
		for _, kc := range []int{1, 15, 16, 33, 64} {
			lda := kc + 3
			a := make([]float32, (k-1)*lda+kc)
			for i := range a {
				a[i] = float32(r.IntN(9) - 4)
			}
			shift := make([]float64, k)
			for i := range shift {
				shift[i] = r.NormFloat64()
			}
			panels := Syrk32Panels(k)
			require.Equal(t, 0, panels%3)
			require.GreaterOrEqual(t, panels*16, k)
			for _, sh := range [][]float64{nil, shift} {
				var want []float32
				var wantSums []float64
				for _, wide := range []bool{false, true} {
					pk := make([]float32, Syrk32PackLen(k, kc))
					for i := range pk {
						pk[i] = -1e30 // what the packing must overwrite, and the gaps keep
					}
					sums := make([]float64, k)
					Syrk32Pack(wide, k, kc, a, lda, 0, panels, sh, sums, pk)
					for q := 0; q < panels; q++ {
						for p := 0; p < kc; p++ {
							for rr := 0; rr < 16; rr++ {
								row := 16*q + rr
								v := float32(0)
								if row < k {
									v = a[row*lda+p]
									if sh != nil {
										v = float32(float64(v) - sh[row])
									}
								}
								require.Equal(t, v, pk[q*(16*kc+16)+p*16+rr], "k %d kc %d panel %d point %d row %d", k, kc, q, p, rr)
							}
						}
					}
					if sh != nil {
						for row := 0; row < k; row++ {
							s := 0.0
							for p := 0; p < kc; p++ {
								s += float64(float32(float64(a[row*lda+p]) - sh[row]))
							}
							require.Equal(t, s, sums[row], "row %d", row)
						}
					}
					for q := 0; q < panels; q++ {
						for _, v := range pk[q*(16*kc+16)+16*kc : (q+1)*(16*kc+16)] {
							require.Equal(t, float32(-1e30), v, "the gap after panel %d", q)
						}
					}
					if want == nil {
						want, wantSums = pk, sums
					} else {
						require.Equal(t, want, pk)
						require.Equal(t, wantSums, sums)
					}
				}
				if sh != nil {
					continue
				}
				// The tiles on the integer values: exact sums either way.
				for _, wide := range []bool{false, true} {
					c := make([]float32, k*k)
					rows := (k + 7) / 8 * 8
					for r0 := 0; r0 < k; r0 += 8 {
						Syrk32Tiles(wide, k, kc, want, r0, min(r0+8, rows, k), c, k, true)
					}
					for i := 0; i < k; i++ {
						for j := i; j < k; j++ {
							s := float32(0)
							for p := 0; p < kc; p++ {
								s += a[i*lda+p] * a[j*lda+p]
							}
							require.Equal(t, s, c[i*k+j], "wide %v k %d kc %d (%d, %d)", wide, k, kc, i, j)
						}
					}
				}
			}
		}
	}
	require.Panics(t, func() {
		Syrk32Pack(false, 3, 4, make([]float32, 11), 4, 0, 3, nil, nil, make([]float32, Syrk32PackLen(3, 4)))
	})
	require.Panics(t, func() {
		Syrk32Tiles(false, 3, 4, make([]float32, Syrk32PackLen(3, 4)), 1, 3, make([]float32, 9), 3, true)
	})
}

// Syrk32Run on its own threads: the same bits on 1, 2, 3 and 7 threads
// (more threads than tasks included), with and without the shift, and
// the tiles' and packing's values: each row's upper triangle the
// Syrk32Tiles sums of the packed values block after block.
func TestSyrk32Run(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const k, w, kc, lda = 70, 300, 128, 307
	a := make([]float32, (k-1)*lda+w)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	shift := make([]float64, k)
	for i := range shift {
		shift[i] = r.NormFloat64() / 4
	}
	for _, wide := range []bool{false, true} {
		for _, sh := range [][]float64{nil, shift} {
			// Block by block with the single-threaded parts.
			want, wantSums := make([]float32, k*k), make([]float64, k)
			pk := make([]float32, Syrk32PackLen(k, kc))
			for p0 := 0; p0 < w; p0 += kc {
				n := min(kc, w-p0)
				Syrk32Pack(wide, k, n, a[p0:], lda, 0, Syrk32Panels(k), sh, wantSums, pk)
				Syrk32Tiles(wide, k, n, pk, 0, k, want, k, p0 == 0)
			}
			for _, threads := range []int{1, 2, 3, 7} {
				got, sums := make([]float32, k*k), make([]float64, k)
				Syrk32Run(wide, threads, k, kc, w, a, lda, sh, sums, make([]float32, Syrk32PackLen(k, kc)), got, k, 16)
				for i := 0; i < k; i++ {
					require.Equal(t, want[i*k+i:(i+1)*k], got[i*k+i:(i+1)*k], "wide %v shift %v threads %d row %d", wide, sh != nil, threads, i)
				}
				if sh != nil {
					require.Equal(t, wantSums, sums, "threads %d", threads)
				}
			}
		}
	}
	require.Panics(t, func() {
		Syrk32Run(false, 2, 3, 4, 4, make([]float32, 12), 4, nil, nil, make([]float32, Syrk32PackLen(3, 4)), make([]float32, 9), 3, 12)
	})
}
