package eig

import "fmt"

// Auto picks a solver by this rule, with n = op.Dim():
//   - n ≤ 600, or k > n/5: DenseSolver (LAPACK is safe for any symmetric
//     matrix at these sizes, or when a large part of the spectrum is
//     wanted; the planner pairs kernel matrices from 200 rows with block
//     Krylov instead, see PlanOperator);
//   - otherwise BlockKrylov with blocks of 8. Multiplicities are possible
//     in any kernel matrix (duplicated points, symmetric data), and a
//     single-vector Krylov method can return fewer copies of a repeated
//     eigenvalue than there are and still pass its residual test (Lanczos
//     returned 4 of 12 copies on TestAutoFindsRepeatedEigenvalues' matrix;
//     ARPACK behaves the same). A block of b vectors finds every copy of an
//     eigenvalue repeated up to b times, so Auto takes blocks; it also
//     needs about a third of Lanczos's passes (docs/measurements.md). Name
//     Lanczos where a single-vector pass is much cheaper and multiplicities
//     are known not to matter.
//
// The rule is fixed (no timing), so runs are repeatable. Tol and Seed are
// passed on to the iterative solver. The zero value is ready.
type Auto struct {
	Tol  float64
	Seed uint64
}

// Choose returns the solver the rule picks for an n×n operator and k pairs.
func (a Auto) Choose(n, k int) Solver {
	if n <= autoDenseMax || 5*k > n {
		return DenseSolver{}
	}
	return BlockKrylov{Block: autoBlock, Tol: a.Tol, Seed: a.Seed}
}

// autoDenseMax is the largest n Auto gives to LAPACK whatever k.
const autoDenseMax = 600

// autoBlock is Auto's block size: it finds every copy of an eigenvalue
// repeated up to 8 times.
const autoBlock = 8

// Solve runs the chosen solver.
func (a Auto) Solve(op Operator, k int) (*Result, error) {
	if _, err := checkK(op, k); err != nil {
		return nil, err
	}
	s, _ := a.Resolve(op, k)
	return s.Solve(op, k)
}

// Resolve returns the solver Solve runs on op for k pairs, and why: block
// Krylov for an operator whose rows are split across processes (whatever
// n), otherwise Choose's rule.
func (a Auto) Resolve(op Operator, k int) (Solver, string) {
	n := op.Dim()
	if _, dist := op.(Distributed); dist {
		return BlockKrylov{Block: autoBlock, Tol: a.Tol, Seed: a.Seed}, "rows split across processes: block Krylov in blocks of 8"
	}
	switch {
	case n <= autoDenseMax:
		return a.Choose(n, k), fmt.Sprintf("n = %d ≤ %d: dense LAPACK", n, autoDenseMax)
	case 5*k > n:
		return a.Choose(n, k), fmt.Sprintf("k = %d > n/5 = %d: dense LAPACK", k, n/5)
	}
	return a.Choose(n, k), fmt.Sprintf("n = %d > %d and k = %d ≤ n/5: block Krylov in blocks of 8", n, autoDenseMax, k)
}
