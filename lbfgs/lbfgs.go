package lbfgs

import (
	"fmt"
	"math"
	"time"

	"github.com/kdual/kdual/status"
)

// Problem is a smooth function on Rⁿ.
type Problem interface {
	// Func returns f(x) and stores ∇f(x) in grad (len(grad) = len(x)).
	Func(x, grad []float64) float64
}

// LineProblem is a Problem that can also be evaluated cheaply along a
// search direction. In each iteration the minimiser calls Direction once,
// then Line for every trial step, then Accept once for the chosen step.
type LineProblem interface {
	Problem
	// Direction prepares evaluations along x + α·p; x is the current
	// iterate, whose value and gradient came from the last Func or Accept.
	Direction(x, p []float64)
	// Line returns φ(α) = f(x + αp) and φ'(α) = ∇f(x + αp)ᵀp.
	Line(alpha float64) (phi, dphi float64)
	// Accept moves to x + αp: it stores that point in xNew and its gradient
	// in grad and returns its value.
	Accept(alpha float64, xNew, grad []float64) float64
}

// How a run ends (Result.Status, a status.Status):
//   - status.Converged with Test TestGradient: ‖∇f‖ ≤ GradTol·max(1, ‖x‖),
//     or ‖∇f‖ ≤ GradTol·‖x‖ with RelativeGrad;
//   - status.Converged with Test TestFunction: the decrease of f over the
//     last Window iterations is at most FuncTol·|f|;
//   - status.Stopped: the Stop callback returned true;
//   - status.IterationLimit: MaxIter iterations were done first;
//   - status.Converged with Test TestRounding: no step satisfying the Wolfe
//     conditions was found along the steepest-descent direction, and no
//     step the line search tried lowered f by more than 8ε|f|: f cannot be
//     decreased further in floating point (GradNorm says how small the
//     gradient got);
//   - status.Breakdown: the steepest-descent line search failed although
//     some trial step lowered f by more than rounding.
//
// Minimize returns its result with Status.Err(): nil only for Converged.
const (
	TestGradient = "gradient: ‖∇f‖ ≤ GradTol·max(1, ‖x‖)"
	TestRelGrad  = "gradient: ‖∇f‖ ≤ GradTol·‖x‖"
	TestFunction = "function: f_{k−w} − f_k ≤ FuncTol·|f_k| over the last w = Window iterations"
	TestRounding = "rounding: no trial step along −∇f lowered f by more than 8ε|f|"
)

// Settings configure Minimize. The zero value is ready; defaults are on the
// fields.
type Settings struct {
	// Memory is the history m; 0 means 10.
	Memory int
	// MaxIter bounds the iterations; 0 means 10 000.
	MaxIter int
	// GradTol: stop when ‖∇f‖ ≤ GradTol·max(1, ‖x‖); 0 means 1e-10, a
	// negative value disables the test.
	GradTol float64
	// RelativeGrad makes the gradient test ‖∇f‖ ≤ GradTol·‖x‖ (for
	// problems whose scale makes max(1, ‖x‖) the wrong yardstick).
	RelativeGrad bool
	// FuncTol and Window: stop when (f_{k−w} − f_k) ≤ FuncTol·|f_k| over
	// the last w = Window iterations; FuncTol 0 means 1e-14 (negative
	// disables), Window 0 means 5.
	FuncTol float64
	Window  int
	// FTol and GTol are the Wolfe parameters; 0 means 1e-4 and 0.9.
	FTol, GTol float64
	// MaxLineEvals bounds the trials of one line search; 0 means 30.
	MaxLineEvals int
	// Stop, when non-nil, is called after every iteration with the
	// iteration count, the point, its value and its gradient; returning
	// true ends the run with status.Stopped. It must not keep the slices.
	Stop func(iter int, x []float64, f float64, grad []float64) bool
	// Sum, when non-nil, makes x a part of a vector split across
	// processes (by rows, say): every inner product and norm is formed on
	// the part and passed to Sum, which must replace each value by its sum
	// over the parts and give every part the same bits (kdual's MPI
	// reduction does). The problem's Func, Line and Accept must then return
	// the global f and φ on every part. An error from Sum ends the run with
	// it.
	Sum func(x []float64) error
}

// Result is the outcome of Minimize.
type Result struct {
	X        []float64
	F        float64
	GradNorm float64
	// Stats: Iterations, Evaluations (= FuncEvals) and Seconds; Passes
	// and MatVecs are the problem's to count (kpca counts passes over G).
	status.Stats
	// FuncEvals counts Func and Accept calls; LineEvals counts Line calls
	// (for a plain Problem every trial is a Func call and is counted in
	// both).
	FuncEvals, LineEvals int
	// FailedSearches counts line searches that found no acceptable step:
	// each is retried once along the steepest-descent direction with the
	// memory cleared, and a failure there ends the run. Each failed search
	// made one Direction call that no iteration accounts for.
	FailedSearches int
	Status         status.Status
}

