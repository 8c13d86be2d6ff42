package ppca

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"

	"github.com/kdual/kdual/status"
)

// Error kinds.
var (
	ErrNotFitted = fmt.Errorf("ppca: %w", status.ErrNotFitted)
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("ppca: "+format+": %w", append(a, status.ErrInvalid)...)
}

// Dual is probabilistic PCA on the centred kernel matrix (see the package
// documentation for the formulas). Set Q, or Sigma2, or both:
//   - Q > 0, Sigma2 = 0: σ² is the maximum-likelihood Σ_{p>q} λ_p/(N(N−q));
//   - Q = 0, Sigma2 > 0: q is the largest index with σ² ≤ λ_q/N;
//   - both: used as given, provided σ² ≤ λ_q/N.
type Dual struct {
	Q      int
	Sigma2 float64
	// Kernel for Fit and the kernel vectors of new points; the zero value
	// is linear.
	Kernel kernel.Kernel
	// Solver: nil (the default) computes every eigenpair of K_c with
	// LAPACK, which Sample needs; an eig.Solver computes only the top q
	// (needs Q > 0; σ²_ML then comes from the trace of K_c).
	Solver eig.Solver

	status status.Status // how the eigensolver ended
	latent
	x        *mat.Dense // training inputs (nil after FitKernel)
	center   linalg.Centering
	kc       *mat.SymDense // centred training kernel
	vectors  *mat.Dense    // matching eigenvectors, N×len(values)
	a, ka    *mat.Dense    // Ã and K_c·Ã, N×q
	allPairs bool
	fitted   bool
}

// Fit fits the model to the rows of x with the model's kernel. x is kept
// for pre-images.
func (m *Dual) Fit(xm mat.Matrix) error { return m.FitContext(context.Background(), xm) }

// FitContext is Fit stopped by ctx: the kernel is built in panels with ctx
// checked before each, and an iterative Solver checks it before every
// pass (LAPACK's dense eigensolve, one call, runs to its end). A stopped
// fit returns an error wrapping status.ErrStopped and leaves the model
// unfitted.
func (m *Dual) FitContext(ctx context.Context, xm mat.Matrix) error {
	m.fitted = false
	x := linalg.DenseOf(xm)
	if x == nil {
		return invalidf("Fit: empty data")
	}
	if err := m.Kernel.Check(); err != nil {
		return err
	}
	g, err := kernel.GramWith(x, m.Kernel, gram.GramOptions{Context: ctx})
	if err != nil {
		return fmt.Errorf("ppca: %w", err)
	}
	if err := m.fitGram(ctx, g); err != nil {
		return err
	}
	m.x = linalg.CopyOf(x)
	return nil
}

// FitKernel fits the model to a precomputed (uncentred) N×N kernel matrix,
// which is copied. Without the inputs, PreImage and Project of new points
// are not available; ProjectKernel, Reconstruct and Sample are.
func (m *Dual) FitKernel(k *mat.SymDense) error {
	if k == nil || k.IsEmpty() {
		return invalidf("FitKernel: empty kernel matrix")
	}
	g := mat.NewSymDense(k.SymmetricDim(), nil)
	g.CopySym(k)
	if err := m.fitGram(context.Background(), g); err != nil {
		return err
	}
	m.x = nil
	return nil
}

func (m *Dual) fitGram(ctx context.Context, g *mat.SymDense) error {
	*m = Dual{Q: m.Q, Sigma2: m.Sigma2, Kernel: m.Kernel, Solver: m.Solver}
	n := g.SymmetricDim()
	if err := checkSettings(n, n, "N", m.Q, m.Sigma2); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("ppca: %w", status.Cancelled(context.Cause(ctx), "after the kernel"))
	}
	c, err := linalg.CenterKernelInPlace(g)
	if err != nil {
		return err
	}
	m.n, m.center, m.kc = n, c, g
	for i := 0; i < n; i++ {
		m.trace += g.At(i, i)
	}
	if m.Solver == nil {
		e, err := linalg.SymEig(g, 0)
		if err != nil {
			return err
		}
		m.values, m.vectors, m.allPairs = e.Values, e.Vectors, true
		m.status = status.Status{Code: status.Converged, Test: "direct: LAPACK on every eigenpair of K_c"}
	} else {
		if m.Q == 0 {
			return invalidf("a top-q eigensolver needs Q (deriving q from σ² needs every eigenvalue)")
		}
		op, err := eig.NewDense(g)
		if err != nil {
			return err
		}
		res, err := m.Solver.Solve(eig.WithContext(ctx, op), m.Q)
		if res != nil {
			m.status = res.Status
		}
		if err != nil {
			return fmt.Errorf("ppca: %w", err)
		}
		m.values, m.vectors = res.Values, res.Vectors
	}
	q, s2, err := chooseQ(m.values, m.allPairs, m.trace, n, n, m.Q, m.Sigma2)
	if err != nil {
		return err
	}
	m.q, m.sigma2 = q, s2
	// Ã = E_q (I/N − σ²Λ_q^{-1})^{1/2}, K_c Ã = E_q Λ_q (I/N − σ²Λ_q^{-1})^{1/2}.
	m.a, m.ka = mat.NewDense(n, q, nil), mat.NewDense(n, q, nil)
	for p := 0; p < q; p++ {
		l := m.values[p]
		f := math.Sqrt(math.Max(1/float64(n)-s2/l, 0))
		for i := 0; i < n; i++ {
			e := m.vectors.At(i, p)
			m.a.Set(i, p, e*f)
			m.ka.Set(i, p, e*f*l)
		}
	}
	m.fitted = true
	return nil
}

