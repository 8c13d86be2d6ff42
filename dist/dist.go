//go:build mpi

// Package dist runs kdual's kernel operators across MPI ranks: rank r holds
// a contiguous block of the rows (every rank holds the data X, n×d, which
// is small next to the kernel), and either its rows of the kernel matrix's
// upper triangle (half storage, split by tile rows) in float64 or float32
// tiles, or nothing (matrix-free: formed again in every pass). The
// operators implement eig.Distributed, so eig's Krylov solvers
// (BlockKrylov, Lanczos) and kpca's dual L-BFGS (kpca.SolveDual) run on
// them unchanged: every n-long vector is split by rows, inner products go
// through Reduction (MPI_Allreduce, then rank 0's sums broadcast, so every
// rank holds the same bits), and every s×s decision is then computed from
// identical numbers by identical code on every rank — the ranks never
// diverge. A pass gathers the block of vectors every rank needs with one
// MPI_Allgatherv (the stored triangles add one MPI_Reduce_scatter for the
// transposed half). Builds only with the build tag mpi.
package dist

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// Layout is the split of n rows into contiguous blocks, one per rank
// (NewTriangleLayout).
type Layout struct {
	N      int
	Starts []int // Starts[r] is rank r's first row; Starts[P] = N
}

// NewTriangleLayout splits n rows over p ranks for the float32 triangle:
// at tile boundaries (gram.TileSize rows), each rank's tile rows holding
// about the same number of tiles of the upper triangle (so the first ranks
// get more rows). Every rank needs at least one tile row: n > TileSize·(p−1).
func NewTriangleLayout(n, p int) (Layout, error) { return triangleLayout(n, p, gram.TileSize) }

// triangleLayout is NewTriangleLayout for tiles of side t.
func triangleLayout(n, p, t int) (Layout, error) {
	nt := (n + t - 1) / t
	if p < 1 || nt < p {
		return Layout{}, fmt.Errorf("dist: the triangle of %d rows over %d ranks: each rank needs a tile row of %d, so at least %d rows: %w",
			n, p, t, t*(p-1)+1, status.ErrInvalid)
	}
	// Tile row I holds nt − I tiles; cut where the running count passes
	// r/p of the total, leaving every rank at least one tile row.
	total := nt * (nt + 1) / 2
	l := Layout{N: n, Starts: make([]int, p+1)}
	acc, I := 0, 0
	for r := 1; r < p; r++ {
		target := float64(total) * float64(r) / float64(p)
		prev := I
		// Take tile row I while its middle is below the target, at least
		// one row per rank, and leave one for each rank after r.
		for I < nt-(p-r) && (I == prev || float64(acc)+float64(nt-I)/2 <= target) {
			acc += nt - I
			I++
		}
		l.Starts[r] = I * t
	}
	l.Starts[p] = n
	return l, nil
}

// TileSide64 is the tile side of the float64 triangle split over p ranks:
// gram.TileSize, or the largest multiple of 4 at most n/p when n has
// fewer than p tile rows of that size (so small problems still split).
func TileSide64(n, p int) int {
	t := gram.TileSize
	if (n+t-1)/t < p {
		t = max(4, n/max(p, 1)/4*4)
	}
	return t
}

// bandBytes is the largest rank's storage of the triangle in tiles of side
// t with entries of size bytes; -1 when the layout is impossible.
func bandBytes(n, p, t, size int) int64 {
	l, err := triangleLayout(n, p, t)
	if err != nil {
		return -1
	}
	nt := (n + t - 1) / t
	most := int64(0)
	for r := 0; r < p; r++ {
		lo, hi := l.Rows(r)
		tiles := 0
		for I := lo / t; I < (hi+t-1)/t; I++ {
			tiles += nt - I
		}
		most = max(most, int64(size)*int64(tiles)*int64(t*t))
	}
	return most
}

// Rows returns rank r's rows [lo, hi).
func (l Layout) Rows(r int) (lo, hi int) { return l.Starts[r], l.Starts[r+1] }

// Reduction is eig.Reduction over MPI_COMM_WORLD.
type Reduction struct{}

