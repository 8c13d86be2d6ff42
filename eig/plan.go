package eig

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// OperatorKind names how a kernel matrix is stored and applied.
type OperatorKind int

const (
	// OperatorAuto lets Plan choose.
	OperatorAuto OperatorKind = iota
	// OperatorFloat64 stores G exactly in float64, about 4n² bytes
	// resident: full storage with only the upper triangle written
	// (Float64Full) in 4 KB pages, else one triangle in tiles
	// (Float64Tiles); see float64Layout.
	OperatorFloat64
	// OperatorFloat32 stores one triangle of G in float32 (Float32,
	// about 2n² bytes).
	OperatorFloat32
	// OperatorMatrixFree stores only the data and forms G in every pass
	// (KernelOp).
	OperatorMatrixFree
)

func (k OperatorKind) String() string {
	switch k {
	case OperatorAuto:
		return "auto"
	case OperatorFloat64:
		return "float64"
	case OperatorFloat32:
		return "float32"
	case OperatorMatrixFree:
		return "matrix-free"
	}
	return fmt.Sprintf("OperatorKind(%d)", int(k))
}

// ParseOperatorKind reads auto, float64, float32 or matrix-free.
func ParseOperatorKind(s string) (OperatorKind, error) {
	for _, k := range []OperatorKind{OperatorAuto, OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("eig: unknown operator %q (auto, float64, float32, matrix-free): %w", s, status.ErrInvalid)
}

// PlanInput describes a kernel eigenproblem for Plan.
type PlanInput struct {
	N, D int // points and their dimension
	K    int // eigenpairs wanted
	// Tol is the relative accuracy wanted of the eigenvalues (the
	// solvers' Tol; 0 means their default 1e-10).
	Tol float64
	// Budget is the memory available in bytes; 0 means DefaultBudget.
	Budget int64
	// Dense is true when every eigenpair is wanted by LAPACK (the dense
	// solver needs the float64 matrix and a copy).
	Dense bool
	// Want forces an operator kind (OperatorAuto: choose).
	Want OperatorKind
	// NonNegative is true when every entry of the stored matrix is ≥ 0
	// (the Gaussian and Laplace kernels; the centring is applied apart,
	// see Centered): float32 arithmetic in block products then errs by at
	// most gram.BlockRel·‖G‖₂‖x‖ (see Plan.SingleBlocks).
	NonNegative bool
	// OneVector is true when the solver multiplies one vector at a time
	// (Lanczos): float32 tiles are then never chosen for speed, only for
	// memory (one-vector passes over them are not faster here).
	OneVector bool
	// Ranks is the number of processes the rows are split over (package
	// dist): 0 or 1 plans one process's operator; more plans one rank's
	// share of the kernel's upper triangle (eig.TriangleLayout), Budget
	// then being the bytes per rank.
	Ranks int
	// SingleFaster reports whether float32 tiles with blocks in float32
	// arithmetic multiply blocks faster than the float64 matrix on this
	// machine; nil means the rule in force (paths.Current().SingleBlocks).
	// It is asked only when the answer decides the plan.
	SingleFaster func() bool
	// NoFloat32 is true when the kernel's values may leave float32's
	// range (gram.Store32Range): float32 storage is then never chosen,
	// and a forced float32 is refused.
	NoFloat32 bool
}

// Plan is the planner's choice.
type Plan struct {
	Operator OperatorKind
	// Solver for the operator: on stored matrices block Krylov in blocks
	// of 8 from 200 rows when k ≤ n/5 (kernel matrices: several times
	// LAPACK's speed from 500 rows, docs/measurements.md; checked after
	// every block from checkEachMin rows), eig.Auto
	// otherwise (LAPACK); block Krylov with blocks of max(3k, 32)
	// matrix-free, where a pass costs a Gram build whatever its width, so
	// wide blocks take fewer passes (docs/operators.md), checked after
	// every block and with the residual relative to ‖A‖
	// (BlockKrylov.CheckEachBlock and NormTest: the scale of the
	// operator's own float32 error bounds). nil when the dense solver is
	// asked.
	Solver Solver
	// Bytes is the memory the operator and the solver's basis need;
	// Budget the budget it was planned against.
	Bytes, Budget int64
	// StorageBound is the bound of the relative eigenvalue error that the
	// storage adds, |λ̂ − λ|/λ₁ ≤ u·√n (u = 2⁻²⁴ for float32, 0 otherwise),
	// from ‖E‖₂ ≤ ‖E‖_F ≤ u‖G‖_F ≤ u√n‖G‖₂.
	StorageBound float64
	// SingleBlocks asks the float32 operator to multiply blocks in
	// float32 arithmetic (gram.GramOptions.SingleBlocks). Each entry of
	// such a product is within BlockRel·(|G||x|) of G·x; for a
	// nonnegative G, |G||x| = G|x| and ‖G|x|‖ ≤ ‖G‖₂‖x‖, so the product
	// is that of a matrix within BlockRel·‖G‖₂ of G — the same kind of
	// bound as the storage's. The planner sets it for float32 storage of
	// a nonnegative kernel when StorageBound + BlockRel ≤ Tol, and adds
	// BlockRel to StorageBound.
	SingleBlocks bool
	Reason       string
}

// checkEachMin is the size from which the planner's block Krylov on a
// stored matrix checks its stopping test after every block: on the
// Fashion-MNIST kernels (k = 20) it stopped after 19 passes instead of 21,
// 10–15 % faster at n = 7000 and 20 000, no faster at n = 2000, where a
// pass costs little more than the Rayleigh–Ritz step (docs/measurements.md).
const checkEachMin = 4000

// layout64 names the float64 layout for n points.
func layout64(n int) string {
	_, why := float64Layout(n)
	return why
}

// Float32Unit is the unit roundoff of float32 storage, 2⁻²⁴.
const Float32Unit = 1.0 / (1 << 24)

// Memory estimates in bytes of the three operators for n points of
// dimension d and a solver basis of m vectors (the data themselves, n·d
// float64s, counted once in each; the matrix-free operator's own copy of
// them, its n row norms and one kernel panel besides; the planner adds the
// vectors of its pass, updateVectors, to its basis).
func memFloat64(n, d, m int) int64 {
	t := int64(gram.TileSide64For(n))
	nn := (int64(n) + t - 1) / t * t
	return 4*nn*(nn+t) + 8*int64(n)*int64(d+m)
}
func memFloat32(n, d, m int) int64 {
	t := int64(gram.TileSize)
	nn := (int64(n) + t - 1) / t * t
	return 2*nn*(nn+t) + 8*int64(n)*int64(2*d+m)
}
func memMatrixFree(n, d, m int) int64 {
	return 8*int64(n)*int64(2*d+m+1) + 8*int64(min(n, kernelPanelRows))*int64(min(n, kernelPanelCols))
}

// DefaultBudget returns the memory this process may use (bigmem.Total:
// MemTotal, or the cgroup's limit when smaller) less 10% and 512 MiB, 0
// when neither can be read. It does not follow the memory other processes
// hold at the moment (MemAvailable), so the same machine plans the same
// operator in every run; give a budget (KPCA.MemoryBudget, --memory) on a
// shared machine.
func DefaultBudget() int64 {
	a := bigmem.Total()
	if a <= 0 {
		return 0
	}
	return max(0, a-a/10-512<<20)
}

// minSpeedN is the smallest n for which PlanOperator stores float32 for
// speed: below it the float64 matrix (at most 32 MB) is a few milliseconds
// per pass either way (docs/operators.md).
const minSpeedN = 2048

// PlanOperator chooses how to store and apply the kernel matrix, by this
// rule: float64 when it takes at most half the budget — unless n ≥ 2048,
// the kernel is nonnegative, the solver multiplies blocks (not OneVector,
// not Dense), float32 half storage with blocks in float32 arithmetic keeps
// u·√n + BlockRel within Tol and SingleFaster says such passes are faster
// on this machine (by default the rule of package paths, Paths.SingleBlocks):
// then float32, for speed; float32 half storage when the storage bound
// u·√n is at most Tol (the rounding of the storage adds at most what the
// solver's own tolerance allows) and either float64 does not fit or takes
// more than half the budget (the first touch of that much fresh memory
// costs more than float64's passes gain: docs/operators.md); float64 when
// it fits; otherwise matrix-free (exact, a Gram build per pass) when the
// data fit. A forced kind (Want) is taken as asked if it fits the budget,
// and refused before anything is allocated otherwise (the error names the
// size it needs and what would fit). The plan
// depends on its inputs alone (the budget is an input: DefaultBudget when
// zero), never on a timing. Float32 storage is never chosen, and refused
// when forced, for a kernel whose values may leave float32's range
// (NoFloat32). The reason is a sentence for people.
func PlanOperator(in PlanInput) (Plan, error) {
	tol, budget, source, err := planInputs(in)
	if err != nil {
		return Plan{}, err
	}
	if in.Ranks > 1 {
		return planRanks(in, tol, budget)
	}
	stored := 3*in.K + 8 // block Krylov basis, block 8
	freeBlock := max(3*in.K, 32)
	freeBasis := 3*in.K + 2*freeBlock
	b64 := memFloat64(in.N, in.D, stored)
	if in.Dense {
		// The matrix in LAPACK's layout (Float64Tiles.SymMatrix), and
		// LAPACK's eigenvectors.
		b64 += 16 * int64(in.N) * int64(in.N)
	}
	b32 := memFloat32(in.N, in.D, stored)
	bfree := memMatrixFree(in.N, in.D, freeBasis+updateVectors(freeBlock))
	bound32 := storageBound32(in)
	p := Plan{Budget: budget}
	var stock Solver = Auto{Tol: in.Tol}
	if in.N > planDenseMax && 5*in.K <= in.N {
		stock = BlockKrylov{Tol: in.Tol, Block: autoBlock, CheckEachBlock: in.N >= checkEachMin}
	}
	free := BlockKrylov{Tol: in.Tol, Block: freeBlock, CheckEachBlock: true, NormTest: true}
	if err := forcedFits(in, map[OperatorKind]int64{OperatorFloat64: b64, OperatorFloat32: b32, OperatorMatrixFree: bfree}, budget, source); err != nil {
		return Plan{}, err
	}
	switch in.Want {
	case OperatorFloat64:
		p.Operator, p.Bytes, p.Solver = OperatorFloat64, b64, stock
		p.Reason = fmt.Sprintf("float64 as asked (%s; %s)", bigmem.Size(b64), layout64(in.N))
	case OperatorFloat32:
		p.Operator, p.Bytes, p.Solver, p.StorageBound = OperatorFloat32, b32, stock, bound32
		p.Reason = fmt.Sprintf("float32 half storage as asked (%s; storage bound u·√n = %.1e)", bigmem.Size(b32), bound32)
	case OperatorMatrixFree:
		p.Operator, p.Bytes, p.Solver = OperatorMatrixFree, bfree, free
		p.Reason = fmt.Sprintf("matrix-free as asked (%s), block Krylov with blocks of %d", bigmem.Size(bfree), freeBlock)
	case OperatorAuto:
		single := in.N >= minSpeedN && in.NonNegative && !in.Dense && !in.OneVector && bound32+gram.BlockRel <= tol
		faster := in.SingleFaster
		if faster == nil {
			faster = func() bool { return paths.Current().SingleBlocks }
		}
		switch {
		case b64 <= budget/2 && single && b32 <= budget && faster():
			p.Operator, p.Bytes, p.Solver, p.StorageBound = OperatorFloat32, b32, stock, bound32
			p.Reason = fmt.Sprintf("float64 fits (%s of %s %s), but float32 half storage (%s) with blocks in float32 arithmetic stays within tol = %.1e (u·√n + %.1e = %.1e) and its block passes are faster here (paths: single blocks)",
				bigmem.Size(b64), bigmem.Size(budget), source, bigmem.Size(b32), tol, gram.BlockRel, bound32+gram.BlockRel)
		case b64 > budget/2 && b64 <= budget && !in.Dense && bound32 <= tol:
			p.Operator, p.Bytes, p.Solver, p.StorageBound = OperatorFloat32, b32, stock, bound32
			p.Reason = fmt.Sprintf("float64 would take %s, over half of %s %s; float32 half storage takes %s and its storage bound u·√n = %.1e ≤ tol = %.1e",
				bigmem.Size(b64), bigmem.Size(budget), source, bigmem.Size(b32), bound32, tol)
		case b64 <= budget:
			p.Operator, p.Bytes, p.Solver = OperatorFloat64, b64, stock
			p.Reason = fmt.Sprintf("float64 fits: %s of %s %s; %s", bigmem.Size(b64), bigmem.Size(budget), source, layout64(in.N))
		case !in.Dense && b32 <= budget && bound32 <= tol:
			p.Operator, p.Bytes, p.Solver, p.StorageBound = OperatorFloat32, b32, stock, bound32
			p.Reason = fmt.Sprintf("float64 needs %s of %s %s; float32 half storage fits (%s) and its storage bound u·√n = %.1e ≤ tol = %.1e",
				bigmem.Size(b64), bigmem.Size(budget), source, bigmem.Size(b32), bound32, tol)
		case !in.Dense && bfree <= budget:
			why := "does not fit"
			if in.NoFloat32 {
				why = "cannot hold these kernel values (past float32's range)"
			} else if b32 <= budget {
				why = fmt.Sprintf("would fit but its storage bound u·√n = %.1e exceeds tol = %.1e", bound32, tol)
			}
			p.Operator, p.Bytes, p.Solver = OperatorMatrixFree, bfree, free
			p.Reason = fmt.Sprintf("float64 needs %s of %s %s; float32 (%s) %s; matrix-free needs %s, with block Krylov in blocks of %d",
				bigmem.Size(b64), bigmem.Size(budget), source, bigmem.Size(b32), why, bigmem.Size(bfree), freeBlock)
		default:
			return Plan{}, fmt.Errorf("eig: PlanOperator: n = %d, d = %d needs at least %s, %s %s: %w",
				in.N, in.D, bigmem.Size(min(b64, bfree)), bigmem.Size(budget), source, status.ErrInvalid)
		}
	default:
		return Plan{}, fmt.Errorf("eig: PlanOperator: %v: %w", in.Want, status.ErrInvalid)
	}
	if p.Operator == OperatorFloat32 && in.NonNegative && bound32+gram.BlockRel <= tol {
		p.SingleBlocks = true
		p.StorageBound += gram.BlockRel
		p.Reason += fmt.Sprintf("; blocks in float32 arithmetic (nonnegative kernel: bound + %.1e ≤ tol)", gram.BlockRel)
	}
	if in.Dense {
		p.Solver = nil
		if p.Operator != OperatorFloat64 {
			return Plan{}, fmt.Errorf("eig: PlanOperator: the dense solver needs the float64 matrix: %w", status.ErrInvalid)
		}
	}
	return p, nil
}

// NewKernelOperator builds the operator of a plan for the kernel matrix
// of the rows of x, centred implicitly when center is true (the matrix is
// never rewritten), with inner products in the precision asked (float32
// products apply to the float32 and matrix-free operators; the float64
// matrix is always built in float64). x is not modified. o's Context and
// Progress apply to the build (and, for the matrix-free operator, to every
// pass: see KernelOp). It is kernel.Prepare (with SourceOptions) and
// NewKernelOperatorFrom; a matrix-free operator of a kernel whose rows
// gram reads in place gets a private copy of them.
func NewKernelOperator(x *mat.Dense, k kernel.Kernel, kind OperatorKind, center bool, o gram.GramOptions) (Operator, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("eig: NewKernelOperator: empty data: %w", status.ErrInvalid)
	}
	_, d := x.Dims()
	src, err := kernel.Prepare(x, k, SourceOptions(kind, o), kind == OperatorMatrixFree && !k.ElementMap(d).Shifted())
	if err != nil {
		return nil, err
	}
	return NewKernelOperatorFrom(src, kind, center, o)
}

