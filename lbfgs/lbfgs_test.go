package lbfgs

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/status"
)

type rosenbrock struct{ calls int }

// Func is the extended Rosenbrock function, minimum 0 at (1, …, 1).
func (r *rosenbrock) Func(x, g []float64) float64 {
	r.calls++
	f := 0.0
	clear(g)
	for i := 0; i+1 < len(x); i += 2 {
		a, b := x[i], x[i+1]
		t1 := 1 - a
		t2 := 10 * (b - a*a)
		f += t1*t1 + t2*t2
		g[i] += -2*t1 - 40*a*t2
		g[i+1] += 20 * t2
	}
	return f
}

func TestRosenbrock(t *testing.T) {
	for _, n := range []int{2, 10, 100} {
		x0 := make([]float64, n)
		for i := range x0 {
			x0[i] = -1.2
			if i%2 == 1 {
				x0[i] = 1
			}
		}
		var r rosenbrock
		res, err := Minimize(&r, x0, Settings{})
		require.NoError(t, err)
		require.Equal(t, status.Status{Code: status.Converged, Test: TestGradient}, res.Status, res.Status.String())
		for _, v := range res.X {
			require.InDelta(t, 1, v, 1e-8)
		}
		require.Equal(t, -1.2, x0[0], "start not modified")
		require.Equal(t, r.calls, res.FuncEvals)
		require.Less(t, res.Iterations, 200)
		// The zero Settings are the documented defaults: the same run
		// as with them given.
		var r2 rosenbrock
		given, err := Minimize(&r2, x0, Settings{Memory: 10, MaxIter: 10000, GradTol: 1e-10, FuncTol: 1e-14, Window: 5, FTol: 1e-4, GTol: 0.9, MaxLineEvals: 30})
		require.NoError(t, err)
		require.Equal(t, res.X, given.X)
		require.Equal(t, res.Iterations, given.Iterations)
		require.Equal(t, res.Status, given.Status)
	}
}

// quadratic is f(x) = ½ xᵀAx − bᵀx with A = diag(a), as a LineProblem that
// counts its full evaluations.
type quadratic struct {
	a, b           []float64
	funcs, accepts int
	x, p           []float64
}

func (q *quadratic) Func(x, g []float64) float64 {
	q.funcs++
	f := 0.0
	for i := range x {
		g[i] = q.a[i]*x[i] - q.b[i]
		f += 0.5*q.a[i]*x[i]*x[i] - q.b[i]*x[i]
	}
	return f
}

func (q *quadratic) Direction(x, p []float64) { q.x, q.p = x, p }

// Line uses φ(α) = f(x) + α gᵀp + ½α² pᵀAp, computed from scratch here for
// simplicity; what matters is that it is not a Func call.
func (q *quadratic) Line(alpha float64) (float64, float64) {
	f, df := 0.0, 0.0
	for i := range q.x {
		v := q.x[i] + alpha*q.p[i]
		f += 0.5*q.a[i]*v*v - q.b[i]*v
		df += (q.a[i]*v - q.b[i]) * q.p[i]
	}
	return f, df
}

func (q *quadratic) Accept(alpha float64, xNew, g []float64) float64 {
	q.accepts++
	f := 0.0
	for i := range xNew {
		xNew[i] = q.x[i] + alpha*q.p[i]
		g[i] = q.a[i]*xNew[i] - q.b[i]
		f += 0.5*q.a[i]*xNew[i]*xNew[i] - q.b[i]*xNew[i]
	}
	return f
}

func TestLineProblemUsesOneFullEvaluation(t *testing.T) {
	n := 50
	q := &quadratic{a: make([]float64, n), b: make([]float64, n)}
	for i := range q.a {
		q.a[i] = math.Pow(1.1, float64(i)) // condition number ≈ 107
		q.b[i] = float64(i%5) - 2
	}
	res, err := Minimize(q, make([]float64, n), Settings{GradTol: 1e-9, FuncTol: -1})
	require.NoError(t, err)
	require.Equal(t, status.Status{Code: status.Converged, Test: TestGradient}, res.Status)
	for i := range res.X {
		require.InDelta(t, q.b[i]/q.a[i], res.X[i], 1e-8)
	}
	require.Equal(t, 1, q.funcs, "only the start is a full evaluation")
	require.Equal(t, res.Iterations, q.accepts)
	require.Equal(t, res.FuncEvals, q.funcs+q.accepts)
	require.GreaterOrEqual(t, res.LineEvals, res.Iterations)
}

