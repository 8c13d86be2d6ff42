// Package rkm is the multi-view restricted kernel machine (multi-view
// kernel PCA) in primal and dual form, trained by eigendecomposition or on
// the Stiefel manifold, with inference of a missing view and recursive
// time-series forecasting.
//
// Views v = 1…V see the same n points. A view has an explicit feature map
// φ_v (Identity for a linear kernel, kernel.RFF for an approximate Gaussian)
// or only a kernel k_v (implicit: dual setting only). Features are centred
// with their training means, kernels with M_c = I − 11ᵀ/n.
//
// Training (the paper's Algorithms 1–4):
//   - primal, eig: C = ΦᵀΦ over the concatenated centred features
//     Φ = [Φ_1 … Φ_V]; Ũ, Λ = top-s eig(C); U = ŨΛ^{1/2}, Γ = Λ;
//   - dual, eig: K = Σ_v M_c K_v M_c; H, Λ = top-s eig(K); Γ = Λ;
//   - primal or dual on the Stiefel manifold: maximise Tr(AᵀBA) (B = C or
//     K) subject to AᵀA = I with Cayley-Adam; Γ' = AᵀBA; optionally
//     rotated by the eigenvectors O of Γ' to A·O and diagonal Γ = Λ (the eig
//     solution up to signs); primal U = ŨΓ^{1/2} with the symmetric square
//     root.
//
// Primal and dual are one model: U_v = Φ_vᵀH (Eq. 5) and H = ΦUΓ^{-1}
// (Eq. 6) where the feature maps are explicit; U(v) and H() convert.
//
// Inference of view v from the others (Eqs. 15, 16):
//
//	primal: h* = (Γ − U_vᵀU_v)^{-1} Σ_{w≠v} U_wᵀ φ_w(x*),   φ̂_v = U_v h*
//	dual:   h* = (Γ − HᵀK_vH)^{-1} Hᵀ Σ_{w≠v} k_w(x*),      k̂_v = K_v H h*
//
// with test features centred by the training means and test kernel vectors
// by the training kernel's row and grand means. The target view's input
// comes back through its pre-image: the identity for Identity views
// (x̂ = Φ_vᵀHh* + mean, the same in both settings), the kernel smoother
// of kernel.Smoother otherwise.
package rkm

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/lapack"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"github.com/kdual/kdual/stiefel"
)

// Error kinds.
var (
	ErrInvalid   = linalg.ErrInvalid
	ErrNotFitted = fmt.Errorf("rkm: %w", status.ErrNotFitted)
	ErrSingular  = lapack.ErrSingular
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("rkm: "+format+": %w", append(a, ErrInvalid)...)
}

// FeatureMap is an explicit feature map of a view.
type FeatureMap interface {
	Map(x *mat.Dense) (*mat.Dense, error)
}

// Identity is the feature map of the linear kernel.
type Identity struct{}

// Map returns a copy of x.
func (Identity) Map(x *mat.Dense) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, invalidf("empty view")
	}
	return mat.DenseCopyOf(x), nil
}

// View is one view's feature map or, when Features is nil, its kernel.
type View struct {
	Features FeatureMap
	Kernel   kernel.Kernel
}

// Setting is primal or dual.
type Setting int

// Settings.
const (
	Auto Setting = iota
	Primal
	Dual
)

func (s Setting) String() string {
	if s >= 0 && int(s) < 3 {
		return [...]string{"auto", "primal", "dual"}[s]
	}
	return fmt.Sprintf("Setting(%d)", int(s))
}

// Training is eigendecomposition or Stiefel optimisation.
type Training int

// Trainings.
const (
	Eig Training = iota
	Stiefel
)

func (t Training) String() string {
	if t >= 0 && int(t) < 2 {
		return [...]string{"eig", "stiefel"}[t]
	}
	return fmt.Sprintf("Training(%d)", int(t))
}

