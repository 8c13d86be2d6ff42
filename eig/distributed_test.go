package eig_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/eig/eigtest"
)

// A row-distributed run over 3 parts gives the same eigenpairs as one
// process with the same seed: eigenvalues to 1e-10 relative, every part
// the same values, vectors row by row.
func TestKrylovOnDistributedOperator(t *testing.T) {
	lambda := eigtest.Spectrum(301, func(i int) float64 { return math.Pow(0.93, float64(i)) })
	a := eigtest.WithSpectrum(5, lambda)
	d, err := eig.NewDense(a)
	if err != nil {
		t.Fatal(err)
	}
	const k = 6
	for _, s := range []eig.Solver{eig.BlockKrylov{Tol: 1e-12}, eig.Lanczos{Tol: 1e-12}, eig.Auto{Tol: 1e-12}} {
		want, err := s.Solve(d, k)
		if err != nil {
			t.Fatal(err)
		}
		w := eigtest.NewWorld(3)
		bounds := []int{0, 100, 220, 301}
		results := make([]*eig.Result, 3)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for id := 0; id < 3; id++ {
			wg.Add(1)
			go func(id int) {
				defer wg.Done()
				p := eigtest.NewPart(w, id, a, bounds[id], bounds[id+1]-bounds[id])
				var op eig.Operator = p
				if id == 1 {
					// A context wrapper keeps the operator distributed.
					op = eig.WithContext(context.Background(), p)
				}
				results[id], errs[id] = s.Solve(op, k)
			}(id)
		}
		wg.Wait()
		for id := 0; id < 3; id++ {
			if errs[id] != nil {
				t.Fatalf("%T part %d: %v", s, id, errs[id])
			}
			r := results[id]
			for j := 0; j < k; j++ {
				if r.Values[j] != results[0].Values[j] {
					t.Fatalf("%T: parts disagree on λ_%d", s, j)
				}
				if math.Abs(r.Values[j]-want.Values[j]) > 1e-10*want.Values[0] {
					t.Errorf("%T: λ_%d = %.15g, one process %.15g", s, j, r.Values[j], want.Values[j])
				}
				for i := 0; i < r.Vectors.RawMatrix().Rows; i++ {
					if d := math.Abs(r.Vectors.At(i, j) - want.Vectors.At(bounds[id]+i, j)); d > 1e-8 {
						t.Fatalf("%T: part %d row %d of vector %d off by %.3g", s, id, i, j, d)
					}
				}
			}
			if !r.Status.Converged() {
				t.Errorf("%T part %d: %v", s, id, r.Status)
			}
		}
	}
	// The solvers that need every row refuse.
	w := eigtest.NewWorld(1)
	p := eigtest.NewPart(w, 0, a, 0, 301)
	for _, s := range []eig.Solver{eig.DenseSolver{}, eig.Randomized{}} {
		if _, err := s.Solve(p, k); err == nil {
			t.Errorf("%T accepted a distributed operator", s)
		}
	}
}