func TestStopCallbackAndLimits(t *testing.T) {
	var r rosenbrock
	x0 := []float64{-1.2, 1}
	calls := 0
	res, err := Minimize(&r, x0, Settings{Stop: func(iter int, x []float64, f float64, g []float64) bool {
		calls++
		require.Equal(t, calls, iter)
		return f < 1
	}})
	require.ErrorIs(t, err, status.ErrStopped)
	require.Equal(t, status.Stopped, res.Status.Code)
	require.Less(t, res.F, 1.0)
	require.Equal(t, calls, res.Iterations)

	res, err = Minimize(&r, x0, Settings{MaxIter: 3})
	require.ErrorIs(t, err, status.ErrNotConverged)
	require.Equal(t, status.IterationLimit, res.Status.Code)
	require.Equal(t, 3, res.Iterations)

	res, err = Minimize(&r, x0, Settings{GradTol: -1, FuncTol: 1e-6, Window: 2})
	require.NoError(t, err)
	require.Equal(t, status.Status{Code: status.Converged, Test: TestFunction}, res.Status)

	// The relative gradient test, on a minimum far from the origin where
	// max(1, ‖x‖) and ‖x‖ differ by nothing but the name.
	res, err = Minimize(&r, x0, Settings{GradTol: 1e-9, RelativeGrad: true, FuncTol: -1})
	require.NoError(t, err)
	require.Equal(t, status.Status{Code: status.Converged, Test: TestRelGrad}, res.Status)
	require.LessOrEqual(t, res.GradNorm, 1e-9*math.Hypot(res.X[0], res.X[1]))
}