// Sum is MPI_Allreduce(MPI_SUM) followed by MPI_Bcast of rank 0's sums: MPI
// does not promise that every rank's sum has the same bits, and the solvers
// need them to (their decisions are made on every rank from these sums).
func (Reduction) Sum(x []float64) error {
	if err := mpi.AllreduceSum(x); err != nil {
		return err
	}
	return mpi.Bcast(x, 0)
}

// MaxAbs replaces each x[i] by the value of largest magnitude over the
// ranks, keeping its sign (ties: the lowest rank's), from one Allgatherv.
func (Reduction) MaxAbs(x []float64) error {
	p, err := mpi.Size()
	if err != nil {
		return err
	}
	n := len(x)
	all := make([]float64, n*p)
	counts, displs := make([]int, p), make([]int, p)
	for r := range counts {
		counts[r], displs[r] = n, r*n
	}
	if err := mpi.Allgatherv(x, all, counts, displs); err != nil {
		return err
	}
	for i := range x {
		best := all[i]
		for r := 1; r < p; r++ {
			if v := all[r*n+i]; math.Abs(v) > math.Abs(best) {
				best = v
			}
		}
		x[i] = best
	}
	return nil
}

// Kind is how a rank holds its rows of the kernel.
type Kind int

const (
	// Float64 stores the rank's tile rows of the upper triangle in float64
	// (gram.SymTiles64 band, tiles of TileSide64): about n²/(2P)
	// entries, 4n²/P bytes. A pass adds one Reduce_scatter of n×b for the
	// transposed half.
	Float64 Kind = iota
	// MatrixFree stores nothing: every pass forms the rank's tile rows of
	// the upper triangle again, by panels (the rows split as Float64's),
	// and applies them to both sides of the diagonal, as the stored
	// triangles are.
	MatrixFree
	// Float32 stores the rank's tile rows of the upper triangle in float32
	// (gram.SymTiles32 band; NewTriangleLayout): about n²/(2P) entries,
	// 2n²/P bytes. A pass adds one Reduce_scatter of n×b for the
	// transposed half.
	Float32
)

