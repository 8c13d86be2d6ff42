package linalg

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
)

func randDense32(t *testing.T, r, c int, seed uint64, off float64) (*Dense32, *mat.Dense) {
	t.Helper()
	g := rng.New(seed)
	m, err := NewDense32(r, c)
	require.NoError(t, err)
	w := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := float32(g.NormFloat64() + off)
			m.Data[i*c+j] = v
			w.Set(i, j, float64(v))
		}
	}
	return m, w
}

// rowMeans returns the mean of each row of w.
func rowMeans(w *mat.Dense) []float64 {
	k, n := w.Dims()
	mean := make([]float64, k)
	for r := 0; r < k; r++ {
		for _, v := range w.RawRowView(r) {
			mean[r] += v
		}
		mean[r] /= float64(n)
	}
	return mean
}

// T32Scores.Block on blocks of any size, read in place from a strided
// Fᵀ, with one scratch reused from block to block (dirty from the last),
// gives MulT32Into's bits on every build, centred and not.
func TestT32ScoresBlocks(t *testing.T) {
	k, n, s := 9, 700, 5
	ft, w := randDense32(t, k, n, 3, 0.5)
	defer ft.Free()
	wm := mat.NewDense(k, s, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < s; j++ {
			wm.Set(i, j, math.Cos(float64(7*i+j)))
		}
	}
	for _, mu := range [][]float64{nil, rowMeans(w)} {
		for _, b := range native.Builds() {
			whole := mat.NewDense(n, s, nil)
			mulT32Into(whole, ft, wm, mu, b)
			plan := newT32Scores(wm, mu, b)
			var sc T32Scratch
			got := mat.NewDense(n, s, nil)
			for c0, blk := 0, 0; c0 < n; blk++ {
				cols := min([]int{1, 63, 64, 65, 300}[blk%5], n-c0)
				plan.Block(got.Slice(c0, c0+cols, 0, s).(*mat.Dense), ft.Data[c0:], n, cols, &sc)
				c0 += cols
			}
			require.True(t, mat.Equal(whole, got), "%s, centred %v", b.Name(), mu != nil)
		}
	}
}

// OuterT32, MulT32 and MulTVec32 against float64 products of the same
// stored values, over more points than one block (8192 for OuterT32; 64
// and 4096 for the native products, with partial last blocks), centred and
// not.
func TestDense32Products(t *testing.T) {
	k, n, s := 7, 9000, 3
	ft, w := randDense32(t, k, n, 1, 0.5)
	defer ft.Free()
	mean := rowMeans(w)
	fc := mat.DenseCopyOf(w.T()) // n×k
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			fc.Set(i, j, fc.At(i, j)-mean[j])
		}
	}
	for _, mu := range [][]float64{nil, mean} {
		f := mat.DenseCopyOf(w.T())
		if mu != nil {
			f = fc
		}
		var want mat.Dense
		want.Mul(f.T(), f)
		// The float32 sums of 8192 terms: γ₈₁₉₂ of the absolute products,
		// by ssyrk and by the packed kernel.
		var abs mat.Dense
		abs.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, f)
		var bound mat.Dense
		bound.Mul(abs.T(), &abs)
		for _, packed := range []bool{false, true} {
			got, err := OuterT32(ft, mu, packed)
			require.NoError(t, err)
			for i := 0; i < k; i++ {
				for j := i; j < k; j++ {
					require.InDelta(t, want.At(i, j), got.At(i, j), 8192*math.Pow(2, -24)*bound.At(i, j)+1e-12)
				}
			}
		}
		wm := mat.NewDense(k, s, []float64{1, 2, 3, -1, 0.5, 2, 0, 1, 1, 3, -2, 1, 1, 1, 1, 0.25, 0, -1, 2, 2, 2})
		var wantS mat.Dense
		wantS.Mul(f, wm)
		gotS, err := MulT32(ft, wm, mu)
		require.NoError(t, err)
		require.True(t, mat.EqualApprox(&wantS, gotS, 1e-10))
		// Every build's path: F read in place (AVX-512) or copied by
		// blocks (AVX2, SSE2); AVX-512 and AVX2 agree exactly.
		byBuild := map[string]*mat.Dense{}
		for _, b := range native.Builds() {
			got := mat.NewDense(n, s, nil)
			mulT32Into(got, ft, wm, mu, b)
			require.True(t, mat.EqualApprox(&wantS, got, 1e-10), b.Name())
			byBuild[b.Name()] = got
		}
		if w, ok := native.Wide(); ok {
			require.True(t, mat.Equal(byBuild[native.AVX2().Name()], byBuild[w.Name()]))
		}
	}
	// Centred in place, then not centred again: the values OuterT32 and
	// MulT32 centred block by block.
	fc32 := &Dense32{Rows: ft.Rows, Cols: ft.Cols, Data: append([]float32(nil), ft.Data...)}
	require.NoError(t, CenterRows32(fc32, mean))
	a, err := OuterT32(ft, mean, false)
	require.NoError(t, err)
	b, err := OuterT32(fc32, nil, false)
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(a, b, 1e-9*mat.Norm(a, math.Inf(1))))
	for r := 0; r < k; r++ {
		for j := 0; j < n; j++ {
			require.Equal(t, float32(float64(ft.Data[r*n+j])-mean[r]), fc32.Data[r*n+j])
		}
	}
	require.ErrorIs(t, CenterRows32(fc32, mean[:1]), status.ErrInvalid)
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i%7)-3)
		x.Set(i, 1, 1)
	}
	var want mat.Dense
	want.Mul(w, x)
	got := mat.NewDense(k, 2, nil)
	MulTVec32(ft, x, got)
	require.True(t, mat.EqualApprox(&want, got, 1e-9))
	_, err = OuterT32(ft, []float64{1}, false)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = MulT32(ft, mat.NewDense(2, 2, nil), nil)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// A view of the top rows keeps the storage mapped after the matrix it came
