package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// approxState is an approximate model's map to the features and its
// projection: the scores of a new point y are (f(y) − μ)ᵀ·W.
type approxState struct {
	fm   approx.FeatureMap
	mean []float64  // μ, the training features' column means (zero when not centred)
	w    *mat.Dense // k×s
}

// fitApprox fits kernel PCA of the low-rank K̂ = F·Fᵀ of k.Approx (centred
// unless NoCenter): with the default solver (nil, Eigen{} or
// Eigen{eig.Auto{…}} or eig.DenseSolver) the top s eigenpairs of the k×k
// matrix F_cᵀ·F_c (its eigenvalues are K̂_c's, on exact KPCA's scale;
// O(n·k²) to form it; then LAPACK, or Lanczos for k ≥ 500 and s ≤ k/10,
// see topEig); with another solver, that solver on eig.LowRank(F), a pass
// costing O(n·k·b).
func (k *KPCA) fitApprox(ctx context.Context, x *mat.Dense) error {
	start := time.Now()
	n, _ := x.Dims()
	if k.FitInverse {
		return fmt.Errorf("kpca: FitInverse with an approximation: pre-images need the exact kernel: %w", status.ErrInvalid)
	}
	method := k.Approx
	if ny, ok := method.(approx.Nystrom); ok {
		method = k.watched(ctx, ny)
	}
	fm, err := method.Build(x, k.Kernel)
	return k.fitMap(ctx, fm, err, n, start)
}

// FitFloat32 fits an approximate model (Approx must be an approx.Nystrom)
// on float32 data read in place (approx.Nystrom.Fit32: x is not copied or
// modified, and must not change during the call): for data sets whose
// float64 copy would not fit, such as a million images (3.1 GB in
// float32, 6.3 GB in float64). The features are float32; the model is
// the same kind as Fit's and transforms float64 points.
func (k *KPCA) FitFloat32(ctx context.Context, x *linalg.Dense32) error {
	var n int
	if x != nil {
		n = x.Rows
	}
	return k.fitLarge(ctx, "FitFloat32", n, func(ny approx.Nystrom) (*approx.NystromMap, error) { return ny.Fit32(x, k.Kernel) })
}

// FitLevels8 is FitFloat32 for 8-bit data read in place
// (approx.Nystrom.FitLevels8: the kernel rows by exact integer products
// where the processor has them): a million 784-pixel images take 784 MB.
func (k *KPCA) FitLevels8(ctx context.Context, x *linalg.Levels8) error {
	var n int
	if x != nil {
		n = x.Rows
	}
	return k.fitLarge(ctx, "FitLevels8", n, func(ny approx.Nystrom) (*approx.NystromMap, error) { return ny.FitLevels8(x, k.Kernel) })
}

// fitLarge is FitFloat32 and FitLevels8 on n points, build making the map.
func (k *KPCA) fitLarge(ctx context.Context, what string, n int, build func(approx.Nystrom) (*approx.NystromMap, error)) error {
	k.fitted, k.distributed = false, false
	k.info = Info{}
	ny, ok := k.Approx.(approx.Nystrom)
	if !ok {
		return fmt.Errorf("kpca: %s needs Approx = approx.Nystrom, have %T: %w", what, k.Approx, status.ErrInvalid)
	}
	if n < 1 {
		return fmt.Errorf("kpca: %s: empty data: %w", what, status.ErrInvalid)
	}
	if s := k.Components; s < 1 || s >= n {
		return fmt.Errorf("kpca: Components = %d, need 1 ≤ s < n = %d: %w", s, n, status.ErrInvalid)
	}
	if k.FitInverse {
		return fmt.Errorf("kpca: FitInverse with an approximation: pre-images need the exact kernel: %w", status.ErrInvalid)
	}
	k.approx, k.inverse, k.proj = nil, nil, nil
	start := time.Now()
	fm, err := build(k.watched(ctx, ny))
	if err != nil {
		return k.fitMap(ctx, nil, err, n, start)
	}
	if n >= largeReturn {
		// The factorisation's kernel rows (a packed or float32 copy of
		// the data, gigabytes at these sizes) are garbage now: give them
		// back to the system before the solve and the scores allocate.
		debug.FreeOSMemory()
	}
	return k.fitMap(ctx, fm, nil, n, start)
}

