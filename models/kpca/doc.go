// Package kpca is kernel principal component analysis in primal-free dual
// form.
//
// The KPCA estimator is shaped like scikit-learn's KernelPCA: Fit on data
// (or FitGram on a precomputed kernel matrix), then Transform new points,
// InverseTransform scores back to input space (kernel ridge pre-images,
// Bakır et al. 2004), with the eigenvalues and training scores kept.
//
// Solvers:
//   - "lbfgs": L-BFGS on the dual cost d(H) = ½‖H‖²_F − Tr √(HᵀGH)
//     (the dual-KPCA paper, Problem 2), which needs no eigendecomposition
//     of G and costs exactly one pass over G per iteration: along a search
//     direction P, G(H + αP) = GH + α·GP, so line-search trials and the
//     next gradient take only n×s and s×s work;
//   - "dca": the DC algorithm for the Moreau-envelope losses (Huber
//     H¹κ, H²κ, Frobenius; ε-insensitive ℓ^∞_ε, ℓ²_ε): Y = G·H·M^{-1/2},
//     H ← prox_{Ψ*}(Y), one pass per iteration;
//   - "dense", "lanczos", "block", "randomized", "auto": the eigensolvers
//     of package eig.
//
// Conventions: G is centred unless NoCenter; Components s < n; eigenvalues
// are those of G (not divided by n); training scores are G·V·Λ^{-1/2} =
// V·Λ^{1/2}; projections use unit-norm principal axes (Eq. 8), so
// Transform of the training points gives the training scores.
package kpca
