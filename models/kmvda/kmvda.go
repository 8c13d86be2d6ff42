// Package kmvda is multi-view discriminant analysis (MvDA), its kernel form
// (KMvDA) and the randomized kernel form with random Fourier features.
//
// Views j = 1…v hold n_j samples each (rows of X_j) with class labels; a
// class i has n_ij samples in view j and n_i = Σ_j n_ij in all; n = Σ_j n_j.
// With e_ij the indicator of class i's samples in view j (and e_j of all
// of view j), the within-class and between-class scatters are (Eqs. 7, 8)
//
//	S_jr = X_jᵀ H^S_jr X_r,  H^S_jj = I − Σ_i e_ij e_ijᵀ/n_i,  H^S_jr = −Σ_i e_ij e_irᵀ/n_i
//	D_jr = X_jᵀ H^D_jr X_r,  H^D_jr = Σ_i e_ij e_irᵀ/n_i − e_j e_rᵀ/n
//
// and the directions w = (w_1; …; w_v) solve D w = λ (S + εI) w, top l.
// kdual never forms the n×n matrices H: with s_i the stacked class sums
// (Σ_{k in class i} x_jk)_j and t = Σ_i s_i, D = Σ_i s_i s_iᵀ/n_i − t tᵀ/n
// and S = blockdiag(X_jᵀX_j) − Σ_i s_i s_iᵀ/n_i.
//
// Kernel MvDA (Eq. 9) puts w_j = φ(X_j)ᵀ z_j: with K = blockdiag(K_j),
// D = K H^D K and S = K H^S K, an n-dimensional problem, and a test point y
// of view j projects to Z_jᵀ k(X_j, y).
//
// Randomized KMvDA replaces φ by m random Fourier features per view,
// normalised to unit norm (kernel.RFF), and runs linear MvDA on them: a
// (v·m)-dimensional problem whose cost is linear in n. When v·m exceeds n
// the same problem is solved in its n-dimensional dual form: with
// F = blockdiag(F_j) and w = Fᵀz, D_F w = λ(S_F + εI)w becomes
// K̂H^DK̂ z = λ(K̂H^SK̂ + εK̂) z with K̂ = blockdiag(F_jF_jᵀ): the same
// directions w (for λ > 0), at the cost of the exact kernel form.
//
// Regularisation. ε = Reg·tr(S)/dim with Reg = 1e-3 by default (for the
// RFF dual form, tr(S)/dim of the primal problem it stands for, so both
// forms solve the same problem). S is
// singular whenever dim > n − c (always in the kernel form), and then the
// unregularised problem has infinite eigenvalues (directions that collapse
// every class to a point). Reg < 0 asks for the unregularised problem: kdual
// then uses the smallest ridge that makes S + εI numerically definite,
// ε = √ε_mach·tr(S)/dim, so those directions come first with eigenvalues
// of order 1/ε, as the theory's infinite ones would (Info reports ε).
//
// The generalised problem is solved by Cholesky, S + εI = UᵀU, and the
// top l eigenpairs of the symmetric U^{-T} D U^{-1} (LAPACK dpotrf, dtrsm,
// dsyevr); z = U^{-1}y.
package kmvda

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"

	"github.com/kdual/kdual/status"
)

// Error kinds.
var (
	ErrNotFitted = fmt.Errorf("kmvda: %w", status.ErrNotFitted)
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("kmvda: "+format+": %w", append(a, status.ErrInvalid)...)
}

// Kind selects the feature space.
type Kind int

// Kinds.
const (
	Linear Kind = iota
	RBF
	RFF
)