// largeReturn is the points from which FitFloat32 and FitLevels8 return
// the factorisation's memory to the system before solving: a million
// 8-bit images' packed copy is 0.8 GB.
const largeReturn = 1 << 18

// watched returns ny with its rounds watching the fit's context and
// reporting progress, and its residual sample's top eigenvalue (when it
// has none of its own) by eig's Lanczos.
func (k *KPCA) watched(ctx context.Context, ny approx.Nystrom) approx.Nystrom {
	ny.Context = ctx
	if ny.TopEigenvalue == nil {
		ny.TopEigenvalue = lanczosTop
	}
	if k.Progress != nil {
		ny.Progress = func(done, total int) {
			k.Progress(Progress{Stage: "kernel", Done: int64(done), Total: int64(total)})
		}
	}
	return ny
}

// fitMap fits kernel PCA on a built feature map (err: the build's error).
func (k *KPCA) fitMap(ctx context.Context, fm approx.FeatureMap, err error, n int, start time.Time) error {
	s := k.Components
	if st, ok := status.StatusOf(err); ok && st.Code == status.Stopped {
		k.info.Status = st
	}
	if err != nil {
		return fmt.Errorf("kpca: %w", err)
	}
	if ctx.Err() != nil {
		k.info.Status, _ = status.StatusOf(status.Cancelled(context.Cause(ctx), "after the feature map"))
		return fmt.Errorf("kpca: %w", status.Cancelled(context.Cause(ctx), "after the feature map"))
	}
	small := false
	if e, ok := k.solverOf().(Eigen); ok {
		switch e.Solver.(type) {
		case nil, eig.Auto, eig.DenseSolver:
			small = true
		}
	}
	mf := mapFit{fm: fm, n: n, s: s, ai: fm.Info()}
	if tg, ok := fm.(interface {
		TrainGram() (*mat.SymDense, []float64, bool)
	}); ok && small && !k.NoCenter {
		// Landmarks chosen on a sample: F_cᵀF_c came with the map.
		mf.gram, mf.mean, _ = tg.TrainGram()
	}
	if mf.gram != nil {
		mf.r, _ = mf.gram.Dims()
	} else {
		if mf.f = fm.Train(); mf.f == nil {
			return fmt.Errorf("kpca: the %s map could not form its training features: %w", mf.ai.Method, status.ErrInvalid)
		}
		_, mf.r = mf.f.Dims()
		if t, ok := mf.f.(mat.Transpose); ok {
			mf.f32, _ = t.Matrix.(*linalg.Dense32)
		}
	}
	kernelSeconds := time.Since(start).Seconds()
	if s > mf.r {
		return &status.RankError{Matrix: fmt.Sprintf("kpca: the %s approximation (rank %d)", mf.ai.Method, mf.r), Rank: mf.r, Asked: s}
	}
	k.fitKernel, k.fitCenter, k.fitAlpha = k.Kernel, !k.NoCenter, k.Alpha
	if mf.gram == nil {
		mf.mean = make([]float64, mf.r)
		if !k.NoCenter {
			if tm, ok := fm.(interface{ TrainMeans() []float64 }); ok {
				mf.mean = tm.TrainMeans()
			} else {
				mf.mean = approx.ColumnMeans(mf.f)
			}
		}
	}
	k.n, k.center, k.values = n, linalg.Centering{}, nil
	solveStart := time.Now()
	var w *mat.Dense
	var fitErr error // a partial fit's error (the model is kept)
	if small {
		if w, err = k.fitMapSmall(&mf); err != nil {
			return err
		}
	} else {
		if w, fitErr = k.fitMapLowRank(ctx, &mf); w == nil {
			return fitErr
		}
	}
	fm.ReleaseTrain() // the model keeps the map, not the n×k training features
	k.approx = &approxState{fm: fm, mean: mf.mean, w: w}
	ai := mf.ai
	k.info.Operator = "low-rank " + ai.Method
	if _, rff := fm.(*approx.RFFMap); rff {
		// Random features have no trace error to report (their kernel
		// is not a Nyström projection of K).
		k.info.PlanReason = fmt.Sprintf("%s approximation with %d random features", ai.Method, mf.r)
	} else {
		k.info.PlanReason = fmt.Sprintf("%s approximation of rank %d (trace error %.3g)", ai.Method, mf.r, ai.TraceError)
	}
	k.info.Approx = &ai
	k.info.KernelSeconds, k.info.SolveSeconds = kernelSeconds, time.Since(solveStart).Seconds()
	k.x = nil // not kept: memory O(n·k) (CheckResidualsWith takes the data)
	k.fitted = true
	return fitErr
}