// from is unreachable (collections run while only the view is held), and
// reads what the matrix held.
func TestTopRowsKeepsStorage(t *testing.T) {
	views := make([]mat.Matrix, 0, 20)
	for k := 0; k < 20; k++ {
		m, err := NewDense32(300, 50)
		require.NoError(t, err)
		for i := range m.Data {
			m.Data[i] = float32(k)
		}
		views = append(views, m.TopRows(100).T())
	}
	for round := 0; round < 3; round++ {
		runtime.GC()
		for k, v := range views {
			r, c := v.Dims()
			require.Equal(t, []int{50, 100}, []int{r, c})
			require.Equal(t, float64(k), v.At(49, 99), "view %d after a collection", k)
		}
	}
	m, err := NewDense32(4, 3)
	require.NoError(t, err)
	v := m.TopRows(2)
	v.Free() // a view's Free leaves the storage
	m.Data[0] = 7
	require.Equal(t, 7.0, v.At(0, 0))
	m.Free()
	require.Panics(t, func() { m.TopRows(5) })
}

// OuterT32Mul is OuterT32's matrix times x without forming it: centred and
// not, across several blocks of points and a partial chunk, both widths,
// one and two whole groups of 32 columns, within the float32 bound of the
// float64 product; the same bits with one goroutine or many; shapes
// refused with typed errors.
func TestOuterT32Mul(t *testing.T) {
	k, n := 45, 2*8192+300
	ft, w := randDense32(t, k, n, 9, 0.7)
	defer ft.Free()
	mean := rowMeans(w)
	g := rng.New(4)
	for _, b := range []int{3, 16, 20, 32, 45, 64} {
		x := mat.NewDense(k, b, nil)
		for i := 0; i < k; i++ {
			for j := 0; j < b; j++ {
				x.Set(i, j, g.NormFloat64())
			}
		}
		for _, mu := range [][]float64{nil, mean} {
			f := mat.DenseCopyOf(w.T()) // n×k
			if mu != nil {
				for i := 0; i < n; i++ {
					for j := 0; j < k; j++ {
						f.Set(i, j, f.At(i, j)-mu[j])
					}
				}
			}
			var fx, want mat.Dense
			fx.Mul(f, x)
			want.Mul(f.T(), &fx)
			// Bound: (k + 8192 + 4)·u of |F|ᵀ·|F|·|x|, and the rounding of
			// the centred values.
			var af, afx, bound mat.Dense
			af.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, f)
			var ax mat.Dense
			ax.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, x)
			afx.Mul(&af, &ax)
			bound.Mul(af.T(), &afx)
			for _, nb := range []native.Build{native.Baseline(), native.AVX2(), native.Best()} {
				got := mat.NewDense(k, b, nil)
				require.NoError(t, OuterT32Mul(nb, ft, mu, x, got))
				for i := 0; i < k; i++ {
					for j := 0; j < b; j++ {
						require.InDelta(t, want.At(i, j), got.At(i, j), float64(k+8192+8)*0x1p-24*bound.At(i, j), "b %d centred %v (%d,%d)", b, mu != nil, i, j)
					}
				}
				old := runtime.GOMAXPROCS(1)
				one := mat.NewDense(k, b, nil)
				err := OuterT32Mul(nb, ft, mu, x, one)
				runtime.GOMAXPROCS(old)
				require.NoError(t, err)
				require.True(t, mat.Equal(got, one), "the bits depend on the goroutines")
			}
		}
	}
	x := mat.NewDense(k, 2, nil)
	require.ErrorIs(t, OuterT32Mul(native.Best(), ft, nil, x, mat.NewDense(k, 3, nil)), status.ErrInvalid)
	require.ErrorIs(t, OuterT32Mul(native.Best(), ft, nil, mat.NewDense(k+1, 2, nil), mat.NewDense(k+1, 2, nil)), status.ErrInvalid)
	require.ErrorIs(t, OuterT32Mul(native.Best(), ft, mean[:3], x, mat.NewDense(k, 2, nil)), status.ErrInvalid)
}

