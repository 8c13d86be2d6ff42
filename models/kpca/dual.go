package kpca

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/lbfgs"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// DualCost returns d(H) = ½‖H‖²_F − Tr √(HᵀGH) and its gradient
// ∇d(H) = H − G·H·M^{-1/2}, M = HᵀGH, for the n×s matrix h (one pass over
// G). It is the dual objective of kernel PCA (the dual-KPCA paper's
// Problem 2); its minimum is −½ Σ_{i≤s} λ_i(G), reached at H = V_s Λ_s^{1/2} R
// for any orthogonal R. M must be positive definite (rank s): otherwise
// the error wraps ErrBreakdown. On an eig.Distributed operator h and the
// gradient are this part's rows and d is the global value (HᵀGH and ‖H‖²
// reduced over the parts).
func DualCost(g eig.Operator, h *mat.Dense) (float64, *mat.Dense, error) {
	n, s := h.Dims()
	if g.Dim() != n {
		return 0, nil, fmt.Errorf("kpca: DualCost: H has %d rows, G holds %d here: %w", n, g.Dim(), status.ErrInvalid)
	}
	_, _, _, red := eig.Parts(g)
	gh := mat.NewDense(n, s, nil)
	if err := g.Apply(gh, h); err != nil {
		return 0, nil, err
	}
	buf := make([]float64, s*s+1)
	m := mat.NewDense(s, s, buf[:s*s])
	linalg.Mul(m, h.T(), gh)
	buf[s*s] = sumSquares(h)
	if err := red.Sum(buf); err != nil {
		return 0, nil, fmt.Errorf("kpca: DualCost: %w", err)
	}
	ms, err := sqrtFactors(m)
	if err != nil {
		return 0, nil, err
	}
	grad := mat.NewDense(n, s, nil)
	linalg.Mul(grad, gh, ms.invSqrt)
	grad.Sub(h, grad)
	return 0.5*buf[s*s] - ms.traceSqrt, grad, nil
}

// sumSquares is ‖a‖²_F.
func sumSquares(a *mat.Dense) float64 {
	v := 0.0
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for _, x := range a.RawRowView(i)[:c] {
			v += x * x
		}
	}
	return v
}

// sqrtOf holds what is needed of a symmetric positive definite s×s M:
// Tr √M, M^{-1/2}, and its eigendecomposition M = Q diag(μ) Qᵀ (μ
// decreasing).
type sqrtOf struct {
	traceSqrt float64
	invSqrt   *mat.Dense
	mu        []float64
	q         *mat.Dense
}

// breakdownRatio: μ_min ≤ breakdownRatio·μ_max counts as rank loss.
const breakdownRatio = 1e-14

func sqrtFactors(m *mat.Dense) (*sqrtOf, error) { return sqrtFactorsAbove(m, 0) }

// sqrtFactorsAbove is sqrtFactors where eigenvalues of HᵀGH within
// breakdownRatio·max(|μ₁|, noise) of zero are rounding: a negative one
// there is rank loss, not indefiniteness (G = 0 to rounding, e.g. the
// centred kernel of identical points, gives HᵀGH of rounding's sign).
func sqrtFactorsAbove(m *mat.Dense, noise float64) (*sqrtOf, error) {
	s, _ := m.Dims()
	e, err := linalg.SymEig(linalg.SymPart(m), 0)
	if err != nil {
		return nil, fmt.Errorf("kpca: HᵀGH: %w", err)
	}
	mu := e.Values
	scale := math.Max(math.Abs(mu[0]), noise)
	if mu[s-1] < -breakdownRatio*scale {
		return nil, fmt.Errorf("kpca: HᵀGH is indefinite (eigenvalues %g … %g): the kernel matrix is not positive semi-definite, which the dual cost needs; use an eigensolver: %w",
			mu[0], mu[s-1], ErrBreakdown)
	}
	if !(mu[s-1] > breakdownRatio*scale) {
		// H is random or a descent iterate of full rank, so a singular
		// HᵀGH means G has rank below s.
		rank := 0
		for _, v := range mu {
			if v > breakdownRatio*scale {
				rank++
			}
		}
		return nil, &status.RankError{Matrix: "kpca: the kernel matrix (HᵀGH on span(H))", Rank: rank, Asked: s}
	}
	// M^{-1/2} = Q diag(μ^{-1/2}) Qᵀ
	out := &sqrtOf{mu: mu, q: e.Vectors, invSqrt: e.Func(func(x float64) float64 { return 1 / math.Sqrt(x) })}
	for i := 0; i < s; i++ {
		out.traceSqrt += math.Sqrt(mu[i])
	}
	return out, nil
}