// mapFit is a fit on a feature map: F (n×r, or its float32 storage f32,
// r×n) and its column means — or, for a map that came with it, F_cᵀF_c
// (gram) and the means, F never formed.
type mapFit struct {
	fm      approx.FeatureMap
	f       mat.Matrix
	f32     *linalg.Dense32 // F's float32 storage (r×n), when it has one
	gram    *mat.SymDense   // F_cᵀF_c from the map (approx.NystromMap.TrainGram)
	n, r, s int
	mean    []float64
	ai      approx.Info
}

// fitMapSmall solves the small problem by LAPACK: F_cᵀF_c (r×r) when
// r ≤ n, F_cF_cᵀ (n×n) otherwise; it sets the values and scores and
// returns W (r×s), the scores of new features being f_c(y)ᵀ·W.
func (k *KPCA) fitMapSmall(mf *mapFit) (*mat.Dense, error) {
	n, r, s := mf.n, mf.r, mf.s
	e, small, scoreMean, err := k.smallEig(mf)
	if err != nil {
		return nil, fmt.Errorf("kpca: %w", err)
	}
	floor := 0.0
	if !k.NoCenter {
		floor = meanFloor(n, mf.mean)
	}
	if err := rankCheck(fmt.Sprintf("kpca: the %s approximation, centred", mf.ai.Method), e.Values, s, floor); err != nil {
		return nil, err
	}
	var scores *mat.Dense
	if sd, ok := mf.fm.(interface{ ScoresDense(r, c int) *mat.Dense }); ok {
		scores = sd.ScoresDense(n, s)
	} else {
		scores = mat.NewDense(n, s, nil)
	}
	var w *mat.Dense
	if r <= n {
		// scores = F_c·V = F·V − 1·(μᵀV)
		w = e.Vectors // r×s
		if ts, ok := mf.fm.(interface{ TrainScores(dst, v *mat.Dense) error }); ok && mf.gram != nil {
			if err := ts.TrainScores(scores, w); err != nil {
				return nil, fmt.Errorf("kpca: %w", err)
			}
		} else if mf.f32 != nil {
			linalg.MulT32Into(scores, mf.f32, w, scoreMean)
		} else {
			linalg.Mul(scores, mf.f, w)
			mv := make([]float64, s)
			for j := 0; j < s; j++ {
				for i := 0; i < r; i++ {
					mv[j] += mf.mean[i] * w.At(i, j)
				}
			}
			for i := 0; i < n; i++ {
				row := scores.RawRowView(i)
				for j := range row {
					row[j] -= mv[j]
				}
			}
		}
	} else {
		// U (n×s): scores = U·Λ^{1/2}, W = F_cᵀ·U·Λ^{-1/2} = Fᵀ·U·Λ^{-1/2}
		// (U's columns sum to zero).
		w = mat.NewDense(r, s, nil)
		linalg.Mul(w, mf.f.T(), e.Vectors)
		for j := 0; j < s; j++ {
			sq := math.Sqrt(e.Values[j])
			for i := 0; i < n; i++ {
				scores.Set(i, j, e.Vectors.At(i, j)*sq)
			}
			for i := 0; i < r; i++ {
				w.Set(i, j, w.At(i, j)/sq)
			}
		}
	}
	flip := linalg.SignFlips(scores)
	for _, m := range []*mat.Dense{scores, w} {
		raw := m.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+s]
			for j, fl := range flip {
				if fl {
					row[j] = -row[j]
				}
			}
		}
	}
	// The dual variables of an approximate fit are its scores: one matrix,
	// never written after this (H and Scores return copies).
	k.values, k.scores, k.h = e.Values, scores, scores
	k.info = small
	k.info.Cost, _ = OptimalCost(e.Values)
	return w, nil
}

