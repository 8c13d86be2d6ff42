// Package stiefel minimises smooth functions on the Stiefel manifold
// St(m, s) = {A ∈ R^{m×s} : AᵀA = I_s} with Cayley-Adam and Cayley-SGD
// with momentum (Li, Fuxin and Todorovic, "Efficient Riemannian
// optimization on the Stiefel manifold via the Cayley transform", 2020).
//
// One step, with G the Euclidean gradient at A and M the momentum:
//
//	M ← β₁M + (1−β₁)G                      (SGD: M ← βM + G)
//	v ← β₂v + (1−β₂)‖G‖²_F                  (Adam: one scalar per matrix)
//	r = (1−β₁^k)·√(v/(1−β₂^k) + ε)          (SGD: r = 1)
//	P = M − ½A(AᵀM),  W = (P Aᵀ − A Pᵀ)/r   (skew-symmetric, m×m, rank ≤ 2s)
//	M ← r·W A                               (momentum in the tangent space)
//	α = min(lr, 1/(‖W‖_F + ε))              (so ‖(α/2)W‖₂ ≤ ½: contraction)
//	Y₀ = A − αWA;  Y_{i+1} = A − (α/2)W(A + Y_i),  i < CayleyIters
//	A ← Y
//
// The fixed point of the last iteration is the Cayley transform
// (I + (α/2)W)^{-1}(I − (α/2)W)A, which stays on the manifold; the
// iterations stop short of it, so when ‖AᵀA − I‖_F drifts above ReorthTol
// the iterate is replaced by its nearest orthonormal matrix A(AᵀA)^{-1/2}.
// W is never formed: it is kept as W = [P, A]·[A, −P]ᵀ/r, so W·Z costs
// O(m·s²) and a step O(m·s²) plus the objective's gradient; ‖W‖_F comes
// from the 2s×2s Gram matrices of the two factors.
package stiefel

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Error kinds: the status package's sentinels.
var (
	ErrNotConverged = status.ErrNotConverged
)

// TestGradient names Minimize's stopping test.
const TestGradient = "Riemannian gradient: ‖G − A·sym(AᵀG)‖_F ≤ Tol·‖G‖_F"

// Objective is a smooth function of an m×s matrix.
type Objective interface {
	// Eval returns f(A) and writes the Euclidean gradient ∂f/∂A to grad
	// (m×s, overwritten).
	Eval(a, grad *mat.Dense) float64
}

// Method selects the update rule.
type Method int

const (
	// Adam is Cayley-Adam (the default).
	Adam Method = iota
	// SGD is Cayley-SGD with heavy-ball momentum.
	SGD
)

// Settings configure Minimize; the zero value is usable.
type Settings struct {
	Method Method
	// LR is the learning rate, an upper bound on α; 0 means 10 for Adam (its
	// step is scale-free: W is divided by √v̂, which stays of the order of
	// ‖G‖ near a minimum while the tangent part vanishes, so a large bound
	// keeps the final phase fast; far from it α ≤ 1/‖W‖_F is the active
	// bound) and 0.01 for SGD (whose step scales with the gradient).
	// Minimize measures the gradient in the unit (a power of two) that
	// brings its first norm into [1, 2), so LR, Eps and the iterates do
	// not depend on the objective's scale.
	LR float64
	// Beta1 (Adam) or the momentum β (SGD); 0 means 0.9.
	Beta1 float64
	// Beta2 of Adam's second moment; 0 means 0.99.
	Beta2 float64
	// Eps; 0 means 1e-8.
	Eps float64
	// CayleyIters is the number of fixed-point iterations of the Cayley
	// transform; 0 means 2 (Li et al.).
	CayleyIters int
	// ReorthTol: re-orthonormalise when ‖AᵀA − I‖_F exceeds it; 0 means
	// 1e-12.
	ReorthTol float64
	// MaxIter bounds the steps; 0 means 10 000.
	MaxIter int
	// Tol stops when the Riemannian gradient ‖G − A·sym(AᵀG)‖_F is at most
	// Tol·‖G‖_F; 0 means 1e-8. Negative: run MaxIter steps.
	Tol float64
	// Seed of the random start when Minimize is given no start; 0 means 1.
	Seed uint64
	// Callback, if set, is called after every step; returning true stops.
	Callback func(iter int, f float64, a *mat.Dense) bool
	// Context, if set, is checked after every step: once it has ended the
	// run stops with the current (feasible) point, Status Stopped and an
	// error wrapping status.ErrStopped and the context's cause.
	Context context.Context
}

