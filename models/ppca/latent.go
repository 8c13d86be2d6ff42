package ppca

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// latent is what the primal and dual models share: N, q, σ², the
// eigenvalues (of Φ_cᵀΦ_c or K_c, decreasing) and their sum.
type latent struct {
	n      int
	q      int
	sigma2 float64
	values []float64
	trace  float64
}

// ready reports whether a fit set the latent model.
func (l *latent) ready() bool { return l.q > 0 }

// LatentDim is the fitted q (0 before a fit).
func (l *latent) LatentDim() int { return l.q }

// NoiseVariance is the fitted σ² (0 before a fit).
func (l *latent) NoiseVariance() float64 { return l.sigma2 }

// Eigenvalues returns the computed eigenvalues, decreasing (for Dual: all
// of K_c's with the dense solver, else the top q; for Primal: the d of the
// scatter matrix), or ErrNotFitted.
func (l *latent) Eigenvalues() ([]float64, error) {
	if !l.ready() {
		return nil, ErrNotFitted
	}
	return append([]float64(nil), l.values...), nil
}

// ExplainedVariance is Σ_{p≤q} λ_p / Σ_p λ_p, or ErrNotFitted.
func (l *latent) ExplainedVariance() (float64, error) {
	if !l.ready() {
		return 0, ErrNotFitted
	}
	s := 0.0
	for _, v := range l.values[:l.q] {
		s += v
	}
	return s / l.trace, nil
}

// PosteriorCov returns the covariance of h given the observation,
// σ²(WᵀW + σ²I)^{-1} = σ² N Λ_q^{-1}, the same for every observation (the
// paper's dual Eq. 15 omits the factor σ² that its primal Eq. 7 has), or
// ErrNotFitted.
func (l *latent) PosteriorCov() (*mat.SymDense, error) {
	if !l.ready() {
		return nil, ErrNotFitted
	}
	c := mat.NewSymDense(l.q, nil)
	for p := 0; p < l.q; p++ {
		c.SetSym(p, p, l.sigma2*float64(l.n)/l.values[p])
	}
	return c, nil
}

// scaleMAP multiplies column p of h by N/λ_p: h_MAP from Wᵀ(φ − μ) or
// Ãᵀk_c.
func (l *latent) scaleMAP(h *mat.Dense) {
	rows, _ := h.Dims()
	for p := 0; p < l.q; p++ {
		f := float64(l.n) / l.values[p]
		for i := 0; i < rows; i++ {
			h.Set(i, p, h.At(i, p)*f)
		}
	}
}

// checkLatent validates latent vectors (rows of h, q columns).
func (l *latent) checkLatent(what string, h *mat.Dense) (rows int, err error) {
	if h == nil || h.IsEmpty() {
		return 0, invalidf("%s: empty latent matrix", what)
	}
	rows, c := h.Dims()
	if c != l.q {
		return 0, invalidf("%s: latent vectors have %d entries, q = %d", what, c, l.q)
	}
	return rows, linalg.CheckFinite("ppca: "+what, h)
}

// checkSettings validates N points, the model dimension dim (named name),
// and the q and σ² asked for.
func checkSettings(n, dim int, name string, q int, sigma2 float64) error {
	if n < 2 {
		return invalidf("need N ≥ 2 points, have %d", n)
	}
	if q < 0 || q >= dim {
		return invalidf("q = %d: want 0 ≤ q < %s = %d", q, name, dim)
	}
	if sigma2 < 0 || math.IsNaN(sigma2) || math.IsInf(sigma2, 0) {
		return invalidf("σ² = %g: want a finite σ² ≥ 0", sigma2)
	}
	if q == 0 && sigma2 == 0 {
		return invalidf("set q, σ², or both")
	}
	return nil
}
