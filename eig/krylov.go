package eig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Lanczos is the restarted Lanczos method with full reorthogonalisation,
// in Krylov–Schur form (Stewart 2001), which is mathematically equivalent to
// ARPACK's implicit restart and to thick restart. Each step is one Apply of
// one vector (one pass). The zero value is ready.
//
// Stopping test (ARPACK's and Spectra's): the Ritz pair (θ, y = V s) of the
// m-dimensional basis V has residual ‖Ay − θy‖ = ‖f‖·|s_m|, and it has
// converged when ‖f‖·|s_m| ≤ Tol·max(ε^{2/3}‖A‖, |θ|) (floored at the
// rounding level 64ε‖A‖, ‖A‖ estimated by the largest |θ| seen); the solver
// stops when the k largest have. On restart the leading p Ritz vectors are kept,
// p = k + ⌊(m − 1 − k)/2⌋.
type Lanczos struct {
	// NCV is the basis size m; 0 means max(2k+1, 20). Capped at n: when
	// m ≥ n the operator is materialised and solved densely.
	NCV int
	// Tol is the relative tolerance of the stopping test; 0 means 1e-10.
	Tol float64
	// MaxRestarts bounds the restarts; 0 means 1000. A run takes at most
	// ⌈m/b⌉·MaxRestarts passes (m the basis size, b the block).
	MaxRestarts int
	// Seed of the random start vector; 0 means 1.
	Seed uint64
}

// Solve returns the k largest eigenpairs of op.
func (l Lanczos) Solve(op Operator, k int) (*Result, error) {
	ks := krylovSchur{name: "lanczos", block: 1, ncv: l.NCV, tol: l.Tol, maxRestarts: l.MaxRestarts, seed: l.Seed}
	return timed(time.Now())(ks.solve(op, k))
}

// BlockKrylov is block Lanczos with full reorthogonalisation and
// Krylov–Schur restarts, started from a random n×b block: randomized block
// Krylov iteration (Musco and Musco 2015) run until the stopping test of
// Lanczos holds. Each step applies the operator to b vectors at once, so on
// dense matrices a pass is a BLAS-3 product and costs little more than a
// single matrix-vector product; it needs fewer passes than Lanczos at the
// price of more matvecs. The zero value is ready.
//
// With R the b×b coupling of the next block, the residual of the Ritz pair
// (θ, V s) is ‖R·s_last‖ where s_last holds the last b entries of s; the
// test is the one of Lanczos.
type BlockKrylov struct {
	// Block is b; 0 means 8 (capped at n): block widths 4 to 16 were all
	// about twice Lanczos's speed (docs/measurements.md).
	Block int
	// NCV is the basis size m (rounded up to a multiple of b); 0 means
	// max(3k + b, 4b). When m ≥ n the problem is solved densely.
	NCV int
	// Tol as for Lanczos; 0 means 1e-10.
	Tol float64
	// MaxRestarts bounds the restarts; 0 means 1000. A run takes at most
	// ⌈m/b⌉·MaxRestarts passes (m the basis size, b the block).
	MaxRestarts int
	// Seed of the random start block; 0 means 1.
	Seed uint64
	// Start, when not nil, gives the start block's first columns (an
	// approximation of the wanted eigenvectors, e.g. a Nyström
	// approximation's, see models/kpca): op's rows (this part's rows of a
	// Distributed operator) × c columns, c ≥ 1, all finite. The block is
	// its first min(c, b) columns, filled up to b with the random columns
	// (the same global random block as without a start), then
	// orthonormalised. Start is read, never kept or changed.
	Start *mat.Dense
	// CheckEachBlock applies the stopping test after every block (a
	// Rayleigh–Ritz step on the basis so far, O(j³) for j columns), not
	// only when the basis is full: it stops as soon as the test holds,
	// for operators whose pass costs far more than that (matrix-free,
	// where every pass builds the kernel again). The test is the same.
	CheckEachBlock bool
	// NormTest replaces the stopping test's |θ| by ‖A‖: a pair has
	// converged when ‖Av − θv‖ ≤ max(Tol·‖A‖, 64ε‖A‖) (‖A‖ estimated by
	// the largest |θ| seen; λ₁ for a positive semidefinite kernel) — the
	// scale of a kernel operator's own error bounds (float32 storage and
	// products, gram.BlockRel), so pairs far below λ₁ are not asked for
	// more than the operator holds. Looser than the default test for
	// every pair but the largest.
	NormTest bool
}