// Result reports a minimisation.
type Result struct {
	A        *mat.Dense
	F        float64
	GradNorm float64 // final Riemannian gradient norm, relative to ‖G‖_F
	// Stats: Iterations (steps), Evaluations (gradient evaluations, one
	// a step) and Seconds.
	status.Stats
	Reorths int // re-orthonormalisations
	// Status: status.Converged (TestGradient), IterationLimit, Stopped (the
	// Callback returned true) or FixedSchedule (Tol < 0: MaxIter steps).
	Status status.Status
}

func (s *Settings) defaults() Settings {
	out := *s
	if out.LR == 0 {
		out.LR = 10
		if out.Method == SGD {
			out.LR = 0.01
		}
	}
	if out.Beta1 == 0 {
		out.Beta1 = 0.9
	}
	if out.Beta2 == 0 {
		out.Beta2 = 0.99
	}
	if out.Eps == 0 {
		out.Eps = 1e-8
	}
	if out.CayleyIters == 0 {
		out.CayleyIters = 2
	}
	if out.ReorthTol == 0 {
		out.ReorthTol = 1e-12
	}
	if out.MaxIter == 0 {
		out.MaxIter = 10000
	}
	if out.Tol == 0 {
		out.Tol = 1e-8
	}
	if out.Seed == 0 {
		out.Seed = 1
	}
	return out
}

// RandomStart returns a seeded m×s matrix with orthonormal columns.
func RandomStart(m, s int, seed uint64) (*mat.Dense, error) {
	if m < 1 || s < 1 || s > m {
		return nil, fmt.Errorf("stiefel: start %d×%d: need 1 ≤ s ≤ m: %w", m, s, status.ErrInvalid)
	}
	rng := rng.New(seed)
	a := mat.NewDense(m, s, nil)
	for i := range a.RawMatrix().Data {
		a.RawMatrix().Data[i] = rng.NormFloat64()
	}
	if err := Orthonormalize(a); err != nil {
		return nil, err
	}
	return a, nil
}

// Defect returns ‖AᵀA − I‖_F.
func Defect(a *mat.Dense) float64 {
	_, s := a.Dims()
	var g mat.SymDense
	linalg.SymOuterK(&g, 1, a.T())
	d := 0.0
	for i := 0; i < s; i++ {
		for j := 0; j < s; j++ {
			v := g.At(i, j)
			if i == j {
				v--
			}
			d += v * v
		}
	}
	return math.Sqrt(d)
}

// Orthonormalize replaces a by its nearest matrix with orthonormal columns,
// A(AᵀA)^{-1/2} (the polar factor: continuous in A, unlike QR's signs).
func Orthonormalize(a *mat.Dense) error {
	_, s := a.Dims()
	g := mat.NewSymDense(s, nil)
	linalg.SymOuterK(g, 1, a.T())
	e, err := linalg.SymEig(g, 0)
	if err != nil {
		return err
	}
	if !(e.Values[s-1] > 1e-14*e.Values[0]) {
		return fmt.Errorf("stiefel: columns are linearly dependent (AᵀA eigenvalue %g): %w", e.Values[s-1], status.ErrInvalid)
	}
	isq := e.Func(func(x float64) float64 { return 1 / math.Sqrt(x) }) // (AᵀA)^{-1/2}
	var out mat.Dense
	linalg.Mul(&out, a, isq)
	linalg.Copy(a, &out)
	return nil
}