func TestBadStart(t *testing.T) {
	var r rosenbrock
	_, err := Minimize(&r, nil, Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Minimize(&r, []float64{math.NaN(), 1}, Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Minimize(&r, []float64{math.Inf(1), 1}, Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The line search on the test functions of Moré and Thuente's paper: every
// accepted step satisfies the strong Wolfe conditions.
func TestMoreThuenteWolfe(t *testing.T) {
	type fn struct {
		name       string
		f          lineFunc
		ftol, gtol float64
	}
	beta := 2.0
	funcs := []fn{
		{"−α/(α²+β)", func(a float64) (float64, float64) {
			return -a / (a*a + beta), (a*a - beta) / ((a*a + beta) * (a*a + beta))
		}, 1e-3, 0.1},
		{"(α+0.004)⁵ − 2(α+0.004)⁴", func(a float64) (float64, float64) {
			x := a + 0.004
			return math.Pow(x, 5) - 2*math.Pow(x, 4), 5*math.Pow(x, 4) - 8*math.Pow(x, 3)
		}, 0.1, 0.1},
		{"wiggly", func(a float64) (float64, float64) {
			const l, b = 39.0, 0.01
			phi0 := 2 * (1 - b) / (l * math.Pi) * math.Sin(l*math.Pi*a/2)
			dphi0 := (1 - b) * math.Cos(l*math.Pi*a/2)
			switch {
			case a <= 1-b:
				return phi0 + 1 - a, dphi0 - 1
			case a >= 1+b:
				return phi0 + a - 1, dphi0 + 1
			}
			return phi0 + (a-1)*(a-1)/(2*b) + b/2, dphi0 + (a-1)/b
		}, 0.1, 0.1},
	}
	for _, c := range funcs {
		for _, a0 := range []float64{1e-3, 1e-1, 1e1, 1e3} {
			p0, d0 := c.f(0)
			r := moreThuente(c.f, p0, d0, a0, c.ftol, c.gtol, 1e10, 50)
			require.True(t, r.ok, "%s from %g", c.name, a0)
			require.LessOrEqual(t, r.phi, p0+c.ftol*r.alpha*d0, "sufficient decrease")
			require.LessOrEqual(t, math.Abs(r.dphi), c.gtol*math.Abs(d0)+1e-15, "curvature")
		}
	}
}

// flatTop is 1e8 + Σ x_i⁴ with a gradient that carries an error of 1e-7
// pointing away from 0 (as a gradient computed with cancellation does):
// ‖∇f‖ never falls below 1e-7, and near the minimum f is flat to rounding
// (ε·1e8 ≈ 1e-8), so the run must end by the rounding test, not claim the
// gradient test.
type flatTop struct{}

func (flatTop) Func(x, g []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * v * v * v
		g[i] = 4*v*v*v + math.Copysign(1e-7, v)
	}
	return s + 1e8
}

func TestRoundingTestWhenFIsFlat(t *testing.T) {
	res, err := Minimize(flatTop{}, []float64{3, -4, 5}, Settings{GradTol: 1e-12, FuncTol: -1})
	require.NoError(t, err)
	require.Equal(t, status.Converged, res.Status.Code)
	require.Equal(t, TestRounding, res.Status.Test)
	require.Greater(t, res.GradNorm, 1e-12, "the gradient test cannot have passed")
	for _, v := range res.X {
		require.Less(t, math.Abs(v), 0.05, "f is flat to rounding only near the minimum")
	}
}

// sumSquares is f(x) = ‖x‖² with its exact gradient.
type sumSquares struct{}

func (sumSquares) Func(x, g []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * v
		g[i] = 2 * v
	}
	return s
}

// A steepest-descent line search that fails although its trial lowered f
// by far more than rounding (here: a sufficient-decrease constant so
// strict, with one trial allowed, that the unit step cannot pass) is a
// breakdown, not the rounding test's convergence.
func TestFailedSearchWithDecreaseIsBreakdown(t *testing.T) {
	res, err := Minimize(sumSquares{}, []float64{100}, Settings{FTol: 0.999, GTol: 0.9999, MaxLineEvals: 1, GradTol: 1e-12, FuncTol: -1})
	require.ErrorIs(t, err, status.ErrBreakdown)
	require.Equal(t, status.Breakdown, res.Status.Code)
}

// partSums is an in-process stand-in for a reduction across processes: the
// parts run in goroutines, each Sum waits for every part and returns the
// sum taken in part order, the same bits to every part. Parts that stop
// calling Sum in step (a minimiser that skips a reduction) make the others
// wait: after 2 s the waiting part gets an error instead of hanging, and
// from then on every Sum fails at once.
type partSums struct {
	mu      sync.Mutex
	parts   int
	arrived int
	in      [][]float64
	cur     *sumRound
	broken  bool
}

// sumRound is one reduction: closed when every part has given its values.
type sumRound struct {
	done chan struct{}
	out  []float64
}

func newPartSums(parts int) *partSums {
	return &partSums{parts: parts, in: make([][]float64, parts), cur: &sumRound{done: make(chan struct{})}}
}

func (p *partSums) sum(part int) func([]float64) error {
	return func(x []float64) error {
		errStep := errors.New("the parts fell out of step: a part waited 2 s for the others' reduction")
		p.mu.Lock()
		if p.broken {
			p.mu.Unlock()
			return errStep
		}
		round := p.cur
		p.in[part] = append([]float64(nil), x...)
		p.arrived++
		if p.arrived == p.parts {
			round.out = make([]float64, len(x))
			for _, v := range p.in {
				for i := range round.out {
					round.out[i] += v[i]
				}
			}
			p.arrived = 0
			p.cur = &sumRound{done: make(chan struct{})}
			close(round.done)
		}
		p.mu.Unlock()
		select {
		case <-round.done:
		case <-time.After(2 * time.Second):
			p.mu.Lock()
			p.broken = true
			p.mu.Unlock()
			return errStep
		}
		copy(x, round.out)
		return nil
	}
}

// rosenbrockPart is the extended Rosenbrock function on a vector split in
// parts (at even indices): each part's value is reduced to the global f.
type rosenbrockPart struct {
	rosenbrock
	sum func([]float64) error
}

func (r *rosenbrockPart) Func(x, g []float64) float64 {
	f := []float64{r.rosenbrock.Func(x, g)}
	if err := r.sum(f); err != nil {
		return math.NaN()
	}
	return f[0]
}

// With Sum, parts of a vector minimised in step (each holding its rows)
// reach the minimum the whole vector reaches, taking the same steps on
// every part.
func TestSumSplitsTheVector(t *testing.T) {
	const n = 100
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = -1.2
		if i%2 == 1 {
			x0[i] = 1
		}
	}
	var whole rosenbrock
	ref, err := Minimize(&whole, x0, Settings{})
	require.NoError(t, err)
	for _, bounds := range [][]int{{0, 50, 100}, {0, 34, 68, 100}} {
		parts := len(bounds) - 1
		ps := newPartSums(parts)
		results := make([]*Result, parts)
		errs := make([]error, parts)
		var wg sync.WaitGroup
		for p := 0; p < parts; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prob := &rosenbrockPart{sum: ps.sum(p)}
				results[p], errs[p] = Minimize(prob, x0[bounds[p]:bounds[p+1]], Settings{Sum: ps.sum(p)})
			}()
		}
		wg.Wait()
		for p := 0; p < parts; p++ {
			require.NoError(t, errs[p])
			require.Equal(t, results[0].Iterations, results[p].Iterations, "parts took different steps")
			require.Equal(t, results[0].F, results[p].F)
			require.Equal(t, results[0].GradNorm, results[p].GradNorm)
			for i, v := range results[p].X {
				require.InDelta(t, ref.X[bounds[p]+i], v, 1e-8)
			}
		}
		require.InDelta(t, ref.Iterations, results[0].Iterations, 3, "parts: %d iterations, whole: %d", results[0].Iterations, ref.Iterations)
	}
}

