package eig

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// The Krylov residual test against its documented formula:
// Tol·max(ε^{2/3}‖A‖, |θ|) with ε the machine epsilon 2⁻⁵² (ARPACK's
// dlamch('EPS')), floored at 64u‖A‖ (u = 2⁻⁵³).
func TestThresholdFormula(t *testing.T) {
	require.Equal(t, math.Pow(0x1p-52, 2.0/3), eps23)
	require.Equal(t, 0x1p-53, epsilon)
	for _, c := range []struct{ tol, theta, anorm float64 }{
		{1e-6, 5, 10}, {1e-6, 1e-12, 10}, {1e-3, -4, 4}, {1e-14, 2, 3}, {0, 1, 1}, {0.5, 0, 7},
	} {
		want := math.Max(c.tol*math.Max(math.Pow(0x1p-52, 2.0/3)*c.anorm, math.Abs(c.theta)), 64*0x1p-53*c.anorm)
		require.Equal(t, want, threshold(c.tol, c.theta, c.anorm), "%+v", c)
	}
	// The relative part dominates for a large θ, the ε^{2/3} part for a
	// small one, the rounding floor for a tiny tolerance.
	require.InDelta(t, 1e-6*5, threshold(1e-6, 5, 10), 1e-20)
	require.InDelta(t, 1e-2*eps23*10, threshold(1e-2, 1e-12, 10), 1e-28)
	require.InDelta(t, 64*epsilon*3, threshold(1e-20, 2, 3), 1e-30)
}

// oneRank is a Reduction over a single part: the distributed code path
// with nothing to reduce.
type oneRank struct{}

func (oneRank) Sum([]float64) error    { return nil }
func (oneRank) MaxAbs([]float64) error { return nil }

// The distributed sign rule on one part is the local one
// (linalg.FixSigns): the largest-magnitude entry of each column (the first
// of near-ties) is made positive.
func TestFixSignsDistributedMatchesLocal(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		v := randData(seed, 40, 6)
		// A column with a near-tie at the top and one negative at the top.
		v.Set(3, 1, -9)
		v.Set(7, 1, 9*(1-1e-14))
		v.Set(0, 0, -50)
		want := linalg.CopyOf(v)
		linalg.FixSigns(want)
		got := linalg.CopyOf(v)
		require.NoError(t, fixSigns(got, 0, 40, oneRank{}))
		require.True(t, mat.Equal(want, got), "seed %d", seed)
	}
}