// chooseQ settles q and σ² from the decreasing eigenvalues (all of them when
// all is true, else the top q), the trace, the number of points n and the
// dimension dim of the space the model lives in (N for the dual model, d for
// the primal one). Eigenvalues below max(n, dim)·ε·λ_1 count as zero.
func chooseQ(values []float64, all bool, trace float64, n, dim, q int, sigma2 float64) (int, float64, error) {
	if len(values) == 0 || !(values[0] > 0) {
		return 0, 0, invalidf("the centred kernel (covariance) is zero: nothing to model")
	}
	floor := float64(max(n, dim)) * 2.2e-16 * values[0]
	rank := 0
	for _, v := range values {
		if v > floor {
			rank++
		}
	}
	if q == 0 {
		// The largest q with σ² ≤ λ_q/N.
		for q < rank && sigma2 <= values[q]/float64(n) {
			q++
		}
		if q == 0 {
			return 0, 0, invalidf("σ² = %g exceeds λ_1/N = %g: no latent dimension keeps it", sigma2, values[0]/float64(n))
		}
		if q == dim {
			return 0, 0, invalidf("σ² = %g keeps every one of the %d dimensions: choose a larger σ² or set q", sigma2, dim)
		}
		return q, sigma2, nil
	}
	if q > rank || (!all && !(values[q-1] > floor)) {
		return 0, 0, &status.RankError{Matrix: "ppca: the centred kernel (covariance)", Rank: rank, Asked: q}
	}
	if sigma2 == 0 {
		tail := trace
		for p := 0; p < q; p++ {
			tail -= values[p]
		}
		if all {
			tail = 0
			for _, v := range values[q:] {
				tail += math.Max(v, 0)
			}
		}
		sigma2 = math.Max(tail, 0) / (float64(n) * float64(dim-q))
		return q, sigma2, nil
	}
	if sigma2 > values[q-1]/float64(n) {
		return 0, 0, invalidf("σ² = %g exceeds λ_q/N = %g (q = %d)", sigma2, values[q-1]/float64(n), q)
	}
	return q, sigma2, nil
}

func (m *Dual) check() error {
	if m == nil || !m.fitted {
		return ErrNotFitted
	}
	return nil
}

// N is the number of training points.
func (m *Dual) N() int { return m.n }

// Status is how the last fit's eigensolver ended (status.NotRun before a
// fit).
func (m *Dual) Status() status.Status { return m.status }

// A returns a copy of Ã (N×q).
func (m *Dual) A() (*mat.Dense, error) {
	if !m.fitted {
		return nil, ErrNotFitted
	}
	return linalg.CopyOf(m.a), nil
}

// KernelVectors returns the centred kernel vectors k_c(x) of the rows of x
// against the training points (one row each, N columns).
func (m *Dual) KernelVectors(x *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if m.x == nil {
		return nil, invalidf("KernelVectors: the model was fitted on a kernel matrix, not on inputs")
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("KernelVectors: empty data")
	}
	if _, d := x.Dims(); d != m.x.RawMatrix().Cols {
		return nil, invalidf("KernelVectors: x has %d columns, training data %d", d, m.x.RawMatrix().Cols)
	}
	k, err := kernel.CrossGram(x, m.x, m.Kernel)
	if err != nil {
		return nil, err
	}
	if err := m.center.CenterCross(k); err != nil {
		return nil, err
	}
	return k, nil
}

// TrainKernelVectors returns the rows of the centred training kernel K_c.
func (m *Dual) TrainKernelVectors() (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	return linalg.CopyOf(m.kc), nil
}

