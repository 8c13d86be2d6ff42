package eig

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// topVectors returns the exact top c eigenvectors of a (LAPACK), plus
// noise of size eps in every entry.
func topVectors(t *testing.T, a *mat.SymDense, c int, eps float64, seed uint64) *mat.Dense {
	t.Helper()
	e, err := linalg.SymEig(a, 0)
	require.NoError(t, err)
	n := a.SymmetricDim()
	v := mat.NewDense(n, c, nil)
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			v.Set(i, j, e.Vectors.At(i, j)+eps*rng.NormFloat64())
		}
	}
	return v
}

// trueResiduals returns ‖A v_i − λ_i v_i‖ for the result's pairs.
func trueResiduals(a *mat.SymDense, r *Result) []float64 {
	n, k := r.Vectors.Dims()
	av := mat.NewDense(n, k, nil)
	av.Mul(a, r.Vectors)
	out := make([]float64, k)
	for j := 0; j < k; j++ {
		s := 0.0
		for i := 0; i < n; i++ {
			d := av.At(i, j) - r.Values[j]*r.Vectors.At(i, j)
			s += d * d
		}
		out[j] = math.Sqrt(s)
	}
	return out
}

// geometricProblem returns a 400×400 matrix of spectrum 0.9^i (its
// eigenvectors drawn with seed), its dense operator and the spectrum.
func geometricProblem(t *testing.T, seed uint64) (*mat.SymDense, *Dense, []float64) {
	t.Helper()
	lambda := spectrum(400, func(i int) float64 { return math.Pow(0.9, float64(i)) })
	a := symWithSpectrum(seed, lambda)
	op, err := NewDense(a)
	require.NoError(t, err)
	return a, op, lambda
}

// Started from the exact top eigenvectors (to 1e-13), a block solver that
// checks after every block stops after the first pass with the exact
// pairs, also for as many pairs as the block has columns; without the
// check it fills its basis first.
func TestBlockStartFromEigenvectorsStopsAfterOnePass(t *testing.T) {
	a, op, lambda := geometricProblem(t, 21)
	const k, b = 5, 10
	start := topVectors(t, a, b, 1e-13, 1)
	res, err := BlockKrylov{Tol: 1e-9, Block: b, Start: start, CheckEachBlock: true}.Solve(op, k)
	require.NoError(t, err)
	require.Equal(t, 1, res.Passes, "passes")
	for j := 0; j < k; j++ {
		require.InDelta(t, lambda[j], res.Values[j], 1e-12, "λ_%d", j)
	}
	// Every start column counts: asked for as many pairs as the block
	// holds, the same start stops after one pass too.
	all, err := BlockKrylov{Tol: 1e-9, Block: b, Start: start, CheckEachBlock: true}.Solve(op, b)
	require.NoError(t, err)
	require.Equal(t, 1, all.Passes, "passes for k = b")
	for j := 0; j < b; j++ {
		require.InDelta(t, lambda[j], all.Values[j], 1e-12, "λ_%d (k = b)", j)
	}
	full, err := BlockKrylov{Tol: 1e-9, Block: b, Start: start}.Solve(op, k)
	require.NoError(t, err)
	require.Greater(t, full.Passes, 1)
	random, err := BlockKrylov{Tol: 1e-9, Block: b, CheckEachBlock: true}.Solve(op, k)
	require.NoError(t, err)
	require.Greater(t, random.Passes, res.Passes)
}

// A start of fewer columns than the block (down to one), or with a zero
// column and a repeated one, still gives orthonormal vectors and converged pairs whose
// true residuals meet the stopping test; a better start never takes more
// passes than a worse one on this matrix.
func TestBlockStartDegenerateColumns(t *testing.T) {
	lambda := spectrum(300, func(i int) float64 { return 10 * math.Pow(0.85, float64(i)) })
	a := symWithSpectrum(8, lambda)
	op, err := NewDense(a)
	require.NoError(t, err)
	const k, tol = 6, 1e-10
	good := topVectors(t, a, 8, 1e-3, 2)
	bad := mat.DenseCopyOf(good)
	for i := 0; i < 300; i++ {
		bad.Set(i, 2, 0)
		bad.Set(i, 5, bad.At(i, 4))
	}
	narrow := good.Slice(0, 300, 0, 3).(*mat.Dense)
	one := good.Slice(0, 300, 0, 1).(*mat.Dense)
	passes := map[string]int{}
	for name, s := range map[string]*mat.Dense{"good": good, "degenerate": bad, "narrow": narrow, "one column": one} {
		res, err := BlockKrylov{Tol: tol, Block: 8, Start: s, CheckEachBlock: true}.Solve(op, k)
		require.NoError(t, err, name)
		require.True(t, res.Status.Converged(), name)
		passes[name] = res.Passes
		var vtv mat.Dense
		vtv.Mul(res.Vectors.T(), res.Vectors)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				require.InDelta(t, want, vtv.At(i, j), 1e-12, "%s: VᵀV[%d,%d]", name, i, j)
			}
		}
		for j, r := range trueResiduals(a, res) {
			require.LessOrEqual(t, r, 1.01*threshold(tol, res.Values[j], lambda[0])+1e-13, "%s: pair %d", name, j)
			require.InDelta(t, lambda[j], res.Values[j], 1e-9*lambda[0], "%s: λ_%d", name, j)
		}
	}
	require.LessOrEqual(t, passes["good"], passes["narrow"])
}

