package eig

import (
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Auto picks a solver by this rule, with n = op.Dim():
//   - n ≤ 600, or k > n/5: DenseSolver (LAPACK is faster than any
//     iteration at these sizes, or when a large part of the spectrum is
//     wanted);
//   - otherwise it times a pass of a block of 8 and then two of a single
//     vector on the operator itself (three passes, counted in the result;
//     t₁ the faster of the two) and runs Lanczos when 3·t₁ < t₈, block Krylov with blocks of 8
//     otherwise: on the Fashion-MNIST kernels at n = 7000 and 20 000
//     Lanczos needed about three times the passes of block Krylov (63
//     against 21), so the cheaper of the two is the one whose pass costs
//     less than that ratio allows. Where one vector costs almost as much
//     as a block (the AVX-512 machines, matrix-free operators) this is
//     block Krylov; where a single vector streams one triangle at memory
//     speed and blocks run at a fraction of the arithmetic rate, Lanczos.
//     The choice depends on timing, so two runs may take different
//     solvers (results agree to the tolerance); name a solver for
//     bit-for-bit repeatable runs. Block Krylov also finds every copy of
//     an eigenvalue repeated up to 8 times, which single-vector Lanczos
//     may not.
//
// Tol and Seed are passed on to the iterative solver. The zero value is
// ready.
type Auto struct {
	Tol  float64
	Seed uint64
	// Fixed skips the timing and always takes block Krylov (the rule's
	// choice before it measured passes).
	Fixed bool
}

// Choose returns the solver the size rule picks for an n×n operator and k
// pairs: DenseSolver or BlockKrylov (Solve may then take Lanczos by
// timing, see Auto).
func (a Auto) Choose(n, k int) Solver {
	if n <= 600 || 5*k > n {
		return DenseSolver{}
	}
	return BlockKrylov{Tol: a.Tol, Seed: a.Seed}
}

// Solve runs the chosen solver.
func (a Auto) Solve(op Operator, k int) (*Result, error) {
	n, err := checkK(op, k)
	if err != nil {
		return nil, err
	}
	s := a.Choose(n, k)
	if _, dense := s.(DenseSolver); dense || a.Fixed {
		return s.Solve(op, k)
	}
	t1, t8, err := passTimes(op)
	if err != nil {
		return nil, err
	}
	if 3*t1 < t8 {
		s = Lanczos{Tol: a.Tol, Seed: a.Seed}
	}
	res, err := s.Solve(op, k)
	if res != nil {
		res.Passes += 3
		res.MatVecs += 10
	}
	return res, err
}

// passTimes times one Apply of eight vectors, then two of one vector (the
// first pass also warms what the operator allocates on first use).
func passTimes(op Operator) (t1, t8 float64, err error) {
	n := op.Dim()
	x := mat.NewDense(n, 8, nil)
	for i := 0; i < n; i++ {
		x.Set(i, i%8, 1)
	}
	y := mat.NewDense(n, 8, nil)
	start := time.Now()
	if err := op.Apply(y, x); err != nil {
		return 0, 0, err
	}
	t8 = time.Since(start).Seconds()
	if err := checkBlockFinite(y); err != nil {
		return 0, 0, err
	}
	x1, y1 := x.Slice(0, n, 0, 1).(*mat.Dense), y.Slice(0, n, 0, 1).(*mat.Dense)
	t1 = math.Inf(1)
	for r := 0; r < 2; r++ {
		start = time.Now()
		if err := op.Apply(y1, x1); err != nil {
			return 0, 0, err
		}
		t1 = math.Min(t1, time.Since(start).Seconds())
	}
	return t1, t8, nil
}
