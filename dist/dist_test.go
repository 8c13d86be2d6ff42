//go:build mpi

package dist_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/dist"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// Run under mpirun (make test-mpi: 2 and 3 ranks, uneven blocks); alone it
// is one rank.
func TestMain(m *testing.M) {
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("KDUAL_TEST_KILL_RANK") != "" {
		killedRankJob()
	}
	code := m.Run()
	if code != 0 {
		mpi.Abort(code)
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// dualSolver is kpca's dual L-BFGS (SolveDual, then the Ritz pairs of
// span(H)) as an eig.Solver, so the distributed runs are checked as the
// Krylov ones are. Vectors are this part's rows of V = H·R·Θ^{1/2}, signs
// fixed by the largest-magnitude entry of each column over all rows.
type dualSolver struct {
	tol  float64
	seed uint64
}

func (d dualSolver) Solve(op eig.Operator, s int) (*eig.Result, error) {
	r, err := kpca.SolveDual(op, s, kpca.DualOptions{Tol: d.tol, Seed: d.seed})
	if err != nil {
		return nil, err
	}
	_, _, _, red := eig.Parts(op)
	theta, rot, err := kpca.RitzFromDual(r.H, r.GH, red)
	if err != nil {
		return nil, err
	}
	n, _ := r.H.Dims()
	v := mat.NewDense(n, s, nil)
	v.Mul(r.H, rot)
	big := make([]float64, s)
	for j := 0; j < s; j++ {
		for i := 0; i < n; i++ {
			v.Set(i, j, v.At(i, j)*math.Sqrt(theta[j]))
			if math.Abs(v.At(i, j)) > math.Abs(big[j]) {
				big[j] = v.At(i, j)
			}
		}
	}
	if err := red.MaxAbs(big); err != nil {
		return nil, err
	}
	for j := 0; j < s; j++ {
		if big[j] < 0 {
			for i := 0; i < n; i++ {
				v.Set(i, j, -v.At(i, j))
			}
		}
	}
	return &eig.Result{Values: theta, Vectors: v, Stats: r.Stats, Status: r.Status}, nil
}

// Every rank's part of a distributed solve matches the single-process
// solve with the same seed: eigenvalues to 1e-10 relative, the same on
// every rank, this rank's rows of the vectors, passes within ±1 — for the
// float64 triangle, the matrix-free operator and the float32 triangle
// (against the single-process float32 triangle; against float64 within its
// storage bound), centred and not, with block Krylov, Lanczos and the dual
// L-BFGS (passes within ±3 for it: it may stop by another test).
func TestDistributedMatchesSingleProcess(t *testing.T) {
	p, _ := mpi.Size()
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2.5}
	// L-BFGS at 1e-8: its Ritz values are then exact to rounding (they err
	// by the square of span(H)'s error); at 1e-10 its function test meets
	// rounding, and two runs may end by different tests a few passes apart.
	solvers := []eig.Solver{eig.BlockKrylov{Tol: 1e-12, Seed: 3}, eig.Lanczos{Tol: 1e-12, Seed: 3}, dualSolver{tol: 1e-8, seed: 3}}
	cases := []struct {
		n    int // 301: uneven blocks over 2 or 3 ranks; 700: three tile rows
		kind eig.OperatorKind
		ref  eig.OperatorKind
	}{
		{301, eig.OperatorFloat64, eig.OperatorFloat64},
		{301, eig.OperatorMatrixFree, eig.OperatorFloat64},
		{700, eig.OperatorFloat32, eig.OperatorFloat32},
	}
	for _, c := range cases {
		x, err := dataset.StandardNormal(c.n, 5, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, center := range []bool{false, true} {
			ref, err := eig.NewKernelOperator(x, k, c.ref, center, gram.GramOptions{})
			if err != nil {
				t.Fatal(err)
			}
			op, err := dist.NewKernelOperator(x, k, c.kind, center)
			if err != nil {
				t.Fatal(err)
			}
			// The row means take a pass of their own, except where a
			// pass is a kernel build: there they come with the first.
			wantPasses := 0
			if center && c.kind != eig.OperatorMatrixFree {
				wantPasses = 1
			}
			if got := op.Stats().Passes; got != wantPasses {
				t.Errorf("%v centred %v: %d passes at construction, want %d", c.kind, center, got, wantPasses)
			}
			exact := storageBound(t, x, k, center, op.EntryRel())
			for _, solver := range solvers {
				name := fmt.Sprintf("%v centred %v %T on %d ranks", c.kind, center, solver, p)
				want, err := solver.Solve(ref, 6)
				if err != nil {
					t.Fatal(name, err)
				}
				got, err := solver.Solve(op, 6)
				if err != nil {
					t.Fatal(name, err)
				}
				for j := range want.Values {
					if d := math.Abs(got.Values[j] - want.Values[j]); d > 1e-10*want.Values[0] {
						t.Errorf("%s: λ_%d = %.15g, one process %.15g", name, j, got.Values[j], want.Values[j])
					}
					if d := math.Abs(got.Values[j] - exact.values[j]); d > exact.bound+1e-10*exact.values[0] {
						t.Errorf("%s: λ_%d = %.15g, float64 %.15g: off by %.3g, storage bound %.3g", name, j, got.Values[j], exact.values[j], d, exact.bound)
					}
				}
				// The same values on every rank (bitwise: reduced numbers).
				v := append([]float64(nil), got.Values...)
				max := append([]float64(nil), v...)
				if err := mpi.AllreduceMax(max); err != nil {
					t.Fatal(err)
				}
				for j := range v {
					if v[j] != max[j] {
						t.Errorf("%s: ranks disagree on λ_%d", name, j)
					}
				}
				lo := op.RowOffset()
				for i := 0; i < op.Dim(); i++ {
					for j := 0; j < 6; j++ {
						if d := math.Abs(got.Vectors.At(i, j) - want.Vectors.At(lo+i, j)); d > 1e-7 {
							t.Fatalf("%s: row %d of vector %d off by %.3g", name, lo+i, j, d)
						}
					}
				}
				// L-BFGS may end by its function test on one side and its
				// gradient test on the other, two passes apart (seen on 3
				// ranks with OpenBLAS's Haswell kernels); Krylov within one.
				slack := 1
				if _, ok := solver.(dualSolver); ok {
					slack = 3
				}
				if d := got.Passes - want.Passes; d < -slack || d > slack {
					t.Errorf("%s: %d passes (%v), one process %d (%v)", name, got.Passes, got.Status, want.Passes, want.Status)
				}
				if !got.Status.Converged() {
					t.Errorf("%s: %v", name, got.Status)
				}
			}
			op.Free()
		}
	}
}

// exactValues are the top eigenvalues of the float64 kernel (centred when
// asked) and the bound on how far a stored copy whose entries are off by
// at most rel relative can move them: ‖E‖₂ ≤ ‖E‖_F ≤ rel·‖K‖_F, and
// centring (M·E·M, ‖M‖₂ = 1) does not enlarge it.
type exactValues struct {
	values []float64
	bound  float64
}

func storageBound(t *testing.T, x *mat.Dense, k kernel.Kernel, center bool, rel float64) exactValues {
	t.Helper()
	g, err := kernel.Gram(x, k)
	if err != nil {
		t.Fatal(err)
	}
	op, err := eig.NewDense(g)
	if err != nil {
		t.Fatal(err)
	}
	var a eig.Operator = op
	if center {
		if a, err = eig.NewCentered(op); err != nil {
			t.Fatal(err)
		}
	}
	res, err := eig.Lanczos{Tol: 1e-13, Seed: 5}.Solve(a, 6)
	if err != nil {
		t.Fatal(err)
	}
	return exactValues{values: res.Values, bound: rel * mat.Norm(g, 2)}
}

// MaxAbs keeps the sign of the largest magnitude.
func TestMaxAbs(t *testing.T) {
	r := mpi.Rank()
	x := []float64{float64(r), -float64(r) - 0.5}
	if err := (dist.Reduction{}).MaxAbs(x); err != nil {
		t.Fatal(err)
	}
	p, _ := mpi.Size()
	if x[0] != float64(p-1) || x[1] != -float64(p-1)-0.5 {
		t.Errorf("MaxAbs %v on %d ranks", x, p)
	}
}

// killedRankJob is the job make test-mpi runs with KDUAL_TEST_KILL_RANK
// set instead of the tests: rank 1 dies while the others wait in a
// collective, and mpirun must end the whole job with a non-zero status
// (make test-mpi checks it does within 60 s). A collective that returns
// is a failure (exit 0 would be taken as "the job did not end").
func killedRankJob() {
	if mpi.Rank() == 1 {
		os.Exit(9)
	}
	x := []float64{1}
	_ = mpi.AllreduceSum(x)
	fmt.Fprintln(os.Stderr, "dist.test: the collective returned although rank 1 died")
	os.Exit(0)
}

// Identical points have no components on the distributed operators either
// (every rank refuses with a rank-0 error, as one process does): the fit's
// rounding floor takes the global row means from Operator.Centering, which
// equal one process's to rounding.
func TestDistributedIdenticalPointsHaveNoComponents(t *testing.T) {
	const n = 301
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		x.SetRow(i, []float64{1, 0.5, 2})
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	ref, err := eig.NewKernelOperator(x, k, eig.OperatorFloat64, true, gram.GramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.(*eig.Centered).Centering()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []eig.OperatorKind{eig.OperatorFloat64, eig.OperatorMatrixFree} {
		for _, sv := range []kpca.Solver{kpca.Eigen{Solver: eig.Lanczos{}}, kpca.Eigen{Solver: eig.BlockKrylov{}}, kpca.LBFGS{}} {
			op, err := dist.NewKernelOperator(x, k, kind, true)
			if err != nil {
				t.Fatal(err)
			}
			m := &kpca.KPCA{Components: 1, Kernel: k, Solver: sv}
			err = m.FitOperator(context.Background(), op, nil)
			var re *status.RankError
			if !errors.As(err, &re) || re.Rank != 0 {
				t.Errorf("%v %T: %v, want a rank-0 error", kind, sv, err)
			}
			got, err := op.Centering()
			if err != nil {
				t.Fatal(kind, err)
			}
			// (To rounding: the sums run in another order.)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-14*math.Abs(b) }
			ok := near(got.Mean, want.Mean) && len(got.RowMeans) == len(want.RowMeans)
			for i := 0; ok && i < len(want.RowMeans); i++ {
				ok = near(got.RowMeans[i], want.RowMeans[i])
			}
			if !ok {
				t.Errorf("%v: row means differ from one process's", kind)
			}
			op.Free()
		}
	}
	op, err := dist.NewKernelOperator(x, k, eig.OperatorFloat64, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Centering(); err == nil {
		t.Error("an operator that does not centre returned row means")
	}
	op.Free()
}