func (k Kind) String() string {
	if k >= 0 && int(k) < 3 {
		return [...]string{"linear", "rbf", "rff"}[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads linear, rbf or rff.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "linear":
		return Linear, nil
	case "rbf", "gaussian":
		return RBF, nil
	case "rff":
		return RFF, nil
	}
	return 0, invalidf("kernel %q: want linear, rbf or rff", s)
}

// Model is (kernel) MvDA. The zero value is linear MvDA with l = c − 1.
type Model struct {
	Kind Kind
	// Sigma is the Gaussian bandwidth of RBF and RFF, exp(−‖x−y‖²/(2σ²)).
	Sigma float64
	// Features is m, the random features per view (RFF); 0 means 1024.
	Features int
	// Dim is l, the number of directions; 0 means min(c − 1, dim).
	Dim int
	// Reg sets ε = Reg·tr(S)/dim; 0 means 1e-3; negative: unregularised
	// (see the package documentation).
	Reg float64
	// Seed of the random features; 0 means 1. View j draws its own
	// features with seed Seed + 7919·j (kernel.NewRFF, normalised).
	Seed uint64
	// Solver computes the top l eigenpairs of the whitened problem
	// U⁻ᵀ D U⁻¹; nil means eig.Auto{}.
	Solver eig.Solver

	views  int
	dims   []int
	x      []*mat.Dense  // training inputs per view (kernel form)
	rff    []*kernel.RFF // per view
	w      []*mat.Dense  // primal directions per view (d_j or m × l)
	z      []*mat.Dense  // kernel-form coefficients per view (n_j × l)
	values []float64
	info   Info
	fitted bool

	forcePrimal bool // tests: the RFF primal form even when v·m > n

	// Kind and Sigma as the fit used them (Project uses these).
	fitKind  Kind
	fitSigma float64
}

// Info reports a fit.
type Info struct {
	Kind    string  `json:"kind"`
	Form    string  `json:"form"` // primal (feature space) or dual (n-dimensional)
	Size    int     `json:"size"` // dimension of the generalised problem
	Classes int     `json:"classes"`
	Epsilon float64 `json:"epsilon"`
	Seconds float64 `json:"seconds"`
	// Status of the eigensolver of the whitened problem.
	Status status.Status `json:"status"`
}

// MaxViews is the most views a model has: Fit refuses more, and a model
// file declaring more is refused before anything is allocated for them.
const MaxViews = 1024

// Fit trains on one n_j×d_j matrix per view (1 to MaxViews views; one
// view is kernel discriminant analysis) with one label per row.
func (m *Model) Fit(views []*mat.Dense, labels [][]int) error {
	start := time.Now()
	m.fitted = false
	m.fitKind, m.fitSigma = m.Kind, m.Sigma
	v := len(views)
	n, classOf, sizes, err := m.checkViews(views, labels)
	if err != nil {
		return err
	}
	c := len(sizes)
	feats, err := m.features(views)
	if err != nil {
		return err
	}
	p := 0
	for _, d := range m.dims {
		p += d
	}
	primal := m.Kind == Linear || (m.Kind == RFF && (p <= n || m.forcePrimal))
	m.info = Info{Kind: m.Kind.String(), Classes: c}
	var d, s *mat.SymDense
	var ridge *mat.SymDense // nil: εI
	scale := 0.0            // 0: from S itself
	if primal {
		m.info.Form, m.info.Size = "primal", p
		d, s = primalScatters(feats, labels, classOf, sizes)
	} else {
		m.info.Form, m.info.Size = "dual", n
		ks, err := m.viewKernels(feats)
		if err != nil {
			return err
		}
		d, s = dualScatters(ks, labels, classOf, sizes)
		if m.Kind == RFF {
			// ε as the primal problem defines it: tr(S_F)/p, with
			// tr(S_F) = Σ_j ‖F_j‖²_F − Σ_i ‖s_i‖²/n_i.
			ridge = blockDiag(ks)
			scale = primalTrace(feats, labels, classOf, sizes) / float64(p)
		}
	}
	l := m.Dim
	size := d.SymmetricDim()
	if l == 0 {
		l = min(c-1, size)
	}
	if l < 1 || l > size {
		return invalidf("l = %d directions: want 1 … %d", l, size)
	}
	z, vals, eps, st, err := solveGEP(m.Solver, d, s, ridge, l, m.Reg, scale)
	m.info.Status = st
	if err != nil {
		return err
	}
	m.values, m.info.Epsilon = vals, eps
	// Split the directions by view.
	m.w, m.z = make([]*mat.Dense, v), nil
	off := 0
	if primal {
		for j := range views {
			m.w[j] = linalg.CopyOf(z.Slice(off, off+m.dims[j], 0, l))
			off += m.dims[j]
		}
	} else {
		m.z = make([]*mat.Dense, v)
		for j, x := range views {
			r, _ := x.Dims()
			m.z[j] = linalg.CopyOf(z.Slice(off, off+r, 0, l))
			off += r
			if m.Kind == RFF {
				// w_j = F_jᵀ z_j: projections in feature space.
				m.w[j] = mat.NewDense(m.dims[j], l, nil)
				linalg.Mul(m.w[j], feats[j].T(), m.z[j])
			}
		}
		if m.Kind == RBF {
			m.x = make([]*mat.Dense, v)
			for j, x := range views {
				m.x[j] = linalg.CopyOf(x)
			}
		}
	}
	m.info.Seconds = time.Since(start).Seconds()
	m.fitted = true
	return nil
}

// Eigenvalues returns the l generalised eigenvalues, decreasing
// (ErrNotFitted before a fit), as every kdual model's Eigenvalues does.
func (m *Model) Eigenvalues() ([]float64, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	return append([]float64(nil), m.values...), nil
}

// Values returns the l generalised eigenvalues, decreasing (nil before a
// fit).
//
// Deprecated: use Eigenvalues.
func (m *Model) Values() []float64 { return append([]float64(nil), m.values...) }

// Info reports the last fit.
func (m *Model) Info() Info { return m.info }

// Project is Transform.
//
// Deprecated: use Transform, the name every kdual model uses.
func (m *Model) Project(j int, y *mat.Dense) (*mat.Dense, error) { return m.Transform(j, y) }

// Transform maps new samples of view j (rows) to the common l-dimensional
// space: W_jᵀ φ(y), or Z_jᵀ k(X_j, y) in the kernel form.
func (m *Model) Transform(j int, ym mat.Matrix) (*mat.Dense, error) {
	y := linalg.DenseOf(ym)
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	if j < 0 || j >= m.views {
		return nil, invalidf("view %d of %d", j, m.views)
	}
	if y == nil || y.IsEmpty() {
		return nil, invalidf("empty samples")
	}
	if err := linalg.CheckFinite("kmvda: samples", y); err != nil {
		return nil, err
	}
	r, d := y.Dims()
	switch m.fitKind {
	case Linear:
		if d != m.dims[j] {
			return nil, invalidf("view %d has %d features, samples %d", j, m.dims[j], d)
		}
		out := mat.NewDense(r, len(m.values), nil)
		linalg.Mul(out, y, m.w[j])
		return out, nil
	case RFF:
		f, err := m.rff[j].Map(y)
		if err != nil {
			return nil, err
		}
		out := mat.NewDense(r, len(m.values), nil)
		linalg.Mul(out, f, m.w[j])
		return out, nil
	}
	k, err := kernel.CrossGram(y, m.x[j], kernel.Kernel{Kind: kernel.Gaussian, Sigma: m.fitSigma})
	if err != nil {
		return nil, err
	}
	out := mat.NewDense(r, len(m.values), nil)
	linalg.Mul(out, k, m.z[j])
	return out, nil
}

// Rank1 is the rank-1 recognition rate: the fraction of probes whose
// nearest gallery item (Euclidean, in the common space; of equally near
// ones the first in gallery order) has their label.
func Rank1(gallery, probe *mat.Dense, galleryLabels, probeLabels []int) (float64, error) {
	g, dg := gallery.Dims()
	p, dp := probe.Dims()
	if dg != dp || len(galleryLabels) != g || len(probeLabels) != p || g == 0 || p == 0 {
		return 0, invalidf("gallery %d×%d with %d labels, probe %d×%d with %d labels", g, dg, len(galleryLabels), p, dp, len(probeLabels))
	}
	// ‖a − b‖² = ‖a‖² + ‖b‖² − 2aᵀb, with one product.
	var cross mat.Dense
	linalg.Mul(&cross, probe, gallery.T())
	gn := make([]float64, g)
	for i := 0; i < g; i++ {
		gn[i] = linalg.Dot(gallery.RowView(i), gallery.RowView(i))
	}
	correct := 0
	for i := 0; i < p; i++ {
		best, arg := math.Inf(1), -1
		row := cross.RawRowView(i)
		for k := 0; k < g; k++ {
			if d := gn[k] - 2*row[k]; d < best {
				best, arg = d, k
			}
		}
		if galleryLabels[arg] == probeLabels[i] {
			correct++
		}
	}
	return float64(correct) / float64(p), nil
}

// checkViews checks the views and their labels (non-empty, finite, one
// label per row, a valid σ) and indexes the classes: the total rows, each
// label's class index and the classes' sizes over all views. Every class
// needs two samples for a within-class scatter, and there must be two
// classes.
func (m *Model) checkViews(views []*mat.Dense, labels [][]int) (int, map[int]int, []float64, error) {
	v := len(views)
	if v == 0 || v > MaxViews || len(labels) != v {
		return 0, nil, nil, invalidf("%d views with %d label lists (1 to %d views)", v, len(labels), MaxViews)
	}
	counts := map[int]int{}
	n := 0
	for j, x := range views {
		if x == nil || x.IsEmpty() {
			return 0, nil, nil, invalidf("view %d is empty", j)
		}
		r, _ := x.Dims()
		if len(labels[j]) != r {
			return 0, nil, nil, invalidf("view %d has %d rows and %d labels", j, r, len(labels[j]))
		}
		if err := linalg.CheckFinite(fmt.Sprintf("kmvda: view %d", j), x); err != nil {
			return 0, nil, nil, err
		}
		for _, l := range labels[j] {
			counts[l]++
		}
		n += r
	}
	if m.Kind != Linear {
		if !(m.Sigma > 0) || math.IsInf(m.Sigma, 0) {
			return 0, nil, nil, invalidf("bandwidth σ = %g: want a finite σ > 0", m.Sigma)
		}
	}
	classOf := map[int]int{}
	var sizes []float64
	for j := range views {
		for _, l := range labels[j] {
			if _, ok := classOf[l]; !ok {
				if counts[l] < 2 {
					return 0, nil, nil, invalidf("class %d has one sample in all views: within-class scatter needs two", l)
				}
				classOf[l] = len(sizes)
				sizes = append(sizes, float64(counts[l]))
			}
		}
	}
	if len(sizes) < 2 {
		return 0, nil, nil, invalidf("%d class: discriminant analysis needs two", len(sizes))
	}
	return n, classOf, sizes, nil
}

// features returns each view's features (the data, or its normalised
// random Fourier features with seed Seed + 7919·j) and sets the model's
// views, dimensions and feature maps.
func (m *Model) features(views []*mat.Dense) ([]*mat.Dense, error) {
	v := len(views)
	feats := make([]*mat.Dense, v)
	m.views, m.dims, m.rff, m.x = v, make([]int, v), nil, nil
	for j, x := range views {
		switch m.Kind {
		case Linear, RBF:
			feats[j] = x
		case RFF:
			mm := m.Features
			if mm == 0 {
				mm = 1024
			}
			_, d := x.Dims()
			seed := m.Seed
			if seed == 0 {
				seed = 1
			}
			r, err := kernel.NewRFF(d, mm, m.Sigma, seed+uint64(j)*7919)
			if err != nil {
				return nil, err
			}
			r.Normalize = true
			if feats[j], err = r.Map(x); err != nil {
				return nil, err
			}
			m.rff = append(m.rff, r)
		default:
			return nil, invalidf("kind %d", m.Kind)
		}
		_, m.dims[j] = feats[j].Dims()
	}
	return feats, nil
}

// viewKernels returns each view's kernel matrix: the Gaussian kernel of
// its data (RBF), or F_j·F_jᵀ of its features.
func (m *Model) viewKernels(feats []*mat.Dense) ([]*mat.SymDense, error) {
	ks := make([]*mat.SymDense, len(feats))
	for j, f := range feats {
		if m.Kind == RBF {
			g, err := kernel.Gram(f, kernel.Kernel{Kind: kernel.Gaussian, Sigma: m.Sigma})
			if err != nil {
				return nil, err
			}
			ks[j] = g
			continue
		}
		r, _ := f.Dims()
		ks[j] = mat.NewSymDense(r, nil)
		linalg.SymOuterK(ks[j], 1, f)
	}
	return ks, nil
}