// SourceOptions returns o as the source of an operator of kind must be
// prepared (gram.Prepare): float64 products for OperatorFloat64.
func SourceOptions(kind OperatorKind, o gram.GramOptions) gram.GramOptions {
	if kind == OperatorFloat64 {
		o.Products = gram.ProductsFloat64
	}
	return o
}

// NewKernelOperatorFrom is NewKernelOperator on rows prepared once by
// gram.Prepare (with SourceOptions(kind, o)): the operator reads only the
// source's forms. A matrix-free operator keeps src and reads it at every
// pass, so src must not be shared with another KernelRows.
func NewKernelOperatorFrom(src *gram.Source, kind OperatorKind, center bool, o gram.GramOptions) (Operator, error) {
	var op Operator
	switch kind {
	case OperatorFloat64:
		t, err := newFloat64Kernel(src, SourceOptions(kind, o))
		if err != nil {
			return nil, err
		}
		op = t
	case OperatorFloat32:
		s, err := src.Tiles32(o)
		if err != nil {
			return nil, err
		}
		if op, err = NewFloat32Tiles(s); err != nil {
			return nil, err
		}
	case OperatorMatrixFree:
		op = newKernelOp(src.Rows(o), o)
	default:
		return nil, fmt.Errorf("eig: NewKernelOperator: operator %v: %w", kind, status.ErrInvalid)
	}
	if center && kind != OperatorFloat32 {
		// The row means ride along with the solver's first block instead
		// of taking a pass of their own: matrix-free, a pass is a kernel
		// build; on the float64 matrix a single vector goes to OpenBLAS's
		// threaded dsymv, whose worker then spins beside the rest of a
		// small fit (docs/measurements.md). The float32 tiles' own
		// one-vector kernel costs less than the wider first block.
		return NewCenteredDeferred(op)
	}
	if center {
		return NewCentered(op)
	}
	return op, nil
}