// Transform returns h_MAP of the rows of x (one row of q latent values
// each), as KPCA.Transform does for kernel PCA.
func (m *Dual) Transform(x mat.Matrix) (*mat.Dense, error) {
	k, err := m.KernelVectors(linalg.DenseOf(x))
	if err != nil {
		return nil, err
	}
	return m.ProjectKernel(k)
}

// Project is Transform.
//
// Deprecated: use Transform, the name every kdual model uses.
func (m *Dual) Project(x *mat.Dense) (*mat.Dense, error) { return m.Transform(x) }

// InverseTransform maps latent points h (rows of q values) back to input
// space: the kernel vectors Reconstruct(h), then their pre-images by the
// kernel smoother over all training points (PreImage with nearest = 0).
// It needs a model fitted on inputs (Fit, not FitKernel).
func (m *Dual) InverseTransform(h mat.Matrix) (*mat.Dense, error) {
	kc, err := m.Reconstruct(linalg.DenseOf(h))
	if err != nil {
		return nil, err
	}
	x, _, err := m.PreImage(kc, 0)
	return x, err
}

// ProjectKernel returns h_MAP = N Λ_q^{-1} Ãᵀ k_c for each row k_c of kc.
func (m *Dual) ProjectKernel(kc *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if err := m.checkKernelRows("ProjectKernel", kc); err != nil {
		return nil, err
	}
	rows, _ := kc.Dims()
	h := mat.NewDense(rows, m.q, nil)
	linalg.Mul(h, kc, m.a)
	m.scaleMAP(h)
	return h, nil
}

func (m *Dual) checkKernelRows(what string, kc *mat.Dense) error {
	if kc == nil || kc.IsEmpty() {
		return invalidf("%s: empty kernel vectors", what)
	}
	if _, c := kc.Dims(); c != m.n {
		return invalidf("%s: kernel vectors have %d entries, the model has N = %d", what, c, m.n)
	}
	return linalg.CheckFinite("ppca: "+what, kc)
}

// Reconstruct returns (k_c)_MAP = K_c Ã h for each row h of h (q columns).
func (m *Dual) Reconstruct(h *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	rows, err := m.checkLatent("Reconstruct", h)
	if err != nil {
		return nil, err
	}
	out := mat.NewDense(rows, m.n, nil)
	linalg.Mul(out, h, m.ka.T())
	return out, nil
}

// bScale is column p of B̃ = E·diag(b): λ_p/√N for p ≤ q, σ√λ_p beyond.
func (m *Dual) bScale(p int) float64 {
	l := math.Max(m.values[p], 0)
	if p < m.q {
		return l / math.Sqrt(float64(m.n))
	}
	return math.Sqrt(m.sigma2 * l)
}

// Generate returns k_c = B̃u for each row u of u: q columns (the latent
// part, with the rest of u zero: the paper's generation from a latent grid)
// or N columns (needs every eigenpair: the dense solver).
func (m *Dual) Generate(u *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if u == nil || u.IsEmpty() {
		return nil, invalidf("Generate: empty input")
	}
	rows, c := u.Dims()
	if c != m.q && c != m.n {
		return nil, invalidf("Generate: u has %d columns, want q = %d or N = %d", c, m.q, m.n)
	}
	if c == m.n && !m.allPairs {
		return nil, invalidf("Generate: N-dimensional u needs every eigenpair (fit with the dense solver)")
	}
	if err := linalg.CheckFinite("ppca: Generate", u); err != nil {
		return nil, err
	}
	b := mat.NewDense(m.n, c, nil)
	for p := 0; p < c; p++ {
		f := m.bScale(p)
		for i := 0; i < m.n; i++ {
			b.Set(i, p, m.vectors.At(i, p)*f)
		}
	}
	out := mat.NewDense(rows, m.n, nil)
	linalg.Mul(out, u, b.T())
	return out, nil
}

// Sample draws count kernel vectors k_c = B̃u, u ~ N(0, I_N), from the
// model's marginal in kernel space, with kdual's seeded generator (one seed,
// one sequence of samples). It needs every eigenpair (the dense solver).
func (m *Dual) Sample(count int, seed uint64) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if count < 1 {
		return nil, invalidf("Sample: count %d < 1", count)
	}
	if !m.allPairs {
		return nil, invalidf("Sample: needs every eigenpair of K_c (fit with the dense solver)")
	}
	rng := rng.New(seed)
	u := mat.NewDense(count, m.n, nil)
	raw := u.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	return m.Generate(u)
}
