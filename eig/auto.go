package eig

// Auto picks a solver by this rule, with n = op.Dim():
//   - n ≤ 600, or k > n/5: DenseSolver (LAPACK is faster than any
//     iteration at these sizes, or when a large part of the spectrum is
//     wanted);
//   - otherwise BlockKrylov with blocks of 8. Multiplicities are possible
//     in any kernel matrix (duplicated points, symmetric data), and a
//     single-vector Krylov method can return fewer copies of a repeated
//     eigenvalue than there are and still pass its residual test (Lanczos
//     returned 4 of 12 copies on TestAutoFindsRepeatedEigenvalues' matrix;
//     ARPACK behaves the same). A block of b vectors finds every copy of an
//     eigenvalue repeated up to b times, so Auto takes blocks. On the
//     Fashion-MNIST kernels at n = 7000 and 20 000 block Krylov also needed
//     about a third of Lanczos's passes (21 against 63), and its end-to-end
//     time was no worse than Lanczos's on the AMD machine; name Lanczos
//     where a single-vector pass is much cheaper and multiplicities are
//     known not to matter.
//
// The rule is fixed (no timing), so runs are repeatable. Tol and Seed are
// passed on to the iterative solver. The zero value is ready.
type Auto struct {
	Tol  float64
	Seed uint64
}

// Choose returns the solver the rule picks for an n×n operator and k pairs.
func (a Auto) Choose(n, k int) Solver {
	if n <= 600 || 5*k > n {
		return DenseSolver{}
	}
	return BlockKrylov{Block: autoBlock, Tol: a.Tol, Seed: a.Seed}
}

// autoBlock is Auto's block size: it finds every copy of an eigenvalue
// repeated up to 8 times.
const autoBlock = 8

// Solve runs the chosen solver.
func (a Auto) Solve(op Operator, k int) (*Result, error) {
	n, err := checkK(op, k)
	if err != nil {
		return nil, err
	}
	if _, dist := op.(Distributed); dist {
		// Rows split across processes: block Krylov, whatever n.
		return BlockKrylov{Block: autoBlock, Tol: a.Tol, Seed: a.Seed}.Solve(op, k)
	}
	return a.Choose(n, k).Solve(op, k)
}