// Solve returns the k largest eigenpairs of op.
func (bk BlockKrylov) Solve(op Operator, k int) (*Result, error) {
	ks := krylovSchur{name: "block", block: bk.Block, ncv: bk.NCV, tol: bk.Tol, maxRestarts: bk.MaxRestarts, seed: bk.Seed,
		start: bk.Start, checkEach: bk.CheckEachBlock, normTest: bk.NormTest}
	if ks.block == 0 {
		ks.block = 8
	}
	return timed(time.Now())(ks.solve(op, k))
}

type krylovSchur struct {
	name        string
	block       int
	ncv         int
	tol         float64
	maxRestarts int
	seed        uint64
	start       *mat.Dense
	checkEach   bool
	normTest    bool
}

// eps23 is ε^{2/3}, ARPACK's floor for the relative test.
var eps23 = math.Pow(2*epsilon, 2.0/3.0)

// threshold is the residual a Ritz pair (θ, y) must reach:
// Tol·max(ε^{2/3}‖A‖, |θ|), but never below 64ε‖A‖, the rounding level of
// one product with A (a pair at that level cannot be improved; without the
// floor an eigenvalue 0 could never converge). ‖A‖ is estimated by the
// largest |θ| seen.
func threshold(tol, theta, anorm float64) float64 {
	return math.Max(tol*math.Max(eps23*anorm, math.Abs(theta)), 64*epsilon*anorm)
}

// testNorm names the stopping test of BlockKrylov.NormTest for a Status.
func testNorm(tol float64) string {
	return fmt.Sprintf("‖Av − θv‖ ≤ max(%.3g·‖A‖, 64ε‖A‖) for every pair", tol)
}

// testResidual names the stopping test of threshold for a Status.
func testResidual(tol float64) string {
	return fmt.Sprintf("‖Av − θv‖ ≤ max(%.3g·max(ε^(2/3)‖A‖, |θ|), 64ε‖A‖) for every pair", tol)
}

// testDirect names the Dense solver's test: LAPACK's backward stability.
const testDirect = "direct: LAPACK backward error ‖Av − λv‖ ≤ n·ε·‖A‖"

func (ks krylovSchur) solve(op Operator, k int) (*Result, error) {
	if _, err := checkK(op, k); err != nil {
		return nil, err
	}
	st, err := ks.setup(op, k)
	if err != nil || st == nil {
		if err == nil {
			// The basis and the next block would span everything (and
			// there would be no room left to orthogonalise the next
			// block against the basis): one dense solve is cheaper.
			return DenseSolver{}.Solve(opOnly{op}, k)
		}
		return nil, err
	}
	n, m, b := st.n, st.m, st.b
	j, cur := 0, b
	for restart := 1; ; restart++ {
		// Expand the basis from column j to m.
		for ; j < m; j, cur = j+b, cur+b {
			if err := st.expand(j, cur); err != nil {
				return nil, err
			}
			if ks.checkEach && cur < m && cur >= k {
				// The basis so far (cur columns) and its coupling to
				// the next block satisfy the same Krylov relation as
				// the full one.
				theta, s, resid, err := st.rayleighRitz(cur)
				if err != nil {
					return nil, fmt.Errorf("eig: %s: projected problem: %w", ks.name, err)
				}
				if st.converged(theta, resid) == k {
					st.res.Iterations = restart
					return st.finish(cur, theta, s, resid, k, restart)
				}
			}
		}
		theta, s, resid, err := st.rayleighRitz(m)
		if err != nil {
			return nil, fmt.Errorf("eig: %s: projected problem: %w", ks.name, err)
		}
		nconv := st.converged(theta, resid)
		st.res.Iterations = restart
		if nconv == k || restart >= st.maxRestarts {
			return st.finish(m, theta, s, resid, nconv, restart)
		}
		// Restart: keep p Ritz vectors, then the residual block.
		p := max(st.pMin, floorTo(k+(m-b-k)/2, b))
		kept := mat.NewDense(n, p, nil)
		linalg.Mul(kept, st.v.Slice(0, n, 0, m), s.Slice(0, m, 0, p))
		linalg.Copy(st.v.Slice(0, n, 0, p).(*mat.Dense), kept)
		linalg.Copy(st.v.Slice(0, n, p, p+b).(*mat.Dense), st.v.Slice(0, n, m, m+b))
		clear(st.hm)
		for i := 0; i < p; i++ {
			st.hm[i*m+i] = theta[i]
		}
		j, cur = p, p+b
	}
}

