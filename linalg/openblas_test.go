package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/status"
)

func randDense(r *rand.Rand, m, n int) *mat.Dense {
	a := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, r.NormFloat64())
		}
	}
	return a
}

func requireClose(t *testing.T, want, got mat.Matrix, what string) {
	t.Helper()
	wr, wc := want.Dims()
	gr, gc := got.Dims()
	require.Equal(t, [2]int{wr, wc}, [2]int{gr, gc}, what)
	for i := 0; i < wr; i++ {
		for j := 0; j < wc; j++ {
			require.InDelta(t, want.At(i, j), got.At(i, j), 1e-12*(1+math.Abs(want.At(i, j))), "%s (%d,%d)", what, i, j)
		}
	}
}

// The explicit OpenBLAS products equal gonum's for every operand form
// kdual passes (Dense, views, transposes, VecDense, symmetric, a generic
// Matrix) and when dst aliases an operand.
func TestOpenBLASProductsEqualGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a := randDense(r, 7, 5)
	b := randDense(r, 5, 4)
	bt := randDense(r, 4, 5)
	big := randDense(r, 9, 9)
	view := big.Slice(1, 6, 2, 6) // 5×4, stride 9
	v := mat.NewVecDense(5, nil)
	for i := 0; i < 5; i++ {
		v.SetVec(i, r.NormFloat64())
	}
	col := big.ColView(3) // strided vector of 9
	sym := mat.NewSymDense(5, nil)
	SymOuterK(sym, 1, randDense(r, 5, 3))
	for _, c := range []struct {
		name string
		x, y mat.Matrix
	}{
		{"dense", a, b}, {"transpose", a, bt.T()}, {"both transposed", b.T(), a.T()}, {"view", a, view},
		{"vector", a, v}, {"vector row", v.T(), b}, {"strided column", big.T(), col}, {"symmetric", a, sym},
		{"generic", a, mat.NewDiagDense(5, []float64{1, 2, 3, 4, 5})},
	} {
		var want, got mat.Dense
		want.Mul(c.x, c.y)
		Mul(&got, c.x, c.y)
		requireClose(t, &want, &got, c.name)
	}
	// Aliasing: the product lands in a temporary first.
	s := randDense(r, 5, 5)
	want := mat.NewDense(5, 5, nil)
	want.Mul(s, s)
	Mul(s, s, s)
	requireClose(t, want, s, "aliased")
	// A single shared entry is an overlap too: dst the first entry of a.
	row := mat.NewDense(1, 3, []float64{1, 2, 3})
	first := row.Slice(0, 1, 0, 1).(*mat.Dense)
	Mul(first, row, mat.NewDense(3, 1, []float64{4, 5, 6}))
	require.Equal(t, 32.0, first.At(0, 0), "dst aliasing one entry of a")
	require.Panics(t, func() { Mul(mat.NewDense(2, 2, nil), a, b) }, "wrong destination shape")
	require.Panics(t, func() { Mul(&mat.Dense{}, a, a) }, "inner dimensions differ")

	var wv, gv mat.VecDense
	wv.MulVec(a, v)
	MulVec(&gv, a, v)
	requireClose(t, &wv, &gv, "MulVec")
	wv.Reset()
	gv.Reset()
	wv.MulVec(big.T(), col)
	MulVec(&gv, big.T(), col)
	requireClose(t, &wv, &gv, "MulVec transposed, strided")
	// One row and one column, into a used destination of the right length.
	one := mat.NewVecDense(1, []float64{math.NaN()})
	MulVec(one, mat.NewDense(1, 3, []float64{1, 2, 3}), mat.NewVecDense(3, []float64{4, 5, 6}))
	require.Equal(t, 32.0, one.AtVec(0))
	MulVec(one, mat.NewDense(1, 1, []float64{-2}), mat.NewVecDense(1, []float64{3}))
	require.Equal(t, -6.0, one.AtVec(0))

	var ws, gs mat.SymDense
	ws.SymOuterK(0.5, a)
	SymOuterK(&gs, 0.5, a)
	requireClose(t, &ws, &gs, "SymOuterK")
	SymOuterK(&gs, 0.5, a) // a used dst is overwritten, not added to
	requireClose(t, &ws, &gs, "SymOuterK again")
	ws.Reset()
	gs.Reset()
	ws.SymRankK(sym, -2, b)
	SymRankK(&gs, sym, -2, b)
	requireClose(t, &ws, &gs, "SymRankK")
	ws.Reset()
	gs.Reset()
	ws.SymRankOne(sym, 3, v)
	SymRankOne(&gs, sym, 3, v)
	requireClose(t, &ws, &gs, "SymRankOne")
	SymRankOne(sym, sym, 3, v) // in place
	requireClose(t, &ws, sym, "SymRankOne in place")

	require.InDelta(t, mat.Dot(v, col.(*mat.VecDense).SliceVec(0, 5)), Dot(v, col.(*mat.VecDense).SliceVec(0, 5)), 1e-12)
	for _, m := range []mat.Matrix{a, view, v, a.T()} {
		require.InDelta(t, mat.Norm(m, 2), Norm2(m), 1e-12*mat.Norm(m, 2))
	}
	require.True(t, math.IsNaN(Norm2(mat.NewDense(1, 2, []float64{1, math.NaN()}))))
	require.Equal(t, 1e300*math.Sqrt(2), Norm2(mat.NewDense(1, 2, []float64{1e300, 1e300})), "no overflow")
	require.Zero(t, Norm2(&mat.Dense{}), "an empty matrix")
	require.Zero(t, Norm2(&mat.VecDense{}), "an empty vector")

	for _, m := range []mat.Matrix{a, a.T(), view, v, v.T(), col, sym} {
		requireClose(t, mat.DenseCopyOf(m), CopyOf(m), "CopyOf")
		dst := mat.NewDense(3, 3, nil)
		rr, cc := Copy(dst, m)
		mr, mc := m.Dims()
		require.Equal(t, [2]int{min(3, mr), min(3, mc)}, [2]int{rr, cc})
		w := mat.NewDense(3, 3, nil)
		w.Copy(m)
		requireClose(t, w, dst, "Copy")
	}
}

