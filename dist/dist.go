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
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

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

// Operator is this rank's part of a row-distributed kernel operator,
// doubly centred (M·K·M, from the global row means) when asked.
type Operator struct {
	layout eig.Layout
	rank   int
	kind   eig.OperatorKind
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
	MulBlock(dst, x *mat.Dense) error
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

// freeBand is a rank's rows of a matrix-free kernel operator: eig.KernelBand
// (the upper triangle's rows [lo, hi) formed panel by panel in every
// product, as eig.KernelOp forms the whole), without a context (a rank
// leaving a pass early would leave the others in the collective).
type freeBand struct{ *eig.KernelBand }

// tiles64Band and tiles32Band are the stored tile rows as bands (their
// products cannot fail).
type tiles64Band struct{ *gram.SymTiles64 }

func (t tiles64Band) MulBlock(dst, x *mat.Dense) error { t.SymTiles64.MulBlock(dst, x); return nil }

type tiles32Band struct{ *gram.SymTiles32 }

func (t tiles32Band) MulBlock(dst, x *mat.Dense) error { t.SymTiles32.MulBlock(dst, x); return nil }

// NewKernelOperator returns this rank's part of the kernel operator of the
// rows of x (n×d, the same on every rank; not modified), its rows split so
// that every rank holds (or forms) about the same share of the upper
// triangle: eig.NewTriangleLayout for eig.OperatorFloat32, the same with tiles of
// eig.TileSide64 for the float64 and matrix-free kinds.
func NewKernelOperator(x *mat.Dense, k kernel.Kernel, kind eig.OperatorKind, center bool) (*Operator, error) {
	return NewKernelOperatorWith(x, k, kind, center, gram.GramOptions{})
}

// NewKernelOperatorWith is NewKernelOperator with Gram options (the
// precision of the inner products, a context, progress).
func NewKernelOperatorWith(x *mat.Dense, k kernel.Kernel, kind eig.OperatorKind, center bool, o gram.GramOptions) (*Operator, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("dist: empty data: %w", status.ErrInvalid)
	}
	p, err := mpi.Size()
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	var l eig.Layout
	switch kind {
	case eig.OperatorFloat64, eig.OperatorMatrixFree:
		l, err = eig.TriangleLayout(n, p, eig.TileSide64(n, p))
	case eig.OperatorFloat32:
		l, err = eig.NewTriangleLayout(n, p)
	default:
		err = fmt.Errorf("dist: operator kind %d: %w", kind, status.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	op := &Operator{layout: l, rank: mpi.Rank(), kind: kind}
	lo, hi := l.Rows(op.rank)
	// The rows read once (gram.Prepare), as the operator's kind needs them;
	// the band is built from the prepared source.
	_, d := x.Dims()
	src, err := kernel.Prepare(x, k, eig.SourceOptions(kind, o), kind == eig.OperatorMatrixFree && !k.ElementMap(d).Shifted())
	if err != nil {
		return nil, err
	}
	switch kind {
	case eig.OperatorFloat64:
		t := eig.TileSide64(n, p)
		t64, err := src.Tiles64Band(eig.SourceOptions(kind, o), t, lo/t, (hi+t-1)/t)
		if err != nil {
			return nil, err
		}
		op.band = tiles64Band{t64}
	case eig.OperatorFloat32:
		t := gram.TileSize
		if op.tiles, err = src.Tiles32Band(o, lo/t, (hi+t-1)/t); err != nil {
			return nil, err
		}
		op.band = tiles32Band{op.tiles}
	case eig.OperatorMatrixFree:
		kb, err := eig.NewKernelBand(src.Rows(o), lo, hi, gram.GramOptions{})
		if err != nil {
			return nil, err
		}
		op.band = freeBand{kb}
	}
	op.center = center
	if center && kind != eig.OperatorMatrixFree {
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

// Centering returns the global row means of K and their mean when the
// operator centres and they are known (after the first pass of a
// matrix-free operator), for the fit's rounding floor; an error
// otherwise.
func (o *Operator) Centering() (linalg.Centering, error) {
	if !o.center || o.means == nil {
		return linalg.Centering{}, fmt.Errorf("dist: Centering: the operator does not centre, or its row means are not known yet: %w", status.ErrInvalid)
	}
	return linalg.Centering{RowMeans: slices.Clone(o.means), Mean: o.mean}, nil
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
func (o *Operator) Kind() eig.OperatorKind { return o.kind }

// Layout is the split of the rows over the ranks.
func (o *Operator) Layout() eig.Layout { return o.layout }

// Stats returns the communication so far.
func (o *Operator) Stats() Stats { return o.stats }

// Bytes is the memory this rank holds for the operator.
func (o *Operator) Bytes() int64 {
	if o.band == nil {
		return 0
	}
	return o.band.Bytes() + 8*int64(len(o.part))
}

// EntryRel bounds the relative error of every stored entry of a float32
// operator against the exact kernel (gram.SymTiles32.EntryRel); 0 for
// the others.
func (o *Operator) EntryRel() float64 {
	if o.kind == eig.OperatorFloat32 {
		return o.tiles.EntryRel
	}
	return 0
}

// Free releases a float32 operator's off-heap tiles (also released when
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
	if center {
		centerColumns(xf) // x′ = x − 1·x̄ᵀ (x̄ the columns' means, from the full block)
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
	} else if err := o.band.MulBlock(part, xw); err != nil {
		return err
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

// centerColumns subtracts from x (n×b) its columns' means.
func centerColumns(x *mat.Dense) {
	n, b := x.Dims()
	means := make([]float64, b)
	for i := 0; i < n; i++ {
		for c, v := range x.RawRowView(i) {
			means[c] += v
		}
	}
	for c := range means {
		means[c] /= float64(n)
	}
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for c := range row {
			row[c] -= means[c]
		}
	}
}