// ksState is a Krylov–Schur run: the basis V (n×(m+b)), the projected
// matrix H (m×m), the last block's coupling R (b×b) and the running
// lower bound of ‖A‖.
type ksState struct {
	ks                krylovSchur
	op                Operator
	red               Reduction
	k, n, N, offset   int
	b, m, pMin        int
	tol               float64
	maxRestarts       int
	v, w, hbuf, h2buf *mat.Dense
	hm, rr            []float64
	rng               *rand.Rand
	anorm             float64
	res               *Result
}

// setup checks the options, sizes the basis and draws the random start
// block (the same global block on every part); nil and no error when the
// basis would span every row (a dense solve is then cheaper).
func (ks krylovSchur) setup(op Operator, k int) (*ksState, error) {
	// n: the rows held here; N: all rows (they differ for a Distributed
	// operator, whose inner products red reduces).
	n, N, offset, red := layout(op)
	st := &ksState{ks: ks, op: op, red: red, k: k, n: n, N: N, offset: offset, b: min(max(ks.block, 1), n), tol: ks.tol, maxRestarts: ks.maxRestarts}
	if st.tol == 0 {
		st.tol = 1e-10
	}
	if !(st.tol > 0) || math.IsInf(st.tol, 0) {
		return nil, fmt.Errorf("eig: %s: tolerance %g: %w", ks.name, st.tol, status.ErrInvalid)
	}
	if st.maxRestarts <= 0 {
		st.maxRestarts = 1000
	}
	seed := ks.seed
	if seed == 0 {
		seed = 1
	}
	b := st.b
	st.pMin = ceilTo(k, b) // fewest columns kept on restart
	m := ks.ncv
	if m <= 0 {
		if b == 1 {
			m = max(2*k+1, 20)
		} else {
			m = max(3*k+b, 4*b)
		}
	}
	m = max(ceilTo(m, b), st.pMin+b)
	st.m = m
	if m+b > N {
		if _, dist := op.(Distributed); dist {
			return nil, fmt.Errorf("eig: %s: a basis of %d columns spans all %d rows: too small to distribute: %w", ks.name, m+b, N, status.ErrInvalid)
		}
		return nil, nil
	}
	st.res = &Result{}
	st.v = mat.NewDense(n, m+b, nil)
	st.w = mat.NewDense(n, b, nil)
	st.hbuf = mat.NewDense(m+b, b, nil)
	st.h2buf = mat.NewDense(m+b, b, nil)
	st.hm = make([]float64, m*m)
	st.rr = make([]float64, b*b)
	st.rng = rng.New(seed)
	start := st.v.Slice(0, n, 0, b).(*mat.Dense)
	globalNormal(start, offset, N, st.rng)
	if ks.start != nil {
		if err := ks.checkStart(n); err != nil {
			return nil, err
		}
		_, c := ks.start.Dims()
		c = min(c, b)
		linalg.Copy(start.Slice(0, n, 0, c).(*mat.Dense), ks.start.Slice(0, n, 0, c))
		// Unit columns, so that R's diagonal measures what each adds.
		norms := make([]float64, c)
		for i := 0; i < n; i++ {
			for q, x := range start.RawRowView(i)[:c] {
				norms[q] += x * x
			}
		}
		if err := red.Sum(norms); err != nil {
			return nil, err
		}
		for q, s := range norms {
			if s > 0 {
				linalg.B64.Scal(1/math.Sqrt(s), blas64.Vector{N: n, Inc: start.RawMatrix().Stride, Data: start.RawMatrix().Data[q:]})
			}
		}
	}
	if err := orthoBlock(start, st.rr, red); err != nil {
		return nil, err
	}
	if ks.start != nil {
		// A start column in the span of those before it (or zero) is
		// replaced by a random one.
		if err := ks.repairBlock(st.v, 0, b, st.rr, 1, N, offset, red, st.rng, nil); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// checkStart checks the start block against the n rows held here.
func (ks krylovSchur) checkStart(n int) error {
	r, c := ks.start.Dims()
	if r != n || c < 1 {
		return fmt.Errorf("eig: %s: start block %d×%d for an operator of %d rows: %w", ks.name, r, c, n, status.ErrInvalid)
	}
	for i := 0; i < r; i++ {
		for _, x := range ks.start.RawRowView(i) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("eig: %s: start block row %d is not finite: %w", ks.name, i, status.ErrInvalid)
			}
		}
	}
	return nil
}