// dualProblem is d(H) as an lbfgs.LineProblem over the row-major n×s
// matrix H flattened: one pass over G per direction (G·P), every line
// trial in s×s work and the accepted step in n×s² work, using
// G(H + αP) = GH + α·GP. On an eig.Distributed operator H holds this
// part's rows; the s×s matrices and the scalars are reduced over the
// parts (one reduction per evaluation), so every part computes the same
// φ(α) and takes the same steps.
type dualProblem struct {
	g    eig.Operator
	red  eig.Reduction
	n, s int

	h, gh     *mat.Dense // the current iterate and G·H
	p, gp     *mat.Dense // the direction and G·P
	a0        *mat.Dense // HᵀGH
	a1, a2    *mat.Dense // PᵀGH + HᵀGP, PᵀGP
	hh, hp    float64    // ‖H‖², ⟨H, P⟩
	pp        float64    // ‖P‖²
	buf       []float64  // reduction buffer: 2s² + 3
	passes    int
	lastError error          // a breakdown met inside the line search
	primed    bool           // gh holds G′·H₀ for the first Func (scaleStart)
	shift     int            // G′ = G/4^shift (scaleStart)
	floorOf   func() float64 // DualOptions.Floor, until called
	floor     float64        // what it returned
}

func newDualProblem(g eig.Operator, s int) *dualProblem {
	n, _, _, red := eig.Parts(g)
	return &dualProblem{
		g: g, red: red, n: n, s: s,
		gh: mat.NewDense(n, s, nil), gp: mat.NewDense(n, s, nil),
		a0: mat.NewDense(s, s, nil), a1: mat.NewDense(s, s, nil), a2: mat.NewDense(s, s, nil),
		buf: make([]float64, 2*s*s+3),
	}
}

func (d *dualProblem) view(x []float64) *mat.Dense { return mat.NewDense(d.n, d.s, x) }

// Func evaluates d and ∇d at x with one pass over G (used for the start;
// with primed, x is the start whose G·H the start's scaling computed, and
// no pass is made).
func (d *dualProblem) Func(x, grad []float64) float64 {
	d.h = d.view(x)
	if d.primed {
		d.primed = false
		return d.valueGrad(grad)
	}
	d.passes++
	if err := d.g.Apply(d.gh, d.h); err != nil {
		d.lastError = err
		return math.NaN()
	}
	d.unit(d.gh)
	return d.valueGrad(grad)
}

// scaleStart fixes the problem's unit, 4^shift, from the start Ω: shift =
// ⌊log₂(τ)/2 + ½⌋ for τ = Tr(ΩᵀGΩ)/‖Ω‖²_F (G's mean Rayleigh quotient,
// about Tr G/n), with the pass over G that the first evaluation would
// make (Func then reuses it). L-BFGS then minimises the cost of G′ =
// G/4^shift from Ω — its first step, of unit length, suits a problem of
// order 1 — and SolveDual returns H = 2^shift·H′, G·H = 8^shift·G′H′ and
// the cost 4^shift·d′: the dual cost is homogeneous, d_{c²G}(c·H) =
// c²·d_G(H), so that is G's solution, and powers of two change no
// rounding. (Without it the linear kernel of data scaled by 2^±60 broke
// down or stopped where it started.) Kernels of order 1 (τ in [½, 2))
// keep shift 0: nothing changes for them.
func (d *dualProblem) scaleStart(h0 *mat.Dense) error {
	d.passes++
	if err := d.g.Apply(d.gh, h0); err != nil {
		return err
	}
	sums := []float64{dotLocal(h0, d.gh), sumSquares(h0)}
	if err := d.red.Sum(sums); err != nil {
		return fmt.Errorf("kpca: dual start: %w", err)
	}
	d.primed = true
	tau := sums[0] / sums[1]
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil // G is zero or indefinite to rounding: valueGrad says so
	}
	d.shift = int(math.Floor(math.Log2(tau)/2 + 0.5))
	d.unit(d.gh)
	return nil
}

// unit rescales a product G·X just computed to G′·X = G·X/4^shift.
func (d *dualProblem) unit(gx *mat.Dense) {
	if d.shift != 0 {
		ldexpAll(gx, -2*d.shift)
	}
}