// Randomized's default MaxIter is 500 subspace steps: a run that cannot
// converge stops after exactly q + 500 iterations. Its blocks have k + p
// columns (p = 0 for a negative Oversample).
func TestRandomizedDefaultMaxIter(t *testing.T) {
	a := symWithSpectrum(3, spectrum(60, func(i int) float64 { return 1 + 1e-9*float64(60-i) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	res, err := Randomized{Tol: 1e-15, PowerIters: 2, Oversample: -1}.Solve(d, 5)
	require.ErrorIs(t, err, ErrNotConverged)
	require.Equal(t, 2+500, res.Iterations)
	// A negative Oversample means none: every pass is a block of k.
	require.Equal(t, 5*res.Passes, res.MatVecs)
	res, _ = Randomized{Tol: 1e-15, PowerIters: 2, Oversample: 3, MaxIter: 4}.Solve(d, 5)
	require.Equal(t, 8*res.Passes, res.MatVecs)
}

// The planner's memory estimates against the operators' own storage
// (Bytes), with the input X (n·d float64s) counted once: float32 tiles and
// the matrix-free operator (its scaled copy of X, the row norms, one
// panel) exactly as planned; float64 storage within the planned bytes and
// at most 20% below them (tiles rounded up to whole tiles).
func TestPlannedBytesAreTheOperatorsBytes(t *testing.T) {
	const n, d = 3000, 5
	x := randData(2, n, d)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	type sized interface{ Bytes() int64 }
	input := int64(8 * n * d)
	for _, kind := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		op, err := NewKernelOperator(x, k, kind, false, gram.GramOptions{})
		require.NoError(t, err)
		s, ok := op.(sized)
		require.True(t, ok, "%v reports its bytes", kind)
		got := s.Bytes()
		switch kind {
		case OperatorFloat64:
			planned := memFloat64(n, d, 0) - input
			require.LessOrEqual(t, got, planned)
			require.LessOrEqual(t, planned, got*6/5)
		case OperatorFloat32:
			// The scaled float64 copy of X the tiles are built from is
			// freed after the build; the plan counts it.
			require.Equal(t, memFloat32(n, d, 0)-2*input, got)
		case OperatorMatrixFree:
			require.Equal(t, memMatrixFree(n, d, 0)-input, got)
		}
		for _, est := range []func(n, d, m int) int64{memFloat64, memFloat32, memMatrixFree} {
			require.Equal(t, int64(8*n*10), est(n, d, 10)-est(n, d, 0), "the basis")
		}
		Release(op)
	}
}

// ceilTo rounds up to a multiple of b.
func TestCeilTo(t *testing.T) {
	for _, c := range [][3]int{{1, 8, 8}, {8, 8, 8}, {9, 8, 16}, {0, 8, 0}, {7, 1, 7}, {20, 6, 24}} {
		require.Equal(t, c[2], ceilTo(c[0], c[1]), "ceilTo(%d, %d)", c[0], c[1])
	}
}

// The plan's sizes: a stored operator with the block Krylov basis of
// 3k + 8 vectors, the dense solver's 16n² more for float64 (the matrix in
// LAPACK's layout and its eigenvectors), the matrix-free operator with a
// basis of 3k + 2·max(3k, 32) and its pass's padded blocks; an unset tolerance is 1e-10, so float32
// storage (whose bound u·√n exceeds it) is never planned for accuracy.
func TestPlanSizesAndDefaultTol(t *testing.T) {
	// The both-sides update holds X, Y and the accumulators, each of b + 1
	// columns (the first pass's row means) padded to a multiple of 4.
	for b, want := range map[int]int{1: 12, 3: 12, 4: 24, 7: 24, 8: 36, 32: 108} {
		require.Equal(t, want, updateVectors(b), "b = %d", b)
	}
	const n, d, k = 5000, 10, 4
	big := int64(1) << 40
	for _, c := range []struct {
		want  OperatorKind
		dense bool
		bytes int64
	}{
		{OperatorFloat64, false, memFloat64(n, d, 3*k+8)},
		{OperatorFloat64, true, memFloat64(n, d, 3*k+8) + 16*n*n},
		{OperatorFloat32, false, memFloat32(n, d, 3*k+8)},
		{OperatorMatrixFree, false, memMatrixFree(n, d, 3*k+2*32+updateVectors(32))},
	} {
		p, err := PlanOperator(PlanInput{N: n, D: d, K: k, Budget: big, Want: c.want, Dense: c.dense})
		require.NoError(t, err)
		require.Equal(t, c.want, p.Operator)
		require.Equal(t, c.bytes, p.Bytes, "%v dense %v", c.want, c.dense)
	}
	// float64 fits but takes more than half the budget: float32 only if
	// its bound meets the tolerance.
	budget := int64(20) << 30
	p, err := PlanOperator(PlanInput{N: 60000, D: 784, K: 20, Budget: budget})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator, p.Reason)
	require.Zero(t, p.StorageBound)
	p, err = PlanOperator(PlanInput{N: 60000, D: 784, K: 20, Budget: budget, Tol: 1e-4})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator, p.Reason)
	require.InDelta(t, Float32Unit*math.Sqrt(60000), p.StorageBound, 1e-18)
}