// expand applies the operator to the basis block at column j and
// orthogonalises the result against the cur columns so far (classical
// Gram–Schmidt twice, DGKS: twice is enough; the cur×b inner products
// reduced over the parts), filling H's columns j…j+b and the next block
// with its coupling R.
func (st *ksState) expand(j, cur int) error {
	n, b, m, v, w := st.n, st.b, st.m, st.v, st.w
	blk := v.Slice(0, n, j, j+b).(*mat.Dense)
	st.res.Passes++
	st.res.MatVecs += b
	if err := st.op.Apply(w, blk); err != nil {
		return err
	}
	if err := checkBlockFinite(w); err != nil {
		return err
	}
	vc := v.Slice(0, n, 0, cur).(*mat.Dense)
	h := st.hbuf.Slice(0, cur, 0, b).(*mat.Dense)
	h2 := st.h2buf.Slice(0, cur, 0, b).(*mat.Dense)
	project(h, vc, w)
	if err := st.red.Sum(st.hbuf.RawMatrix().Data[:cur*b]); err != nil {
		return err
	}
	subMul(w, vc, h)
	project(h2, vc, w)
	if err := st.red.Sum(st.h2buf.RawMatrix().Data[:cur*b]); err != nil {
		return err
	}
	subMul(w, vc, h2)
	h.Add(h, h2)
	for i := 0; i < cur; i++ {
		for c := 0; c < b; c++ {
			x := h.At(i, c)
			st.anorm = math.Max(st.anorm, math.Abs(x))
			if i >= j && i < j+b {
				// Diagonal block: symmetrise.
				x = 0.5 * (x + h.At(j+c, i-j))
			}
			st.hm[i*m+j+c] = x
			st.hm[(j+c)*m+i] = x
		}
	}
	// The next block and its coupling R.
	next := v.Slice(0, n, cur, cur+b).(*mat.Dense)
	linalg.Copy(next, w)
	if err := orthoBlock(next, st.rr, st.red); err != nil {
		return err
	}
	if err := st.ks.repairBlock(v, cur, b, st.rr, st.anorm, st.N, st.offset, st.red, st.rng, w); err != nil {
		return err
	}
	return st.reorth(vc, next, h)
}

// reorth takes the normalised block's part along the basis vc out once
// more and orthonormalises it again, folding the second factor into the
// coupling (R ← R₂·R). A column of the block whose residual was near the
// rounding of the projections (an almost invariant subspace, common for
// kernel matrices of low numerical rank) is normalised with that rounding
// in it, which leans it into the basis by up to ε·‖Av‖/‖residual‖; left
// there, the basis loses orthogonality and the Ritz values go wrong with
// small apparent residuals. The part dropped, V·(Vᵀ·next)·R, is V·Vᵀ·W
// for the block W already orthogonal to V: rounding. h is scratch (the
// basis's columns by b).
func (st *ksState) reorth(vc, next, h *mat.Dense) error {
	b := st.b
	project(h, vc, next)
	cur, _ := h.Dims()
	if err := st.red.Sum(st.hbuf.RawMatrix().Data[:cur*b]); err != nil {
		return err
	}
	subMul(next, vc, h)
	r2 := make([]float64, b*b)
	if err := orthoBlock(next, r2, st.red); err != nil {
		return err
	}
	prod := make([]float64, b*b)
	for i := 0; i < b; i++ {
		for j := i; j < b; j++ {
			t := 0.0
			for q := i; q <= j; q++ {
				t += r2[i*b+q] * st.rr[q*b+j]
			}
			prod[i*b+j] = t
		}
	}
	copy(st.rr[:b*b], prod)
	return nil
}

// threshold is the residual the pair of Ritz value theta must reach.
func (st *ksState) threshold(theta float64) float64 {
	if st.ks.normTest {
		return math.Max(st.tol*st.anorm, 64*epsilon*st.anorm)
	}
	return threshold(st.tol, theta, st.anorm)
}

// test names the stopping test for a Status.
func (st *ksState) test() string {
	if st.ks.normTest {
		return testNorm(st.tol)
	}
	return testResidual(st.tol)
}