// An error of the reduction ends the run with it.
func TestSumErrorEndsRun(t *testing.T) {
	boom := errors.New("rank 1 is gone")
	calls := 0
	sum := func([]float64) error {
		calls++
		if calls > 3 {
			return boom
		}
		return nil
	}
	_, err := Minimize(&rosenbrock{}, []float64{-1.2, 1, -1.2, 1}, Settings{Sum: sum})
	require.ErrorIs(t, err, boom)
}

// The line search against Moré and Thuente's own results (ACM TOMS 20,
// 1994, Tables I–VI): for their six test functions and starts α₀ = 10⁻³,
// 10⁻¹, 10, 10³, the same number of evaluations and the same step (to the
// two digits the tables give), with the strong Wolfe conditions met.
func TestMoreThuenteTables(t *testing.T) {
	phi1 := func(a float64) (float64, float64) { // (5.1), β = 2
		return -a / (a*a + 2), (a*a - 2) / ((a*a + 2) * (a*a + 2))
	}
	phi2 := func(a float64) (float64, float64) { // (5.2), β = 0.004
		b := a + 0.004
		return math.Pow(b, 5) - 2*math.Pow(b, 4), 5*math.Pow(b, 4) - 8*math.Pow(b, 3)
	}
	phi3 := func(a float64) (float64, float64) { // (5.3), β = 0.01, l = 39
		const b, l = 0.01, 39.0
		var p, dp float64
		switch {
		case a <= 1-b:
			p, dp = 1-a, -1
		case a >= 1+b:
			p, dp = a-1, 1
		default:
			p, dp = (a-1)*(a-1)/(2*b)+b/2, (a-1)/b
		}
		return p + 2*(1-b)/(l*math.Pi)*math.Sin(l*math.Pi/2*a), dp + (1-b)*math.Cos(l*math.Pi/2*a)
	}
	yanai := func(b1, b2 float64) lineFunc { // (5.4)–(5.6)
		g := func(b float64) float64 { return math.Sqrt(1+b*b) - b }
		return func(a float64) (float64, float64) {
			s1, s2 := math.Sqrt((1-a)*(1-a)+b2*b2), math.Sqrt(a*a+b1*b1)
			return g(b1)*s1 + g(b2)*s2, -g(b1)*(1-a)/s1 + g(b2)*a/s2
		}
	}
	for _, c := range []struct {
		table    string
		f        lineFunc
		mu, eta  float64
		evals    [4]int
		stepsTwo [4]float64 // the step to two significant digits
	}{
		{"I", phi1, 1e-3, 0.1, [4]int{6, 3, 1, 4}, [4]float64{1.4, 1.4, 10, 37}},
		{"II", phi2, 0.1, 0.1, [4]int{12, 8, 8, 11}, [4]float64{1.6, 1.6, 1.6, 1.6}},
		{"III", phi3, 0.1, 0.1, [4]int{12, 12, 10, 13}, [4]float64{1.0, 1.0, 1.0, 1.0}},
		{"IV", yanai(0.001, 0.001), 0.001, 0.001, [4]int{4, 1, 3, 4}, [4]float64{0.085, 0.10, 0.35, 0.83}},
		{"V", yanai(0.01, 0.001), 0.001, 0.001, [4]int{6, 3, 7, 8}, [4]float64{0.075, 0.078, 0.073, 0.076}},
		{"VI", yanai(0.001, 0.01), 0.001, 0.001, [4]int{13, 11, 8, 11}, [4]float64{0.93, 0.93, 0.92, 0.92}},
	} {
		p0, g0 := c.f(0)
		for i, a0 := range []float64{1e-3, 1e-1, 1e1, 1e3} {
			r := moreThuente(c.f, p0, g0, a0, c.mu, c.eta, 1e20, 100)
			require.True(t, r.ok, "table %s, α₀ = %g", c.table, a0)
			require.Equal(t, c.evals[i], r.evals, "table %s, α₀ = %g: evaluations", c.table, a0)
			digits := math.Pow(10, math.Floor(math.Log10(c.stepsTwo[i]))-1)
			require.InDelta(t, c.stepsTwo[i], math.Round(r.alpha/digits)*digits, 1e-12, "table %s, α₀ = %g: step %g", c.table, a0, r.alpha)
			require.LessOrEqual(t, r.phi, p0+c.mu*r.alpha*g0, "sufficient decrease")
			require.LessOrEqual(t, math.Abs(r.dphi), c.eta*math.Abs(g0), "curvature")
		}
	}
}