// Release frees the storage of an operator from NewKernelOperator (the
// float64 full storage, float32 tiles, a centred matrix made for the
// dense solver) now rather than when the collector finds it unreachable,
// so the next allocation can reuse the memory (storage on the Go heap goes
// back to package scratch); op, and every matrix its SymMatrix returned,
// must not be used afterwards. Other operators are left alone.
func Release(op Operator) {
	if c, ok := op.(*Centered); ok {
		c.free()
		op = c.op
	}
	if f, ok := op.(interface{ Free() }); ok {
		f.Free()
	}
}

// forcedFits refuses an operator kind asked for (in.Want) whose bytes
// (sizes) exceed the budget, naming the kinds that would fit.
func forcedFits(in PlanInput, sizes map[OperatorKind]int64, budget int64, source string) error {
	need, forced := sizes[in.Want]
	if !forced || budget <= 0 || need <= budget {
		return nil
	}
	var fits []string
	for _, k := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		if b := sizes[k]; b <= budget && !(in.Dense && k != OperatorFloat64) {
			fits = append(fits, fmt.Sprintf("%v (%s)", k, bigmem.Size(b)))
		}
	}
	what := "nothing fits"
	if len(fits) > 0 {
		what = "what fits: " + strings.Join(fits, ", ")
	}
	return fmt.Errorf("eig: PlanOperator: the %v operator asked for needs %s, over the budget of %s %s; %s: %w",
		in.Want, bigmem.Size(need), bigmem.Size(budget), source, what, status.ErrInvalid)
}

