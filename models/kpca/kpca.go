package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/lbfgs"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Error kinds.
var (
	ErrNotFitted    = fmt.Errorf("kpca: %w", status.ErrNotFitted)
	ErrBreakdown    = eig.ErrBreakdown
	ErrNotConverged = eig.ErrNotConverged
)

// Start is the starting point of the dual solvers.
type Start int

const (
	// StartNormal is H₀ with standard normal entries (the paper's).
	StartNormal Start = iota
	// StartSketch is H₀ = c·GΩ for a standard normal Ω, with c minimising
	// d(c·GΩ); it costs one extra pass over G.
	StartSketch
)

// KPCA is kernel PCA. The zero value with Components set is usable.
type KPCA struct {
	// Components is s, 1 ≤ s < n.
	Components int
	// Kernel for Fit and Transform; the zero value is linear.
	Kernel kernel.Kernel
	// NoCenter leaves G uncentred (the papers' benchmark code does not
	// centre); by default G is centred.
	NoCenter bool
	// Solver and its options: Eigen{eig.Lanczos{Tol: …}}, LBFGS{…} or
	// DCA{…}; nil means Eigen{} (eig.Auto with the planner's pairing).
	Solver Solver
	// FitInverse fits the pre-image map for InverseTransform; Alpha is its
	// ridge (0 means 1.0, scikit-learn's default).
	FitInverse bool
	Alpha      float64
	// Operator chooses how G is stored and applied by Fit: OperatorAuto
	// (the default) lets eig.PlanOperator choose from n, d, s, Tol and
	// MemoryBudget (float64 when it fits; float32 half storage when the
	// accuracy allows; matrix-free otherwise); Info says what it chose
	// and why.
	Operator eig.OperatorKind
	// MemoryBudget in bytes for the planner; 0 means eig.DefaultBudget. A
	// forced Operator that does not fit it is refused before any large
	// allocation.
	MemoryBudget int64
	// Products is the arithmetic of the kernel's inner products for the
	// float32 and matrix-free operators (float64 by default; float32 runs
	// at about twice the rate, each entry within package gram's stated bound,
	// and CheckResiduals measures the result against the float64 kernel);
	// with float32 products the float32 operator also multiplies blocks of
	// more than six columns in float32 arithmetic (gram.SymTiles32's
	// SingleBlocks, within gram.BlockRel per entry).
	Products gram.ProductPrecision
	// Float32 is the former switch for float32 storage; it means
	// Operator = eig.OperatorFloat32.
	Float32 bool
	// Approx, when not nil, replaces the kernel by a low-rank feature map
	// of it: approx.Nystrom{Rank: m} (landmarks by randomly pivoted
	// Cholesky, or uniform) or approx.RFF{Features: m} (Gaussian kernel):
	// memory O(n·m), never n×n, and Info().Approx says how far K̂ is from
	// K. Transform maps new points through the same features; pre-images
	// (FitInverse) and FitGram are not available then, and Operator,
	// MemoryBudget and Products (the exact operator's settings) do not
	// apply.
	Approx approx.Method
	// Progress, when not nil, is called from the fitting goroutine as the
	// fit advances: while the kernel is built (Stage "kernel", Done and
	// Total in kernel entries) and after every pass of the solver (Stage
	// "solve", Done the passes so far, Total 0).
	Progress func(Progress)

	fitted bool
	n      int
	x      *mat.Dense       // training data (for Transform and pre-images)
	center linalg.Centering // kernel statistics (when centred)

	values []float64  // eigenvalues λ_i of G, decreasing
	h      *mat.Dense // n×s dual variable
	proj   *mat.Dense // n×s, scores z = k_cᵀ·proj
	scores *mat.Dense // n×s training scores
	info   Info

	inverse *preimage
	approx  *approxState // approximate models

	// The configuration the fit used, copied at Fit so that later changes
	// of the exported fields cannot disagree with the fitted state.
	fitKernel kernel.Kernel
	fitCenter bool
	fitAlpha  float64
	// distributed: fitted by FitOperator on a distributed operator (the
	// scores and dual are this part's rows).
	distributed bool
}