// A step into a region where φ is undefined (NaN past α = 2 here) is
// halved back towards the last good step, and the search still ends at a
// strong Wolfe point inside the defined region.
func TestLineSearchBacksOffFromNaN(t *testing.T) {
	f := func(a float64) (float64, float64) {
		if a > 2 {
			return math.NaN(), math.NaN()
		}
		return (a - 1.9) * (a - 1.9), 2 * (a - 1.9)
	}
	p0, g0 := f(0)
	// From α₀ = 0.1, 0.3, 0.45 the extrapolation leaves the region after a
	// good step, from which the halving starts.
	for _, a0 := range []float64{0.1, 0.3, 0.45, 3, 10, 1000} {
		r := moreThuente(f, p0, g0, a0, 1e-3, 0.1, 1e20, 30)
		require.True(t, r.ok, "α₀ = %g", a0)
		require.LessOrEqual(t, r.alpha, 2.0)
		require.Greater(t, r.alpha, 0.0)
		require.LessOrEqual(t, math.Abs(r.dphi), 0.1*math.Abs(g0))
	}
}

// Every step is along the two-loop recursion's direction −H_k·g_k, with H_k
// built from the last Memory pairs (s_i, y_i) and H⁰ = (sᵀy/yᵀy)·I of the
// newest pair — recomputed here from the iterates the Stop callback sees,
// on Rosenbrock in 6 dimensions with memories 1, 3 and 10.
func TestTwoLoopDirection(t *testing.T) {
	for _, mem := range []int{1, 3, 10} {
		x0 := []float64{-1.2, 1, -1.2, 1, -1.2, 1}
		var xs, gs [][]float64
		var r rosenbrock
		g0 := make([]float64, len(x0))
		r.Func(x0, g0)
		xs, gs = append(xs, append([]float64(nil), x0...)), append(gs, g0)
		_, err := Minimize(&rosenbrock{}, x0, Settings{Memory: mem, Stop: func(_ int, x []float64, _ float64, g []float64) bool {
			xs, gs = append(xs, append([]float64(nil), x...)), append(gs, append([]float64(nil), g...))
			return len(xs) > 25
		}})
		require.ErrorIs(t, err, status.ErrStopped)
		sub := func(a, b []float64) []float64 {
			out := make([]float64, len(a))
			for i := range a {
				out[i] = a[i] - b[i]
			}
			return out
		}
		dot := func(a, b []float64) float64 {
			s := 0.0
			for i := range a {
				s += a[i] * b[i]
			}
			return s
		}
		checked := 0
		for k := 1; k+1 < len(xs); k++ {
			// Pairs from the steps before step k (all of them accepted with
			// sᵀy > 0 on this run, so none was skipped).
			lo := max(0, k-mem)
			var ss, ys [][]float64
			for i := lo; i < k; i++ {
				ss, ys = append(ss, sub(xs[i+1], xs[i])), append(ys, sub(gs[i+1], gs[i]))
			}
			q := append([]float64(nil), gs[k]...)
			alpha := make([]float64, len(ss))
			for i := len(ss) - 1; i >= 0; i-- {
				alpha[i] = dot(ss[i], q) / dot(ys[i], ss[i])
				for j := range q {
					q[j] -= alpha[i] * ys[i][j]
				}
			}
			last := len(ss) - 1
			gamma := dot(ss[last], ys[last]) / dot(ys[last], ys[last])
			for j := range q {
				q[j] *= gamma
			}
			for i := range ss {
				beta := dot(ys[i], q) / dot(ys[i], ss[i])
				for j := range q {
					q[j] += (alpha[i] - beta) * ss[i][j]
				}
			}
			step := sub(xs[k+1], xs[k])
			cos := -dot(step, q) / math.Sqrt(dot(step, step)*dot(q, q))
			require.InDelta(t, 1, cos, 1e-9, "memory %d, step %d: not along −H·g", mem, k)
			checked++
		}
		require.Greater(t, checked, 10)
	}
}