// Minimize minimises obj over St(m, s) from a (m×s with orthonormal
// columns; nil: RandomStart(m, s, Seed)), which it does not modify.
func Minimize(obj Objective, m, s int, a0 *mat.Dense, set Settings) (*Result, error) {
	st := set.defaults()
	if obj == nil {
		return nil, fmt.Errorf("stiefel: nil objective: %w", status.ErrInvalid)
	}
	if !(st.LR > 0) || !(st.Beta1 >= 0 && st.Beta1 < 1) || !(st.Beta2 >= 0 && st.Beta2 < 1) || st.CayleyIters < 1 {
		return nil, fmt.Errorf("stiefel: settings lr=%g β₁=%g β₂=%g iterations=%d: %w", st.LR, st.Beta1, st.Beta2, st.CayleyIters, status.ErrInvalid)
	}
	a, err := startOf(a0, m, s, st.Seed)
	if err != nil {
		return nil, err
	}
	w := newWorkspace(m, s)
	res := &Result{}
	start := time.Now()
	var cancelled error
	f := obj.Eval(a, w.g)
	res.Evaluations++
	// The gradient in a unit that brings its first norm into [1, 2): the
	// minimiser does not depend on f's scale, and a power of two changes
	// no rounding, but Adam's Eps is absolute — with ‖G‖ of 10⁻²⁴ (a
	// kernel of data scaled by 2⁻⁴⁰) it dominated √v̂ and no step moved.
	unit := gradientUnit(w.g)
	w.g.Scale(unit, w.g)
	for k := 1; k <= st.MaxIter; k++ {
		if math.IsNaN(f) || math.IsInf(f, 0) || !finite(w.g) {
			return nil, fmt.Errorf("stiefel: objective gave f = %g or a non-finite gradient at step %d: %w", f, k, status.ErrInvalid)
		}
		gn := linalg.Norm2(w.g)
		rg := w.riemannianNorm(a)
		res.GradNorm = rg / math.Max(gn, math.SmallestNonzeroFloat64)
		if st.Tol > 0 && (gn == 0 || res.GradNorm <= st.Tol) {
			res.Status = status.Status{Code: status.Converged, Test: TestGradient}
			break
		}
		// Momentum and scaling.
		r := 1.0
		if st.Method == Adam {
			w.mom.Scale(st.Beta1, w.mom)
			w.mom.Add(w.mom, scaled(w.tmp, 1-st.Beta1, w.g))
			w.v = st.Beta2*w.v + (1-st.Beta2)*gn*gn
			vhat := w.v / (1 - math.Pow(st.Beta2, float64(k)))
			r = (1 - math.Pow(st.Beta1, float64(k))) * math.Sqrt(vhat+st.Eps)
		} else {
			w.mom.Scale(st.Beta1, w.mom)
			w.mom.Add(w.mom, w.g)
		}
		w.setW(a, r)
		// Momentum re-projected: M = r·W·A.
		w.applyW(w.mom, a)
		w.mom.Scale(r, w.mom)
		alpha := stepSize(st.LR, w.normW(), st.Eps)
		w.cayley(a, alpha, st.CayleyIters)
		linalg.Copy(a, w.y)
		if Defect(a) > st.ReorthTol {
			if err := Orthonormalize(a); err != nil {
				return nil, err
			}
			res.Reorths++
		}
		res.Iterations = k
		f = obj.Eval(a, w.g)
		w.g.Scale(unit, w.g)
		res.Evaluations++
		if st.Callback != nil && st.Callback(k, f, a) {
			res.Status = status.Status{Code: status.Stopped, Detail: fmt.Sprintf("the Callback returned true at step %d", k)}
			break
		}
		if st.Context != nil && st.Context.Err() != nil {
			cancelled = status.Cancelled(context.Cause(st.Context), fmt.Sprintf("after step %d", k))
			res.Status, _ = status.StatusOf(cancelled)
			break
		}
	}
	res.A, res.F, res.Seconds = a, f, time.Since(start).Seconds()
	if res.Status.Code == status.NotRun {
		if st.Tol > 0 {
			res.Status = status.Status{Code: status.IterationLimit, Test: TestGradient,
				Detail: fmt.Sprintf("%d steps, relative Riemannian gradient %.3g > %g", res.Iterations, res.GradNorm, st.Tol)}
		} else {
			res.Status = status.Status{Code: status.FixedSchedule, Detail: fmt.Sprintf("%d steps (Tol < 0)", res.Iterations)}
		}
	}
	if cancelled != nil {
		return res, fmt.Errorf("stiefel: %w", cancelled)
	}
	if err := res.Status.Err(); err != nil {
		return res, fmt.Errorf("stiefel: %w", err)
	}
	return res, nil
}

// gradientUnit is the power of two that brings ‖g‖_F into [1, 2) (1 for
// a zero or non-finite g: Minimize then stops or reports it).
func gradientUnit(g *mat.Dense) float64 {
	n := linalg.Norm2(g)
	if !(n > 0) || math.IsInf(n, 0) {
		return 1
	}
	_, e := math.Frexp(n) // n = frac·2^e, frac in [½, 1)
	return math.Ldexp(1, 1-e)
}

