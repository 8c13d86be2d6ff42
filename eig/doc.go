// Package eig computes the k largest (algebraic) eigenpairs of a symmetric
// operator.
//
// The solver sees only an Operator: Dim and a block Apply, dst = A·X for an
// n×b block X, which reads A once. Dense (float64) and Float32 (float32
// storage, float64 arithmetic) matrices implement it, and Counting wraps any
// operator to count its use. Every solver reports the number of Apply calls
// (Passes: on a dense matrix, passes over A — the unit of cost) and the
// number of columns pushed through them (MatVecs).
//
// Solvers, each a type whose zero value is ready to use:
//   - Dense: LAPACK on the full matrix (dsyevd/dsyevr through linalg, or
//     its tridiagonal routines after linalg's own reduction for small ones);
//   - Lanczos: Krylov–Schur restarted Lanczos (equivalent to implicit or
//     thick restarting) with full reorthogonalisation, block size 1;
//   - BlockKrylov: the same with a block of b random vectors, so each pass
//     over A is a BLAS-3 product with b columns (randomized block Krylov in
//     the sense of Musco and Musco 2015, restarted until converged);
//   - Randomized: the Halko–Martinsson–Tropp range finder with oversampling
//     and power iterations, finished by a symmetric Rayleigh–Ritz step;
//   - Auto: picks one of them by a documented rule.
//
// Results: eigenvalues decreasing; eigenvectors orthonormal, the sign of
// each fixed so that its largest-magnitude entry is positive; random starts
// seeded (default seed 1), so a run is reproducible. Errors wrap ErrInvalid
// (k out of range, NaN or Inf from the operator) or ErrNotConverged (with
// a *status.Error carrying the partial result: eig.Partial(err)). A Krylov space that becomes
// invariant is not an error: the basis is extended with fresh random
// directions. ErrBreakdown is defined here for the models built on eig
// (a rank-deficient HᵀGH in package kpca). Every result carries a
// status.Status naming the stopping test that passed (or why none did).
//
// Distribution: an operator whose vectors are split by rows across
// processes implements Distributed (its rows, the global n, its offset and
// a Reduction). Lanczos and BlockKrylov run on it unchanged: every n-long
// inner product and norm goes through the Reduction (Local, a no-op, for
// ordinary operators), the random start is the same global block on every
// part, and every small decision is made from identical reduced numbers,
// so the parts never diverge. Operator errors (a cancelled pass, a lost
// process) come back from Apply and end the solve.
package eig