// The pre-faulting of the float64 layout: the w parts split the upper
// triangle's entries evenly (each within one row of total/w, the first p
// parts holding at least p/w of them), and their ranges cover every
// upper-triangle entry exactly once, in order, starting on the diagonal,
// with gaps between ranges of at least 512 entries.
func TestUpperRanges(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 100, 513, 700, 2000} {
		total := n * (n + 1) / 2
		for _, w := range []int{1, 2, 3, 4, 16} {
			b := upperParts(n, w)
			require.Equal(t, 0, b[0])
			require.Equal(t, n, b[len(b)-1])
			require.LessOrEqual(t, len(b), w+1)
			if 2*w <= n+1 { // a part's share (total/w ≥ n entries) exceeds any row's
				require.Equal(t, w, len(b)-1, "n = %d, w = %d: parts %v", n, w, b)
			}
			entries := func(i0, i1 int) int { // upper entries of rows [i0, i1)
				e := 0
				for i := i0; i < i1; i++ {
					e += n - i
				}
				return e
			}
			for p := 1; p < len(b); p++ {
				require.Less(t, b[p-1], b[p], "n = %d, w = %d: parts %v", n, w, b)
				if len(b)-1 == w {
					require.GreaterOrEqual(t, w*entries(0, b[p]), p*total, "n = %d, w = %d: part %d", n, w, p)
					require.LessOrEqual(t, entries(b[p-1], b[p]), total/w+n, "n = %d, w = %d: part %d", n, w, p)
				}
			}
			covered := make([]int, n*n)
			prevHi := -1
			for p := 0; p+1 < len(b); p++ {
				for k, r := range upperRanges(b[p], b[p+1], n) {
					require.Less(t, r[0], r[1])
					require.Equal(t, 0, r[0]/n*n+r[0]/n-r[0], "n = %d: range %d starts on the diagonal", n, k)
					if prevHi >= 0 && k > 0 {
						require.GreaterOrEqual(t, r[0]-prevHi, 512, "n = %d: ranges closer than a page were not joined", n)
					}
					prevHi = r[1]
					for e := r[0]; e < r[1]; e++ {
						covered[e]++
					}
				}
			}
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					require.Equal(t, 1, covered[i*n+j], "n = %d, w = %d: entry (%d, %d)", n, w, i, j)
				}
			}
		}
	}
	require.Empty(t, upperRanges(0, 0, 5))
}