// ChooseSetting is the paper's Fig. 1 for feature maps without trainable
// parameters: a view with only a kernel forces the dual; otherwise the
// smaller of the two problems, C (df×df) or K (n×n), decides. Training is
// then by eigendecomposition: Stiefel optimisation pays off only when
// feature maps are trained jointly, which kdual does not do.
func ChooseSetting(n, df int, explicit bool) Setting {
	if !explicit || n <= df {
		return Dual
	}
	return Primal
}

// Model is a multi-view RKM. Set Views and Components; the rest have
// working zero values.
type Model struct {
	Views []View
	// Components is s, 1 ≤ s < n (and ≤ df in the primal setting).
	Components int
	Setting    Setting
	Training   Training
	// Rotate, with Stiefel training, rotates the solution so that Γ is
	// diagonal (the eig solution up to signs).
	Rotate bool
	// Stiefel configures Cayley-Adam; its zero value is usable.
	Stiefel stiefel.Settings
	// Solver computes the top-s eigenpairs of the covariance (primal) or
	// the kernel matrix (dual) for Eig training; nil means eig.Auto{}.
	Solver eig.Solver
	// NoRescale drops U = ŨΛ^{1/2} in primal training (U = Ũ): the
	// paper's Fig. 7 ablation, which breaks inference.
	NoRescale bool

	n       int
	setting Setting
	views   []fitView
	df      int
	h       *mat.Dense    // n×s
	u       *mat.Dense    // df×s, explicit views only
	gamma   *mat.SymDense // s×s
	info    Info
	fitted  bool
	s       int // Components at Fit
	// partial is the error of a Stiefel run that stopped before its test
	// (the model is kept; Fit returns it).
	partial error
	targets map[int]*target // inference caches, per target view
}

// Info reports a fit.
type Info struct {
	Setting    string  `json:"setting"`
	Training   string  `json:"training"`
	Rotated    bool    `json:"rotated"`
	Seconds    float64 `json:"seconds"`
	Iterations int     `json:"iterations"` // Stiefel steps
	GradNorm   float64 `json:"grad_norm"`  // Stiefel: final relative Riemannian gradient
	// Status of the training: the Stiefel run's, or the eigensolver's.
	Status status.Status `json:"status"`
}

type fitView struct {
	explicit bool
	fm       FeatureMap
	kern     kernel.Kernel
	x        *mat.Dense // training inputs
	mean     []float64  // feature means (explicit)
	phi      *mat.Dense // centred training features n×d (explicit)
	kc       *mat.SymDense
	center   linalg.Centering
	offset   int
	dim      int
}

// Fit trains the model on one n×d_v matrix per view.
func (m *Model) Fit(xs []*mat.Dense) error {
	start := time.Now()
	m.fitted, m.targets = false, nil
	if len(m.Views) == 0 || len(xs) != len(m.Views) {
		return invalidf("%d views configured, %d data matrices given", len(m.Views), len(xs))
	}
	n := 0
	for v, x := range xs {
		if x == nil || x.IsEmpty() {
			return invalidf("view %d is empty", v)
		}
		r, _ := x.Dims()
		if v == 0 {
			n = r
		} else if r != n {
			return invalidf("view %d has %d points, view 0 has %d", v, r, n)
		}
		if err := linalg.CheckFinite(fmt.Sprintf("rkm: view %d", v), x); err != nil {
			return err
		}
	}
	s := m.Components
	m.s = s // the fitted s, kept whatever Components becomes
	if s < 1 || s >= n {
		return invalidf("s = %d: want 1 ≤ s < n = %d", s, n)
	}
	m.n = n
	m.views = make([]fitView, len(xs))
	explicit := true
	m.df = 0
	for v, x := range xs {
		fv := &m.views[v]
		fv.x = mat.DenseCopyOf(x)
		if err := m.prepareView(v, fv); err != nil {
			return err
		}
		explicit = explicit && fv.explicit
		fv.offset = m.df
		m.df += fv.dim
	}
	m.setting = m.Setting
	if m.setting == Auto {
		m.setting = ChooseSetting(n, m.df, explicit)
	}
	if m.setting == Primal && !explicit {
		return invalidf("the primal setting needs explicit feature maps on every view")
	}
	if m.setting == Primal && s > m.df {
		return invalidf("s = %d exceeds the feature dimension %d", s, m.df)
	}
	m.info = Info{Setting: m.setting.String(), Training: m.Training.String(), Rotated: m.Training == Stiefel && m.Rotate}
	m.partial = nil
	var err error
	if m.setting == Primal {
		err = m.fitPrimal()
	} else {
		err = m.fitDual()
	}
	if err != nil {
		return err
	}
	m.info.Seconds = time.Since(start).Seconds()
	m.fitted = true
	if m.partial != nil {
		return fmt.Errorf("rkm: the model is usable but %w", m.partial)
	}
	return nil
}