// A start block is taken column by column at unit length: its columns
// scaled by 10⁻²⁰, 10²⁰ and 10⁻⁹ give the passes and eigenpairs of the
// unscaled block (no column tiny beside another is taken for one in
// their span and replaced).
func TestBlockStartScaleFree(t *testing.T) {
	a, op, lambda := geometricProblem(t, 23)
	const k, b = 5, 10
	start := topVectors(t, a, b, 1e-13, 4)
	scaled := mat.DenseCopyOf(start)
	for j, f := range []float64{1e-20, 1e20, 1e-9} {
		for i := 0; i < 400; i++ {
			scaled.Set(i, j, f*scaled.At(i, j))
		}
	}
	want, err := BlockKrylov{Tol: 1e-9, Block: b, Start: start, CheckEachBlock: true}.Solve(op, k)
	require.NoError(t, err)
	got, err := BlockKrylov{Tol: 1e-9, Block: b, Start: scaled, CheckEachBlock: true}.Solve(op, k)
	require.NoError(t, err)
	require.Equal(t, want.Passes, got.Passes)
	for j := 0; j < k; j++ {
		require.InDelta(t, want.Values[j], got.Values[j], 1e-12*lambda[0], "λ_%d", j)
	}
}

// NormTest stops when every residual is within Tol·‖A‖, looser than the
// default test for the smaller pairs: never more passes, and every true
// residual within Tol·λ₁ (the operator's norm here).
func TestBlockNormTest(t *testing.T) {
	lambda := spectrum(500, func(i int) float64 { return 1 / (1 + float64(i)) })
	a := symWithSpectrum(4, lambda)
	op, err := NewDense(a)
	require.NoError(t, err)
	const k, tol = 10, 1e-6
	rel, err := BlockKrylov{Tol: tol, Block: 8, CheckEachBlock: true}.Solve(op, k)
	require.NoError(t, err)
	nrm, err := BlockKrylov{Tol: tol, Block: 8, CheckEachBlock: true, NormTest: true}.Solve(op, k)
	require.NoError(t, err)
	require.LessOrEqual(t, nrm.Passes, rel.Passes)
	require.Contains(t, nrm.Status.Test, "‖A‖")
	for j, r := range trueResiduals(a, nrm) {
		require.LessOrEqual(t, r, 1.01*tol*lambda[0], "pair %d", j)
	}
	// A tolerance below rounding stops at the floor 64·ε·‖A‖, at any scale
	// of ‖A‖ (here 10⁶).
	big := symWithSpectrum(4, spectrum(500, func(i int) float64 { return 1e6 / (1 + float64(i)) }))
	op, err = NewDense(big)
	require.NoError(t, err)
	floor, err := BlockKrylov{Tol: 1e-18, Block: 8, CheckEachBlock: true, NormTest: true}.Solve(op, k)
	require.NoError(t, err)
	for j, r := range trueResiduals(big, floor) {
		require.LessOrEqual(t, r, 2*64*epsilon*1e6, "pair %d", j)
	}
}

// A start block of the wrong height or with a NaN is refused.
func TestBlockStartChecked(t *testing.T) {
	a := symWithSpectrum(3, spectrum(50, func(i int) float64 { return float64(50 - i) }))
	op, err := NewDense(a)
	require.NoError(t, err)
	wrong := mat.NewDense(49, 2, nil)
	_, err = BlockKrylov{Block: 4, Start: wrong}.Solve(op, 2)
	require.ErrorIs(t, err, status.ErrInvalid)
	nan := mat.NewDense(50, 2, nil)
	nan.Set(7, 1, math.NaN())
	_, err = BlockKrylov{Block: 4, Start: nan}.Solve(op, 2)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "row 7")
}
