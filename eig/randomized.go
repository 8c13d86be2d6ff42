package eig

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Normalizer re-normalises the block between power iterations.
type Normalizer int

const (
	// NormAuto is scikit-learn's rule: none when q ≤ 2, LU otherwise.
	NormAuto Normalizer = iota
	// NormQR orthonormalises by Householder QR (most stable).
	NormQR
	// NormLU replaces the block Y by P·L of its LU factorisation Y = P·L·U
	// (cheaper than QR; scikit-learn's choice).
	NormLU
	// NormNone does nothing between products.
	NormNone
)

// Randomized is the Halko–Martinsson–Tropp randomized range finder with
// oversampling and power iterations, finished by a symmetric Rayleigh–Ritz
// step: with l = k + p, Q spans A^{2q+1}Ω for a Gaussian n×l block Ω, and
// the eigenpairs come from the l×l matrix QᵀAQ, so indefinite matrices are
// handled (selection is by algebraic value, not by magnitude as an SVD
// would do).
//
// Cost: 2q + 2 passes of l columns, the same products as scikit-learn's
// randomized_svd with the same p and q (q counts applications of AAᵀ).
// With Tol = 0 this fixed schedule is all it does: there is no stopping
// test, the result's Status is FixedSchedule (never Converged), and its
// Residuals are the true ‖Au − θu‖, measured by the last pass (AU = Y·S);
// NumConverged counts the leading pairs whose residual is at rounding
// level, 64ε‖A‖.
// With Tol > 0 it then continues subspace iteration, one pass per step,
// until every residual ‖Au − θu‖ meets the test of Lanczos or MaxIter
// steps; residuals come for free from the last product (AU = Y·S).
//
// Scope: power steps favour the largest |λ|. The k largest algebraic
// eigenvalues are found when at most l − k eigenvalues exceed λ_k in
// magnitude — always for positive semi-definite operators such as kernel
// matrices, and for indefinite ones whose negative part is small. On an
// operator with many large negative eigenvalues the convergence loop ends
// with ErrNotConverged rather than a wrong answer; use Lanczos or
// BlockKrylov there.
// The zero value is ready.
type Randomized struct {
	// Oversample is p; 0 means 10, a negative value means none.
	Oversample int
	// PowerIters is q; 0 means scikit-learn's 'auto' (7 when k < 0.1·n,
	// else 4); a negative value means none.
	PowerIters int
	// Normalizer between power iterations; the zero value is NormAuto.
	Normalizer Normalizer
	// Tol > 0 adds the convergence loop; 0 runs the fixed schedule only.
	Tol float64
	// MaxIter bounds the extra steps of the convergence loop; 0 means 500.
	// A run takes at most 2q + 2 + MaxIter passes.
	MaxIter int
	// Seed of Ω; 0 means 1.
	Seed uint64
}

// Solve returns the k largest eigenpairs of op.
func (rz Randomized) Solve(op Operator, k int) (*Result, error) {
	return timed(time.Now())(rz.solve(op, k))
}

func (rz Randomized) solve(op Operator, k int) (*Result, error) {
	n, err := checkK(op, k)
	if err != nil {
		return nil, err
	}
	if err := localOnly("the randomized solver", op); err != nil {
		return nil, err
	}
	p, q, norm, seed, maxIter, err := rz.params(n, k)
	if err != nil {
		return nil, err
	}
	l := min(k+p, n)

	res := &Result{}
	rng := rng.New(seed)
	qb := mat.NewDense(n, l, nil)
	for i := 0; i < n; i++ {
		row := qb.RawRowView(i)
		for c := range row {
			row[c] = rng.NormFloat64()
		}
	}
	y := mat.NewDense(n, l, nil)
	apply := func() error {
		res.Passes++
		res.MatVecs += l
		if err := op.Apply(y, qb); err != nil {
			return err
		}
		return checkBlockFinite(y)
	}
	var orth linalg.Orthonormalizer
	var lu luNormalizer
	normalize := func() error { return normalizeBlock(qb, y, norm, &orth, &lu) }
	if err := apply(); err != nil {
		return nil, err
	}
	for it := 0; it < 2*q; it++ {
		if err := normalize(); err != nil {
			return nil, err
		}
		if err := apply(); err != nil {
			return nil, err
		}
	}
	res.Iterations = q
	anorm := 0.0
	for step := 0; ; step++ {
		// Rayleigh–Ritz on span(Y).
		linalg.Copy(qb, y)
		if err := orth.InPlace(qb); err != nil {
			return nil, err
		}
		if err := apply(); err != nil {
			return nil, err
		}
		theta, u, resid, err := ritzPairs(qb, y, k)
		if err != nil {
			return nil, err
		}
		anorm = math.Max(anorm, math.Max(math.Abs(theta[0]), math.Abs(theta[l-1])))
		nconv := 0
		for nconv < k && resid[nconv] <= threshold(rz.Tol, theta[nconv], anorm) {
			nconv++
		}
		done := rz.Tol == 0 || nconv == k
		if done || step >= maxIter {
			linalg.FixSigns(u)
			res.Values = append([]float64(nil), theta[:k]...)
			res.Vectors = u
			res.Residuals = resid
			res.NumConverged = nconv
			res.Iterations = q + step
			switch {
			case rz.Tol == 0:
				res.Status = status.Status{Code: status.FixedSchedule,
					Detail: fmt.Sprintf("%d power iterations, no stopping test; Residuals measured", q)}
			case done:
				res.Status = status.Status{Code: status.Converged, Test: testResidual(rz.Tol)}
			default:
				res.Status = status.Status{Code: status.IterationLimit, Test: testResidual(rz.Tol),
					Detail: fmt.Sprintf("%d subspace steps", step)}
				return res, notConverged("randomized", res)
			}
			return res, nil
		}
		// Subspace iteration: y holds A·Q, the next basis spans it.
	}
}

