package linalg

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
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

// OuterT32, MulT32 and MulTVec32 against float64 products of the same
// stored values, over more points than one block (8192 for OuterT32; 64
// and 4096 for the native products, with partial last blocks), centred and
// not.
func TestDense32Products(t *testing.T) {
	k, n, s := 7, 9000, 3
	ft, w := randDense32(t, k, n, 1, 0.5)
	defer ft.Free()
	mean := make([]float64, k)
	for r := 0; r < k; r++ {
		for _, v := range w.RawRowView(r) {
			mean[r] += v
		}
		mean[r] /= float64(n)
	}
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
		got, err := OuterT32(ft, mu)
		require.NoError(t, err)
		// The float32 sums of 8192 terms: γ₈₁₉₂ of the absolute products.
		var abs mat.Dense
		abs.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, f)
		var bound mat.Dense
		bound.Mul(abs.T(), &abs)
		for i := 0; i < k; i++ {
			for j := i; j < k; j++ {
				require.InDelta(t, want.At(i, j), got.At(i, j), 8192*math.Pow(2, -24)*bound.At(i, j)+1e-12)
			}
		}
		wm := mat.NewDense(k, s, []float64{1, 2, 3, -1, 0.5, 2, 0, 1, 1, 3, -2, 1, 1, 1, 1, 0.25, 0, -1, 2, 2, 2})
		var wantS mat.Dense
		wantS.Mul(f, wm)
		gotS, err := MulT32(ft, wm, mu)
		require.NoError(t, err)
		require.True(t, mat.EqualApprox(&wantS, gotS, 1e-10))
	}
	// Centred in place, then not centred again: the values OuterT32 and
	// MulT32 centred block by block.
	fc32 := &Dense32{Rows: ft.Rows, Cols: ft.Cols, Data: append([]float32(nil), ft.Data...)}
	require.NoError(t, CenterRows32(fc32, mean))
	a, err := OuterT32(ft, mean)
	require.NoError(t, err)
	b, err := OuterT32(fc32, nil)
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
	_, err = OuterT32(ft, []float64{1})
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