// smallEig returns the top s eigenpairs of the centred F·Fᵀ's small form
// without copying F — F_cᵀF_c = FᵀF − n·μμᵀ (r×r), or F_cF_cᵀ with the
// double centring applied (n×n) — the small solve's Info, and the mean
// the scores still have to subtract (nil once F was centred in place).
func (k *KPCA) smallEig(mf *mapFit) (*linalg.Eigen, Info, []float64, error) {
	n, r, s := mf.n, mf.r, mf.s
	scoreMean := mf.mean
	var c *mat.SymDense
	switch {
	case mf.gram != nil:
		c = mf.gram
	case r <= n && mf.f32 != nil && productsWanted(n, r, s):
		// Never formed: block Krylov on F_cᵀF_c applied by passes over F.
		var mu []float64
		if !k.NoCenter {
			mu = mf.mean
		}
		e, info, err := productsTop(mf.f32, mu, s)
		return e, info, scoreMean, err
	case r <= n && mf.f32 != nil:
		// float32 features: blocks of F_c by linalg.Syrk32, summed in float64;
		// centred in place where the map allows it (no block copies).
		var mu []float64
		if !k.NoCenter {
			mu = mf.mean
			if cm, ok := mf.fm.(interface{ CenterTrain([]float64) error }); ok && cm.CenterTrain(mf.mean) == nil {
				mu, scoreMean = nil, nil
			}
		}
		var err error
		if c, err = linalg.OuterT32(mf.f32, mu, gram.PackedSyrk()); err != nil {
			return nil, Info{}, nil, err
		}
	case r <= n:
		c = mat.NewSymDense(r, nil)
		linalg.SymOuterK(c, 1, mf.f.T())
		if !k.NoCenter {
			linalg.SymRankOne(c, c, -float64(n), mat.NewVecDense(r, mf.mean))
		}
	default:
		c = mat.NewSymDense(n, nil)
		linalg.SymOuterK(c, 1, mf.f)
		if !k.NoCenter {
			if _, err := linalg.CenterKernelInPlace(c); err != nil {
				return nil, Info{}, nil, err
			}
		}
	}
	e, small, err := topEig(c, s)
	return e, small, scoreMean, err
}

// fitMapLowRank fits on the low-rank operator F_c·F_cᵀ with the model's
// solver and returns W = F_cᵀ·proj (nil, with the error, when nothing was
// fitted; a partial fit's error comes with W).
func (k *KPCA) fitMapLowRank(ctx context.Context, mf *mapFit) (*mat.Dense, error) {
	n, r, s := mf.n, mf.r, mf.s
	op, err := eig.NewLowRank(mf.f, !k.NoCenter)
	if err != nil {
		return nil, err
	}
	fitErr := k.fitOperator(ctx, op, nil)
	if !k.fitted {
		k.info.Approx = &mf.ai
		return nil, fitErr
	}
	// W = F_cᵀ·proj = Fᵀ·proj (proj's columns sum to zero when
	// centred): scores of y are k̂_c(y)ᵀ·proj = f_c(y)ᵀ·F_cᵀ·proj.
	w := mat.NewDense(r, s, nil)
	if mf.f32 != nil {
		linalg.MulTVec32(mf.f32, k.proj, w)
	} else {
		linalg.Mul(w, mf.f.T(), k.proj)
	}
	if !k.NoCenter {
		// proj = U·Λ^{-1/2} with U ⟂ 1 up to rounding: subtract μ·(1ᵀproj)
		// so that W is F_cᵀ·proj exactly.
		colSums := make([]float64, s)
		for i := 0; i < n; i++ {
			for j, v := range k.proj.RawRowView(i) {
				colSums[j] += v
			}
		}
		for i := 0; i < r; i++ {
			for j := 0; j < s; j++ {
				w.Set(i, j, w.At(i, j)-mf.mean[i]*colSums[j])
			}
		}
	}
	k.proj = nil
	return w, fitErr
}

