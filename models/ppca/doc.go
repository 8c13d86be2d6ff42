// Package ppca is probabilistic PCA in primal and dual form.
//
// The primal model (Tipping & Bishop) has explicit features φ ∈ R^d:
//
//	φ = W h + μ + ζ,  h ~ N(0, I_q),  ζ ~ N(0, σ² I).
//
// With the scatter C = Φ_cᵀΦ_c = V Λ Vᵀ of the N centred rows of Φ
// (eigenvalues λ_1 ≥ … ≥ λ_d), maximum likelihood gives μ = the mean,
// W = V_q (Λ_q/N − σ² I)^{1/2} and σ² = Σ_{p>q} λ_p / (N(d − q)), the mean
// variance of the discarded directions.
//
// The dual model works on the centred kernel matrix K_c = E Λ Eᵀ of the N
// training points and never needs features: with k_c the centred kernel
// vector of a point,
//
//	Ã = E_q (I/N − σ² Λ_q^{-1})^{1/2}       (W = Φ_c Ã)
//	h_MAP = N Λ_q^{-1} Ãᵀ k_c
//	(k_c)_MAP = K_c Ã h = E_q (I − Nσ² Λ_q^{-1}) E_qᵀ k_c   for h = h_MAP
//	Cov(h | k_c) = σ² N Λ_q^{-1}
//
// and σ²_ML = Σ_{p>q} λ_p / (N(N − q)): the model lives in the span of the
// N training features, whose dimension is N (the paper's convention; the
// primal model counts d instead, so the two maximum-likelihood σ² differ
// when d ≠ N, while every formula agrees for a given σ²). Given σ² instead
// of q, q is the largest index with σ² ≤ λ_q/N. As σ² → 0 the MAP
// reconstruction E_q E_qᵀ k_c is kernel PCA's.
//
// Sampling in kernel space. Under the primal model φ − μ ~ N(0, WWᵀ + σ²I)
// on the span of the training features, so k_c = Φ_cᵀ(φ − μ) has covariance
//
//	Φ_cᵀ(WWᵀ + σ²I)Φ_c = K_c Ã Ãᵀ K_c + σ² K_c = B̃ B̃ᵀ,
//	B̃ = E Λ^{1/2} blockdiag(N^{-1/2} Λ_q^{1/2}, σ I_{N−q}),
//
// and kdual samples k_c = B̃u with u ~ N(0, I_N). The paper's Eq. 18 prints
// the covariance as ÃᵀÃ + σ² K_c^{-1}; that expression is not the
// covariance of Φ_cᵀ(φ − μ) (it is not even dimensionally consistent with
// the sampler B̃ the paper itself uses, whose B̃B̃ᵀ is the product above),
// and the tests check the sample covariance against K_cÃÃᵀK_c + σ²K_c.
// The σ I_{N−q} block needs every eigenpair of K_c, so a model that samples
// is fitted with the dense LAPACK solver (O(N³)); a model that only
// projects and reconstructs can use the top-q solvers of package eig.
//
// Pre-images. A kernel vector (reconstructed or sampled) is mapped back to
// input space with the kernel smoother x̂ = Σ_i w_i x_i / Σ_i w_i. The
// weights should be the un-centred kernel values k(x, x_i) = (k_c)_i + m_i
// − m̄ + m(x) (m_i the training kernel's row means, m̄ their mean), but a
// centred vector cannot tell its own mean kernel value m(x): the weights are
// known only up to one additive constant, and a wrong constant pulls every
// pre-image towards the training mean (the instability the paper mentions).
// The stabilising term kdual uses fixes the constant so that the smallest
// weight is zero, w_i = v_i − min_l v_l with v_i = (k_c)_i + m_i: exact
// for kernels that vanish at the farthest training point (an RBF narrower
// than the data), and the weights of a smoother are non-negative. A
// vector whose weights sum to less than τ = 1e-12 (all equal) gets the
// training mean; PreImage reports how many did. The k-nearest variant keeps
// only the k largest weights.
package ppca