// Minimize minimises p from x0 (not modified).
func Minimize(p Problem, x0 []float64, s Settings) (*Result, error) {
	start := time.Now()
	n := len(x0)
	if err := checkStart(x0); err != nil {
		return nil, err
	}
	s.defaults()
	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	d := make([]float64, n)
	xNew := make([]float64, n)
	gNew := make([]float64, n)
	mem := newMemory(s.Memory, n)
	fHist := make([]float64, 0, s.Window+1)
	red := &reducer{sum: s.Sum}
	dot, norm := red.dot, red.norm
	lp, ok := p.(LineProblem)
	if !ok {
		lp = &plainLine{p: p, dot: dot, xt: make([]float64, n), gt: make([]float64, n)}
	}
	res := &Result{}
	f := p.Func(x, g)
	res.FuncEvals++
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("lbfgs: f(x0) = %g: %w", f, status.ErrInvalid)
	}
	fHist = append(fHist, f)
	gradTest, gradScale := TestGradient, func(x []float64) float64 { return math.Max(1, norm(x)) }
	if s.RelativeGrad {
		gradTest, gradScale = TestRelGrad, norm
	}
	finish := func(st status.Status) (*Result, error) {
		res.X, res.F, res.GradNorm, res.Status = x, f, norm(g), st
		res.Evaluations, res.Seconds = res.FuncEvals, time.Since(start).Seconds()
		return res, st.Err()
	}
	for iter := 0; ; iter++ {
		res.Iterations = iter
		gn := norm(g)
		if red.err != nil {
			return red.failed()
		}
		if s.GradTol > 0 && gn <= s.GradTol*gradScale(x) {
			return finish(status.Status{Code: status.Converged, Test: gradTest})
		}
		if iter >= s.MaxIter {
			return finish(status.Status{Code: status.IterationLimit, Test: gradTest,
				Detail: fmt.Sprintf("%d iterations, ‖∇f‖ = %.3g", iter, gn)})
		}
		dg, alpha0 := mem.direction(d, g, dot, norm)
		if red.err != nil {
			return red.failed()
		}
		lp.Direction(x, d)
		ls := moreThuente(func(a float64) (float64, float64) { return lp.Line(a) },
			f, dg, alpha0, s.FTol, s.GTol, 1e20, s.MaxLineEvals)
		res.LineEvals += ls.evals
		if _, plain := lp.(*plainLine); plain {
			res.FuncEvals += ls.evals
		}
		if ls.alpha == 0 || !(ls.phi < f || ls.ok) {
			res.FailedSearches++
			if mem.hist > 0 {
				// Retry once along steepest descent with the memory cleared.
				mem.hist, mem.head = 0, 0
				iter--
				continue
			}
			// (Trials that all left f's domain, +Inf, say nothing about
			// rounding: that is a breakdown.)
			if !math.IsInf(ls.minPhi, 1) && ls.minPhi >= f-8*epsilon*math.Abs(f) {
				return finish(status.Status{Code: status.Converged, Test: TestRounding,
					Detail: fmt.Sprintf("‖∇f‖ = %.3g", norm(g))})
			}
			return finish(status.Status{Code: status.Breakdown,
				Detail: fmt.Sprintf("line search found no Wolfe step along steepest descent, ‖∇f‖ = %.3g", norm(g))})
		}
		fNew := lp.Accept(ls.alpha, xNew, gNew)
		res.FuncEvals++
		mem.push(x, xNew, g, gNew, dot)
		if red.err != nil {
			return red.failed()
		}
		copy(x, xNew)
		copy(g, gNew)
		f = fNew
		res.Iterations = iter + 1
		if s.Stop != nil && s.Stop(iter+1, x, f, g) {
			return finish(status.Status{Code: status.Stopped, Detail: "the Stop callback returned true"})
		}
		fHist = append(fHist, f)
		if len(fHist) > s.Window+1 {
			fHist = fHist[1:]
		}
		if s.FuncTol > 0 && len(fHist) == s.Window+1 && fHist[0]-f <= s.FuncTol*math.Abs(f) {
			return finish(status.Status{Code: status.Converged, Test: TestFunction})
		}
	}
}

// checkStart refuses an empty or non-finite start.
func checkStart(x0 []float64) error {
	if len(x0) == 0 {
		return fmt.Errorf("lbfgs: empty start: %w", status.ErrInvalid)
	}
	for _, v := range x0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lbfgs: start is not finite: %w", status.ErrInvalid)
		}
	}
	return nil
}

// reducer computes global inner products and norms: local sums reduced by
// sum (Settings.Sum; nil: none). The first error of the reduction is kept
// (err) and ends the run; the products are then NaN.
type reducer struct {
	sum func([]float64) error
	err error
}

func (r *reducer) dot(a, b []float64) float64 {
	v := []float64{dotLocal(a, b)}
	if r.sum != nil && r.err == nil {
		r.err = r.sum(v)
	}
	if r.err != nil {
		return math.NaN()
	}
	return v[0]
}