// Solve equals gonum's on a well-conditioned system, refuses NaN and bad
// shapes, and reports singular and ill-conditioned matrices.
func TestSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := randDense(r, 6, 6)
	for i := 0; i < 6; i++ {
		a.Set(i, i, a.At(i, i)+6)
	}
	b := randDense(r, 6, 3)
	var want, got mat.Dense
	require.NoError(t, want.Solve(a, b))
	require.NoError(t, Solve(&got, a, b))
	requireClose(t, &want, &got, "Solve")
	var gt mat.Dense
	require.NoError(t, Solve(&gt, a.T(), b))
	var check mat.Dense
	check.Mul(a.T(), &gt)
	requireClose(t, b, &check, "Solve transposed: a·x = b")
	require.ErrorIs(t, Solve(&mat.Dense{}, a, randDense(r, 5, 2)), status.ErrInvalid)
	nan := mat.DenseCopyOf(a)
	nan.Set(2, 3, math.NaN())
	require.ErrorIs(t, Solve(&mat.Dense{}, nan, b), status.ErrInvalid)
	sing := mat.NewDense(2, 2, []float64{1, 2, 2, 4})
	require.Error(t, Solve(&mat.Dense{}, sing, mat.NewDense(2, 1, []float64{1, 1})))
	ill := mat.NewDense(2, 2, []float64{1, 1, 1, 1 + 1e-17*4})
	err := Solve(&mat.Dense{}, ill, mat.NewDense(2, 1, []float64{1, 1}))
	require.Error(t, err)
}

// empty is a matrix of r rows and c columns, one of them zero (gonum's
// Dense cannot have a zero dimension; any mat.Matrix may).
type empty struct{ r, c int }

func (e empty) Dims() (int, int)    { return e.r, e.c }
func (e empty) At(i, j int) float64 { panic(mat.ErrIndexOutOfRange) }
func (e empty) T() mat.Matrix       { return mat.Transpose{Matrix: e} }

// A product over an empty inner dimension is zero, written into dst's own
// entries only: a view's parent keeps its other rows.
func TestMulEmptyInner(t *testing.T) {
	parent := mat.NewDense(4, 5, nil)
	for i := 0; i < 4; i++ {
		for j := 0; j < 5; j++ {
			parent.Set(i, j, 7)
		}
	}
	view := parent.Slice(0, 3, 0, 4).(*mat.Dense)
	Mul(view, empty{3, 0}, empty{0, 4})
	for i := 0; i < 4; i++ {
		for j := 0; j < 5; j++ {
			want := 7.0
			if i < 3 && j < 4 {
				want = 0
			}
			require.Equal(t, want, parent.At(i, j), "(%d,%d)", i, j)
		}
	}
	var fresh mat.Dense
	Mul(&fresh, empty{2, 0}, empty{0, 3})
	require.True(t, mat.Equal(mat.NewDense(2, 3, nil), &fresh))
}

// overlaps is true exactly when the two storages share an element:
// adjacent slices of one array (either order, either operand transposed)
// do not, one element in common does.
func TestOverlapsExact(t *testing.T) {
	buf := make([]float64, 40)
	at := func(lo, hi int) *mat.Dense { return mat.NewDense(1, hi-lo, buf[lo:hi]) }
	for _, c := range []struct {
		d, a [2]int
		want bool
	}{
		{[2]int{10, 20}, [2]int{0, 10}, false}, {[2]int{0, 10}, [2]int{10, 20}, false},
		{[2]int{10, 20}, [2]int{0, 11}, true}, {[2]int{0, 11}, [2]int{10, 20}, true},
		{[2]int{5, 6}, [2]int{0, 40}, true}, {[2]int{20, 40}, [2]int{0, 20}, false},
	} {
		d, a := at(c.d[0], c.d[1]), at(c.a[0], c.a[1])
		require.Equal(t, c.want, overlaps(d, a), "dst %v, a %v", c.d, c.a)
		require.Equal(t, c.want, overlaps(d, a.T()), "dst %v, aᵀ %v", c.d, c.a)
	}
}