// planInputs checks PlanOperator's input and returns the tolerance and
// budget in force (defaults for zero) and where the budget came from.
func planInputs(in PlanInput) (tol float64, budget int64, source string, err error) {
	if in.N < 1 || in.D < 1 || in.K < 1 || in.K > in.N {
		return 0, 0, "", fmt.Errorf("eig: PlanOperator: n = %d, d = %d, k = %d: %w", in.N, in.D, in.K, status.ErrInvalid)
	}
	tol = in.Tol
	if tol == 0 {
		tol = 1e-10
	}
	if !(tol > 0) || math.IsInf(tol, 0) {
		return 0, 0, "", fmt.Errorf("eig: PlanOperator: tolerance %g: %w", in.Tol, status.ErrInvalid)
	}
	if in.NoFloat32 && in.Want == OperatorFloat32 {
		return 0, 0, "", fmt.Errorf("eig: PlanOperator: the float32 operator asked for cannot hold this kernel's values (past float32's range): %w", status.ErrInvalid)
	}
	budget, source = in.Budget, "given"
	if budget <= 0 {
		budget, source = DefaultBudget(), "by default (total memory less 10% and 512 MiB)"
	}
	return tol, budget, source, nil
}

// storageBound32 is float32 storage's relative bound u·√n, or +Inf when
// the kernel's values cannot be stored in float32 (NoFloat32): every rule
// that stores float32 then finds it above any tolerance.
func storageBound32(in PlanInput) float64 {
	if in.NoFloat32 {
		return math.Inf(1)
	}
	return Float32Unit * math.Sqrt(float64(in.N))
}