// startOf returns the start: a copy of a0 (checked m×s, s ≤ m, finite;
// orthonormalised when it is off the manifold by more than 1e-8), or a
// seeded random point when a0 is nil.
func startOf(a0 *mat.Dense, m, s int, seed uint64) (*mat.Dense, error) {
	if a0 == nil {
		return RandomStart(m, s, seed)
	}
	r, c := a0.Dims()
	if r != m || c != s || s > m {
		return nil, fmt.Errorf("stiefel: start is %d×%d, want %d×%d with s ≤ m: %w", r, c, m, s, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("stiefel: start", a0); err != nil {
		return nil, err
	}
	a := linalg.CopyOf(a0)
	if Defect(a) > 1e-8 {
		if err := Orthonormalize(a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// stepSize is the Cayley step α = min(LR, 1/(‖W‖_F + ε)): with α‖W‖ ≤ 1
// the fixed-point iteration of the Cayley transform contracts by at least
// ½ a sweep (Li et al.), so its few iterations stay close to orthogonal.
func stepSize(lr, normW, eps float64) float64 { return math.Min(lr, 1/(normW+eps)) }

func finite(a *mat.Dense) bool {
	for _, v := range a.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func scaled(dst *mat.Dense, f float64, a *mat.Dense) *mat.Dense {
	dst.Scale(f, a)
	return dst
}

// workspace holds the m×s and 2s-sized buffers of one minimisation; W is
// kept as W = U·Vᵀ/r with U = [P, A] and V = [A, −P].
type workspace struct {
	g, mom, tmp, y, prev *mat.Dense
	u, vv                *mat.Dense // m×2s factors of W
	small, small2        *mat.Dense // 2s×s
	ss                   *mat.Dense // s×s
	r                    float64
	v                    float64
}

func newWorkspace(m, s int) *workspace {
	return &workspace{
		g: mat.NewDense(m, s, nil), mom: mat.NewDense(m, s, nil), tmp: mat.NewDense(m, s, nil),
		y: mat.NewDense(m, s, nil), prev: mat.NewDense(m, s, nil),
		u: mat.NewDense(m, 2*s, nil), vv: mat.NewDense(m, 2*s, nil),
		small: mat.NewDense(2*s, s, nil), small2: mat.NewDense(2*s, s, nil), ss: mat.NewDense(s, s, nil),
	}
}

// riemannianNorm is ‖G − A·sym(AᵀG)‖_F.
func (w *workspace) riemannianNorm(a *mat.Dense) float64 {
	linalg.Mul(w.ss, a.T(), w.g)
	_, s := a.Dims()
	for i := 0; i < s; i++ {
		for j := i + 1; j < s; j++ {
			v := 0.5 * (w.ss.At(i, j) + w.ss.At(j, i))
			w.ss.Set(i, j, v)
			w.ss.Set(j, i, v)
		}
	}
	linalg.Mul(w.tmp, a, w.ss)
	w.tmp.Sub(w.g, w.tmp)
	return linalg.Norm2(w.tmp)
}

// setW stores the factors of W = (P Aᵀ − A Pᵀ)/r, P = M − ½A(AᵀM).
func (w *workspace) setW(a *mat.Dense, r float64) {
	_, s := a.Dims()
	linalg.Mul(w.ss, a.T(), w.mom)
	linalg.Mul(w.tmp, a, w.ss)
	w.tmp.Scale(-0.5, w.tmp)
	w.tmp.Add(w.tmp, w.mom) // P
	m, _ := a.Dims()
	pu := w.u.Slice(0, m, 0, s).(*mat.Dense)
	au := w.u.Slice(0, m, s, 2*s).(*mat.Dense)
	av := w.vv.Slice(0, m, 0, s).(*mat.Dense)
	pv := w.vv.Slice(0, m, s, 2*s).(*mat.Dense)
	linalg.Copy(pu, w.tmp)
	linalg.Copy(au, a)
	linalg.Copy(av, a)
	pv.Scale(-1, w.tmp)
	w.r = r
}

// applyW sets dst = W·z (dst and z m×s; dst may not alias z).
func (w *workspace) applyW(dst, z *mat.Dense) {
	linalg.Mul(w.small, w.vv.T(), z)
	linalg.Mul(dst, w.u, w.small)
	dst.Scale(1/w.r, dst)
}

// normW is ‖W‖_F = √Tr((UᵀU)(VᵀV))/r.
func (w *workspace) normW() float64 {
	var uu, vv mat.Dense
	linalg.Mul(&uu, w.u.T(), w.u)
	linalg.Mul(&vv, w.vv.T(), w.vv)
	t := 0.0
	n, _ := uu.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t += uu.At(i, j) * vv.At(j, i)
		}
	}
	return math.Sqrt(math.Max(t, 0)) / w.r
}

// cayley sets w.y to the iterated Cayley transform of a.
func (w *workspace) cayley(a *mat.Dense, alpha float64, iters int) {
	// Y₀ = A − αWA.
	w.applyW(w.tmp, a)
	w.y.Scale(-alpha, w.tmp)
	w.y.Add(w.y, a)
	for i := 0; i < iters; i++ {
		w.prev.Add(a, w.y)
		w.applyW(w.tmp, w.prev)
		w.y.Scale(-alpha/2, w.tmp)
		w.y.Add(w.y, a)
	}
}