// transformApprox projects the rows of x with an approximate model.
func (k *KPCA) transformApprox(x *mat.Dense) (*mat.Dense, error) {
	f, err := k.approx.fm.Map(x)
	if err != nil {
		return nil, fmt.Errorf("kpca: Transform: %w", err)
	}
	m, _ := f.Dims()
	for i := 0; i < m; i++ {
		row := f.RawRowView(i)
		for j := range row {
			row[j] -= k.approx.mean[j]
		}
	}
	_, s := k.approx.w.Dims()
	z := mat.NewDense(m, s, nil)
	linalg.Mul(z, f, k.approx.w)
	return z, nil
}

// productsRank and productsRows: the top eigenpairs of F_cᵀF_c (float32
// features, rank r ≥ productsRank, n ≥ productsRows·r points, s ≤
// productsBlock − 8, the products' AVX-512 form running) come from block
// Krylov on products with F
// (linalg.OuterT32Mul, productsTop) instead of forming it (linalg.OuterT32,
// n·r²/2 multiply-adds by ssyrk): at n = 10⁶, r = 2000, s = 20 forming it
// took 20–24 s, the products 4 passes of 32 columns and 14 s in all
// (docs/measurements.md); at r = 1000 forming it costs a quarter of that.
var productsRank, productsRows = 1500, 50

// productsBlock and productsTol are productsTop's block width and the
// tolerance of its stopping test, relative to ‖F_cᵀF_c‖ = λ₁: the scale of
// the products' own float32 error (sums of up to 8192 products, about
// 10⁻⁵ of it at worst in practice).
const productsBlock, productsTol = 32, 1e-5

// productsSample is the points per landmark, in runs of 128, whose
// F_cᵀF_c (by OuterT32) gives productsTop its start: 4, 8, 16 and 48 all
// took 4 passes at n = 500 000, r = 2000; 8 costs 0.9 s there.
const productsSample = 8

// productsWanted reports whether productsTop takes the problem of n points,
// rank r and s pairs.
func productsWanted(n, r, s int) bool {
	return r >= productsRank && n >= productsRows*r && s <= productsBlock-8 && productsFast()
}

// productsFast reports whether the products run at the rate the rule was
// measured at: eig.FeatureGramFast (their AVX-512 form); elsewhere forming
// F_cᵀF_c is the faster way. Tests replace it to exercise the products on
// any processor.
var productsFast = eig.FeatureGramFast

