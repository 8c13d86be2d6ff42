package eig

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/testmat"
)

// repairBlock on an expansion block whose middle column lies in the
// basis's span (an invariant subspace): afterwards the basis and the block
// are orthonormal together, and the block still reproduces W's part off
// the basis through R (W − Q₀Q₀ᵀW = Q_block·R, upper triangular), the
// replaced column with zero coupling.
func TestRepairBlockKeepsQR(t *testing.T) {
	const n, cur, b = 12, 3, 3
	r := rand.New(rand.NewPCG(21, 22))
	v := mat.NewDense(n, cur+b, nil)
	q := testmat.RandOrthogonal(r, n) // its first cur columns: the basis
	for i := 0; i < n; i++ {
		for j := 0; j < cur; j++ {
			v.Set(i, j, q.At(i, j))
		}
		for j := cur; j < cur+b; j++ {
			v.Set(i, j, math.NaN()) // the block before repair: unusable
		}
	}
	w := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		w.Set(i, 0, r.NormFloat64())
		w.Set(i, 1, 2*v.At(i, 0)-v.At(i, 2)) // in the basis's span
		w.Set(i, 2, r.NormFloat64())
	}
	rr := []float64{1, 0, 0, 0, 0, 0, 0, 0, 1} // the middle diagonal negligible
	wk := mat.DenseCopyOf(w)
	require.NoError(t, krylovSchur{}.repairBlock(v, cur, b, rr, 1, n, 0, Local{}, r, w))
	require.Equal(t, wk, w, "w is read, not written")
	requireOrthonormal(t, v)
	// W's part off the basis, against the block times R.
	q0 := v.Slice(0, n, 0, cur)
	blk := v.Slice(0, n, cur, cur+b)
	var coef, proj, off, qb mat.Dense
	coef.Mul(q0.T(), w)
	proj.Mul(q0, &coef)
	off.Sub(w, &proj)
	qb.Mul(blk, mat.NewDense(b, b, rr))
	require.True(t, mat.EqualApprox(&off, &qb, 1e-12), "W − Q₀Q₀ᵀW ≠ Q_block·R")
	for c := 0; c < b; c++ {
		for row := c + 1; row < b; row++ {
			require.Zero(t, rr[row*b+c], "R is upper triangular")
		}
	}
	require.Zero(t, rr[1*b+1], "the replaced column: zero coupling")
}

// The start block (no basis before it, w nil): a column with a negligible
// R diagonal is replaced by a random unit vector orthogonal to the
// block's other columns, before and after it; the good columns stay as
// they were and the replaced column's row of R is zero from the diagonal.
func TestRepairStartBlock(t *testing.T) {
	const n, b = 12, 4
	r := rand.New(rand.NewPCG(23, 24))
	q := testmat.RandOrthogonal(r, n)
	v := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < b; j++ {
			v.Set(i, j, q.At(i, j))
		}
		v.Set(i, 1, math.NaN()) // the bad column: unusable as it is
	}
	before := mat.DenseCopyOf(v)
	rr := make([]float64, b*b)
	for c := 0; c < b; c++ {
		rr[c*b+c] = 1
	}
	rr[1*b+1], rr[1*b+2] = 1e-30, 0.5 // negligible diagonal, some coupling
	require.NoError(t, krylovSchur{}.repairBlock(v, 0, b, rr, 1, n, 0, Local{}, r, nil))
	requireOrthonormal(t, v)
	for _, j := range []int{0, 2, 3} {
		require.Equal(t, mat.Col(nil, j, before), mat.Col(nil, j, v), "good column %d", j)
	}
	require.Equal(t, []float64{0, 0, 0}, rr[1*b+1:2*b])
}

// requireOrthonormal checks VᵀV = I to 10⁻¹³ an entry.
func requireOrthonormal(t *testing.T, v *mat.Dense) {
	t.Helper()
	var vtv mat.Dense
	vtv.Mul(v.T(), v)
	_, c := v.Dims()
	for i := 0; i < c; i++ {
		for j := 0; j < c; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			require.InDelta(t, want, vtv.At(i, j), 1e-13, "VᵀV[%d][%d]", i, j)
		}
	}
}
