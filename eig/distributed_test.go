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

// world is P in-process parts that exchange through shared slots and a
// cyclic barrier: a stand-in for MPI, to check that the Krylov solvers
// run on row-distributed operators through eig.Distributed alone.
type world struct {
	parts int
	mu    sync.Mutex
	cond  *sync.Cond
	count int
	round int
	slots [][]float64
	xg    *mat.Dense // the gathered block
}

func newWorld(parts int) *world {
	w := &world{parts: parts, slots: make([][]float64, parts)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *world) barrier() {
	w.mu.Lock()
	r := w.round
	w.count++
	if w.count == w.parts {
		w.count = 0
		w.round++
		w.cond.Broadcast()
	} else {
		for r == w.round {
			w.cond.Wait()
		}
	}
	w.mu.Unlock()
}

// part is one part's view: rows [off, off+rows) of the n×n matrix a.
type part struct {
	w         *world
	id        int
	a         *mat.SymDense
	off, rows int
}

func (p *part) Dim() int                 { return p.rows }
func (p *part) GlobalDim() int           { return p.a.SymmetricDim() }
func (p *part) RowOffset() int           { return p.off }
func (p *part) Reduction() eig.Reduction { return p }
func (p *part) Sum(x []float64) error    { return p.reduce(x, false) }
func (p *part) MaxAbs(x []float64) error { return p.reduce(x, true) }

func (p *part) reduce(x []float64, maxAbs bool) error {
	p.w.slots[p.id] = append([]float64(nil), x...)
	p.w.barrier()
	for i := range x {
		acc := 0.0
		for q := 0; q < p.w.parts; q++ {
			v := p.w.slots[q][i]
			switch {
			case !maxAbs:
				acc += v
			case math.Abs(v) > math.Abs(acc):
				acc = v
			}
		}
		x[i] = acc
	}
	p.w.barrier()
	return nil
}

func (p *part) Apply(dst, x *mat.Dense) error {
	n := p.a.SymmetricDim()
	_, b := x.Dims()
	if p.id == 0 {
		p.w.mu.Lock()
		p.w.xg = mat.NewDense(n, b, nil)
		p.w.mu.Unlock()
	}
	p.w.barrier()
	p.w.xg.Slice(p.off, p.off+p.rows, 0, b).(*mat.Dense).Copy(x)
	p.w.barrier()
	rows := mat.NewDense(p.rows, n, nil)
	for i := 0; i < p.rows; i++ {
		for j := 0; j < n; j++ {
			rows.Set(i, j, p.a.At(p.off+i, j))
		}
	}
	dst.Mul(rows, p.w.xg)
	p.w.barrier()
	return nil
}

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
		w := newWorld(3)
		bounds := []int{0, 100, 220, 301}
		results := make([]*eig.Result, 3)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for id := 0; id < 3; id++ {
			wg.Add(1)
			go func(id int) {
				defer wg.Done()
				p := &part{w: w, id: id, a: a, off: bounds[id], rows: bounds[id+1] - bounds[id]}
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
	w := newWorld(1)
	p := &part{w: w, a: a, rows: 301}
	for _, s := range []eig.Solver{eig.DenseSolver{}, eig.Randomized{}} {
		if _, err := s.Solve(p, k); err == nil {
			t.Errorf("%T accepted a distributed operator", s)
		}
	}
}
