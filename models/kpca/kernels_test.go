package kpca

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/status"
)

// The sigmoid kernel is indefinite: the dense, Lanczos and block solvers
// return its top s algebraic eigenvalues — those of a full
// eigendecomposition of the centred kernel matrix, even where a negative
// eigenvalue is larger in magnitude than the s-th (γ = 1, c₀ = 3) — with residuals
// ‖Kv − λv‖ ≤ 1e-8·|λ|max; the fits that need a PSD kernel are refused.
func TestSigmoidIndefinite(t *testing.T) {
	x := gaussData(t, 120, 4, 31)
	for _, k := range []kernel.Kernel{{Kind: kernel.Sigmoid}, {Kind: kernel.Sigmoid, Gamma: 1, Coef0: 3}} {
		kc := centredGram(t, x, k)
		var es mat.EigenSym
		require.True(t, es.Factorize(kc, false))
		all := es.Values(nil)
		sort.Sort(sort.Reverse(sort.Float64Slice(all)))
		big := math.Max(math.Abs(all[0]), math.Abs(all[len(all)-1]))
		s := 3
		if k.Coef0 > 0 {
			for s = 1; all[s-1] > -all[len(all)-1]; s++ {
			}
			require.LessOrEqual(t, s, 12, "a negative eigenvalue larger in magnitude than λ_s")
		}
		require.Greater(t, all[s-1], 0.0, "the top %d must be positive for KPCA", s)
		for _, sv := range []eig.Solver{eig.DenseSolver{}, eig.Lanczos{Tol: 1e-12}, eig.BlockKrylov{Tol: 1e-12}} {
			m := &KPCA{Components: s, Kernel: k, Solver: Eigen{Solver: sv}}
			require.NoError(t, m.Fit(x), "%T", sv)
			got, err := m.Eigenvalues()
			require.NoError(t, err)
			for i := 0; i < s; i++ {
				require.InDelta(t, all[i], got[i], 1e-9*big, "%v c₀=%g %T λ_%d", k.Kind, k.Coef0, sv, i+1)
			}
			res, _, err := m.CheckResiduals()
			require.NoError(t, err)
			for i, r := range res {
				require.Less(t, r, 1e-8*big, "%T residual %d", sv, i)
			}
		}
		for _, m := range []*KPCA{
			{Components: s, Kernel: k, Solver: LBFGS{}},
			{Components: s, Kernel: k, Solver: DCA{}},
			{Components: s, Kernel: k, Solver: Eigen{Solver: eig.Randomized{}}},
			{Components: s, Kernel: k, Approx: approx.Nystrom{Rank: 20}},
		} {
			err := m.Fit(x)
			require.ErrorIs(t, err, status.ErrInvalid)
			require.ErrorContains(t, err, "positive semi-definite")
			require.False(t, m.Fitted())
		}
		_, err := approx.Nystrom{Rank: 20}.Fit(x, k)
		require.ErrorIs(t, err, status.ErrInvalid)
	}
}

// scikit-learn's laplacian (L1) and cosine kernels on every exact
// operator: the same eigenvalues (float32 storage within its bound) and
// scores that transform back to themselves.
func TestL1AndCosineEveryOperator(t *testing.T) {
	x := gaussData(t, 150, 5, 32)
	for _, k := range []kernel.Kernel{{Kind: kernel.Laplacian}, {Kind: kernel.Cosine}} {
		var ref []float64
		for _, op := range []eig.OperatorKind{eig.OperatorFloat64, eig.OperatorFloat32, eig.OperatorMatrixFree} {
			m := &KPCA{Components: 4, Kernel: k, Operator: op, Solver: Eigen{Solver: eig.BlockKrylov{Tol: 1e-10}}}
			require.NoError(t, m.Fit(x), "%v %v", k.Kind, op)
			vals, err := m.Eigenvalues()
			require.NoError(t, err)
			if ref == nil {
				ref = vals
			}
			tol := 1e-9 * ref[0]
			if op == eig.OperatorFloat32 {
				tol = 1e-5 * ref[0]
			}
			for i := range vals {
				require.InDelta(t, ref[i], vals[i], tol, "%v %v λ_%d", k.Kind, op, i+1)
			}
			z, err := m.Transform(x)
			require.NoError(t, err)
			sc, err := m.Scores()
			require.NoError(t, err)
			require.True(t, mat.EqualApprox(z, sc, 1e-6*math.Sqrt(ref[0])), "%v %v: Transform of the training data", k.Kind, op)
		}
	}
}

// Models of scikit-learn's kernels save and load to models that transform
// bit for bit like the fitted ones, their parameters resolved in the file.
func TestScikitLearnKernelModelsRoundTrip(t *testing.T) {
	x := gaussData(t, 60, 3, 33)
	y := gaussData(t, 7, 3, 34)
	for _, k := range []kernel.Kernel{{Kind: kernel.Sigmoid}, {Kind: kernel.Sigmoid, Gamma: 0.2, Coef0: 0, Coef0Set: true},
		{Kind: kernel.Cosine}, {Kind: kernel.Laplacian}, {Kind: kernel.Laplacian, Gamma: 0.4}, {Kind: kernel.Polynomial}} {
		m := &KPCA{Components: 3, Kernel: k}
		require.NoError(t, m.Fit(x))
		want, err := m.Transform(y)
		require.NoError(t, err)
		back := roundTrip(t, m)
		require.Equal(t, k.Kind, back.Kernel.Kind)
		require.Equal(t, k.C0(), back.Kernel.C0())
		got, err := back.Transform(y)
		require.NoError(t, err)
		require.True(t, mat.Equal(want, got), "%v", k.Kind)
	}
}

// FitOperator on an operator built outside (eig.NewKernelOperator with the
// planner's pairing) gives Fit's eigenvalues and scores; the model keeps no
// training points (Transform refused, TransformGram of kernel rows equal
// to Fit's Transform), and a nil operator or an indefinite kernel with a
// PSD-only solver is refused.
func TestFitOperatorMatchesFit(t *testing.T) {
	x := gaussData(t, 300, 4, 41)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	ref := &KPCA{Components: 4, Kernel: k, Solver: Eigen{Solver: eig.BlockKrylov{Tol: 1e-12}}}
	require.NoError(t, ref.Fit(x))
	op, err := eig.NewKernelOperator(x, k, eig.OperatorFloat64, true, gram.GramOptions{})
	require.NoError(t, err)
	m := &KPCA{Components: 4, Kernel: k, Solver: Eigen{Solver: eig.BlockKrylov{Tol: 1e-12}}}
	require.NoError(t, m.FitOperator(context.Background(), op, nil))
	want, _ := ref.Eigenvalues()
	got, _ := m.Eigenvalues()
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-10*want[0])
	}
	ws, _ := ref.Scores()
	gs, _ := m.Scores()
	require.True(t, mat.EqualApprox(ws, gs, 1e-8))
	y := gaussData(t, 5, 4, 42)
	_, err = m.Transform(y)
	require.ErrorIs(t, err, status.ErrInvalid)
	ky, err := kernel.CrossGram(y, x, k)
	require.NoError(t, err)
	zg, err := m.TransformGram(ky)
	require.NoError(t, err)
	zr, err := ref.Transform(y)
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(zr, zg, 1e-8))
	require.ErrorIs(t, (&KPCA{Components: 2}).FitOperator(context.Background(), nil, nil), status.ErrInvalid)
	sig := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Sigmoid}, Solver: LBFGS{}}
	require.ErrorIs(t, sig.FitOperator(context.Background(), op, nil), status.ErrInvalid)
}