// String names the kind as the CLI does.
func (k Kind) String() string {
	switch k {
	case Float64:
		return "float64"
	case MatrixFree:
		return "matrix-free"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Operator is this rank's part of a row-distributed kernel operator,
// doubly centred (M·K·M, from the global row means) when asked.
type Operator struct {
	layout Layout
	rank   int
	kind   Kind
	band   band             // this rank's rows of the upper triangle (stored or formed per pass)
	tiles  *gram.SymTiles32 // Float32: the band's storage
	part   []float64        // the band's contribution (n×b)
	center bool             // doubly centred
	means  []float64        // centred: the global row means K·1/n (n); nil until the first pass (matrix-free)
	mean   float64          // centred: the grand mean
	xfull  *mat.Dense       // the gathered block (n×b), reused
	stats  Stats
}

// band is a rank's tile rows of the triangle: its contribution to A·x and
// its storage.
type band interface {
	MulBlock(dst, x *mat.Dense)
	Bytes() int64
}

// vecBand is a band with a one-vector product (the stored tiles).
type vecBand interface {
	MulVec(y, x []float64)
}

// Stats counts a rank's communication.
type Stats struct {
	Passes    int
	BytesSent int64 // handed to MPI by this rank in the passes (Allgatherv, Reduce_scatter)
	// Reductions counts the solver's reductions (Sum, MaxAbs) through
	// Reduction, ReducedValues the values they combined: latency-bound
	// collectives, apart from the passes.
	Reductions    int
	ReducedValues int64
	// CommSeconds is the time this rank spent in MPI calls (waiting for
	// the slowest rank included).
	CommSeconds float64
}

// panelRows and panelCols are the matrix-free panel's shape (as eig's
// KernelOp).
const (
	panelRows = 512
	panelCols = 4096
)

// freeBand forms the rows [lo, hi) of the kernel's upper triangle panel by
// panel in every product, as eig.KernelOp does for the whole matrix: each
// panel P = K(rows, cols ≥ rows) gives y_rows += P·x_cols and, right of
// the diagonal block, y_cols += Pᵀ·x_rows.
type freeBand struct {
	rows   *gram.KernelRows
	lo, hi int
	buf    []float64
}

func (f *freeBand) Bytes() int64 { return f.rows.Bytes() + 8*int64(len(f.buf)) }

func (f *freeBand) MulBlock(dst, x *mat.Dense) {
	n, b := x.Dims()
	if f.buf == nil {
		f.buf = make([]float64, min(panelRows, f.hi-f.lo)*min(panelCols, n))
	}
	xg, yg := x.RawMatrix(), dst.RawMatrix()
	for i := 0; i < n; i++ {
		clear(yg.Data[i*yg.Stride : i*yg.Stride+b])
	}
	sub := func(g blas64.General, r0, r1 int) blas64.General {
		return blas64.General{Rows: r1 - r0, Cols: b, Stride: g.Stride, Data: g.Data[r0*g.Stride:]}
	}
	ld := min(panelCols, n)
	for i0 := f.lo; i0 < f.hi; i0 += panelRows {
		i1 := min(i0+panelRows, f.hi)
		for j0 := i0; j0 < n; j0 += ld {
			j1 := min(j0+ld, n)
			f.rows.Block(f.buf, ld, i0, i1, j0, j1)
			p := blas64.General{Rows: i1 - i0, Cols: j1 - j0, Stride: ld, Data: f.buf}
			linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, 1, p, sub(xg, j0, j1), 1, sub(yg, i0, i1))
			if off := max(0, i1-j0); j1-j0 > off {
				q := blas64.General{Rows: i1 - i0, Cols: j1 - j0 - off, Stride: ld, Data: f.buf[off:]}
				linalg.B64.Gemm(blas.Trans, blas.NoTrans, 1, q, sub(xg, i0, i1), 1, sub(yg, j0+off, j1))
			}
		}
	}
}

// NewKernelOperator returns this rank's part of the kernel operator of the
// rows of x (n×d, the same on every rank; not modified), its rows split so
// that every rank holds (or forms) about the same share of the upper
// triangle: NewTriangleLayout for Float32, the same with tiles of
// TileSide64 for Float64 and MatrixFree.
func NewKernelOperator(x *mat.Dense, k kernel.Kernel, kind Kind, center bool) (*Operator, error) {
	return NewKernelOperatorWith(x, k, kind, center, gram.GramOptions{})
}

// NewKernelOperatorWith is NewKernelOperator with Gram options (the
// precision of the inner products, a context, progress).
func NewKernelOperatorWith(x *mat.Dense, k kernel.Kernel, kind Kind, center bool, o gram.GramOptions) (*Operator, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("dist: empty data: %w", status.ErrInvalid)
	}
	p, err := mpi.Size()
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	var l Layout
	switch kind {
	case Float64, MatrixFree:
		l, err = triangleLayout(n, p, TileSide64(n, p))
	case Float32:
		l, err = NewTriangleLayout(n, p)
	default:
		err = fmt.Errorf("dist: operator kind %d: %w", kind, status.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	op := &Operator{layout: l, rank: mpi.Rank(), kind: kind}
	lo, hi := l.Rows(op.rank)
	switch kind {
	case Float64:
		if err := k.Check(); err != nil {
			return nil, err
		}
		_, d := x.Dims()
		t := TileSide64(n, p)
		o.Products = gram.ProductsFloat64 // exact storage: the products too
		if op.band, err = gram.GramTiles64Band(x, k.ElementMap(d), o, t, lo/t, (hi+t-1)/t); err != nil {
			return nil, err
		}
	case Float32:
		t := gram.TileSize
		if op.tiles, err = kernel.GramTiles32Band(x, k, o, lo/t, (hi+t-1)/t); err != nil {
			return nil, err
		}
		op.band = op.tiles
	case MatrixFree:
		rows, err := kernel.Rows(x, k, o)
		if err != nil {
			return nil, err
		}
		op.band = &freeBand{rows: rows, lo: lo, hi: hi}
	default:
		return nil, fmt.Errorf("dist: operator kind %d: %w", kind, status.ErrInvalid)
	}
	op.center = center
	if center && kind != MatrixFree {
		// Row means of K: one pass of the uncentred operator on 1/n,
		// gathered so that every rank holds all n. (A matrix-free pass
		// is a kernel build: there they come with the first pass.)
		ones := mat.NewDense(hi-lo, 1, nil)
		for i := 0; i < hi-lo; i++ {
			ones.Set(i, 0, 1/float64(n))
		}
		local := mat.NewDense(hi-lo, 1, nil)
		if err := op.apply(local, ones, false); err != nil {
			return nil, err
		}
		if err := op.setMeans(local.RawMatrix().Data, 1, 0); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// setMeans gathers the global row means from this rank's rows of K·1/n
// (entry i at local[i·stride + col]) into every rank.
func (o *Operator) setMeans(local []float64, stride, col int) error {
	nr, n := o.Dim(), o.layout.N
	mine := make([]float64, nr)
	for i := range mine {
		mine[i] = local[i*stride+col]
	}
	means := make([]float64, n)
	if err := o.gather(mine, means, 1); err != nil {
		return err
	}
	o.means, o.mean = means, 0
	for _, v := range means {
		o.mean += v
	}
	o.mean /= float64(n)
	return nil
}

// Dim is this rank's number of rows.
func (o *Operator) Dim() int { lo, hi := o.layout.Rows(o.rank); return hi - lo }

// GlobalDim is n.
func (o *Operator) GlobalDim() int { return o.layout.N }

// RowOffset is this rank's first row.
func (o *Operator) RowOffset() int { return o.layout.Starts[o.rank] }

// Reduction is MPI's.
// It counts its calls in Stats.
func (o *Operator) Reduction() eig.Reduction { return countingReduction{&o.stats} }

// countingReduction is Reduction counting its calls and values.
type countingReduction struct{ st *Stats }

func (c countingReduction) Sum(x []float64) error {
	defer c.count(len(x), time.Now())
	return Reduction{}.Sum(x)
}

func (c countingReduction) MaxAbs(x []float64) error {
	defer c.count(len(x), time.Now())
	return Reduction{}.MaxAbs(x)
}

func (c countingReduction) count(values int, start time.Time) {
	c.st.Reductions++
	c.st.ReducedValues += int64(values)
	c.st.CommSeconds += time.Since(start).Seconds()
}

// Kind is how this operator holds its rows.
func (o *Operator) Kind() Kind { return o.kind }

// Layout is the split of the rows over the ranks.
func (o *Operator) Layout() Layout { return o.layout }

// Stats returns the communication so far.
func (o *Operator) Stats() Stats { return o.stats }

// Bytes is the memory this rank holds for the operator.
func (o *Operator) Bytes() int64 {
	if o.band == nil {
		return 0
	}
	return o.band.Bytes() + 8*int64(len(o.part))
}

// EntryRel bounds the relative error of every stored entry of a Float32
// operator against the exact kernel (gram.SymTiles32.EntryRel); 0 for
// the others.
func (o *Operator) EntryRel() float64 {
	if o.kind == Float32 {
		return o.tiles.EntryRel
	}
	return 0
}

// Free releases a Float32 operator's off-heap tiles (also released when
// the operator becomes unreachable); the operator must not be used after.
func (o *Operator) Free() {
	if o.tiles != nil {
		o.tiles.Free()
		o.tiles = nil
	}
	o.band = nil
}

// gather concatenates every rank's rows (b values each) into full.
func (o *Operator) gather(local, full []float64, b int) error {
	p := len(o.layout.Starts) - 1
	counts, displs := make([]int, p), make([]int, p)
	for r := 0; r < p; r++ {
		lo, hi := o.layout.Rows(r)
		counts[r], displs[r] = (hi-lo)*b, lo*b
	}
	o.stats.BytesSent += 8 * int64(len(local)) * int64(p-1)
	defer func(start time.Time) { o.stats.CommSeconds += time.Since(start).Seconds() }(time.Now())
	return mpi.Allgatherv(local, full, counts, displs)
}

// Apply sets dst to this rank's rows of A·x, A = K or M·K·M, x given by
// its rows on every rank (n_r×b).
func (o *Operator) Apply(dst, x *mat.Dense) error {
	return o.apply(dst, x, o.center)
}

func (o *Operator) apply(dst, x *mat.Dense, center bool) error {
	nr := o.Dim()
	r, b := x.Dims()
	if dr, db := dst.Dims(); r != nr || dr != nr || db != b || b < 1 {
		return fmt.Errorf("dist: Apply: x %d×%d, dst %d×%d, this rank holds %d rows: %w", r, b, dr, db, nr, status.ErrInvalid)
	}
	o.stats.Passes++
	n := o.layout.N
	local := make([]float64, nr*b)
	for i := 0; i < nr; i++ {
		copy(local[i*b:(i+1)*b], x.RawRowView(i)[:b])
	}
	if o.xfull == nil || o.xfull.RawMatrix().Cols != b {
		o.xfull = mat.NewDense(n, b, nil)
	}
	if err := o.gather(local, o.xfull.RawMatrix().Data, b); err != nil {
		return err
	}
	xf := o.xfull
	var colMeans []float64
	if center {
		// x′ = x − 1·x̄ᵀ (x̄ the columns' means, from the full block).
		colMeans = make([]float64, b)
		for i := 0; i < n; i++ {
			for c, v := range xf.RawRowView(i) {
				colMeans[c] += v
			}
		}
		for c := range colMeans {
			colMeans[c] /= float64(n)
		}
		for i := 0; i < n; i++ {
			row := xf.RawRowView(i)
			for c := range row {
				row[c] -= colMeans[c]
			}
		}
	}
	// While the row means are not known (matrix-free, first pass), the
	// vector 1/n goes along as one more column: w columns in all.
	w, xw := b, xf
	if center && o.means == nil {
		w = b + 1
		xw = mat.NewDense(n, w, nil)
		for i := 0; i < n; i++ {
			row := xw.RawRowView(i)
			copy(row, xf.RawRowView(i))
			row[b] = 1 / float64(n)
		}
	}
	// The band's contribution to all n rows, summed over the ranks and
	// scattered by rows.
	if len(o.part) != n*w {
		o.part = make([]float64, n*w)
	}
	part := mat.NewDense(n, w, o.part)
	if v, ok := o.band.(vecBand); ok && w == 1 {
		// One vector (Lanczos): the tile symv, not a block padded to 4.
		v.MulVec(o.part, xw.RawMatrix().Data[:n])
	} else {
		o.band.MulBlock(part, xw)
	}
	p := len(o.layout.Starts) - 1
	counts := make([]int, p)
	for q := 0; q < p; q++ {
		qlo, qhi := o.layout.Rows(q)
		counts[q] = (qhi - qlo) * w
	}
	if w > b {
		local = make([]float64, nr*w)
	}
	o.stats.BytesSent += 8 * int64(n-nr) * int64(w)
	t := time.Now()
	err := mpi.ReduceScatterSum(o.part, local, counts)
	o.stats.CommSeconds += time.Since(t).Seconds()
	if err != nil {
		return err
	}
	if w > b {
		if err := o.setMeans(local, w, b); err != nil {
			return err
		}
	}
	for i := 0; i < nr; i++ {
		copy(dst.RawRowView(i)[:b], local[i*w:i*w+b])
	}
	if center {
		// M·K·x′ = K·x′ − 1·(rᵀx′), r the row means (all n on every rank).
		rx := make([]float64, b)
		for i := 0; i < n; i++ {
			ri := o.means[i]
			for c, v := range xf.RawRowView(i) {
				rx[c] += ri * v
			}
		}
		for i := 0; i < nr; i++ {
			row := dst.RawRowView(i)[:b]
			for c := range row {
				row[c] -= rx[c]
			}
		}
	}
	return nil
}

// Plan chooses how each of ranks ranks holds its rows of an n×n kernel
// matrix of n points of dimension d, for k components, by the
// single-process planner's rule applied to one rank's share: float64 row
// blocks when they fit budget (bytes per rank); otherwise the float32
// triangle when its band fits and its storage bound u·√n is at most tol
// (0 means 1e-10); otherwise matrix-free when the data fit. want forces a
// kind ("float64", "float32", "matrix-free"; "" or "auto" chooses). It
// returns the kind, the bytes per rank it needs (the largest rank's) and
// a sentence saying why. Every rank must act on the same plan: compute it
// on one rank and broadcast it (budgets read on different ranks differ).
func Plan(n, d, k, ranks int, tol float64, budget int64, want string) (Kind, int64, string, error) {
	if n < 1 || d < 1 || k < 1 || k >= n || ranks < 1 || n < ranks {
		return 0, 0, "", fmt.Errorf("dist: Plan: n = %d, d = %d, k = %d over %d ranks: %w", n, d, k, ranks, status.ErrInvalid)
	}
	if tol == 0 {
		tol = 1e-10
	}
	if !(tol > 0) || math.IsInf(tol, 0) || budget <= 0 {
		return 0, 0, "", fmt.Errorf("dist: Plan: tolerance %g, budget %d bytes: %w", tol, budget, status.ErrInvalid)
	}
	split, err := triangleLayout(n, ranks, TileSide64(n, ranks))
	if err != nil {
		return 0, 0, "", err
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
	bfree := 2*data + 8*int64(min(maxRows, panelRows))*int64(min(n, panelCols)) + 8*int64(maxRows)*int64(3*k+2*freeBlock) + 3*8*int64(n)*int64(freeBlock)
	bound32 := eig.Float32Unit * math.Sqrt(float64(n))
	switch want {
	case "float64":
		return Float64, b64, fmt.Sprintf("float64 triangle as asked (%s per rank)", bigmem.Size(b64)), nil
	case "float32":
		if b32 < 0 {
			return 0, 0, "", fmt.Errorf("dist: the float32 triangle needs more than %d rows for %d ranks (a tile row of %d each): %w", gram.TileSize*(ranks-1), ranks, gram.TileSize, status.ErrInvalid)
		}
		return Float32, b32, fmt.Sprintf("float32 triangle as asked (%s per rank; storage bound u·√n = %.1e)", bigmem.Size(b32), bound32), nil
	case "matrix-free":
		return MatrixFree, bfree, fmt.Sprintf("matrix-free as asked (%s per rank)", bigmem.Size(bfree)), nil
	case "", "auto":
	default:
		return 0, 0, "", fmt.Errorf("dist: operator %q: want auto, float64, float32 or matrix-free: %w", want, status.ErrInvalid)
	}
	switch {
	case b64 <= budget:
		return Float64, b64, fmt.Sprintf("the float64 triangle fits: %s of %s per rank", bigmem.Size(b64), bigmem.Size(budget)), nil
	case b32 > 0 && b32 <= budget && bound32 <= tol:
		return Float32, b32, fmt.Sprintf("float64 needs %s of %s per rank; the float32 triangle fits (%s) and its storage bound u·√n = %.1e ≤ tol = %.1e",
			bigmem.Size(b64), bigmem.Size(budget), bigmem.Size(b32), bound32, tol), nil
	case bfree <= budget:
		return MatrixFree, bfree, fmt.Sprintf("float64 needs %s of %s per rank; float32 %s; matrix-free needs %s",
			bigmem.Size(b64), bigmem.Size(budget), map[bool]string{true: fmt.Sprintf("fits but its storage bound u·√n = %.1e exceeds tol = %.1e", bound32, tol), false: "does not fit"}[b32 > 0 && b32 <= budget], bigmem.Size(bfree)), nil
	}
	return 0, 0, "", fmt.Errorf("dist: n = %d, d = %d needs at least %s per rank, %s given: %w", n, d, bigmem.Size(min(b64, bfree)), bigmem.Size(budget), status.ErrInvalid)
}