// luNormalizer computes P·L of Y = P·L·U in place (linalg.LUNormalizer).
type luNormalizer struct{ lu linalg.LUNormalizer }

func (lu *luNormalizer) permutedL(y *mat.Dense) { lu.lu.PermutedLInPlace(y) }

// params resolves the options for an n×n operator and k pairs: the
// oversampling p, power iterations q, normaliser, seed and the limit of
// subspace steps.
func (rz Randomized) params(n, k int) (p, q int, norm Normalizer, seed uint64, maxIter int, err error) {
	p = rz.Oversample
	switch {
	case p == 0:
		p = 10
	case p < 0:
		p = 0
	}
	if rz.Tol < 0 || math.IsNaN(rz.Tol) {
		return 0, 0, 0, 0, 0, fmt.Errorf("eig: randomized: tolerance %g: %w", rz.Tol, status.ErrInvalid)
	}
	q = rz.PowerIters
	switch {
	case q == 0 && float64(k) < 0.1*float64(n):
		q = 7
	case q == 0:
		q = 4
	case q < 0:
		q = 0
	}
	norm = rz.Normalizer
	if norm == NormAuto {
		norm = NormLU
		if q <= 2 {
			norm = NormNone
		}
	}
	seed = rz.Seed
	if seed == 0 {
		seed = 1
	}
	maxIter = rz.MaxIter
	if maxIter <= 0 {
		maxIter = 500
	}
	return p, q, norm, seed, maxIter, nil
}

// ritzPairs is the Rayleigh–Ritz step on span(Q) given Y = A·Q (n×l):
// the eigenvalues θ of QᵀY's symmetric part (all l, decreasing), the top k
// Ritz vectors U = Q·S and their residuals ‖A·u_i − θ_i·u_i‖ (A·U = Y·S).
func ritzPairs(qb, y *mat.Dense, k int) (theta []float64, u *mat.Dense, resid []float64, err error) {
	n, l := qb.Dims()
	b := mat.NewDense(l, l, nil)
	linalg.Mul(b, qb.T(), y)
	e, err := linalg.SymEig(linalg.SymPart(b), 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("eig: randomized: projected problem: %w", err)
	}
	theta = e.Values
	sk := e.Vectors.Slice(0, l, 0, k)
	u = mat.NewDense(n, k, nil)
	linalg.Mul(u, qb, sk)
	au := mat.NewDense(n, k, nil)
	linalg.Mul(au, y, sk)
	resid = make([]float64, k)
	for i := 0; i < k; i++ {
		s := 0.0
		for r := 0; r < n; r++ {
			d := au.At(r, i) - theta[i]*u.At(r, i)
			s += d * d
		}
		resid[i] = math.Sqrt(s)
	}
	return theta, u, resid, nil
}

// normalizeBlock sets Q to Y normalised between power iterations: QR
// (orthonormal), LU (the permuted L factor) or a plain copy.
func normalizeBlock(qb, y *mat.Dense, norm Normalizer, orth *linalg.Orthonormalizer, lu *luNormalizer) error {
	linalg.Copy(qb, y)
	switch norm {
	case NormQR:
		return orth.InPlace(qb)
	case NormLU:
		lu.permutedL(qb)
	}
	return nil
}
