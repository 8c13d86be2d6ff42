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
	"context"
	"fmt"
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
	ErrNotFitted = fmt.Errorf("rkm: %w", status.ErrNotFitted)
	ErrSingular  = lapack.ErrSingular
)

func invalidf(format string, a ...any) error {
	return fmt.Errorf("rkm: "+format+": %w", append(a, status.ErrInvalid)...)
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
	return linalg.CopyOf(x), nil
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
	// Scale, when set, is the standardisation of the series a forecasting
	// model was trained on; the model does not use it, but Save keeps it
	// so that a loaded model forecasts in the original units.
	Scale *Standardizer

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
	ctx     context.Context // during FitContext only
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

// MaxViews is the most views a model has: Fit refuses more, and a model
// file declaring more is refused before anything is allocated for them.
const MaxViews = 1024

// Fit trains the model on one n×d_v matrix per view (1 to MaxViews views).
func (m *Model) Fit(xs []*mat.Dense) error { return m.FitContext(context.Background(), xs) }

// FitContext is Fit that stops when ctx ends: after the Stiefel step in
// progress (the feasible point so far is kept as a partial model, as for
// an iteration limit) or before the eigensolver's next pass (no model).
// The error wraps status.ErrStopped and ctx's cause; Info().Status is
// status.Stopped.
func (m *Model) FitContext(ctx context.Context, xs []*mat.Dense) error {
	m.ctx = ctx
	defer func() { m.ctx = nil }()
	start := time.Now()
	m.fitted, m.targets = false, nil
	if len(m.Views) == 0 || len(m.Views) > MaxViews || len(xs) != len(m.Views) {
		return invalidf("%d views configured, %d data matrices given (1 to %d views)", len(m.Views), len(xs), MaxViews)
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
		fv.x = linalg.CopyOf(x)
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
		mm := linalg.Dot(mat.NewVecDense(len(fv.mean), fv.mean), mat.NewVecDense(len(fv.mean), fv.mean))
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

// diagonalMean is the view's uncentred kernel's mean diagonal (the
// smoother's scale): from the centred kernel, or for explicit features
// φ_i = φ_c,i + μ (Σ φ_c,i = 0) the mean of ‖φ_c,i‖² plus ‖μ‖², without
// forming the n×n kernel.
func (fv *fitView) diagonalMean() float64 {
	if fv.kc != nil {
		return kernel.DiagonalMean(fv.kc, fv.center)
	}
	n, _ := fv.phi.Dims()
	t := 0.0
	for i := 0; i < n; i++ {
		for _, v := range fv.phi.RawRowView(i) {
			t += v * v
		}
	}
	for _, v := range fv.mean {
		t += v * v * float64(n)
	}
	return t / float64(n)
}

// viewKernel returns the centred n×n kernel of a view.
func (fv *fitView) viewKernel() *mat.SymDense {
	if fv.kc == nil {
		n, _ := fv.phi.Dims()
		fv.kc = mat.NewSymDense(n, nil)
		linalg.SymOuterK(fv.kc, 1, fv.phi)
	}
	return fv.kc
}

// features returns the n×df concatenation of the centred features.
func (m *Model) features() *mat.Dense {
	phi := mat.NewDense(m.n, m.df, nil)
	for _, fv := range m.views {
		linalg.Copy(phi.Slice(0, m.n, fv.offset, fv.offset+fv.dim).(*mat.Dense), fv.phi)
	}
	return phi
}

// Info reports the last fit.
func (m *Model) Info() Info { return m.info }

// InputDims returns the number of input columns of each view of the fitted
// model (for a forecasting model, view 0's is the window p + 1), or
// ErrNotFitted.
func (m *Model) InputDims() ([]int, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	out := make([]int, len(m.views))
	for v, fv := range m.views {
		_, out[v] = fv.x.Dims()
	}
	return out, nil
}

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
	return linalg.CopyOf(m.h), nil
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
		return linalg.CopyOf(m.u.Slice(fv.offset, fv.offset+fv.dim, 0, m.s)), nil
	}
	u := mat.NewDense(fv.dim, m.s, nil)
	linalg.Mul(u, fv.phi.T(), m.h)
	return u, nil
}