// ldexpAll multiplies every entry of m by 2^e.
func ldexpAll(m *mat.Dense, e int) {
	r, c := m.Dims()
	for i := 0; i < r; i++ {
		row := m.RawRowView(i)[:c]
		for j := range row {
			row[j] = math.Ldexp(row[j], e)
		}
	}
}

// valueGrad uses h and gh to return d(H) and store ∇d(H).
func (d *dualProblem) valueGrad(grad []float64) float64 {
	ss := d.s * d.s
	a0 := mat.NewDense(d.s, d.s, d.buf[:ss])
	linalg.Mul(a0, d.h.T(), d.gh)
	d.buf[ss] = sumSquares(d.h)
	if err := d.red.Sum(d.buf[:ss+1]); err != nil {
		d.lastError = fmt.Errorf("kpca: dual L-BFGS: %w", err)
		return math.NaN()
	}
	linalg.Copy(d.a0, a0)
	d.hh = d.buf[ss]
	if d.floorOf != nil {
		d.floor, d.floorOf = math.Ldexp(d.floorOf(), -2*d.shift), nil // in G′'s unit
	}
	ms, err := sqrtFactorsAbove(d.a0, d.floor*d.hh/float64(d.s))
	if err != nil {
		d.lastError = err
		return math.NaN()
	}
	gv := d.view(grad)
	linalg.Mul(gv, d.gh, ms.invSqrt)
	gv.Sub(d.h, gv)
	return 0.5*d.hh - ms.traceSqrt
}

// Direction computes G·P (the iteration's one pass) and the s×s pieces of
// M(α) = HᵀGH + α(PᵀGH + HᵀGP) + α²PᵀGP.
func (d *dualProblem) Direction(x, p []float64) {
	d.h = d.view(x)
	d.p = d.view(p)
	d.passes++
	if err := d.g.Apply(d.gp, d.p); err != nil {
		// Line then returns NaN and the minimiser stops; SolveDual
		// returns lastError.
		d.lastError = err
		d.gp.Apply(func(_, _ int, _ float64) float64 { return math.NaN() }, d.gp)
	}
	d.unit(d.gp)
	ss := d.s * d.s
	pgh := mat.NewDense(d.s, d.s, d.buf[:ss])
	linalg.Mul(pgh, d.p.T(), d.gh)
	pgp := mat.NewDense(d.s, d.s, d.buf[ss:2*ss])
	linalg.Mul(pgp, d.p.T(), d.gp)
	d.buf[2*ss] = dotLocal(d.h, d.h)
	d.buf[2*ss+1] = dotLocal(d.h, d.p)
	d.buf[2*ss+2] = dotLocal(d.p, d.p)
	if err := d.red.Sum(d.buf); err != nil {
		d.lastError = fmt.Errorf("kpca: dual L-BFGS: %w", err)
		for i := range d.buf {
			d.buf[i] = math.NaN()
		}
	}
	d.a1.Add(pgh, pgh.T())
	linalg.Copy(d.a2, pgp)
	d.hh, d.hp, d.pp = d.buf[2*ss], d.buf[2*ss+1], d.buf[2*ss+2]
}

// dotLocal is ⟨a, b⟩ over the rows held here.
func dotLocal(a, b *mat.Dense) float64 {
	return linalg.Dot(vecOf(a), vecOf(b))
}

func vecOf(m *mat.Dense) *mat.VecDense {
	raw := m.RawMatrix()
	return mat.NewVecDense(raw.Rows*raw.Cols, raw.Data[:raw.Rows*raw.Cols])
}

// Line returns φ(α) = d(H + αP) and φ'(α) from s×s matrices only:
// φ = ½(‖H‖² + 2α⟨H,P⟩ + α²‖P‖²) − Tr √M(α),
// φ' = ⟨H,P⟩ + α‖P‖² − ½ Tr(M(α)^{-1/2} M'(α)), M' = A₁ + 2αA₂.
// A step where M(α) loses rank gives +Inf, so the search steps back.
func (d *dualProblem) Line(alpha float64) (float64, float64) {
	s := d.s
	m := mat.NewDense(s, s, nil)
	var t mat.Dense
	t.Scale(alpha, d.a1)
	m.Add(d.a0, &t)
	t.Scale(alpha*alpha, d.a2)
	m.Add(m, &t)
	ms, err := sqrtFactors(m)
	if err != nil {
		return math.Inf(1), 0
	}
	var dm mat.Dense
	dm.Scale(2*alpha, d.a2)
	dm.Add(&dm, d.a1)
	tr := 0.0
	for i := 0; i < s; i++ {
		for j := 0; j < s; j++ {
			tr += ms.invSqrt.At(i, j) * dm.At(j, i)
		}
	}
	phi := 0.5*(d.hh+2*alpha*d.hp+alpha*alpha*d.pp) - ms.traceSqrt
	return phi, d.hp + alpha*d.pp - 0.5*tr
}