// Every solver's zero-valued options are its documented defaults: a run
// with the zero value and one with the defaults spelled out give the same
// bits (and one with another value does not, so the comparison can fail).
func TestSolverDefaultsAreDocumented(t *testing.T) {
	const n, k = 300, 4
	a := symWithSpectrum(8, spectrum(n, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	same := func(x, y *Result) bool {
		return mat.Equal(x.Vectors, y.Vectors) && x.Iterations == y.Iterations && x.Values[0] == y.Values[0]
	}
	run := func(s Solver) *Result {
		res, err := s.Solve(d, k)
		require.NoError(t, err, "%#v", s)
		return res
	}
	// q = 7 for k < 0.1·n (4 otherwise); the normalizer LU for q > 2.
	for _, c := range []struct {
		zero, spelled, other Solver
	}{
		{Lanczos{}, Lanczos{NCV: max(2*k+1, 20), Tol: 1e-10, MaxRestarts: 1000, Seed: 1}, Lanczos{NCV: 21}},
		{Lanczos{}, Lanczos{NCV: 20}, Lanczos{Seed: 2}},
		{Lanczos{}, Lanczos{Tol: 1e-10}, Lanczos{Tol: 1e-4}},
		{BlockKrylov{}, BlockKrylov{Tol: 1e-10}, BlockKrylov{Tol: 1e-4}},
		{BlockKrylov{}, BlockKrylov{Block: 8, NCV: max(3*k+8, 4*8), Tol: 1e-10, MaxRestarts: 1000, Seed: 1}, BlockKrylov{Block: 7}},
		{BlockKrylov{}, BlockKrylov{NCV: 32}, BlockKrylov{NCV: 40}},
		{Randomized{}, Randomized{Oversample: 10, PowerIters: 7, Normalizer: NormLU, Seed: 1}, Randomized{Oversample: 11}},
		{Randomized{}, Randomized{PowerIters: 7}, Randomized{PowerIters: 6}},
		{Randomized{PowerIters: 2}, Randomized{PowerIters: 2, Normalizer: NormNone}, Randomized{PowerIters: 2, Normalizer: NormLU}},
		{Randomized{PowerIters: 3}, Randomized{PowerIters: 3, Normalizer: NormLU}, Randomized{PowerIters: 3, Normalizer: NormNone}},
		{Randomized{Tol: 1e-6}, Randomized{Tol: 1e-6, MaxIter: 500}, Randomized{Tol: 1e-6, Seed: 3}},
	} {
		z := run(c.zero)
		require.True(t, same(z, run(c.spelled)), "%#v against %#v", c.zero, c.spelled)
		require.False(t, same(z, run(c.other)), "%#v against %#v", c.zero, c.other)
	}
	// Lanczos's basis for k = 12: 2k + 1 = 25.
	z12, err := Lanczos{}.Solve(d, 12)
	require.NoError(t, err)
	s25, err := Lanczos{NCV: 25}.Solve(d, 12)
	require.NoError(t, err)
	s24, err := Lanczos{NCV: 24}.Solve(d, 12)
	require.NoError(t, err)
	require.True(t, same(z12, s25))
	require.False(t, same(z12, s24))
	// q = 4 when k ≥ 0.1·n.
	small := symWithSpectrum(9, spectrum(30, func(i int) float64 { return 1 / float64(i+1) }))
	ds, err := NewDense(small)
	require.NoError(t, err)
	r0, err := Randomized{}.Solve(ds, 4)
	require.NoError(t, err)
	r1, err := Randomized{PowerIters: 4}.Solve(ds, 4)
	require.NoError(t, err)
	require.True(t, mat.Equal(r0.Vectors, r1.Vectors))
}

// LowRank against the explicit matrices, for every storage of F (n×k
// dense, the transpose of a k×n dense, the transpose of float32 k×n), plain
// and centred (F_c = F − 1·μᵀ with μ the column means): Apply(X) = F·Fᵀ·X
// or F_c·F_cᵀ·X.
func TestLowRankOperator(t *testing.T) {
	const n, k, b = 90, 6, 3
	f := randData(21, n, k)
	for i := 0; i < n; i++ {
		f.Set(i, 2, f.At(i, 2)+3) // a column with a mean far from 0
	}
	// Round F to float32 values so that every storage holds the same F.
	for i, v := range f.RawMatrix().Data {
		f.RawMatrix().Data[i] = float64(float32(v))
	}
	ft := mat.DenseCopyOf(f.T())
	f32, err := linalg.Dense32Of(ft)
	require.NoError(t, err)
	defer f32.Free()
	x := randData(22, n, b)
	for _, center := range []bool{false, true} {
		fc := mat.DenseCopyOf(f)
		if center {
			for j := 0; j < k; j++ {
				m := 0.0
				for i := 0; i < n; i++ {
					m += f.At(i, j) / n
				}
				for i := 0; i < n; i++ {
					fc.Set(i, j, f.At(i, j)-m)
				}
			}
		}
		var ftx, want mat.Dense
		ftx.Mul(fc.T(), x)
		want.Mul(fc, &ftx)
		for name, m := range map[string]mat.Matrix{"dense": f, "transpose": ft.T(), "float32": f32.T()} {
			op, err := NewLowRank(m, center)
			require.NoError(t, err, name)
			require.Equal(t, n, op.Dim())
			got := mat.NewDense(n, b, nil)
			require.NoError(t, op.Apply(got, x), name)
			var d mat.Dense
			d.Sub(got, &want)
			require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-10*mat.Norm(&want, math.Inf(1)), "%s, centred %v", name, center)
		}
	}
}

// globalNormal gives every part its rows of the one global block: the
// parts' rows put together are the block one part draws alone.
func TestGlobalNormalParts(t *testing.T) {
	const n, b = 31, 3
	whole := mat.NewDense(n, b, nil)
	globalNormal(whole, 0, n, rand.New(rand.NewPCG(4, 5)))
	for _, bounds := range [][]int{{0, 10, 20, n}, {0, 1, n}, {0, n - 1, n}} {
		for q := 0; q+1 < len(bounds); q++ {
			part := mat.NewDense(bounds[q+1]-bounds[q], b, nil)
			globalNormal(part, bounds[q], n, rand.New(rand.NewPCG(4, 5)))
			require.True(t, mat.Equal(whole.Slice(bounds[q], bounds[q+1], 0, b), part), "rows %d–%d", bounds[q], bounds[q+1])
		}
	}
}

// The matrix-free operator at n > 2 × 512 rows, where a column block takes
// the transposed contributions of several row panels: Apply against the
// explicit kernel matrix.
func TestKernelOpManyPanels(t *testing.T) {
	const n, b = 1300, 3
	x := randData(31, n, 3)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	op, err := NewKernelOp(x, k, gram.GramOptions{})
	require.NoError(t, err)
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	requireApplies(t, op, g, randData(32, n, b))
}

// requireApplies checks op.Apply(v) against the explicit matrix g·v to
// 10⁻¹² of its size.
func requireApplies(t *testing.T, op Operator, g mat.Matrix, v *mat.Dense) {
	t.Helper()
	n, b := v.Dims()
	got := mat.NewDense(n, b, nil)
	require.NoError(t, op.Apply(got, v))
	var want, d mat.Dense
	want.Mul(g, v)
	d.Sub(got, &want)
	require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(&want, math.Inf(1)))
}