// productsTop returns the top s eigenpairs of F_cᵀF_c for F = ftᵀ centred
// by mean (nil: not centred) by block Krylov in blocks of productsBlock,
// Rayleigh–Ritz after every block, started from the top eigenvectors of
// the same matrix over a sample of the points (runs of 128 spread evenly,
// productsSample·r points in all; by topEig: Lanczos where its rule
// takes it, else LAPACK; docs/measurements.md); its stopping test is
// ‖F_cᵀF_c·v − θv‖ ≤ max(productsTol·λ₁, 64ε·λ₁) for every pair. An error
// unless it converged.
func productsTop(ft *linalg.Dense32, mean []float64, s int) (*linalg.Eigen, Info, error) {
	r, n := ft.Dims()
	run := min(128, n)
	runs := max(1, min(n/run, productsSample*r/run))
	sub, err := linalg.NewDense32(r, runs*run)
	if err != nil {
		return nil, Info{}, err
	}
	for q := 0; q < runs; q++ {
		j0 := int(int64(q) * int64(n-run) / int64(max(runs-1, 1)))
		for e := 0; e < r; e++ {
			copy(sub.Data[e*runs*run+q*run:e*runs*run+(q+1)*run], ft.Data[e*n+j0:e*n+j0+run])
		}
	}
	c, err := linalg.OuterT32(sub, mean, gram.PackedSyrk())
	sub.Free()
	if err != nil {
		return nil, Info{}, err
	}
	start, _, err := topEig(c, productsBlock)
	if err != nil {
		return nil, Info{}, err
	}
	res, err := eig.BlockKrylov{Block: productsBlock, Tol: productsTol, CheckEachBlock: true, NormTest: true, Start: start.Vectors}.
		Solve(eig.NewFeatureGram(ft, mean), s)
	if err != nil {
		return nil, Info{}, err
	}
	info := Info{Solver: "block (k×k, by products with F)", Iterations: res.Iterations, Passes: res.Passes, Status: res.Status}
	if res.Status.Code != status.Converged {
		return nil, info, fmt.Errorf("kpca: the top %d eigenpairs of F_cᵀF_c: %v", s, res.Status)
	}
	return &linalg.Eigen{Values: res.Values, Vectors: res.Vectors}, info, nil
}

// Lanczos takes the small problem when it has at least lanczosMin rows and
// s ≤ rows/lanczosFraction, where it beats LAPACK's dsyevr several times
// (docs/measurements.md); LAPACK stays the choice for small matrices and for many
// eigenpairs, where Lanczos's basis grows with s.
var lanczosMin, lanczosFraction = 500, 10

// topEig returns the s largest eigenpairs of the symmetric c and the
// solver and status to report: LAPACK (direct), or Lanczos with its
// stopping test at tolerance 1e-10 (eig.Lanczos), falling back to LAPACK
// if Lanczos does not converge.
func topEig(c *mat.SymDense, s int) (*linalg.Eigen, Info, error) {
	r := c.SymmetricDim()
	if r >= lanczosMin && s*lanczosFraction <= r {
		op, err := eig.NewDense(c)
		if err != nil {
			return nil, Info{}, err
		}
		res, err := eig.Lanczos{Tol: 1e-10}.Solve(op, s)
		if err == nil && res.Status.Code == status.Converged {
			return &linalg.Eigen{Values: res.Values, Vectors: res.Vectors},
				Info{Solver: "lanczos (k×k)", Iterations: res.Iterations, Status: res.Status}, nil
		}
	}
	e, err := linalg.SymEig(c, s)
	return e, Info{Solver: "dense (k×k)", Iterations: 1, Status: status.Status{Code: status.Converged,
		Test: "direct: LAPACK on F_cᵀF_c (k×k) or F_cF_cᵀ (n×n), the smaller"}}, err
}

// lanczosTop is the largest eigenvalue of a by eig's Lanczos (tol 1e-6;
// LAPACK below 16 rows): a Ritz value never exceeds λ_max, so a Krylov
// estimate keeps a lower bound at O(p²) a step, not LAPACK's O(p³).
func lanczosTop(a *mat.SymDense, seed uint64) (float64, error) {
	op, err := eig.NewDense(a)
	if err != nil {
		return 0, err
	}
	var solver eig.Solver = eig.Lanczos{Tol: 1e-6, Seed: seed}
	if n, _ := a.Dims(); n < 16 {
		solver = eig.DenseSolver{}
	}
	top, err := solver.Solve(op, 1)
	if err != nil && (top == nil || !errors.Is(err, eig.ErrNotConverged)) {
		return 0, err
	}
	return top.Values[0], nil
}