// Accept moves to H + αP with G(H + αP) = GH + α·GP (no pass).
func (d *dualProblem) Accept(alpha float64, xNew, grad []float64) float64 {
	hn := d.view(xNew)
	hn.Scale(alpha, d.p)
	hn.Add(hn, d.h)
	var t mat.Dense
	t.Scale(alpha, d.gp)
	d.gh.Add(d.gh, &t)
	d.h = hn
	return d.valueGrad(grad)
}

// DualOptions configure SolveDual.
type DualOptions struct {
	// Start and Seed of H₀.
	Start Start
	Seed  uint64
	// Tol: stop when ‖∇d‖ ≤ Tol·‖H‖ or the relative decrease of d over 5
	// iterations is below Tol; 0 means 1e-8 and 1e-12 respectively.
	Tol     float64
	MaxIter int
	// Stop is called after every iteration with the dual cost; true stops
	// (the benchmark's oracle stop η = |d − d_opt|/|d_opt| < δ).
	Stop func(iter int, cost float64) bool
	// StartOut, when non-nil, receives a copy of H₀ (n×s, row-major).
	StartOut func(h0 *mat.Dense)
	// Floor, when not nil, returns the rounding level of G's eigenvalues
	// (for a centred kernel, n·max|r_i| of its row means r): at an
	// iterate H an eigenvalue of HᵀGH within breakdownRatio·floor·‖H‖²/s
	// of zero is rank loss (a status.RankError), not indefiniteness. It
	// is called once, after the start's pass over G (an operator's row
	// means are known by then).
	Floor func() float64
}

// DualResult is the outcome of SolveDual.
type DualResult struct {
	H, GH *mat.Dense // the solution and G·H
	Cost  float64
	// Stats: Iterations, Passes over G, Evaluations of the dual cost and
	// Seconds.
	status.Stats
	FailedSearches int
	// Status: status.Converged (lbfgs.TestRelGrad or lbfgs.TestFunction),
	// Stopped (by Stop), IterationLimit or Breakdown; SolveDual returns the
	// result with Status.Err() in the latter three cases.
	Status status.Status
}

// SolveDual minimises the dual cost d(H) = ½‖H‖²_F − Tr √(HᵀGH) over n×s
// matrices H with L-BFGS, paying one pass over G per iteration (plus one
// for the start, two with StartSketch, and one per failed line search).
// It minimises in a unit of G fixed from the start (a power of four near
// G's mean Rayleigh quotient: scaleStart), so the iterations do not
// depend on G's scale: for G scaled by 4^j it takes the same steps and
// returns H·2^j, G·H·8^j and the cost·4^j, bit for bit.
//
// On an eig.Distributed operator (package dist: rows split over MPI
// ranks) every part calls SolveDual together: H₀ is this part's rows of
// the single-process start (same seed), every inner product and s×s
// product is reduced over the parts, and the result holds this part's
// rows of H and G·H; every part takes the same steps (the reduction gives
// every part the same bits), so the iterations, cost and status are the
// same everywhere.
func SolveDual(op eig.Operator, s int, o DualOptions) (*DualResult, error) {
	n, global, _, red := eig.Parts(op)
	if s < 1 || s >= global {
		return nil, fmt.Errorf("kpca: s = %d, need 1 ≤ s < n = %d: %w", s, global, status.ErrInvalid)
	}
	prob := newDualProblem(op, s)
	prob.floorOf = o.Floor
	h0, err := dualStart(op, s, o.Start, o.Seed, prob)
	if err != nil {
		return nil, err
	}
	if o.Start == StartNormal {
		if err := prob.scaleStart(h0); err != nil {
			return nil, err
		}
	}
	if o.StartOut != nil {
		start := linalg.CopyOf(h0)
		ldexpAll(start, prob.shift) // in G's unit
		o.StartOut(start)
	}
	// ‖∇d‖ ≤ tol·‖H‖ (lbfgs's relative test: max(1, ‖H‖) is the wrong
	// scale for small kernels) or a relative decrease of d below tol over 5
	// iterations.
	settings := lbfgs.Settings{MaxIter: o.MaxIter, GradTol: 1e-8, RelativeGrad: true, FuncTol: 1e-12}
	if o.Tol > 0 {
		settings.FuncTol, settings.GradTol = o.Tol, o.Tol
	}
	if _, distributed := op.(eig.Distributed); distributed {
		settings.Sum = red.Sum
	}
	if o.Stop != nil {
		settings.Stop = func(iter int, _ []float64, f float64, _ []float64) bool {
			return o.Stop(iter, math.Ldexp(f, 2*prob.shift))
		}
	}
	res, err := lbfgs.Minimize(prob, h0.RawMatrix().Data, settings)
	if prob.lastError != nil {
		return nil, prob.lastError // HᵀGH lost rank, or a pass or reduction failed
	}
	if res == nil {
		return nil, fmt.Errorf("kpca: lbfgs: %w", err)
	}
	// Back from G′'s unit to G's (scaleStart).
	h := mat.NewDense(n, s, res.X)
	ldexpAll(h, prob.shift)
	ldexpAll(prob.gh, 3*prob.shift)
	dr := &DualResult{
		H: h, GH: prob.gh, Cost: math.Ldexp(res.F, 2*prob.shift),
		Stats:          status.Stats{Iterations: res.Iterations, Passes: prob.passes, Evaluations: res.Evaluations, Seconds: res.Seconds},
		FailedSearches: res.FailedSearches,
		Status:         res.Status,
	}
	if err != nil {
		return dr, fmt.Errorf("kpca: dual L-BFGS: %w", err)
	}
	return dr, nil
}