// planDenseMax is the largest n for which the planner leaves a stored
// kernel matrix to eig.Auto (LAPACK); from there it pairs block Krylov.
const planDenseMax = 200

// planRanks is PlanOperator for the rows split over in.Ranks ranks, by
// the single-process rule applied to one rank's share (the largest
// rank's, of the triangle split by eig.TriangleLayout): the float64
// triangle when it fits the budget per rank; otherwise the float32
// triangle when its band fits and its storage bound u·√n is at most tol;
// otherwise matrix-free when the data fit. Its solver is block Krylov,
// in blocks of 8 on a stored triangle and of max(3k, 32) matrix-free (the
// dense solver needs one process). Every rank must act on the same plan:
// compute it on one rank and broadcast it (budgets read on different
// ranks differ).
func planRanks(in PlanInput, tol float64, budget int64) (Plan, error) {
	n, d, k, ranks := in.N, in.D, in.K, in.Ranks
	if k >= n || n < ranks {
		return Plan{}, fmt.Errorf("eig: PlanOperator: n = %d, k = %d over %d ranks: %w", n, k, ranks, status.ErrInvalid)
	}
	if in.Dense {
		return Plan{}, fmt.Errorf("eig: PlanOperator: the dense solver needs one process, not %d ranks: %w", ranks, status.ErrInvalid)
	}
	split, err := TriangleLayout(n, ranks, TileSide64(n, ranks))
	if err != nil {
		return Plan{}, err
	}
	maxRows := 0
	for r := 0; r < ranks; r++ {
		lo, hi := split.Rows(r)
		maxRows = max(maxRows, hi-lo)
	}
	data := 8 * int64(n) * int64(d)
	basis := 8 * int64(maxRows) * int64(3*k+8)
	block := 8 * int64(n) * 8 // a gathered block of 8 vectors and the band's contribution
	b64 := bandBytes(n, ranks, TileSide64(n, ranks), 8) + data + basis + 2*block
	b32 := int64(-1)
	if bb := bandBytes(n, ranks, gram.TileSize, 4); bb > 0 {
		b32 = bb + data + basis + 2*block
	}
	freeBlock := max(3*k, 32)
	bfree := 2*data + 8*int64(min(maxRows, kernelPanelRows))*int64(min(n, kernelPanelCols)) + 8*int64(maxRows)*int64(3*k+2*freeBlock) + 3*8*int64(n)*int64(freeBlock)
	bound32 := storageBound32(in)
	p := Plan{Budget: budget, Solver: BlockKrylov{Tol: in.Tol, Block: 8}}
	set := func(kind OperatorKind, bytes int64, reason string) (Plan, error) {
		p.Operator, p.Bytes, p.Reason = kind, bytes, reason
		if kind == OperatorFloat32 {
			p.StorageBound = bound32
		}
		if kind == OperatorMatrixFree {
			p.Solver = BlockKrylov{Tol: in.Tol, Block: freeBlock, CheckEachBlock: true, NormTest: true}
		}
		return p, nil
	}
	switch in.Want {
	case OperatorFloat64:
		return set(OperatorFloat64, b64, fmt.Sprintf("float64 triangle as asked (%s per rank)", bigmem.Size(b64)))
	case OperatorFloat32:
		if b32 < 0 {
			return Plan{}, fmt.Errorf("eig: PlanOperator: the float32 triangle needs more than %d rows for %d ranks (a tile row of %d each): %w",
				gram.TileSize*(ranks-1), ranks, gram.TileSize, status.ErrInvalid)
		}
		return set(OperatorFloat32, b32, fmt.Sprintf("float32 triangle as asked (%s per rank; storage bound u·√n = %.1e)", bigmem.Size(b32), bound32))
	case OperatorMatrixFree:
		return set(OperatorMatrixFree, bfree, fmt.Sprintf("matrix-free as asked (%s per rank)", bigmem.Size(bfree)))
	case OperatorAuto:
	default:
		return Plan{}, fmt.Errorf("eig: PlanOperator: %v: %w", in.Want, status.ErrInvalid)
	}
	switch {
	case b64 <= budget:
		return set(OperatorFloat64, b64, fmt.Sprintf("the float64 triangle fits: %s of %s per rank", bigmem.Size(b64), bigmem.Size(budget)))
	case b32 > 0 && b32 <= budget && bound32 <= tol:
		return set(OperatorFloat32, b32, fmt.Sprintf("float64 needs %s of %s per rank; the float32 triangle fits (%s) and its storage bound u·√n = %.1e ≤ tol = %.1e",
			bigmem.Size(b64), bigmem.Size(budget), bigmem.Size(b32), bound32, tol))
	case bfree <= budget:
		why := "does not fit"
		if in.NoFloat32 {
			why = "cannot hold these kernel values (past float32's range)"
		} else if b32 > 0 && b32 <= budget {
			why = fmt.Sprintf("fits but its storage bound u·√n = %.1e exceeds tol = %.1e", bound32, tol)
		}
		return set(OperatorMatrixFree, bfree, fmt.Sprintf("float64 needs %s of %s per rank; float32 %s; matrix-free needs %s",
			bigmem.Size(b64), bigmem.Size(budget), why, bigmem.Size(bfree)))
	}
	return Plan{}, fmt.Errorf("eig: PlanOperator: n = %d, d = %d needs at least %s per rank, %s given: %w", n, d, bigmem.Size(min(b64, bfree)), bigmem.Size(budget), status.ErrInvalid)
}
