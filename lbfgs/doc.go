// Package lbfgs minimises smooth functions on Rⁿ with the limited-memory
// BFGS method: the two-loop recursion with history m, initial scaling
// sᵀy/yᵀy, curvature pairs skipped when sᵀy ≤ 0, and a Moré–Thuente line
// search for the strong Wolfe conditions
//
//	φ(α) ≤ φ(0) + FTol·α·φ'(0)   and   |φ'(α)| ≤ GTol·|φ'(0)|.
//
// A Problem gives f and ∇f. A LineProblem also evaluates φ(α) = f(x + αp)
// and φ'(α) along one direction after one preparation per iteration, which
// lets problems whose full evaluation is expensive (dual kernel PCA: one
// pass over an n×n matrix) make every line-search trial cheap. Pure Go, on
// flat []float64, no allocation inside the iteration loop.
package lbfgs