// Progress is how far a fit is (see KPCA.Progress).
type Progress struct {
	Stage       string
	Done, Total int64
}

// Info reports how the fit went (its JSON keys are snake_case).
type Info struct {
	// Solver is the solver that ran (dense, lanczos, block, randomized,
	// lbfgs, dca): for auto, the one it chose, and SolverReason why.
	Solver       string `json:"solver"`
	SolverReason string `json:"solver_reason,omitempty"`
	Iterations   int    `json:"iterations"`
	// Passes over G (Apply calls). For lbfgs: one per iteration, one for
	// the start (two for StartSketch) and one per failed line search.
	Passes         int     `json:"passes"`
	FailedSearches int     `json:"failed_searches"`
	Cost           float64 `json:"cost"`
	// Status is how the solver ended (status.Converged with the stopping
	// test it passed, FixedSchedule for a randomized solve without Tol, …).
	Status status.Status `json:"status"`
	// Operator is how G was stored ("float64", "float32", "matrix-free",
	// or "precomputed" for FitGram) and PlanReason why.
	Operator   string `json:"operator"`
	PlanReason string `json:"plan_reason"`
	// KernelSeconds builds the operator (Gram matrix, centring
	// statistics); SolveSeconds runs the solver.
	KernelSeconds float64 `json:"kernel_seconds"`
	SolveSeconds  float64 `json:"solve_seconds"`
	// Approx describes the approximation of an approximate model (nil
	// for an exact one).
	Approx *approx.Info `json:"approx,omitempty"`
}

// Fit computes the kernel operator of x (n×d) and fits it. x is not
// modified (a copy is kept for Transform).
func (k *KPCA) Fit(x mat.Matrix) error { return k.FitContext(context.Background(), x) }

// FitContext is Fit that stops when ctx ends: within one panel of the
// kernel build or of a matrix-free pass, or one solver pass (one iteration
// of lbfgs and dca). The error then wraps status.ErrStopped and ctx's
// cause (context.Canceled, context.DeadlineExceeded), Info().Status is
// status.Stopped, and the model is kept as a partial fit (Fitted() true)
// where the solver has one: lbfgs and dca stopped between iterations keep
// their last iterate; an eigensolver stopped in its Krylov phase, or any
// solver stopped during the kernel build, leaves the model unfitted.
func (k *KPCA) FitContext(ctx context.Context, xm mat.Matrix) error {
	k.fitted, k.distributed = false, false
	k.info = Info{}
	x := linalg.DenseOf(xm)
	if x == nil || x.IsEmpty() {
		return fmt.Errorf("kpca: Fit: empty data: %w", status.ErrInvalid)
	}
	n, d := x.Dims()
	s := k.Components
	if s < 1 || s >= n {
		return fmt.Errorf("kpca: Components = %d, need 1 ≤ s < n = %d: %w", s, n, status.ErrInvalid)
	}
	if err := k.checkIndefinite(); err != nil {
		return err
	}
	k.approx, k.inverse, k.proj = nil, nil, nil
	if k.Approx != nil {
		if err := linalg.CheckFinite("kpca: Fit: x", x); err != nil {
			return err
		}
		return k.fitApprox(ctx, x)
	}
	want := k.Operator
	if k.Float32 && want == eig.OperatorAuto {
		want = eig.OperatorFloat32
	}
	plan, err := eig.PlanOperator(eig.PlanInput{N: n, D: d, K: s, Tol: planTol(k.solverOf()), Budget: k.MemoryBudget,
		Dense: k.solverOf().Name() == "dense", OneVector: oneVector(k.solverOf()), Want: want, NonNegative: k.Kernel.NonNegative()})
	if err != nil {
		return fmt.Errorf("kpca: Fit: %w", err)
	}
	start := time.Now()
	o := gram.GramOptions{Products: k.Products, Context: ctx, SingleBlocks: plan.SingleBlocks}
	if k.Progress != nil {
		o.Progress = func(done, total int64) { k.Progress(Progress{Stage: "kernel", Done: done, Total: total}) }
	}
	// The one read of x: checked, copied for the model (Transform), and
	// every form the operator needs made from that copy.
	src, err := kernel.Prepare(x, k.Kernel, eig.SourceOptions(plan.Operator, o), true)
	if err != nil {
		return fmt.Errorf("kpca: Fit: %w", err)
	}
	xcopy := src.Copy()
	op, err := eig.NewKernelOperatorFrom(src, plan.Operator, !k.NoCenter, o)
	if err != nil {
		k.info.Solver = k.solverOf().Name()
		if st, ok := status.StatusOf(err); ok {
			k.info.Status = st
		}
		return fmt.Errorf("kpca: Fit: %w", err)
	}
	kernelSeconds := time.Since(start).Seconds()
	k.x = nil
	fitErr := k.fitOperator(ctx, op, plan.Solver)
	eig.Release(op) // the model keeps nothing of it
	if k == nil || !k.fitted {
		return fitErr
	}
	// Fitted, perhaps partially (fitErr then says why).
	k.info.Operator, k.info.PlanReason, k.info.KernelSeconds = plan.Operator.String(), plan.Reason, kernelSeconds
	k.x = xcopy
	if k.FitInverse {
		if err := k.fitInverse(); err != nil {
			k.fitted = false
			return err
		}
	}
	return fitErr
}

