package eig_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

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

// A start block given part by part (each part its rows) gives the one
// process run's eigenpairs with the whole block.
func TestBlockStartOnDistributedOperator(t *testing.T) {
	lambda := eigtest.Spectrum(240, func(i int) float64 { return math.Pow(0.9, float64(i)) })
	a := eigtest.WithSpectrum(6, lambda)
	d, err := eig.NewDense(a)
	if err != nil {
		t.Fatal(err)
	}
	const k = 4
	start := mat.NewDense(240, 6, nil)
	for i := 0; i < 240; i++ {
		for j := 0; j < 6; j++ {
			start.Set(i, j, math.Sin(float64(i*(j+1))))
		}
	}
	s := eig.BlockKrylov{Tol: 1e-12, Block: 6, Start: start, CheckEachBlock: true}
	want, err := s.Solve(d, k)
	if err != nil {
		t.Fatal(err)
	}
	w := eigtest.NewWorld(2)
	bounds := []int{0, 130, 240}
	results := make([]*eig.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for id := 0; id < 2; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			p := eigtest.NewPart(w, id, a, bounds[id], bounds[id+1]-bounds[id])
			ps := s
			ps.Start = start.Slice(bounds[id], bounds[id+1], 0, 6).(*mat.Dense)
			results[id], errs[id] = ps.Solve(p, k)
		}(id)
	}
	wg.Wait()
	for id := 0; id < 2; id++ {
		if errs[id] != nil {
			t.Fatalf("part %d: %v", id, errs[id])
		}
		if results[id].Passes != want.Passes {
			t.Errorf("part %d: %d passes, one process %d", id, results[id].Passes, want.Passes)
		}
		for j := 0; j < k; j++ {
			if math.Abs(results[id].Values[j]-want.Values[j]) > 1e-10*want.Values[0] {
				t.Errorf("part %d: λ_%d = %.15g, one process %.15g", id, j, results[id].Values[j], want.Values[j])
			}
		}
	}
}