// AddOuterRows32 over a whole matrix, on a zero dst, gives OuterT32's bits
// (the same panels, here two of them); it adds to what dst holds; the
// shapes are checked.
func TestAddOuterRows32Whole(t *testing.T) {
	const k, n = 5, outerPanel + 808
	ft, err := NewDense32(k, n)
	require.NoError(t, err)
	defer ft.Free()
	for i := range ft.Data {
		ft.Data[i] = float32(math.Sin(float64(i)*0.37)) + 0.25
	}
	f64 := mat.NewDense(k, n, nil)
	for i, v := range ft.Data {
		f64.RawMatrix().Data[i] = float64(v)
	}
	var ref mat.Dense
	ref.Mul(f64, f64.T())
	for _, packed := range []bool{false, true} {
		want, err := OuterT32(ft, nil, packed)
		require.NoError(t, err)
		got := mat.NewSymDense(k, nil)
		require.NoError(t, AddOuterRows32(got, ft.Data, n, n, packed, nil, nil))
		require.Equal(t, want.RawSymmetric().Data, got.RawSymmetric().Data)
		// Against the float64 product, and adding to an identity.
		plus := mat.NewSymDense(k, nil)
		for i := 0; i < k; i++ {
			plus.SetSym(i, i, 1)
		}
		require.NoError(t, AddOuterRows32(plus, ft.Data, n, n, packed, make([]float32, k*k), make([]float32, PackScratch32(k, n))))
		for i := 0; i < k; i++ {
			for j := i; j < k; j++ {
				id := 0.0
				if i == j {
					id = 1
				}
				require.InDelta(t, ref.At(i, j)+id, plus.At(i, j), 1e-5*math.Abs(ref.At(i, j)))
			}
		}
	}
	require.ErrorIs(t, AddOuterRows32(mat.NewSymDense(k+1, nil), ft.Data, n, n, false, nil, nil), status.ErrInvalid)
}

// SubATA32 subtracts Aᵀ·A (float32 products) from a symmetric matrix: the
// float64 product of the same float32 values to float32 accuracy, only
// the upper triangle written; mismatched sizes are refused.
func TestSubATA32(t *testing.T) {
	const k, p = 37, 11
	a := make([]float32, k*p)
	af := mat.NewDense(k, p, nil)
	for i := range a {
		a[i] = float32(math.Cos(float64(i)*0.61)) + 0.5
		af.RawMatrix().Data[i] = float64(a[i])
	}
	var ata mat.Dense
	ata.Mul(af.T(), af)
	dst := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			dst.SetSym(i, j, float64(i+2*j))
		}
	}
	// Scratch of any contents is overwritten; none, or too short, is
	// allocated.
	nan := make([]float32, p*p)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	for _, acc := range [][]float32{nil, nan, make([]float32, p*p-1)} {
		d := mat.NewSymDense(p, nil)
		d.CopySym(dst)
		require.NoError(t, SubATA32(d, a, k, acc))
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				want := float64(i+2*j) - ata.At(i, j)
				require.InDelta(t, want, d.At(i, j), 1e-5*(math.Abs(ata.At(i, j))+1), "(%d, %d)", i, j)
			}
		}
	}
	require.Error(t, SubATA32(dst, a[:k*p-1], k, nil))
	require.Error(t, SubATA32(dst, nil, 0, nil))
}