func (m *Model) prepareView(v int, fv *fitView) error {
	view := m.Views[v]
	if view.Features != nil {
		phi, err := view.Features.Map(fv.x)
		if err != nil {
			return fmt.Errorf("rkm: view %d: %w", v, err)
		}
		fv.explicit, fv.fm = true, view.Features
		fv.mean = linalg.CenterColumns(phi)
		fv.phi = phi
		_, fv.dim = phi.Dims()
		// Row means of the uncentred Gram φ_iᵀφ_j: φ_iᵀφ̄ = (φ_i,c + φ̄)ᵀφ̄.
		mm := mat.Dot(mat.NewVecDense(len(fv.mean), fv.mean), mat.NewVecDense(len(fv.mean), fv.mean))
		fv.center = linalg.Centering{RowMeans: make([]float64, m.n), Mean: mm}
		for i := 0; i < m.n; i++ {
			fv.center.RowMeans[i] = mm
			for j, p := range phi.RawRowView(i) {
				fv.center.RowMeans[i] += p * fv.mean[j]
			}
		}
		return nil
	}
	g, err := kernel.Gram(fv.x, view.Kernel)
	if err != nil {
		return fmt.Errorf("rkm: view %d: %w", v, err)
	}
	if fv.center, err = linalg.CenterKernelInPlace(g); err != nil {
		return err
	}
	fv.kern, fv.kc = view.Kernel, g
	return nil
}

// viewKernel returns the centred n×n kernel of a view.
func (fv *fitView) viewKernel() *mat.SymDense {
	if fv.kc == nil {
		n, _ := fv.phi.Dims()
		fv.kc = mat.NewSymDense(n, nil)
		fv.kc.SymOuterK(1, fv.phi)
	}
	return fv.kc
}

// features returns the n×df concatenation of the centred features.
func (m *Model) features() *mat.Dense {
	phi := mat.NewDense(m.n, m.df, nil)
	for _, fv := range m.views {
		phi.Slice(0, m.n, fv.offset, fv.offset+fv.dim).(*mat.Dense).Copy(fv.phi)
	}
	return phi
}

// traceObjective is f(A) = −½Tr(AᵀBA) with G = −BA for B given as a
// product.
type traceObjective struct {
	apply func(dst, a *mat.Dense)
}

func (o traceObjective) Eval(a, grad *mat.Dense) float64 {
	o.apply(grad, a)
	f := 0.0
	ad := a.RawMatrix().Data
	for i, v := range grad.RawMatrix().Data {
		f += v * ad[i]
	}
	grad.Scale(-1, grad)
	return -0.5 * f
}

// stiefelTrain maximises Tr(AᵀBA) over St(dim, s) and returns A and
// Γ' = AᵀBA, rotated to diagonal when Rotate is set.
func (m *Model) stiefelTrain(dim int, apply func(dst, a *mat.Dense)) (*mat.Dense, *mat.SymDense, error) {
	s := m.s
	res, err := stiefel.Minimize(traceObjective{apply}, dim, s, nil, m.Stiefel)
	if res == nil {
		return nil, nil, err
	}
	m.info.Iterations, m.info.GradNorm, m.info.Status = res.Iterations, res.GradNorm, res.Status
	if err != nil && !errors.Is(err, stiefel.ErrNotConverged) && !errors.Is(err, status.ErrStopped) {
		return nil, nil, err
	}
	// An unconverged or stopped run still gives a feasible A: the model is
	// kept and Fit reports the error.
	m.partial = err
	a := res.A
	ba := mat.NewDense(dim, s, nil)
	apply(ba, a)
	var at mat.Dense
	at.Mul(a.T(), ba)
	g := linalg.SymPart(&at)
	if m.Rotate {
		e, err := linalg.SymEig(g, 0)
		if err != nil {
			return nil, nil, err
		}
		var ao mat.Dense
		ao.Mul(a, e.Vectors)
		a = mat.DenseCopyOf(&ao)
		linalg.FixSigns(a)
		g = diag(e.Values)
	}
	return a, g, nil
}

