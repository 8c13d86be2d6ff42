package kpca

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
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
	// StartNormal is H₀ with standard normal entries (the paper's), in the
	// problem's unit: 2^k·Ω, 4^k nearest G's mean Rayleigh quotient on Ω
	// (SolveDual; k = 0 for kernels of order 1).
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
	// InputScale records a factor the caller multiplied the data by
	// before Fit (0 or 1: none), kept in the model file so that new data
	// can be scaled the same way; Fit, Transform and InverseTransform do
	// not apply it (the CLI's --scale does).
	InputScale float64
	// InverseKernel, when not nil, is the pre-image map's kernel on the
	// scores; nil means Kernel. scikit-learn evaluates its kernel there
	// with γ's default taken at the scores' dimension s: its rbf with γ
	// unset is exp(−‖x − y‖²/d) in the fit and exp(−‖z − z'‖²/s) in the
	// pre-image map. Kernel's own unset γ (polynomial, sigmoid,
	// laplacian) already follows that rule; a Gaussian given by σ or γ
	// needs this field to do the same.
	InverseKernel *kernel.Kernel
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
	// StartRank is the rank of the Nyström approximation (approx.Nystrom,
	// randomly pivoted Cholesky, seeded by the solver's Seed) whose top
	// eigenvectors start the block Krylov solver that the planner pairs
	// with the matrix-free operator (eig.BlockKrylov.Start; the solver
	// checks its stopping test after every block): a good start needs
	// fewer passes, and a matrix-free pass builds the kernel again. 0
	// means max(10·b, 2000) for blocks of b, at most n/2; a negative value
	// a random start. The start is made only when its memory (8·(n·(r + b)
	// + n·d + 3r²) bytes) fits in what the budget leaves beside the
	// operator; Info().Start says what was done. Other solvers and
	// operators start as they always do.
	StartRank int
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
	// Start says how the block Krylov solver paired with the
	// matrix-free operator was started (see StartRank); StartSeconds
	// made the start (within SolveSeconds).
	Start        string  `json:"start,omitempty"`
	StartSeconds float64 `json:"start_seconds,omitempty"`
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
		// approx.Nystrom checks the data itself, in the pass that looks
		// for an 8-bit grid where it can (a grid entry is finite): one
		// read of x fewer. Other methods are checked here.
		if _, ny := k.Approx.(approx.Nystrom); !ny {
			if err := linalg.CheckFinite("kpca: Fit: x", x); err != nil {
				return err
			}
		}
		return k.fitApprox(ctx, x)
	}
	want := k.Operator
	if k.Float32 && want == eig.OperatorAuto {
		want = eig.OperatorFloat32
	}
	plan, err := eig.PlanOperator(eig.PlanInput{N: n, D: d, K: s, Tol: planTol(k.solverOf()), Budget: k.MemoryBudget,
		Dense: k.solverOf().Name() == "dense", OneVector: oneVector(k.solverOf()), Want: want, NonNegative: k.Kernel.NonNegative(),
		NoFloat32: noFloat32(x, k.Kernel)})
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
		src.Release()
		k.info.Solver = k.solverOf().Name()
		if st, ok := status.StatusOf(err); ok {
			k.info.Status = st
		}
		return fmt.Errorf("kpca: Fit: %w", err)
	}
	kernelSeconds := time.Since(start).Seconds()
	head := eig.IntegerHead(op)
	k.x = nil
	auto, why, startSeconds, err := k.warmStart(ctx, plan, xcopy)
	if err != nil {
		eig.Release(op)
		src.Release()
		k.info.Solver = k.solverOf().Name()
		if st, ok := status.StatusOf(err); ok {
			k.info.Status = st
		}
		return fmt.Errorf("kpca: Fit: %w", err)
	}
	fitErr := k.fitOperator(ctx, op, auto)
	k.info.Start, k.info.StartSeconds = why, startSeconds
	k.info.SolveSeconds += startSeconds
	// The model keeps nothing of the operator or of the prepared rows
	// (k.x is the copy): their buffers go back for the next fit.
	eig.Release(op)
	src.Release()
	if k == nil || !k.fitted {
		return fitErr
	}
	// Fitted, perhaps partially (fitErr then says why).
	k.info.Operator, k.info.PlanReason, k.info.KernelSeconds = plan.Operator.String(), plan.Reason, kernelSeconds
	if head > 0 {
		k.info.PlanReason += fmt.Sprintf("; the kernel among the first %d rows (on an 8-bit grid) by exact integer products", head)
	}
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
