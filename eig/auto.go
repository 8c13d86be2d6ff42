package eig

// Auto picks a solver by this rule, with n = op.Dim():
//   - n ≤ 600, or k > n/5: DenseSolver (LAPACK is faster than any
//     iteration at these sizes, or when a large part of the spectrum is
//     wanted);
//   - otherwise BlockKrylov with its defaults (block 8): on dense kernel
//     matrices a pass with b columns costs little more than one with a
//     single column, and the block method needs the fewest passes.
//
// Tol and Seed are passed on to the iterative solver. The zero value is
// ready.
type Auto struct {
	Tol  float64
	Seed uint64
}

// Choose returns the solver the rule picks for an n×n operator and k pairs.
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
	return a.Choose(n, k).Solve(op, k)
}