// cliff is f = c at x₀ and c − δ anywhere else, with a constant gradient:
// no step can meet the curvature condition, so every search fails, and the
// best trial lowered f by exactly δ.
type cliff struct {
	x0    []float64
	c, dt float64
}

func (s cliff) Func(x, g []float64) float64 {
	for i := range g {
		g[i] = 1
	}
	for i, v := range x {
		if v != s.x0[i] {
			return s.c - s.dt
		}
	}
	return s.c
}

// The rounding test's bound is 8ε|f| (ε = 2⁻⁵³): a failed steepest-descent
// search whose best trial lowered f = 1500 by 6 ulps (8ε|f| = 5.9 ulps
// rounds to 6) ends as rounding (converged), by 7 ulps (9.6ε|f|) as a
// breakdown.
func TestRoundingBoundIs8Epsilon(t *testing.T) {
	x0 := []float64{1, 2}
	const c = 1500.0
	ulp := math.Nextafter(c, 2*c) - c
	for _, cs := range []struct {
		ulps float64
		code status.Code
	}{{6, status.Converged}, {7, status.Breakdown}} {
		res, _ := Minimize(cliff{x0: x0, c: c, dt: cs.ulps * ulp}, x0, Settings{GradTol: 1e-300, FuncTol: -1, MaxLineEvals: 4})
		require.Equal(t, cs.code, res.Status.Code, "%g ulps: %v", cs.ulps, res.Status)
	}
}

// wall is finite only at its start: every trial step leaves its domain
// (+Inf), whatever its length.
type wall struct{ x0 []float64 }

func (w wall) Func(x, g []float64) float64 {
	for i := range g {
		g[i] = 1
	}
	for i, v := range x {
		if v != w.x0[i] {
			return math.Inf(1)
		}
	}
	return 3
}

// A failed search whose trials were all outside f's domain proves nothing
// about rounding: a breakdown, not convergence.
func TestAllTrialsOutsideDomainIsBreakdown(t *testing.T) {
	x0 := []float64{1, 2}
	res, err := Minimize(wall{x0: x0}, x0, Settings{GradTol: 1e-300, FuncTol: -1, MaxLineEvals: 6})
	require.Error(t, err)
	require.Equal(t, status.Breakdown, res.Status.Code, "%v", res.Status)
}