func (r *reducer) norm(x []float64) float64 { return math.Sqrt(r.dot(x, x)) }

func (r *reducer) failed() (*Result, error) {
	return nil, fmt.Errorf("lbfgs: reducing over the parts: %w", r.err)
}

// memory is the L-BFGS history: the last m curvature pairs (s, y) with
// ρ = 1/sᵀy, in a ring (hist pairs stored, head the next slot).
type memory struct {
	s, y       [][]float64
	rho, alpha []float64
	hist, head int
}

func newMemory(m, n int) *memory {
	mem := &memory{s: make([][]float64, m), y: make([][]float64, m), rho: make([]float64, m), alpha: make([]float64, m)}
	for i := range mem.s {
		mem.s[i] = make([]float64, n)
		mem.y[i] = make([]float64, n)
	}
	return mem
}

// direction sets d = −H·g by the two-loop recursion (H₀ = γI with
// γ = sᵀy/yᵀy of the newest pair) and returns dᵀg and the first trial
// step; without pairs, or when d is not a descent direction, it clears the
// memory and takes steepest descent with a unit first step in x.
func (mem *memory) direction(d, g []float64, dot func(a, b []float64) float64, norm func([]float64) float64) (dg, alpha0 float64) {
	m := len(mem.s)
	copy(d, g)
	for k := 0; k < mem.hist; k++ {
		i := (mem.head - 1 - k + m) % m
		mem.alpha[i] = mem.rho[i] * dot(mem.s[i], d)
		axpy(-mem.alpha[i], mem.y[i], d)
	}
	gamma := 1.0
	if mem.hist > 0 {
		i := (mem.head - 1 + m) % m
		gamma = dot(mem.s[i], mem.y[i]) / dot(mem.y[i], mem.y[i])
	}
	scale(gamma, d)
	for k := mem.hist - 1; k >= 0; k-- {
		i := (mem.head - 1 - k + m) % m
		beta := mem.rho[i] * dot(mem.y[i], d)
		axpy(mem.alpha[i]-beta, mem.s[i], d)
	}
	scale(-1, d)
	dg = dot(d, g)
	alpha0 = 1.0
	if mem.hist == 0 || !(dg < 0) {
		mem.hist, mem.head = 0, 0
		copy(d, g)
		scale(-1, d)
		dg = dot(d, g)
		alpha0 = 1 / math.Max(norm(d), 1e-300)
	}
	return dg, alpha0
}

// push stores the curvature pair s = x_new − x, y = g_new − g, skipped
// when sᵀy ≤ 0 (H would not stay positive definite).
func (mem *memory) push(x, xNew, g, gNew []float64, dot func(a, b []float64) float64) {
	sv, yv := mem.s[mem.head], mem.y[mem.head]
	for i := range sv {
		sv[i] = xNew[i] - x[i]
		yv[i] = gNew[i] - g[i]
	}
	if sy := dot(sv, yv); sy > 0 {
		mem.rho[mem.head] = 1 / sy
		mem.head = (mem.head + 1) % len(mem.s)
		mem.hist = min(mem.hist+1, len(mem.s))
	}
}

func (s *Settings) defaults() {
	if s.Memory <= 0 {
		s.Memory = 10
	}
	if s.MaxIter <= 0 {
		s.MaxIter = 10000
	}
	if s.GradTol == 0 {
		s.GradTol = 1e-10
	}
	if s.FuncTol == 0 {
		s.FuncTol = 1e-14
	}
	if s.Window <= 0 {
		s.Window = 5
	}
	if s.FTol <= 0 {
		s.FTol = 1e-4
	}
	if s.GTol <= 0 {
		s.GTol = 0.9
	}
	if s.MaxLineEvals <= 0 {
		s.MaxLineEvals = 30
	}
}

// plainLine evaluates a plain Problem along a line by full evaluations.
type plainLine struct {
	p      Problem
	dot    func(a, b []float64) float64
	x, dir []float64
	xt, gt []float64
}

func (l *plainLine) Func(x, grad []float64) float64 { return l.p.Func(x, grad) }

func (l *plainLine) Direction(x, p []float64) { l.x, l.dir = x, p }

func (l *plainLine) Line(alpha float64) (float64, float64) {
	for i := range l.xt {
		l.xt[i] = l.x[i] + alpha*l.dir[i]
	}
	f := l.p.Func(l.xt, l.gt)
	return f, l.dot(l.gt, l.dir)
}

func (l *plainLine) Accept(alpha float64, xNew, grad []float64) float64 {
	for i := range xNew {
		xNew[i] = l.x[i] + alpha*l.dir[i]
	}
	return l.p.Func(xNew, grad)
}

func dotLocal(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scale(alpha float64, x []float64) {
	for i := range x {
		x[i] *= alpha
	}
}

// epsilon is the unit round-off of float64, 2⁻⁵³.
const epsilon = 0x1p-53