// FitGram fits a precomputed n×n kernel matrix, centred implicitly unless
// NoCenter (g is not modified; it is read during the fit only).
// Transform then takes kernel rows (TransformGram); pre-images need Fit.
func (k *KPCA) FitGram(g mat.Symmetric) error { return k.FitGramContext(context.Background(), g) }

// FitGramContext is FitGram that stops when ctx ends, as FitContext does.
func (k *KPCA) FitGramContext(ctx context.Context, gm mat.Symmetric) error {
	g := linalg.SymDenseOf(gm)
	k.fitted, k.distributed = false, false
	k.info = Info{}
	k.x, k.approx, k.inverse = nil, nil, nil
	if k.Approx != nil {
		return fmt.Errorf("kpca: FitGram with an approximation: give the data to Fit: %w", status.ErrInvalid)
	}
	if k.FitInverse {
		return fmt.Errorf("kpca: FitInverse needs Fit on data, not FitGram: %w", status.ErrInvalid)
	}
	if g == nil || g.IsEmpty() {
		return fmt.Errorf("kpca: empty kernel matrix: %w", status.ErrInvalid)
	}
	n := g.SymmetricDim()
	if s := k.Components; s < 1 || s >= n {
		return fmt.Errorf("kpca: Components = %d, need 1 ≤ s < n = %d: %w", s, n, status.ErrInvalid)
	}
	start := time.Now()
	var op eig.Operator
	op, err := eig.NewDense(g)
	if err != nil {
		return err
	}
	if !k.NoCenter {
		if op, err = eig.NewCentered(op); err != nil {
			return err
		}
	}
	kernelSeconds := time.Since(start).Seconds()
	fitErr := k.fitOperator(ctx, op, nil)
	if k == nil || !k.fitted {
		return fitErr
	}
	k.info.Operator, k.info.PlanReason, k.info.KernelSeconds = "precomputed", "the kernel matrix was given", kernelSeconds
	return fitErr
}

// FitOperator fits kernel PCA to a kernel operator built elsewhere — by
// eig.NewKernelOperator, or row-distributed by package dist — centred or
// not as it was built, with the same solvers, scores, status and Info as
// Fit. auto is the solver the planner paired with the operator
// (eig.Plan.Solver), used when Solver is nil or eig.Auto; nil leaves
// eig.Auto's rule. On an eig.Distributed operator every part calls it
// together with the same configuration, as for eig's solvers: the
// eigenvalues, status and Info are the same on every part, and Scores and
// Dual hold this part's rows (the lanczos, block and lbfgs solvers; dense,
// randomized and dca need one process). The model keeps no training
// points, so Transform, TransformGram and Save are not available.
func (k *KPCA) FitOperator(ctx context.Context, op eig.Operator, auto eig.Solver) error {
	k.fitted = false
	k.info = Info{}
	k.approx, k.inverse, k.proj, k.x = nil, nil, nil, nil
	if op == nil {
		return fmt.Errorf("kpca: FitOperator: nil operator: %w", status.ErrInvalid)
	}
	if err := k.checkIndefinite(); err != nil {
		return err
	}
	return k.fitOperator(ctx, op, auto)
}