// fitLBFGS minimises the dual cost; ctx is checked after every iteration
// (the operator checks it before every pass too).
func (k *KPCA) fitLBFGS(ctx context.Context, op eig.Operator, o LBFGS, orig eig.Operator) error {
	cancelled := false
	stop := func(iter int, cost float64) bool {
		if ctx.Err() != nil {
			cancelled = true
			return true
		}
		return o.Stop != nil && o.Stop(iter, cost)
	}
	r, err := SolveDual(op, k.Components, DualOptions{
		Start: o.Start, Seed: o.Seed, Tol: o.Tol, MaxIter: o.MaxIter, Stop: stop,
		Floor: func() float64 { return centredFloor(orig) },
	})
	if r == nil {
		return err
	}
	if cancelled {
		err = status.Cancelled(context.Cause(ctx), fmt.Sprintf("after lbfgs iteration %d", r.Iterations))
		r.Status, _ = status.StatusOf(err)
	}
	k.info.Iterations = r.Iterations
	k.info.FailedSearches = r.FailedSearches
	k.info.Cost = r.Cost
	k.info.Status = r.Status
	if serr := k.setFromDual(op, r.H, r.GH); serr != nil {
		return serr
	}
	if rerr := rankCheck("kpca: the kernel matrix", k.values, k.Components, centredFloor(orig)); rerr != nil {
		k.values = nil
		return rerr
	}
	return err
}

// dualStart returns H₀ (and, for the sketch start, spends its pass): the
// rows held here of the n×s standard normal matrix of the seed.
func dualStart(op eig.Operator, s int, start Start, seed uint64, prob *dualProblem) (*mat.Dense, error) {
	n, global, offset, red := eig.Parts(op)
	if seed == 0 {
		seed = 1
	}
	data, err := rng.StandardNormal(global, s, seed)
	if err != nil {
		return nil, err
	}
	omega := mat.NewDense(n, s, data[offset*s:(offset+n)*s])
	if start != StartSketch {
		return omega, nil
	}
	y := mat.NewDense(n, s, nil)
	prob.passes++
	if err := op.Apply(y, omega); err != nil {
		return nil, err
	}
	// Scale Y = GΩ so that ‖H₀‖²_F = Tr(ΩᵀGΩ)/s, an estimate of Tr G
	// and so an upper bound of the optimum's ‖H*‖²_F = Σ_{i≤s} λ_i.
	sums := []float64{dotLocal(omega, y), sumSquares(y), sumSquares(omega)}
	if err := red.Sum(sums); err != nil {
		return nil, fmt.Errorf("kpca: dual start: %w", err)
	}
	tr, ny := sums[0], math.Sqrt(sums[1])
	if tr > 0 && ny > 0 {
		y.Scale(math.Sqrt(tr)/ny/math.Sqrt(float64(s)), y)
		// The problem's unit as scaleStart fixes it, from Ω's Rayleigh
		// quotient; the start in G′'s unit.
		if tau := tr / sums[2]; tau > 0 && !math.IsInf(tau, 0) {
			prob.shift = int(math.Floor(math.Log2(tau)/2 + 0.5))
			ldexpAll(y, -prob.shift)
		}
	}
	return y, nil
}