func diag(v []float64) *mat.SymDense {
	g := mat.NewSymDense(len(v), nil)
	for i, x := range v {
		g.SetSym(i, i, x)
	}
	return g
}

// topEigen returns the s largest eigenpairs of a through the model's
// eig.Solver (eig.Auto when nil), recording its status in Info.
func (m *Model) topEigen(a *mat.SymDense, s int) ([]float64, *mat.Dense, error) {
	op, err := eig.NewDense(a)
	if err != nil {
		return nil, nil, err
	}
	solver := m.Solver
	if solver == nil {
		solver = eig.Auto{}
	}
	res, err := solver.Solve(op, s)
	if res != nil {
		m.info.Status = res.Status
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rkm: %w", err)
	}
	return res.Values, res.Vectors, nil
}

func (m *Model) fitPrimal() error {
	phi := m.features()
	s := m.s
	var ut *mat.Dense // Ũ
	var gamma *mat.SymDense
	if m.Training == Eig {
		c := mat.NewSymDense(m.df, nil)
		c.SymOuterK(1, phi.T())
		values, vectors, err := m.topEigen(c, s)
		if err != nil {
			return err
		}
		if !(values[s-1] > 0) {
			return fmt.Errorf("rkm: the covariance has rank < s = %d: %w", s, status.ErrBreakdown)
		}
		ut, gamma = vectors, diag(values)
	} else {
		// B·A = Φᵀ(ΦA), or C·A when C (df×df) is the cheaper product.
		var apply func(dst, a *mat.Dense)
		if m.df <= m.n {
			c := mat.NewSymDense(m.df, nil)
			c.SymOuterK(1, phi.T())
			apply = func(dst, a *mat.Dense) { dst.Mul(c, a) }
		} else {
			tmp := mat.NewDense(m.n, s, nil)
			apply = func(dst, a *mat.Dense) {
				tmp.Mul(phi, a)
				dst.Mul(phi.T(), tmp)
			}
		}
		var err error
		if ut, gamma, err = m.stiefelTrain(m.df, apply); err != nil {
			return err
		}
	}
	m.gamma = gamma
	// U = Ũ Γ^{1/2} (symmetric square root), unless the ablation.
	m.u = mat.DenseCopyOf(ut)
	if !m.NoRescale {
		root, err := symPow(gamma, 0.5)
		if err != nil {
			return err
		}
		m.u.Mul(ut, root)
	}
	// H = Φ U Γ^{-1} (Eq. 6).
	inv, err := symPow(gamma, -1)
	if err != nil {
		return err
	}
	var pu mat.Dense
	pu.Mul(phi, m.u)
	m.h = mat.NewDense(m.n, s, nil)
	m.h.Mul(&pu, inv)
	return nil
}

func (m *Model) fitDual() error {
	s := m.s
	k := mat.NewSymDense(m.n, nil)
	for i := range m.views {
		k.AddSym(k, m.views[i].viewKernel())
	}
	if m.Training == Eig {
		values, vectors, err := m.topEigen(k, s)
		if err != nil {
			return err
		}
		if !(values[s-1] > 0) {
			return fmt.Errorf("rkm: the kernel matrix has rank < s = %d: %w", s, status.ErrBreakdown)
		}
		m.h, m.gamma = vectors, diag(values)
	} else {
		var err error
		m.h, m.gamma, err = m.stiefelTrain(m.n, func(dst, a *mat.Dense) { dst.Mul(k, a) })
		if err != nil {
			return err
		}
	}
	return nil
}

