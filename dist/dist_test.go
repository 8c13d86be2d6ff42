//go:build mpi

package dist

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/mpi"
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

// Every rank's part of a distributed solve matches the single-process
// solve with the same seed: eigenvalues to 1e-10 relative, the same on
// every rank, this rank's rows of the vectors, passes within ±1 — for the
// float64 row blocks and the matrix-free operator, centred and not, with
// block Krylov and Lanczos.
func TestDistributedMatchesSingleProcess(t *testing.T) {
	x, err := dataset.StandardNormal(301, 5, 7) // 301 rows: uneven blocks over 2 or 3 ranks
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2.5}
	p, _ := mpi.Size()
	for _, kind := range []Kind{Float64, MatrixFree} {
		for _, center := range []bool{false, true} {
			for _, solver := range []eig.Solver{eig.BlockKrylov{Tol: 1e-12, Seed: 3}, eig.Lanczos{Tol: 1e-12, Seed: 3}} {
				name := fmt.Sprintf("kind %d centred %v %T on %d ranks", kind, center, solver, p)
				ref, err := eig.NewKernelOperator(x, k, eig.OperatorFloat64, center, linalg.GramOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want, err := solver.Solve(ref, 6)
				if err != nil {
					t.Fatal(name, err)
				}
				op, err := NewKernelOperator(x, k, kind, center)
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
				if d := got.Passes - want.Passes; d < -1 || d > 1 {
					t.Errorf("%s: %d passes, one process %d", name, got.Passes, want.Passes)
				}
				if !got.Status.Converged() {
					t.Errorf("%s: %v", name, got.Status)
				}
			}
		}
	}
}

// The layout splits rows evenly; MaxAbs keeps the sign of the largest
// magnitude.
func TestLayoutAndMaxAbs(t *testing.T) {
	l, err := NewLayout(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(l.Starts) != "[0 4 7 10]" {
		t.Errorf("layout %v", l.Starts)
	}
	if _, err := NewLayout(2, 3); err == nil {
		t.Error("2 rows over 3 ranks accepted")
	}
	r := mpi.Rank()
	x := []float64{float64(r), -float64(r) - 0.5}
	if err := (Reduction{}).MaxAbs(x); err != nil {
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