// RitzFromDual returns the Rayleigh–Ritz pairs of span(H) from a dual
// solution H and G·H (n×s; on an eig.Distributed operator, this part's
// rows, reduced by red — eig.Local otherwise): the Ritz values θ (the
// eigenvalue estimates, decreasing) and the s×s matrix R such that H·R =
// V·Θ^{-1/2} (the projection onto the components) and G·H·R are the
// training scores. With C = HᵀH and M = HᵀGH the pairs solve M y = θ C y;
// they are accurate to the square of span(H)'s error, where √eig(M) — exact
// only at the optimum H = VΛ^{1/2}R — is accurate to its first power.
func RitzFromDual(h, gh *mat.Dense, red eig.Reduction) ([]float64, *mat.Dense, error) {
	_, s := h.Dims()
	if red == nil {
		red = eig.Local{}
	}
	buf := make([]float64, 2*s*s)
	c := mat.NewDense(s, s, buf[:s*s])
	m := mat.NewDense(s, s, buf[s*s:])
	linalg.Mul(c, h.T(), h)
	linalg.Mul(m, h.T(), gh)
	if err := red.Sum(buf); err != nil {
		return nil, nil, fmt.Errorf("kpca: Ritz problem: %w", err)
	}
	ce, err := linalg.SymEig(linalg.SymPart(c), 0)
	if err != nil {
		return nil, nil, fmt.Errorf("kpca: HᵀH: %w", err)
	}
	if !(ce.Values[s-1] > breakdownRatio*ce.Values[0]) {
		return nil, nil, fmt.Errorf("kpca: H lost rank (HᵀH eigenvalues %g … %g): %w", ce.Values[0], ce.Values[s-1], ErrBreakdown)
	}
	cInvSqrt := ce.Func(func(x float64) float64 { return 1 / math.Sqrt(x) })
	var mt mat.Dense
	linalg.Mul(&mt, cInvSqrt, m)
	linalg.Mul(&mt, &mt, cInvSqrt)
	me, err := linalg.SymEig(linalg.SymPart(&mt), 0)
	if err != nil {
		return nil, nil, fmt.Errorf("kpca: Ritz problem: %w", err)
	}
	theta := me.Values
	if !(theta[s-1] > breakdownRatio*math.Abs(theta[0])) {
		return nil, nil, &status.RankError{Matrix: "kpca: the kernel matrix (on span(H))", Rank: status.NumericalRank(theta, breakdownRatio), Asked: s}
	}
	// R = C^{-1/2} W Θ^{-1/2}: H·R = V Θ^{-1/2}.
	r := mat.NewDense(s, s, nil)
	linalg.Mul(r, cInvSqrt, me.Vectors)
	for j := 0; j < s; j++ {
		f := 1 / math.Sqrt(theta[j])
		for i := 0; i < s; i++ {
			r.Set(i, j, r.At(i, j)*f)
		}
	}
	return theta, r, nil
}

// setFromDual rotates a dual solution, given H and G·H, by its Ritz pairs
// (RitzFromDual): proj = H·R, scores = G·H·R.
func (k *KPCA) setFromDual(op eig.Operator, h, gh *mat.Dense) error {
	n, s := h.Dims()
	_, _, _, red := eig.Parts(op)
	theta, r, err := RitzFromDual(h, gh, red)
	if err != nil {
		return err
	}
	k.values = theta
	k.h = h
	k.proj = mat.NewDense(n, s, nil)
	linalg.Mul(k.proj, h, r)
	k.scores = mat.NewDense(n, s, nil)
	linalg.Mul(k.scores, gh, r)
	// Deterministic signs: fix by the projection columns, applied to both.
	flip, err := eig.SignFlips(k.proj, op)
	if err != nil {
		return err
	}
	for j, f := range flip {
		if f {
			for i := 0; i < n; i++ {
				k.proj.Set(i, j, -k.proj.At(i, j))
				k.scores.Set(i, j, -k.scores.At(i, j))
			}
		}
	}
	return nil
}