// AddOuterRows32 reads columns of a wider matrix in place: the same bits
// as on a copy of those columns (several panels), and refuses
// a stride below the width or data too short for the rows.
func TestAddOuterRows32(t *testing.T) {
	const k, ld, j0, w = 4, outerPanel + 900, 37, outerPanel + 500
	data := make([]float32, k*ld)
	for i := range data {
		data[i] = float32(math.Sin(float64(i)*0.23)) - 0.1
	}
	cols, err := NewDense32(k, w)
	require.NoError(t, err)
	defer cols.Free()
	for r := 0; r < k; r++ {
		copy(cols.Row(r), data[r*ld+j0:r*ld+j0+w])
	}
	for _, packed := range []bool{false, true} {
		want := mat.NewSymDense(k, nil)
		require.NoError(t, AddOuterRows32(want, cols.Data, w, w, packed, nil, nil))
		got := mat.NewSymDense(k, nil)
		require.NoError(t, AddOuterRows32(got, data[j0:], w, ld, packed, nil, nil))
		require.Equal(t, want.RawSymmetric().Data, got.RawSymmetric().Data)
	}
	got := mat.NewSymDense(k, nil)
	require.Error(t, AddOuterRows32(got, data, ld+1, ld, false, nil, nil))
	require.Error(t, AddOuterRows32(got, data[ld:], w, ld, false, nil, nil))
	require.Error(t, AddOuterRows32(got, data, 0, ld, false, nil, nil))
}

// Levels8 as a source of rows: values Step·level, whole rows up to the
// last one read, anything past the end or not whole rows refused, and
// Check's three refusals.
func TestLevels8Rows(t *testing.T) {
	x := &Levels8{Rows: 3, Cols: 2, Step: 0.5, Data: []uint8{1, 2, 3, 4, 5, 255}}
	row := make([]float64, 2)
	x.Row(2, row)
	require.Equal(t, []float64{2.5, 127.5}, row)
	got := make([]uint8, 4)
	require.NoError(t, x.ReadRows(1, got), "the last two rows")
	require.Equal(t, []uint8{3, 4, 5, 255}, got)
	require.Error(t, x.ReadRows(2, got), "one row past the end")
	require.Error(t, x.ReadRows(-1, got[:2]))
	require.Error(t, x.ReadRows(0, got[:3]), "not whole rows")
	require.NoError(t, x.Check("x"))
	for _, bad := range []*Levels8{nil, {Rows: 0, Cols: 2, Step: 1}, {Rows: 4, Cols: 2, Step: 1, Data: x.Data},
		{Rows: 3, Cols: 2, Step: 0, Data: x.Data}, {Rows: 3, Cols: 2, Step: math.Inf(1), Data: x.Data}, {Rows: 3, Cols: 2, Step: math.NaN(), Data: x.Data}} {
		require.ErrorIs(t, bad.Check("x"), status.ErrInvalid)
	}
}