// symPow returns Γ^p for a symmetric positive definite Γ.
func symPow(g *mat.SymDense, p float64) (*mat.Dense, error) {
	e, err := linalg.SymEig(g, 0)
	if err != nil {
		return nil, err
	}
	s := len(e.Values)
	if !(e.Values[s-1] > 0) {
		return nil, invalidf("Γ is not positive definite (eigenvalue %g)", e.Values[s-1])
	}
	return e.Func(func(x float64) float64 { return math.Pow(x, p) }), nil
}

// Info reports the last fit.
func (m *Model) Info() Info { return m.info }

// Fitted reports whether the model can be used: after a successful Fit, or
// after one whose Stiefel training stopped early (Fit then returned an
// error wrapping status.ErrNotConverged or status.ErrStopped).
func (m *Model) Fitted() bool { return m.fitted }

// H returns the n×s dual variables (latent components of the training
// points); in the primal setting H = ΦUΓ^{-1}.
func (m *Model) H() (*mat.Dense, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	return mat.DenseCopyOf(m.h), nil
}

// Gamma returns Γ (diagonal after eig training or rotation).
func (m *Model) Gamma() (*mat.SymDense, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	g := mat.NewSymDense(m.s, nil)
	g.CopySym(m.gamma)
	return g, nil
}

// U returns the primal variables U_v (d_v×s) of an explicit view: stored
// after primal training, Φ_vᵀH (Eq. 5) after dual training.
func (m *Model) U(v int) (*mat.Dense, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	if v < 0 || v >= len(m.views) {
		return nil, invalidf("view %d of %d", v, len(m.views))
	}
	fv := &m.views[v]
	if !fv.explicit {
		return nil, invalidf("view %d has no explicit feature map", v)
	}
	if m.u != nil {
		return mat.DenseCopyOf(m.u.Slice(fv.offset, fv.offset+fv.dim, 0, m.s)), nil
	}
	u := mat.NewDense(fv.dim, m.s, nil)
	u.Mul(fv.phi.T(), m.h)
	return u, nil
}

// Infer predicts view target of m new points from the other views (xs has
// one matrix per view, m rows each; xs[target] is ignored and may be nil).
// It returns the target view in input space (see the package
// documentation for the pre-images).
func (m *Model) Infer(target int, xs []*mat.Dense) (*mat.Dense, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	if target < 0 || target >= len(m.views) || len(xs) != len(m.views) {
		return nil, invalidf("target view %d with %d data matrices for %d views", target, len(xs), len(m.views))
	}
	if len(m.views) < 2 {
		return nil, invalidf("inference needs at least two views")
	}
	rows := -1
	for v, x := range xs {
		if v == target {
			continue
		}
		if x == nil || x.IsEmpty() {
			return nil, invalidf("view %d is empty", v)
		}
		r, c := x.Dims()
		if rows >= 0 && r != rows {
			return nil, invalidf("view %d has %d points, others %d", v, r, rows)
		}
		rows = r
		if _, d := m.views[v].x.Dims(); c != d {
			return nil, invalidf("view %d has %d columns, training had %d", v, c, d)
		}
		if err := linalg.CheckFinite(fmt.Sprintf("rkm: view %d", v), x); err != nil {
			return nil, err
		}
	}
	s := m.s
	tv := &m.views[target]
	// b = Σ_{w≠v} (test scores of view w), and the matrix Γ − (target
	// block), both in the model's setting.
	b := mat.NewDense(rows, s, nil)
	it, err := m.inferTarget(target)
	if err != nil {
		return nil, err
	}
	if m.setting == Primal {
		for v := range xs {
			if v == target {
				continue
			}
			phi, err := m.testFeatures(v, xs[v])
			if err != nil {
				return nil, err
			}
			uv := m.u.Slice(m.views[v].offset, m.views[v].offset+m.views[v].dim, 0, s)
			var t mat.Dense
			t.Mul(phi, uv)
			b.Add(b, &t)
		}
	} else {
		for v := range xs {
			if v == target {
				continue
			}
			kc, err := m.testKernel(v, xs[v])
			if err != nil {
				return nil, err
			}
			var t mat.Dense
			t.Mul(kc, m.h)
			b.Add(b, &t)
		}
	}
	// h* = b (Γ − block)^{-1}, rows: solve (Γ − block) h*ᵀ = bᵀ.
	var hs mat.Dense
	if err := hs.Solve(it.a, b.T()); err != nil {
		return nil, fmt.Errorf("rkm: Γ minus the target view's block is singular (the other views do not determine the latent variables): %v: %w", err, ErrSingular)
	}
	h := mat.DenseCopyOf(hs.T())
	if tv.explicit {
		// φ̂_v = U_v h* (U_v = Φ_vᵀH in the dual); the kernel vector
		// against the training points is Φ_v φ̂_v.
		phi := mat.NewDense(rows, tv.dim, nil)
		phi.Mul(h, it.u.T())
		if _, ok := tv.fm.(Identity); ok {
			for i := 0; i < rows; i++ {
				row := phi.RawRowView(i)
				for j := range row {
					row[j] += tv.mean[j]
				}
			}
			return phi, nil
		}
		kc := mat.NewDense(rows, m.n, nil)
		kc.Mul(phi, tv.phi.T())
		out, _, err := kernel.Smoother(kc, tv.center.RowMeans, tv.x, 0)
		return out, err
	}
	// k̂_v = K_v H h*.
	kc := mat.NewDense(rows, m.n, nil)
	kc.Mul(h, it.kh.T())
	out, _, err := kernel.Smoother(kc, tv.center.RowMeans, tv.x, 0)
	return out, err
}