// converged counts the leading Ritz pairs (of the k wanted) that pass the
// stopping test.
func (st *ksState) converged(theta, resid []float64) int {
	nconv := 0
	for nconv < st.k && resid[nconv] <= st.threshold(theta[nconv]) {
		nconv++
	}
	return nconv
}

// rayleighRitz solves the projected problem of the basis's first m
// columns (m a multiple of b, the last block the one coupled to the next
// by R): the Ritz values θ (decreasing), their vectors S, and each pair's
// residual ‖R·S_b,i‖ (S_b the last b rows of S).
func (st *ksState) rayleighRitz(m int) ([]float64, *mat.Dense, []float64, error) {
	b := st.b
	h := make([]float64, m*m)
	for i := 0; i < m; i++ {
		copy(h[i*m:(i+1)*m], st.hm[i*st.m:i*st.m+m])
	}
	e, err := linalg.SymEig(mat.NewSymDense(m, h), 0)
	if err != nil {
		return nil, nil, nil, err
	}
	theta, s := e.Values, e.Vectors
	st.anorm = math.Max(st.anorm, math.Max(math.Abs(theta[0]), math.Abs(theta[m-1])))
	resid := make([]float64, m)
	for i := 0; i < m; i++ {
		sum := 0.0
		for r := 0; r < b; r++ {
			x := 0.0
			for c := r; c < b; c++ {
				x += st.rr[r*b+c] * s.At(m-b+c, i)
			}
			sum += x * x
		}
		resid[i] = math.Sqrt(sum)
	}
	return theta, s, resid, nil
}

// finish forms the k Ritz vectors V·S of the basis's first m columns
// (signs fixed over all parts) and the result: converged when all k met
// the test, else the iteration limit.
func (st *ksState) finish(m int, theta []float64, s *mat.Dense, resid []float64, nconv, restart int) (*Result, error) {
	n, k, res := st.n, st.k, st.res
	res.Values = append([]float64(nil), theta[:k]...)
	res.Vectors = mat.NewDense(n, k, nil)
	linalg.Mul(res.Vectors, st.v.Slice(0, n, 0, m), s.Slice(0, m, 0, k))
	if err := fixSigns(res.Vectors, st.offset, st.N, st.red); err != nil {
		return nil, err
	}
	res.Residuals = resid[:k]
	res.NumConverged = nconv
	if nconv < k {
		res.Status = status.Status{Code: status.IterationLimit, Test: st.test(),
			Detail: fmt.Sprintf("%d restarts", restart)}
		return res, notConverged(st.ks.name, res)
	}
	res.Status = status.Status{Code: status.Converged, Test: st.test()}
	return res, nil
}

// project sets h = vᵀ·w: linalg.BasisTMul (one read of v where it lies:
// OpenBLAS's dgemm packed all of v for b multiply-adds an entry and ran at
// 5–8 GFLOP/s on these shapes, docs/measurements.md), or dgemv for a
// single column.
func project(h, v, w *mat.Dense) {
	vr, wr, hr := v.RawMatrix(), w.RawMatrix(), h.RawMatrix()
	if wr.Cols == 1 {
		linalg.B64.Gemv(blas.Trans, 1, vr, blas64.Vector{N: wr.Rows, Inc: wr.Stride, Data: wr.Data},
			0, blas64.Vector{N: hr.Rows, Inc: hr.Stride, Data: hr.Data})
		return
	}
	linalg.BasisTMul(h, v, w)
}

// subMul sets w −= v·h by linalg.BasisSubMul (dgemv for a single column)
// and no temporary.
func subMul(w, v, h *mat.Dense) {
	vr, wr, hr := v.RawMatrix(), w.RawMatrix(), h.RawMatrix()
	if wr.Cols == 1 {
		linalg.B64.Gemv(blas.NoTrans, -1, vr, blas64.Vector{N: hr.Rows, Inc: hr.Stride, Data: hr.Data},
			1, blas64.Vector{N: wr.Rows, Inc: wr.Stride, Data: wr.Data})
		return
	}
	linalg.BasisSubMul(w, v, h)
}

func ceilTo(x, b int) int  { return (x + b - 1) / b * b }
func floorTo(x, b int) int { return x / b * b }

// opOnly hides a Matrixer so the dense fallback goes through Apply and its
// passes are counted like every other solver's.
type opOnly struct{ Operator }