// Dense32Of rounds every entry of x, a view with a wider stride included,
// to float32 once, in a matrix of its own; non-finite data are refused.
func TestDense32Of(t *testing.T) {
	parent := mat.NewDense(3, 5, []float64{1.1, 2, 3, -99, -99, 4, 5.5, 6, -99, -99, 7, 8, 1e-40, -99, -99})
	x := parent.Slice(0, 3, 0, 3).(*mat.Dense)
	y, err := Dense32Of(x)
	require.NoError(t, err)
	require.Equal(t, [2]int{3, 3}, [2]int{y.Rows, y.Cols})
	require.Equal(t, []float32{1.1, 2, 3, 4, 5.5, 6, 7, 8, float32(1e-40)}, y.Data)
	parent.Set(0, 0, 0)
	require.Equal(t, float32(1.1), y.Data[0], "its own storage")
	// At reads inside the matrix only (gonum's index panic outside).
	require.Equal(t, float64(float32(1e-40)), y.At(2, 2))
	for _, ij := range [][2]int{{3, 0}, {0, 3}, {-1, 0}, {0, -1}} {
		require.PanicsWithValue(t, mat.ErrIndexOutOfRange, func() { y.At(ij[0], ij[1]) }, "At(%d, %d)", ij[0], ij[1])
	}
	parent.Set(2, 1, math.NaN())
	_, err = Dense32Of(x)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Syrk32 by OpenBLAS and by both forms of the packed kernel: on small
// integers every float32 sum is exact, so each form gives the integer
// upper triangle to the bit (edges of the panels, the column blocks and
// the packed blocks of points included, rows read at a stride wider than
// the points); on real values each entry is within (w+2)·u of the sum of
// its absolute products; the packed kernel gives the same bits on one
// goroutine as on several.
func TestSyrk32(t *testing.T) {
	forms := []struct {
		name string
		run  func(acc []float32, k, w int, data []float32, ld int)
	}{
		{"ssyrk", func(acc []float32, k, w int, data []float32, ld int) { Syrk32(false, acc, k, w, data, ld, nil) }},
		{"packed", func(acc []float32, k, w int, data []float32, ld int) {
			syrkNative(false, acc, k, w, data, ld, nil, nil, nil)
		}},
	}
	if native.HasWide() {
		forms = append(forms, struct {
			name string
			run  func(acc []float32, k, w int, data []float32, ld int)
		}{"packed avx-512", func(acc []float32, k, w int, data []float32, ld int) {
			syrkNative(true, acc, k, w, data, ld, nil, nil, make([]float32, PackScratch32(k, w)))
		}})
	}
	g := rng.New(7)
	for _, k := range []int{1, 3, 16, 17, 47, 48, 49, 97, 130} {
		for _, w := range []int{1, 5, 16, 17, syrkDepth - 1, syrkDepth, syrkDepth + 1, 2*syrkDepth + 77} {
			ld := w + 3
			ints := make([]float32, (k-1)*ld+w)
			reals := make([]float32, len(ints))
			for i := range ints {
				ints[i] = float32(g.IntN(7) - 3)
				reals[i] = float32(g.NormFloat64() + 0.3)
			}
			for _, f := range forms {
				acc := make([]float32, k*k)
				for i := range acc {
					acc[i] = float32(math.NaN())
				}
				f.run(acc, k, w, ints, ld)
				for i := 0; i < k; i++ {
					for j := i; j < k; j++ {
						var want int64
						for p := 0; p < w; p++ {
							want += int64(ints[i*ld+p]) * int64(ints[j*ld+p])
						}
						require.Equal(t, float32(want), acc[i*k+j], "%s k %d w %d (%d, %d)", f.name, k, w, i, j)
					}
				}
				f.run(acc, k, w, reals, ld)
				for i := 0; i < k; i++ {
					for j := i; j < k; j++ {
						var want, abs float64
						for p := 0; p < w; p++ {
							v := float64(reals[i*ld+p]) * float64(reals[j*ld+p])
							want += v
							abs += math.Abs(v)
						}
						require.InDelta(t, want, float64(acc[i*k+j]), float64(w+2)*0x1p-24*abs, "%s k %d w %d (%d, %d)", f.name, k, w, i, j)
					}
				}
			}
		}
	}
	// The same bits on one goroutine and on several (columns split among
	// them as they come free).
	const k, w = 200, 3*syrkDepth + 5
	data := make([]float32, k*w)
	for i := range data {
		data[i] = float32(g.NormFloat64())
	}
	for _, wide := range []bool{false, native.HasWide()} {
		many := make([]float32, k*k)
		syrkNative(wide, many, k, w, data, w, nil, nil, nil)
		prev := runtime.GOMAXPROCS(1)
		one := make([]float32, k*k)
		syrkNative(wide, one, k, w, data, w, nil, nil, nil)
		runtime.GOMAXPROCS(prev)
		for i := 0; i < k; i++ {
			require.Equal(t, one[i*k+i:(i+1)*k], many[i*k+i:(i+1)*k], "row %d", i)
		}
	}
}

// ShiftRows32 gives the plain loop's bits — each value less its row's
// shift rounded once, the row's sum over ascending points in float64 —
// for any count of rows (four at a time, the rest, blocks of rows on
// several goroutines), any stride, and leaves the gaps between rows
// alone.
func TestShiftRowsPlain(t *testing.T) {
	r := rng.New(8)
	for _, rows := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 37} {
		const cw, ld = 37, 41
		y := make([]float32, rows*ld)
		shift := make([]float64, rows)
		for i := range y {
			y[i] = float32(r.NormFloat64())
		}
		for a := range shift {
			shift[a] = r.NormFloat64() / 3
		}
		want, wantSums := make([]float32, len(y)), make([]float64, rows)
		copy(want, y)
		for a := 0; a < rows; a++ {
			for j := 0; j < cw; j++ {
				want[a*ld+j] = float32(float64(want[a*ld+j]) - shift[a])
				wantSums[a] += float64(want[a*ld+j])
			}
		}
		sums := make([]float64, rows)
		ShiftRows32(y, ld, cw, shift, sums)
		require.Equal(t, want, y, "%d rows", rows)
		require.Equal(t, wantSums, sums, "%d rows", rows)
	}
}

