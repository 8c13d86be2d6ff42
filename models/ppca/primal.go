package ppca

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
)

// Primal is Tipping and Bishop's probabilistic PCA on explicit features
// (the rows of the data matrix). Q and Sigma2 follow the rules of Dual,
// with the maximum-likelihood σ² = Σ_{p>q} λ_p/(N(d−q)) over the d
// eigenvalues of the scatter matrix.
type Primal struct {
	Q      int
	Sigma2 float64

	latent
	d      int
	mean   []float64
	v      *mat.Dense // eigenvectors of Φ_cᵀΦ_c, d×d
	w      *mat.Dense // W, d×q
	fitted bool
}

// Fit fits the model to the N×d matrix x (N ≥ 2).
func (m *Primal) Fit(xm mat.Matrix) error {
	*m = Primal{Q: m.Q, Sigma2: m.Sigma2}
	x := linalg.DenseOf(xm)
	if x == nil {
		return invalidf("Fit: empty data")
	}
	if err := linalg.CheckFinite("ppca: Fit", x); err != nil {
		return err
	}
	n, d := x.Dims()
	if err := checkSettings(n, d, "d", m.Q, m.Sigma2); err != nil {
		return err
	}
	xc := linalg.CopyOf(x)
	m.mean = linalg.CenterColumns(xc)
	c := mat.NewSymDense(d, nil)
	linalg.SymOuterK(c, 1, xc.T())
	e, err := linalg.SymEig(c, 0)
	if err != nil {
		return err
	}
	for i := 0; i < d; i++ {
		m.trace += c.At(i, i)
	}
	q, s2, err := chooseQ(e.Values, true, m.trace, n, d, m.Q, m.Sigma2)
	if err != nil {
		return err
	}
	m.n, m.d, m.values, m.v, m.q, m.sigma2 = n, d, e.Values, e.Vectors, q, s2
	// W = V_q (Λ_q/N − σ²I)^{1/2}.
	m.w = mat.NewDense(d, q, nil)
	for p := 0; p < q; p++ {
		f := math.Sqrt(math.Max(e.Values[p]/float64(n)-s2, 0))
		for i := 0; i < d; i++ {
			m.w.Set(i, p, e.Vectors.At(i, p)*f)
		}
	}
	m.fitted = true
	return nil
}

// Mean is μ_ML, the mean of the training rows.
func (m *Primal) Mean() ([]float64, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	return append([]float64(nil), m.mean...), nil
}

// W returns a copy of W_ML (d×q).
func (m *Primal) W() (*mat.Dense, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	return linalg.CopyOf(m.w), nil
}

// Transform returns h_MAP = (WᵀW + σ²I)^{-1} Wᵀ(φ − μ) = N Λ_q^{-1} Wᵀ(φ − μ)
// for each row φ of x.
func (m *Primal) Transform(xm mat.Matrix) (*mat.Dense, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	x := linalg.DenseOf(xm)
	if x == nil {
		return nil, invalidf("Transform: empty data")
	}
	rows, d := x.Dims()
	if d != m.d {
		return nil, invalidf("Transform: x has %d columns, the model %d", d, m.d)
	}
	if err := linalg.CheckFinite("ppca: Transform", x); err != nil {
		return nil, err
	}
	xc := linalg.CopyOf(x)
	for i := 0; i < rows; i++ {
		row := xc.RawRowView(i)
		for j := range row {
			row[j] -= m.mean[j]
		}
	}
	h := mat.NewDense(rows, m.q, nil)
	linalg.Mul(h, xc, m.w)
	m.scaleMAP(h)
	return h, nil
}

// Project is Transform.
//
// Deprecated: use Transform, the name every kdual model uses.
func (m *Primal) Project(x *mat.Dense) (*mat.Dense, error) { return m.Transform(x) }

// Reconstruct is InverseTransform.
//
// Deprecated: use InverseTransform, the name every kdual model uses.
func (m *Primal) Reconstruct(h *mat.Dense) (*mat.Dense, error) { return m.InverseTransform(h) }

// InverseTransform returns φ_MAP = W h + μ for each row h of h.
func (m *Primal) InverseTransform(hm mat.Matrix) (*mat.Dense, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	h := linalg.DenseOf(hm)
	rows, err := m.checkLatent("InverseTransform", h)
	if err != nil {
		return nil, err
	}
	out := mat.NewDense(rows, m.d, nil)
	linalg.Mul(out, h, m.w.T())
	for i := 0; i < rows; i++ {
		row := out.RawRowView(i)
		for j := range row {
			row[j] += m.mean[j]
		}
	}
	return out, nil
}

// Sample draws count rows φ = μ + W h + σζ with h ~ N(0, I_q) and
// ζ ~ N(0, I_d): the model's marginal N(μ, WWᵀ + σ²I).
func (m *Primal) Sample(count int, seed uint64) (*mat.Dense, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	if count < 1 {
		return nil, invalidf("Sample: count %d < 1", count)
	}
	rng := rng.New(seed)
	h := mat.NewDense(count, m.q, nil)
	for i := range h.RawMatrix().Data {
		h.RawMatrix().Data[i] = rng.NormFloat64()
	}
	out, err := m.InverseTransform(h)
	if err != nil {
		return nil, err
	}
	s := math.Sqrt(m.sigma2)
	for i := range out.RawMatrix().Data {
		out.RawMatrix().Data[i] += s * rng.NormFloat64()
	}
	return out, nil
}