// errDistributed refuses what a model fitted on a distributed operator
// cannot do: it holds only this part's rows.
var errDistributed = fmt.Errorf("kpca: fitted on a distributed operator, the model holds this part's rows only: %w", status.ErrInvalid)

// opName names op's storage for messages.
func opName(op eig.Operator) string {
	if isDistributed(op) {
		return "distributed operator"
	}
	return "operator"
}

// isDistributed reports whether op's rows are split over processes.
func isDistributed(op eig.Operator) bool {
	_, ok := op.(eig.Distributed)
	return ok
}

// fitOperator fits the (centred, when wanted) kernel operator op; auto,
// when non-nil, is the solver the planner paired with the operator.
func (k *KPCA) fitOperator(ctx context.Context, op eig.Operator, auto eig.Solver) error {
	local, n, _, _ := eig.Parts(op)
	s := k.Components
	if s < 1 || s >= n {
		return fmt.Errorf("kpca: Components = %d, need 1 ≤ s < n = %d: %w", s, n, status.ErrInvalid)
	}
	distributed := isDistributed(op)
	k.distributed = distributed
	if _, dca := k.solverOf().(DCA); dca && distributed {
		return fmt.Errorf("kpca: the dca solver needs one process, not a distributed operator: %w", status.ErrInvalid)
	}
	k.center = linalg.Centering{}
	k.fitKernel, k.fitCenter, k.fitAlpha = k.Kernel, !k.NoCenter, k.Alpha
	watched := &watchOp{Operator: op, progress: k.Progress}
	if ctx.Done() != nil {
		watched.Operator = eig.WithContext(ctx, op)
	}
	counter := &eig.Counting{Op: eig.WithParts(watched, op)}
	k.n = local
	solver := k.solverOf()
	k.info = Info{Solver: solver.Name()}
	k.values = nil
	start := time.Now()
	var err error
	switch sv := solver.(type) {
	case LBFGS:
		err = k.fitLBFGS(ctx, eig.WithParts(counter, op), sv)
	case DCA:
		err = k.fitDCA(ctx, counter, sv)
	case Eigen:
		es := sv.Solver
		if a, ok := es.(eig.Auto); ok || es == nil {
			// The planner's pairing: blocks of max(3s, 32) for the
			// matrix-free operator, eig.Auto's rule for stored matrices.
			var why string
			if !distributed {
				es, why = a.Resolve(op, s)
			}
			if b, ok := auto.(eig.BlockKrylov); ok && (distributed || n > 600 && 5*s <= n) {
				b.Tol, b.Seed = a.Tol, a.Seed
				es, why = b, fmt.Sprintf("the planner's pairing: block Krylov in blocks of %d", b.Block)
			}
			if es == nil {
				es, why = eig.BlockKrylov{Tol: a.Tol, Seed: a.Seed}, "block Krylov on a distributed operator"
			}
			k.info.Solver, k.info.SolverReason = eigName(es), "auto: "+why
		}
		if b, ok := es.(eig.BlockKrylov); ok && b.Block == 0 {
			if p, ok := auto.(eig.BlockKrylov); ok && p.Block > 0 {
				// The block width of the planner's pairing (wide blocks
				// matrix-free, where a pass costs a kernel build whatever
				// its width).
				b.Block = p.Block
				es = b
				k.info.SolverReason = fmt.Sprintf("blocks of %d, the planner's pairing for the %s", p.Block, opName(op))
			}
		}
		err = k.fitEig(eig.WithParts(counter, op), es)
	default:
		return fmt.Errorf("kpca: solver %T: want Eigen, LBFGS or DCA: %w", solver, status.ErrInvalid)
	}
	if c, ok := op.(*eig.Centered); ok && k.values != nil {
		// Known after the solve: a deferred centring (matrix-free
		// operator) took the row means from the first pass.
		var cerr error
		if k.center, cerr = c.Centering(); cerr != nil {
			k.values = nil
			err = fmt.Errorf("kpca: %w", cerr)
		}
	}
	k.info.SolveSeconds = time.Since(start).Seconds()
	k.info.Passes = counter.Passes
	if st, ok := status.StatusOf(err); ok && st.Code == status.Stopped {
		k.info.Status = st
	}
	// A solver that stopped early (iteration limit, the caller's Stop)
	// leaves a usable partial model: it is kept, and the error says why it
	// is partial (ErrNotConverged, ErrStopped); Info().Status says more.
	k.fitted = k.values != nil && (err == nil || errors.Is(err, ErrNotConverged) || errors.Is(err, status.ErrStopped))
	if err != nil {
		return err
	}
	return nil
}