// Auto beyond the dense sizes is block Krylov in blocks of 8 with its Tol
// and Seed: the same bits as spelled out.
func TestAutoIsBlockKrylovOf8(t *testing.T) {
	a := symWithSpectrum(10, spectrum(700, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, c := range []struct {
		auto  Auto
		block BlockKrylov
	}{{Auto{}, BlockKrylov{Block: 8}}, {Auto{Tol: 1e-6, Seed: 3}, BlockKrylov{Block: 8, Tol: 1e-6, Seed: 3}}} {
		r1, err := c.auto.Solve(d, 4)
		require.NoError(t, err)
		r2, err := c.block.Solve(d, 4)
		require.NoError(t, err)
		require.True(t, mat.Equal(r1.Vectors, r2.Vectors), "%+v", c.auto)
		r3, err := BlockKrylov{Block: 9, Tol: c.block.Tol, Seed: c.block.Seed}.Solve(d, 4)
		require.NoError(t, err)
		require.False(t, mat.Equal(r1.Vectors, r3.Vectors))
		s, why := c.auto.Resolve(d, 4)
		require.Equal(t, c.block, s)
		require.Contains(t, why, "block Krylov in blocks of 8")
	}
	s, why := Auto{}.Resolve(d, 200)
	require.Equal(t, DenseSolver{}, s)
	require.Equal(t, "k = 200 > n/5 = 140: dense LAPACK", why)
	_, why = Auto{}.Resolve(d, 4)
	require.Equal(t, "n = 700 > 600 and k = 4 ≤ n/5: block Krylov in blocks of 8", why)
}

// The dense solver reports LAPACK's backward error bound n·u·‖A‖_∞
// (u = 2⁻⁵³; ‖A‖_∞ ≥ ‖A‖₂, so a large negative eigenvalue beyond the k
// computed counts) as every pair's residual, and the true residuals are
// below it.
func TestDenseResidualBound(t *testing.T) {
	const n = 50
	lambda := spectrum(n, func(i int) float64 { return 1e3 / float64(i+1) })
	lambda[n-1] = -2e3 // ‖A‖ from the most negative eigenvalue
	a := symWithSpectrum(11, lambda)
	d, err := NewDense(a)
	require.NoError(t, err)
	res, err := DenseSolver{}.Solve(d, 4)
	require.NoError(t, err)
	inf := 0.0
	for i := 0; i < n; i++ {
		row := 0.0
		for j := 0; j < n; j++ {
			row += math.Abs(a.At(i, j))
		}
		inf = math.Max(inf, row)
	}
	require.GreaterOrEqual(t, inf, 2e3)
	for i, r := range res.Residuals {
		require.Equal(t, float64(n)*0x1p-53*inf, r, "pair %d", i)
		var av mat.VecDense
		av.MulVec(a, res.Vectors.ColView(i))
		av.AddScaledVec(&av, -res.Values[i], res.Vectors.ColView(i))
		require.LessOrEqual(t, mat.Norm(&av, 2), r)
	}
}

// MaxRestarts bounds the work as documented: at most ⌈m/b⌉·MaxRestarts
// passes (m the basis size, b the block), counted on runs that cannot
// converge (k = 10 of a 1/i spectrum to 10⁻¹⁴).
func TestMaxRestartsBoundsPasses(t *testing.T) {
	a := symWithSpectrum(2, spectrum(400, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	const k = 10
	for _, restarts := range []int{1, 2} {
		for _, c := range []struct {
			s    Solver
			m, b int
		}{
			{Lanczos{Tol: 1e-14, MaxRestarts: restarts}, max(2*k+1, 20), 1},
			{BlockKrylov{Tol: 1e-14, MaxRestarts: restarts}, ceilTo(max(3*k+8, 4*8), 8), 8},
		} {
			cnt := &Counting{Op: d}
			_, err := c.s.Solve(cnt, k)
			require.ErrorIs(t, err, ErrNotConverged, "%T", c.s)
			require.LessOrEqual(t, cnt.Passes, (c.m+c.b-1)/c.b*restarts, "%T, %d restarts", c.s, restarts)
		}
	}
}

// A block larger than the rank: the Krylov space becomes invariant inside a
// block, the columns that vanish are replaced by fresh random directions
// orthogonalised twice against the basis, and the result stays exact — the
// rank's eigenvalues, zeros after them, orthonormal vectors — for several
// ranks and blocks.
func TestBlockRepairKeepsOrthogonality(t *testing.T) {
	for _, c := range [][2]int{{3, 8}, {1, 4}, {5, 16}} {
		rank, b := c[0], c[1]
		lambda := make([]float64, 200)
		for i := 0; i < rank; i++ {
			lambda[i] = float64(rank - i)
		}
		a := symWithSpectrum(uint64(13+rank), lambda)
		d, err := NewDense(a)
		require.NoError(t, err)
		k := rank + 2
		res, err := BlockKrylov{Block: b, Tol: 1e-12}.Solve(d, k)
		require.NoError(t, err, "rank %d, block %d", rank, b)
		for i := 0; i < k; i++ {
			require.InDelta(t, lambda[i], res.Values[i], 1e-12*float64(rank), "rank %d, block %d: λ_%d", rank, b, i)
		}
		var vtv mat.Dense
		vtv.Mul(res.Vectors.T(), res.Vectors)
		for i := 0; i < k; i++ {
			vtv.Set(i, i, vtv.At(i, i)-1)
		}
		require.Less(t, mat.Norm(&vtv, math.Inf(1)), 1e-13, "rank %d, block %d: VᵀV − I", rank, b)
	}
}

// Full float64 storage below bigmem.AdviseMin (64 MiB: n < 2896) without
// looking at huge pages; from it on the layout depends on them and says so.
func TestFloat64LayoutBound(t *testing.T) {
	n := 1
	for 8*int64(n+1)*int64(n+1) < bigmem.AdviseMin {
		n++
	}
	require.Equal(t, "full storage, upper triangle", layout64(n))
	require.NotEqual(t, "full storage, upper triangle", layout64(n+1))
	require.Equal(t, "full storage, upper triangle", layout64(1))
}

// FeatureGram applies F_cᵀF_c without forming it: the formed matrix
// (linalg.OuterT32) times x to the float32 sums' accuracy, centred and not;
// block Krylov on it finds the formed matrix's top eigenvalues; a block
// of the wrong shape is refused.
func TestFeatureGram(t *testing.T) {
	const k, n = 40, 3000
	ft, err := linalg.NewDense32(k, n)
	require.NoError(t, err)
	defer ft.Free()
	r := rand.New(rand.NewPCG(5, 6))
	mean := make([]float64, k)
	for e := 0; e < k; e++ {
		scale := 1 / float64(e+1)
		for j := 0; j < n; j++ {
			v := float32(scale*r.NormFloat64() + 0.3)
			ft.Data[e*n+j] = v
			mean[e] += float64(v) / n
		}
	}
	x := mat.NewDense(k, 5, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < 5; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	for _, mu := range [][]float64{nil, mean} {
		c, err := linalg.OuterT32(ft, mu, false)
		require.NoError(t, err)
		var want mat.Dense
		want.Mul(c, x)
		g := NewFeatureGram(ft, mu)
		require.Equal(t, k, g.Dim())
		got := mat.NewDense(k, 5, nil)
		require.NoError(t, g.Apply(got, x))
		require.True(t, mat.EqualApprox(&want, got, 1e-4*mat.Norm(&want, math.Inf(1))), "centred %v", mu != nil)
		res, err := BlockKrylov{Block: 8, Tol: 1e-6, CheckEachBlock: true, NormTest: true}.Solve(g, 3)
		require.NoError(t, err)
		vals, err := linalg.SymEigValues(c, 3)
		require.NoError(t, err)
		for i := 0; i < 3; i++ {
			require.InDelta(t, vals[i], res.Values[i], 1e-5*vals[0])
		}
	}
	require.ErrorIs(t, NewFeatureGram(ft, nil).Apply(mat.NewDense(k, 2, nil), mat.NewDense(k, 3, nil)), status.ErrInvalid)
	// Fast only where the rules run the float32 blocks in 512-bit form.
	p := paths.Current()
	off := p
	off.WideSingle = false
	require.NoError(t, paths.Set(off))
	slow := FeatureGramFast()
	require.NoError(t, paths.Set(p))
	require.False(t, slow)
	_, single, _ := p.Build().Wide512()
	require.Equal(t, single, FeatureGramFast())
}

// The matrix-free operator on data whose first rows only lie on an 8-bit
// grid (pixels, then noisy copies): the head's kernel by integer products,
// the rest by float64 ones, Apply within rounding of the explicit kernel;
// IntegerHead says how many rows, through the centring too, and 0 for a
// stored operator.
func TestKernelOpIntegerHead(t *testing.T) {
	const n, d, h, b = 1300, 20, 1100, 3
	rng := rand.New(rand.NewPCG(7, 8))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			v := float64(rng.IntN(256)) / 255
			if i >= h {
				v += 0.01 * rng.NormFloat64()
			}
			x.Set(i, j, v)
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.8}
	op, err := NewKernelOp(x, k, gram.GramOptions{Int8: gram.GridOn})
	require.NoError(t, err)
	require.Equal(t, h, IntegerHead(op))
	c, err := NewCenteredDeferred(op)
	require.NoError(t, err)
	require.Equal(t, h, IntegerHead(c))
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	stored, err := NewDense(g)
	require.NoError(t, err)
	require.Equal(t, 0, IntegerHead(stored))
	requireApplies(t, op, g, randData(33, n, b))
}

// The matrix-free pass's two updates — two dgemm per panel, or the native
// tile kernel — give the same product to rounding, on several row and
// column panels, blocks not a multiple of 4 and a last partial tile; the
// tile form gives the same bits twice.
func TestKernelOpUpdates(t *testing.T) {
	for _, c := range [][2]int{{5000, 7}, {4700, 61}, {600, 3}, {1300, 8}} {
		n, b := c[0], c[1]
		x := randData(41, n, 5)
		op, err := NewKernelOp(x, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.1}, gram.GramOptions{})
		require.NoError(t, err)
		v := randData(42, n, b)
		want := mat.NewDense(n, b, nil)
		op.tiles = false
		require.NoError(t, op.Apply(want, v))
		op.tiles = true
		got, again := mat.NewDense(n, b, nil), mat.NewDense(n, b, nil)
		require.NoError(t, op.Apply(got, v))
		require.NoError(t, op.Apply(again, v))
		require.True(t, mat.Equal(got, again), "n %d b %d: the same bits", n, b)
		var d mat.Dense
		d.Sub(got, want)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(want, math.Inf(1)), "n %d b %d", n, b)
	}
}

// The bands of a partition of the rows add up to the whole operator's
// product (to rounding), with either update and with bands narrower and
// wider than a panel, not aligned to one; an empty or out-of-range band
// is an error.
func TestKernelBands(t *testing.T) {
	n, b := 1500, 6
	x := randData(51, n, 4)
	k := kernel.Kernel{Kind: kernel.Laplace, Sigma: 0.9}
	op, err := NewKernelOp(x, k, gram.GramOptions{})
	require.NoError(t, err)
	v := randData(52, n, b)
	want := mat.NewDense(n, b, nil)
	require.NoError(t, op.Apply(want, v))
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	var exact mat.Dense
	exact.Mul(g, v)
	var d mat.Dense
	d.Sub(want, &exact)
	require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(&exact, math.Inf(1)))
	for _, tiles := range []bool{false, true} {
		for _, cuts := range [][]int{{0, 1500}, {0, 100, 700, 1500}, {0, 513, 1029, 1499, 1500}} {
			sum := mat.NewDense(n, b, nil)
			for q := 0; q+1 < len(cuts); q++ {
				band, err := NewKernelBand(op.Rows(), cuts[q], cuts[q+1], gram.GramOptions{})
				require.NoError(t, err)
				band.k.tiles = tiles
				part := mat.NewDense(n, b, nil)
				part.Apply(func(int, int, float64) float64 { return math.NaN() }, part) // MulBlock overwrites dst
				require.NoError(t, band.MulBlock(part, v))
				sum.Add(sum, part)
			}
			d.Sub(sum, want)
			require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(want, math.Inf(1)), "tiles %v cuts %v", tiles, cuts)
		}
	}
	for _, r := range [][2]int{{0, 0}, {-1, 10}, {10, 1501}, {20, 10}} {
		_, err := NewKernelBand(op.Rows(), r[0], r[1], gram.GramOptions{})
		require.ErrorIs(t, err, status.ErrInvalid, "rows %v", r)
	}
}