// target holds what inference of one view needs whatever the new points:
// Γ minus the view's block (s×s), and U_v (explicit views) or K_vH (dual,
// implicit views). Built on first use and kept until the next Fit, so a
// recursive forecast pays the n²s product once, not at every step.
type target struct {
	a, u, kh *mat.Dense
}

func (m *Model) inferTarget(v int) (*target, error) {
	if it, ok := m.targets[v]; ok {
		return it, nil
	}
	s := m.s
	tv := &m.views[v]
	it := &target{}
	var block mat.Dense
	if m.setting == Primal {
		ut := m.u.Slice(tv.offset, tv.offset+tv.dim, 0, s)
		block.Mul(ut.T(), ut)
	} else {
		it.kh = mat.NewDense(m.n, s, nil)
		it.kh.Mul(tv.viewKernel(), m.h)
		block.Mul(m.h.T(), it.kh)
	}
	if tv.explicit {
		var err error
		if it.u, err = m.U(v); err != nil {
			return nil, err
		}
	}
	sym := linalg.SymPart(&block)
	it.a = mat.NewDense(s, s, nil)
	it.a.Sub(m.gamma, sym)
	if m.targets == nil {
		m.targets = map[int]*target{}
	}
	m.targets[v] = it
	return it, nil
}

// testFeatures returns the centred features of new points of an explicit
// view.
func (m *Model) testFeatures(v int, x *mat.Dense) (*mat.Dense, error) {
	fv := &m.views[v]
	phi, err := fv.fm.Map(x)
	if err != nil {
		return nil, err
	}
	r, _ := phi.Dims()
	for i := 0; i < r; i++ {
		row := phi.RawRowView(i)
		for j := range row {
			row[j] -= fv.mean[j]
		}
	}
	return phi, nil
}

// testKernel returns the centred kernel vectors (rows) of new points
// against the training points of view v.
func (m *Model) testKernel(v int, x *mat.Dense) (*mat.Dense, error) {
	fv := &m.views[v]
	if fv.explicit {
		phi, err := m.testFeatures(v, x)
		if err != nil {
			return nil, err
		}
		r, _ := phi.Dims()
		kc := mat.NewDense(r, m.n, nil)
		kc.Mul(phi, fv.phi.T())
		return kc, nil
	}
	kc, err := kernel.CrossGram(x, fv.x, fv.kern)
	if err != nil {
		return nil, err
	}
	if err := fv.center.CenterCross(kc); err != nil {
		return nil, err
	}
	return kc, nil
}