// fitEig solves with an eigensolver: H = V Λ^{1/2}, proj = V Λ^{-1/2}.
func (k *KPCA) fitEig(op eig.Operator, solver eig.Solver) error {
	s := k.Components
	res, err := solver.Solve(op, s)
	if err != nil && (res == nil || !errors.Is(err, ErrNotConverged)) {
		return fmt.Errorf("kpca: %w", err)
	}
	if !(res.Values[s-1] > breakdownRatio*math.Abs(res.Values[0])) {
		return &status.RankError{Matrix: "kpca: the kernel matrix", Rank: status.NumericalRank(res.Values, breakdownRatio), Asked: s}
	}
	k.info.Iterations = res.Iterations
	k.setFromEigen(res.Values, res.Vectors)
	k.info.Cost, _ = OptimalCost(res.Values) // λ_s > 0 was checked above
	k.info.Status = res.Status
	if err != nil {
		return fmt.Errorf("kpca: %w", err)
	}
	return nil
}

// checkIndefinite refuses, for a kernel that is not positive
// semi-definite (kernel.Kernel.PSD: the sigmoid), the fits that need one:
// the dual cost's Tr √(HᵀGH) (lbfgs, dca), the randomized range finder
// (its power steps favour the largest |λ|, which may be negative) and the
// approximations (Nyström's pivoted Cholesky; random features exist for
// the Gaussian only). The dense, Lanczos and block solvers take the top
// s algebraic eigenvalues of any symmetric matrix.
func (k *KPCA) checkIndefinite() error {
	if k.Kernel.PSD() {
		return nil
	}
	name := k.solverOf().Name()
	var why string
	switch {
	case k.Approx != nil:
		why = "approximations need a positive semi-definite kernel"
	case name == "lbfgs" || name == "dca":
		why = "the " + name + " solver minimises a dual cost that needs a positive semi-definite kernel"
	case name == "randomized":
		why = "the randomized solver favours the largest |λ|, which may be negative"
	default:
		return nil
	}
	return fmt.Errorf("kpca: Fit: the %v kernel is not positive semi-definite: %s (use the dense, lanczos or block solver): %w", k.Kernel.Kind, why, status.ErrInvalid)
}

