package kpca

import (
	"math"
	"strings"
	"testing"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/paths"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Every operator the planner can choose fits the same model: eigenvalues
// agree with the explicitly centred float64 matrix's (LAPACK) to the
// solver tolerance, float32 within its storage bound u·√n·λ₁; scores of
// new points agree; the data are not modified; Info names the operator.
// A budget too small for float64 makes the planner choose the others.
func TestFitOperatorsAgree(t *testing.T) {
	x := gaussData(t, 700, 6, 3)
	before := mat.DenseCopyOf(x)
	y := gaussData(t, 9, 6, 4)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	g := centredGram(t, x, k)
	ref, err := linalg.SymEig(g, 5)
	require.NoError(t, err)
	base := &KPCA{Components: 5, Kernel: k, Solver: Eigen{Solver: eig.DenseSolver{}}}
	require.NoError(t, base.Fit(x))
	want, err := base.Transform(y)
	require.NoError(t, err)
	for _, op := range []eig.OperatorKind{eig.OperatorFloat64, eig.OperatorFloat32, eig.OperatorMatrixFree} {
		m := &KPCA{Components: 5, Kernel: k, Operator: op, Solver: Eigen{Solver: eig.Auto{Tol: 1e-12}}}
		require.NoError(t, m.Fit(x), op.String())
		require.Equal(t, op.String(), m.Info().Operator)
		require.NotEmpty(t, m.Info().PlanReason)
		vals, err := m.Eigenvalues()
		require.NoError(t, err)
		bound := 1e-9 * ref.Values[0]
		if op == eig.OperatorFloat32 {
			bound += eig.Float32Unit * math.Sqrt(700) * ref.Values[0]
		}
		for i := range vals {
			require.InDelta(t, ref.Values[i], vals[i], bound, "%v value %d", op, i)
		}
		z, err := m.Transform(y)
		require.NoError(t, err)
		for i := 0; i < 9; i++ {
			for j := 0; j < 5; j++ {
				require.InDelta(t, want.At(i, j), z.At(i, j), 1e-4*mat.Norm(want, math.Inf(1)), "%v score", op)
			}
		}
	}
	require.True(t, mat.Equal(before, x))

	// Budgets, at n = 2000: the float64 triangle is 18.9 MB (2048² tiles),
	// float32 9.4 MB, matrix-free 9.7 MB (a 512×2000 panel, blocks of 32);
	// 12 MiB leaves float32 when the tolerance allows it and matrix-free
	// when it does not.
	x2 := gaussData(t, 2000, 6, 3)
	m := &KPCA{Components: 5, Kernel: k, Solver: Eigen{Solver: eig.Auto{Tol: 1e-4}}, MemoryBudget: 12 << 20}
	require.NoError(t, m.Fit(x2))
	require.Equal(t, "float32", m.Info().Operator)
	m = &KPCA{Components: 5, Kernel: k, Solver: Eigen{Solver: eig.Auto{Tol: 1e-9}}, MemoryBudget: 12 << 20}
	require.NoError(t, m.Fit(x2))
	require.Equal(t, "matrix-free", m.Info().Operator)
	m = &KPCA{Components: 5, Kernel: k}
	require.NoError(t, m.Fit(x))
	require.Equal(t, "float64", m.Info().Operator)
}

// With the budget ample and the tolerance loose, the planner stores the
// nonnegative kernel in float32 for speed only for block solvers: KPCA
// tells it when the solver is Lanczos (one vector a pass).
func TestPlanSpeedRuleSeesTheSolver(t *testing.T) {
	require.True(t, oneVector(Eigen{Solver: eig.Lanczos{Tol: 1e-4}}))
	for _, s := range []Solver{Eigen{}, Eigen{Solver: eig.Auto{Tol: 1e-4}}, Eigen{Solver: eig.BlockKrylov{}}, LBFGS{}, DCA{}} {
		require.False(t, oneVector(s), "%T", s)
	}
	x := gaussData(t, 2100, 4, 3)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	m := &KPCA{Components: 3, Kernel: k, Solver: Eigen{Solver: eig.Lanczos{Tol: 1e-4}}}
	require.NoError(t, m.Fit(x))
	require.Equal(t, "float64", m.Info().Operator, m.Info().PlanReason)
	defer paths.Reset()
	for _, faster := range []bool{false, true} {
		p := paths.Current()
		p.SingleBlocks = faster
		require.NoError(t, paths.Set(p))
		m = &KPCA{Components: 3, Kernel: k, Solver: Eigen{Solver: eig.Auto{Tol: 1e-4}}}
		require.NoError(t, m.Fit(x))
		if faster {
			require.Equal(t, "float32", m.Info().Operator, m.Info().PlanReason)
			require.Contains(t, m.Info().PlanReason, "faster here")
		} else {
			require.Equal(t, "float64", m.Info().Operator, m.Info().PlanReason)
		}
	}
}

// FitGram centres implicitly and leaves the caller's matrix as it was.
func TestFitGramKeepsInput(t *testing.T) {
	x := gaussData(t, 200, 4, 5)
	k := kernel.Kernel{Kind: kernel.Laplace, Sigma: 3}
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	keep := mat.NewSymDense(200, nil)
	keep.CopySym(g)
	m := &KPCA{Components: 4, Solver: Eigen{Solver: eig.Lanczos{}}}
	require.NoError(t, m.FitGram(g))
	require.True(t, mat.Equal(keep, g), "FitGram modified its input")
	ref, err := linalg.SymEig(centredGram(t, x, k), 4)
	require.NoError(t, err)
	vals, err := m.Eigenvalues()
	require.NoError(t, err)
	for i := range vals {
		require.InDelta(t, ref.Values[i], vals[i], 1e-9*ref.Values[0])
	}
	require.Equal(t, "precomputed", m.Info().Operator)
}

// A kernel matrix with no positive eigenvalue has nothing to fit: a typed
// rank error that says rank 0 without asking for "at most 0" components,
// and names a negative largest eigenvalue (not positive semi-definite).
func TestFitGramWithoutPositiveEigenvalue(t *testing.T) {
	g := mat.NewSymDense(3, []float64{-2, 0.1, 0, 0.1, -3, 0, 0, 0, -1})
	for _, center := range []bool{true, false} {
		m := &KPCA{Components: 2, NoCenter: !center}
		err := m.FitGram(g)
		var re *status.RankError
		require.ErrorAs(t, err, &re, "centred %v", center)
		require.Zero(t, re.Rank)
		require.ErrorIs(t, err, status.ErrInvalid)
		require.NotContains(t, err.Error(), "at most 0")
		// Centred, the ones vector gives a zero eigenvalue: the top one
		// is rounding, not negative.
		require.Equal(t, !center, strings.Contains(err.Error(), "not positive semi-definite"), err.Error())
		require.False(t, m.Fitted())
	}
	m := &KPCA{Components: 2, NoCenter: true}
	err := m.FitGram(mat.NewSymDense(3, []float64{2, 0.1, 0, 0.1, -3, 0, 0, 0, -1}))
	require.ErrorContains(t, err, "numerical rank 1, below the 2 components asked for; ask for at most 1")
	// One component is a fit, and n − 1 the most (centred or not).
	pd := mat.NewSymDense(3, []float64{2, 0.1, 0, 0.1, 3, 0, 0, 0, 1})
	for _, s := range []int{1, 2} {
		m = &KPCA{Components: s, NoCenter: true}
		require.NoError(t, m.FitGram(pd), "s = %d", s)
		vals, err := m.Eigenvalues()
		require.NoError(t, err)
		require.Len(t, vals, s)
	}
	require.ErrorIs(t, (&KPCA{Components: 3, NoCenter: true}).FitGram(pd), status.ErrInvalid)
	require.ErrorIs(t, (&KPCA{Components: 0, NoCenter: true}).FitGram(pd), status.ErrInvalid)
}

// CheckResiduals measures the fit against the exact kernel: tiny for a
// float64 fit; for float32 products and storage bounded by the entry
// bound through ‖E‖₂ ≤ ‖E‖_F ≤ ρ‖K‖_F; and an unfitted model says so.
func TestCheckResiduals(t *testing.T) {
	x := gaussData(t, 600, 5, 9)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	g := centredGram(t, x, k)
	fro := mat.Norm(g, 2)
	for _, c := range []struct {
		op       eig.OperatorKind
		products gram.ProductPrecision
	}{{eig.OperatorFloat64, gram.ProductsFloat64}, {eig.OperatorMatrixFree, gram.ProductsFloat32}, {eig.OperatorFloat32, gram.ProductsFloat32}} {
		m := &KPCA{Components: 6, Kernel: k, Operator: c.op, Products: c.products, Solver: Eigen{Solver: eig.Lanczos{Tol: 1e-12}}}
		require.NoError(t, m.Fit(x))
		res, l1, err := m.CheckResiduals()
		require.NoError(t, err)
		require.Len(t, res, 6)
		kr, err := kernel.Rows(x, k, gram.GramOptions{Products: c.products})
		require.NoError(t, err)
		// Centring at most doubles ‖E‖ in each direction: ‖MEM‖ ≤ ‖E‖.
		bound := 1e-9*l1 + (kr.MaxEntryRel()+eig.Float32Unit)*fro
		if c.products == gram.ProductsFloat64 && c.op == eig.OperatorFloat64 {
			bound = 1e-9 * l1
		}
		for i, r := range res {
			require.LessOrEqual(t, r, bound, "%v/%v pair %d", c.op, c.products, i)
		}
	}
	_, _, err := (&KPCA{Components: 2}).CheckResiduals()
	require.ErrorIs(t, err, ErrNotFitted)
}