// AddShiftedOuterRows32 is ShiftRows32 then AddOuterRows32 to the bit, on
// the ssyrk path and on the packed kernel's (which shifts as it packs and
// leaves the data as they were), with scratch of any length; it refuses
// mismatched shifts and sums and chunks wider than a panel.
func TestAddShiftedOuterRows32(t *testing.T) {
	r := rng.New(9)
	for _, packed := range []bool{false, true} {
		for _, k := range []int{5, 17, 130} {
			for _, w := range []int{1, 17, syrkDepth + 88, 2048} {
				ld := w + 5
				data := make([]float32, (k-1)*ld+w)
				for i := range data {
					data[i] = float32(r.NormFloat64() + 2)
				}
				shift := make([]float64, k)
				for a := range shift {
					shift[a] = 2 + r.NormFloat64()/10
				}
				y := append([]float32(nil), data...)
				want, wantSums := mat.NewSymDense(k, nil), make([]float64, k)
				ShiftRows32(y, ld, w, shift, wantSums)
				require.NoError(t, AddOuterRows32(want, y, w, ld, packed, nil, nil))
				for _, pack := range [][]float32{nil, make([]float32, PackScratch32(k, w))} {
					got, sums := mat.NewSymDense(k, nil), make([]float64, k)
					in := append([]float32(nil), data...)
					require.NoError(t, AddShiftedOuterRows32(got, in, w, ld, shift, sums, packed, nil, pack))
					require.Equal(t, want.RawSymmetric().Data, got.RawSymmetric().Data, "packed %v k %d w %d", packed, k, w)
					require.Equal(t, wantSums, sums, "packed %v k %d w %d", packed, k, w)
					if packed {
						require.Equal(t, data, in, "the packed kernel leaves the data")
					}
				}
			}
		}
	}
	g := mat.NewSymDense(3, nil)
	data := make([]float32, 3*outerPanel+3)
	require.ErrorIs(t, AddShiftedOuterRows32(g, data, 4, 4, make([]float64, 2), make([]float64, 3), false, nil, nil), status.ErrInvalid)
	require.ErrorIs(t, AddShiftedOuterRows32(g, data, 4, 4, make([]float64, 3), make([]float64, 2), true, nil, nil), status.ErrInvalid)
	require.ErrorIs(t, AddShiftedOuterRows32(g, data, outerPanel+1, outerPanel+1, make([]float64, 3), make([]float64, 3), true, nil, nil), status.ErrInvalid)
	// Data that end inside the last row, and a stride below the width.
	require.ErrorIs(t, AddShiftedOuterRows32(g, data[:2*100+99], 100, 100, make([]float64, 3), make([]float64, 3), true, nil, nil), status.ErrInvalid)
	require.ErrorIs(t, AddShiftedOuterRows32(g, data, 100, 99, make([]float64, 3), make([]float64, 3), true, nil, nil), status.ErrInvalid)
	require.NoError(t, AddShiftedOuterRows32(g, data[:2*100+100], 100, 100, make([]float64, 3), make([]float64, 3), true, nil, nil))
}