func (k *KPCA) setFromEigen(values []float64, v *mat.Dense) {
	n, s := v.Dims()
	k.values = append([]float64(nil), values...)
	// H = VΛ^{1/2} are also the training scores; proj = VΛ^{-1/2}. The
	// values were checked positive.
	k.h, _ = DualFromEigen(values, v)
	k.scores = linalg.CopyOf(k.h)
	k.proj = mat.NewDense(n, s, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < s; j++ {
			k.proj.Set(i, j, v.At(i, j)/math.Sqrt(values[j]))
		}
	}
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
	h0, err := dualStart(op, s, o.Start, o.Seed, prob)
	if err != nil {
		return nil, err
	}
	if o.StartOut != nil {
		o.StartOut(linalg.CopyOf(h0))
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
		settings.Stop = func(iter int, _ []float64, f float64, _ []float64) bool { return o.Stop(iter, f) }
	}
	res, err := lbfgs.Minimize(prob, h0.RawMatrix().Data, settings)
	if prob.lastError != nil {
		return nil, prob.lastError // HᵀGH lost rank, or a pass or reduction failed
	}
	if res == nil {
		return nil, fmt.Errorf("kpca: lbfgs: %w", err)
	}
	dr := &DualResult{
		H: mat.NewDense(n, s, res.X), GH: prob.gh, Cost: res.F,
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
func (k *KPCA) fitLBFGS(ctx context.Context, op eig.Operator, o LBFGS) error {
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
	sums := []float64{dotLocal(omega, y), sumSquares(y)}
	if err := red.Sum(sums); err != nil {
		return nil, fmt.Errorf("kpca: dual start: %w", err)
	}
	tr, ny := sums[0], math.Sqrt(sums[1])
	if tr > 0 && ny > 0 {
		y.Scale(math.Sqrt(tr)/ny/math.Sqrt(float64(s)), y)
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

// Eigenvalues returns λ_1 ≥ … ≥ λ_s of the (centred) kernel matrix; for
// dca, the square roots of the eigenvalues of HᵀGH.
func (k *KPCA) Eigenvalues() ([]float64, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	return append([]float64(nil), k.values...), nil
}

// Scores returns the n×s training scores.
func (k *KPCA) Scores() (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	return linalg.CopyOf(k.scores), nil
}

// Dual returns the n×s dual variable H.
func (k *KPCA) Dual() (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	return linalg.CopyOf(k.h), nil
}

// Info reports the last fit.
func (k *KPCA) Info() Info { return k.info }

// Fitted reports whether the model can be used: after a successful fit, or
// after one whose solver stopped early (the fit then returned an error
// wrapping ErrNotConverged or status.ErrStopped; Info().Status says more).
func (k *KPCA) Fitted() bool { return k.fitted }

// Transform returns the m×s scores of the rows of x (m×d) by Eq. (8):
// z = k_cᵀ·H·M^{-1/2}·Q, with k_c centred like G.
func (k *KPCA) Transform(xm mat.Matrix) (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	x := linalg.DenseOf(xm)
	if x == nil {
		return nil, fmt.Errorf("kpca: Transform: empty data: %w", status.ErrInvalid)
	}
	if k.approx != nil {
		return k.transformApprox(x)
	}
	if k.distributed {
		return nil, errDistributed
	}
	if k.x == nil {
		return nil, fmt.Errorf("kpca: fitted with FitGram or FitOperator: use TransformGram: %w", status.ErrInvalid)
	}
	kx, err := kernel.CrossGram(x, k.x, k.fitKernel)
	if err != nil {
		return nil, fmt.Errorf("kpca: Transform: %w", err)
	}
	return k.transformRows(kx, true)
}

// TransformGram projects m new points given their m×n kernel rows against
// the training points (uncentred; centred here like G, on a copy: kx is
// not modified).
func (k *KPCA) TransformGram(kx mat.Matrix) (*mat.Dense, error) {
	if k != nil && k.approx != nil {
		return nil, fmt.Errorf("kpca: TransformGram: an approximate model maps points, not kernel rows: %w", status.ErrInvalid)
	}
	if k != nil && k.fitted && k.distributed {
		return nil, errDistributed
	}
	return k.transformRows(linalg.DenseOf(kx), false)
}

// transformRows is TransformGram; owned kernel rows are centred in place.
func (k *KPCA) transformRows(kx *mat.Dense, owned bool) (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	if kx == nil || kx.IsEmpty() {
		return nil, fmt.Errorf("kpca: TransformGram: empty kernel rows: %w", status.ErrInvalid)
	}
	m, n := kx.Dims()
	if n != k.n {
		return nil, fmt.Errorf("kpca: kernel rows have %d columns, want %d: %w", n, k.n, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("kpca: kernel rows", kx); err != nil {
		return nil, err
	}
	if k.fitCenter {
		if !owned {
			kx = linalg.CopyOf(kx)
		}
		if err := k.center.CenterCross(kx); err != nil {
			return nil, err
		}
	}
	_, s := k.proj.Dims()
	z := mat.NewDense(m, s, nil)
	linalg.Mul(z, kx, k.proj)
	return z, nil
}

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// CheckResiduals measures the fitted eigenpairs against the exact float64
// kernel of the training data, whatever operator the fit used: with
// V = scores·Λ^{-1/2} it returns r_i = ‖K_c v_i − λ_i v_i‖ (K_c centred
// unless NoCenter) and λ₁, from one pass of the matrix-free float64
// kernel over the block [V − 1·v̄ᵀ, 1/n] (memory: the data and one panel;
// time: about one Gram build). It needs Fit (not FitGram); an approximate
// model does not keep its training data: use CheckResidualsWith.
func (k *KPCA) CheckResiduals() (res []float64, lambda1 float64, err error) {
	if k == nil || !k.fitted {
		return nil, 0, ErrNotFitted
	}
	if k.x == nil {
		return nil, 0, fmt.Errorf("kpca: CheckResiduals needs the training data (Fit, not FitGram; CheckResidualsWith for an approximate model): %w", status.ErrInvalid)
	}
	return k.CheckResidualsWith(k.x)
}

// CheckResidualsWith is CheckResiduals against the exact kernel of x, which
// must be the training data (n rows): for an approximate model it measures
// how far the approximation's eigenpairs are from the exact kernel's.
func (k *KPCA) CheckResidualsWith(xm mat.Matrix) (res []float64, lambda1 float64, err error) {
	if k == nil || !k.fitted {
		return nil, 0, ErrNotFitted
	}
	x := linalg.DenseOf(xm)
	if x == nil || x.RawMatrix().Rows != k.n {
		return nil, 0, fmt.Errorf("kpca: CheckResidualsWith: want the %d training points: %w", k.n, status.ErrInvalid)
	}
	op, err := eig.NewKernelOp(x, k.fitKernel, gram.GramOptions{})
	if err != nil {
		return nil, 0, err
	}
	n, s := k.scores.Dims()
	v := mat.NewDense(n, s, nil)
	for j := 0; j < s; j++ {
		r := 1 / math.Sqrt(k.values[j])
		for i := 0; i < n; i++ {
			v.Set(i, j, k.scores.At(i, j)*r)
		}
	}
	b := mat.NewDense(n, s+1, nil)
	means := make([]float64, s)
	if k.fitCenter {
		for j := 0; j < s; j++ {
			for i := 0; i < n; i++ {
				means[j] += v.At(i, j)
			}
			means[j] /= float64(n)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < s; j++ {
			b.Set(i, j, v.At(i, j)-means[j])
		}
		b.Set(i, s, 1/float64(n))
	}
	y := mat.NewDense(n, s+1, nil)
	if err := op.Apply(y, b); err != nil {
		return nil, 0, err
	}
	// K_c v = K v′ − 1·(rᵀv′), r = K·1/n (the last column of y).
	rv := make([]float64, s)
	if k.fitCenter {
		for i := 0; i < n; i++ {
			for j := 0; j < s; j++ {
				rv[j] += y.At(i, s) * b.At(i, j)
			}
		}
	}
	res = make([]float64, s)
	for j := 0; j < s; j++ {
		sum := 0.0
		for i := 0; i < n; i++ {
			d := y.At(i, j) - rv[j] - k.values[j]*v.At(i, j)
			sum += d * d
		}
		res[j] = math.Sqrt(sum)
	}
	return res, k.values[0], nil
}

// watchOp reports every pass to a Progress callback and passes an explicit
// matrix on (for the dense solver).
type watchOp struct {
	eig.Operator
	progress func(Progress)
	passes   int64
}

func (w *watchOp) Apply(dst, x *mat.Dense) error {
	err := w.Operator.Apply(dst, x)
	w.passes++
	if w.progress != nil && err == nil {
		w.progress(Progress{Stage: "solve", Done: w.passes})
	}
	return err
}

func (w *watchOp) SymMatrix() *mat.SymDense {
	if m, ok := w.Operator.(eig.Matrixer); ok {
		return m.SymMatrix()
	}
	return nil
}
