package approx

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// sampleRatio is the rows per landmark of the default sample
// (Nystrom.Sample), sampleFrom the rows per landmark from which the
// default takes one, and sampleSaved the multiply-adds of the factor's
// updates, (n − sampleRatio·Rank)·Rank²/2, it must save. The evidence
// (docs/measurements.md, "approx: landmarks chosen on a sample at large
// n"): on Fashion-MNIST, landmarks chosen by RPCholesky among 2 to 10 rows
// per landmark had the trace and top-20 eigenvalue errors of landmarks
// chosen among all rows; 2 rows per landmark was the fastest at Rank 1000
// with the same errors over many seeds (at Rank 500 no faster and a
// slightly larger top-20 error); and the sample made fits faster only
// where it saved about 2·10⁹ multiply-adds or more — a round's fixed cost
// does not shrink with the rows.
const sampleRatio, sampleFrom = 2, 16

// sampleSaved is the rule's least saving in multiply-adds; a variable so
// that tests can take the rule at small sizes.
var sampleSaved = 2e9

// sampleSize returns how many of n rows the landmarks are chosen among:
// Sample when it is positive (at most n), n when it is negative, else the
// rule: sampleRatio·Rank rows when the features are float32, the sampler
// RPCholesky, there is no TraceTol (the adaptive stop needs the residual
// of every row), n ≥ sampleFrom·Rank and the updates saved reach
// sampleSaved; n otherwise.
func (ny Nystrom) sampleSize(n int, f32 bool) int {
	saved := float64(n-sampleRatio*ny.Rank) * float64(ny.Rank) * float64(ny.Rank) / 2
	switch {
	case ny.Sample > 0:
		return min(ny.Sample, n)
	case ny.Sample < 0:
		return n
	case f32 && ny.Sampler == RPCholesky && ny.TraceTol == 0 && n >= sampleFrom*ny.Rank && saved >= sampleSaved:
		return sampleRatio * ny.Rank
	}
	return n
}

// Strata returns ns row indices of n, one drawn uniformly by r from each
// of ns equal strata [q·n/ns, (q+1)·n/ns), in increasing order.
func Strata(r *rand.Rand, n, ns int) []int {
	pos := make([]int, ns)
	for q := range pos {
		lo, hi := int(int64(q)*int64(n)/int64(ns)), int(int64(q+1)*int64(n)/int64(ns))
		pos[q] = lo + r.IntN(hi-lo)
	}
	return pos
}

// sampleSeed is mixed into Seed for the sample's strata ("sample").
const sampleSeed = 0x73616d706c65

// sampled fits the map on src (n rows) with the landmarks chosen among ns
// of its rows (Strata, seeded by Seed): fitSample fits those rows (with
// Sample −1; its ResidualSample rows are drawn among them, a principal
// submatrix of K − K̂ all the same), then fromSample completes the map.
// Both share one scratch.Pool: the completion's buffers reuse the memory
// of the sample's fit (its factor and scratch).
func (ny Nystrom) sampled(src nySource, k kernel.Kernel, ns int, start time.Time,
	fitSample func(sub Nystrom, pos []int) (*NystromMap, error)) (*NystromMap, error) {
	seed := ny.Seed
	if seed == 0 {
		seed = 1
	}
	pos := Strata(rng.New(seed^sampleSeed), src.n, ns)
	ny.pool = new(scratch.Pool)
	sub := ny
	sub.Sample, sub.ofSample = -1, true
	sm, err := fitSample(sub, pos)
	if err != nil {
		return nil, err
	}
	sampleMean := sm.TrainMeans()
	ft := sm.ft32 // from the pool (newRPC)
	sm.ReleaseTrain()
	if ft != nil {
		ny.pool.Put32(ft.Data)
	}
	return ny.fromSample(src, k, pos, sm, sampleMean, start)
}

// sampleOfGrid fits the rows pos of x, whose kernel rows are rows (exact
// integer products): as their 8-bit levels (gram.KernelRows.Levels8: the
// same kernel values, no float64 copy or second grid scan; FitLevels8;
// the levels are x less each column's minimum, and the map's landmarks'
// rows are x's own, which fromSample gathers). Where rows has no levels,
// as sampleOfDense.
func sampleOfGrid(x *mat.Dense, k kernel.Kernel, rows *gram.KernelRows) func(Nystrom, []int) (*NystromMap, error) {
	return func(sub Nystrom, pos []int) (*NystromMap, error) {
		lv, ok := rows.Levels8(pos)
		if !ok {
			return sampleOfDense(x, k)(sub, pos)
		}
		return sub.FitLevels8(lv, k)
	}
}

// sampleOfDense fits the rows pos of x (a float64 copy of them).
func sampleOfDense(x *mat.Dense, k kernel.Kernel) func(Nystrom, []int) (*NystromMap, error) {
	return func(sub Nystrom, pos []int) (*NystromMap, error) {
		_, d := x.Dims()
		xs := mat.NewDense(len(pos), d, nil)
		for a, i := range pos {
			copy(xs.RawRowView(a), x.RawRowView(i))
		}
		return sub.Fit(xs, k)
	}
}

// fromSample completes a map whose landmarks were chosen on the rows pos
// of src (sm, the fit on those rows): with C = K(L, X) (k×n, float32, the
// kernel rows of every row against the landmarks), c̄ its row means and
// K(L, L) = R·Rᵀ (sm.R), the training features are F = Cᵀ·R⁻ᵀ, so
//
//	F_cᵀF_c = R⁻¹·C_c·C_cᵀ·R⁻ᵀ,  μ = R⁻¹·c̄,  tr K̂ = tr(F_cᵀF_c) + n·‖μ‖²,
//
// with G_c = C_c·C_cᵀ from C shifted near its row means by the sample's
// (shiftedGram: float32 products on chunks of points, summed in float64), the rest
// in float64 (R⁻¹·G_c·R⁻ᵀ by linalg.ReduceCongruent, LAPACK's dsygst:
// half the work of two triangular solves). C is shifted before the
// float32 products because R⁻¹ amplifies their rounding by up to
// cond K(L, L): from the uncentred C·Cᵀ less n·c̄c̄ᵀ the top eigenvalues
// lose about two digits (docs/measurements.md). F is never formed (it
// would cost n·k²/2 multiply-adds more); Train forms it when asked. Exact
// integer kernel rows are computed again when needed (crossByRanges), never
// stored; C of float32 products is stored, shifted (crossStored), up to
// crossStoreMax bytes and computed again above; other C is stored.
// sampleMean is the sample's feature means μ_s, which give the shift
// s = R·μ_s (the sample's mean kernel row).
func (ny Nystrom) fromSample(src nySource, k kernel.Kernel, pos []int, sm *NystromMap, sampleMean []float64, start time.Time) (*NystromMap, error) {
	n, m := src.n, len(sm.Landmarks)
	ny.collect(n, src.dim)
	land := make([]int, m)
	for a, l := range sm.Landmarks {
		land[a] = pos[l]
	}
	out := &NystromMap{Kernel: k, Landmarks: land, R: sm.R, pool: ny.pool}
	var rows func(p0, p1 int, dst []float32, ld int)
	var each func(p0, p1 int, dst []float32, ld int, use func() func(q0, q1 int))
	switch {
	case src.rows.Int8():
		// Exact integer rows: computed again at any size, never stored
		// (crossStoreMax says why).
		rows = src.rows.RangeRows32(land)
	case int64(m)*int64(n)*4 > crossStoreMax:
		// Float32 products: one gathering of the landmarks serves both.
		if each = src.rows.RangeRows32Each(land); each != nil {
			rows = func(p0, p1 int, dst []float32, ld int) { each(p0, p1, dst, ld, nil) }
		} else {
			rows = src.rows.RangeRows32(land) // nil for float64 products
		}
	}
	if len(sampleMean) != m {
		return nil, invalidf("Nystrom: the sample's means: %d for %d features", len(sampleMean), m)
	}
	shift := make([]float64, m)
	for a := 0; a < m; a++ {
		row := out.R.RawRowView(a)
		v := 0.0
		for e := 0; e <= a; e++ {
			v += row[e] * sampleMean[e]
		}
		shift[a] = v
	}
	var err error
	if rows != nil {
		err = ny.crossByRanges(out, n, rows, shift)
		out.crossSerial, out.crossEach = src.rows.SerialRangeRows32(land), each
		out.rowsData, out.ownsRows = src.data32, src.ownsData
	} else {
		err = ny.crossStored(out, src, land, shift)
	}
	if err != nil {
		return nil, err
	}
	out.XL = landmarkRows(ny.pool, src, land)
	// A = R⁻¹·G_c·R⁻ᵀ in place (its upper triangle: symmetric by
	// construction).
	g := out.gram
	if err := linalg.ReduceCongruent(g, sm.R); err != nil {
		out.ReleaseTrain()
		return nil, err
	}
	rt := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: m, Stride: sm.R.RawMatrix().Stride, Data: sm.R.RawMatrix().Data}
	mu := append([]float64(nil), out.crossMean...)
	linalg.B64.Trsm(blas.Left, blas.NoTrans, 1, rt, blas64.General{Rows: m, Cols: 1, Stride: 1, Data: mu})
	out.gramMean = mu
	trHat := 0.0
	for i := 0; i < m; i++ {
		trHat += g.At(i, i) + float64(n)*mu[i]*mu[i]
	}
	diag, err := kernelDiagonal(src, k)
	if err != nil {
		out.ReleaseTrain()
		return nil, err
	}
	trK := 0.0
	for _, v := range diag {
		trK += v
	}
	info := sm.info
	info.Rank, info.Sample = m, len(pos)
	info.EigenvalueBound = math.Max(trK-trHat, 0)
	info.TraceError = info.EigenvalueBound / trK
	info.Seconds = time.Since(start).Seconds()
	out.info = info
	return out, nil
}

// crossStored sets out's C (stored as y = float32(c − s), k×n), c̄ and
// G_c: C by landmarks' kernel rows (rows32Into, in blocks of crossBlock
// landmarks with the context checked between them), then shiftedGram on
// its columns in place.
func (ny Nystrom) crossStored(out *NystromMap, src nySource, land []int, shift []float64) error {
	n, m := src.n, len(land)
	krow := src.krow
	if krow == nil {
		krow = src.row
	}
	c, err := linalg.NewDense32(m, n)
	if err != nil {
		return err
	}
	var gt []float64
	for a0 := 0; a0 < m; a0 += crossBlock {
		if err := ny.stopped(fmt.Sprintf("the kernel rows of landmark %d of %d", a0, m)); err != nil {
			c.Free()
			return err
		}
		a1 := min(a0+crossBlock, m)
		if err := rows32Into(src.rows, &pointRows{idx: land[a0:a1], dim: src.dim, row: krow}, c.Data[a0*n:a1*n], n, &gt); err != nil {
			c.Free()
			return err
		}
	}
	gt = nil
	if err := ny.shiftedGram(out, n, rangeChunk, shift, true, func(p0, p1 int) ([]float32, int) { return c.Data[p0:], n }); err != nil {
		c.Free()
		return err
	}
	out.cross, out.crossShift = c, shift
	return nil
}

// crossStoreMax is the size in bytes of C (k×n float32) up to which
// fromSample stores C of float32 products; above it those kernel rows
// (RangeRows32) are computed again instead (crossByRanges), as exact
// integer ones always are: the fit's memory is then the data's and
// O(k² + k·chunk) instead of k·n·4 bytes more. Measured
// (docs/measurements.md, "C computed again instead of stored", "integer
// kernel rows computed again at any size"): a second pass of integer rows
// cost less than C's fresh pages at 8 GB and, once the fit's buffers were
// reused, at 80 MB too (at 80 MB it had cost more on the Zen 4 VM, before
// that reuse); a second pass of float32 products cost less than the pages
// at 8 GB on a machine whose fresh memory is slow (where fresh memory is
// fast, that pass is expected to cost more than the pages: memory is then
// what the rule buys); the peak fell from about 10–12 GB to 2–4.5 GB. A
// variable so that tests can take either path.
var crossStoreMax int64 = 1 << 30

// rangeChunk is the points whose kernel rows shiftedGram shifts and
// multiplies at once, and the map's scores compute at once (crossByRanges
// at most that many: rangeWidth): one product panel (linalg's 8192), 64 MB
// of float32 at k = 2000. A variable so that tests can take several
// chunks.
var rangeChunk = 8192

// rangeWidth is the points of crossByRanges's chunks over n points: a
// tenth of them rounded up to 256, at least 2048 and at most rangeChunk
// (and n) — the chunk's buffer (k·width float32s, its pages fresh) small
// beside C where n is small, full panels where it is large. Measured
// (docs/measurements.md, "integer kernel rows computed again at any
// size"): at n = 20 000, k = 1000 chunks of 2048 points took the fit 0.64 s
// against 0.68 s for 8192 (the buffer's 32 MB of fresh pages); at
// n = 10⁶, k = 2000 chunks of 1024 points cost the fit 4 s against 8192
// (the k×k float32 sum, 16 MB, written and read back every chunk).
func rangeWidth(n int) int {
	return min(rangeChunk, n, max(2048, ((n+9)/10+255)/256*256))
}

// crossByRanges sets out's c̄ and G_c without storing C, for kernel rows
// computed again (integer or float32 products, rows: a range of points
// against every landmark): shiftedGram on chunks of rangeWidth(n) points
// computed into one reused buffer. The map keeps rows for its scores and
// F (TrainScores, Train), which compute the kernel rows again.
func (ny Nystrom) crossByRanges(out *NystromMap, n int, rows func(p0, p1 int, dst []float32, ld int), shift []float64) error {
	m, w := len(out.Landmarks), rangeWidth(n)
	buf := ny.pool.Float32s(m * w)
	defer ny.pool.Put32(buf)
	err := ny.shiftedGram(out, n, w, shift, false, func(p0, p1 int) ([]float32, int) {
		y := buf[:m*(p1-p0)]
		rows(p0, p1, y, p1-p0)
		return y, p1 - p0
	})
	if err != nil {
		return err
	}
	out.crossRows, out.n = rows, n
	return nil
}

// shiftedGram sets out's c̄ and G_c = C_c·C_cᵀ from C's columns, chunk by
// chunk of w points (the context checked between chunks; chunk
// returns the k rows of columns [p0, p1) at stride ld, which it may
// compute): each value shifted by s — the sample's mean kernel row — and
// rounded once to float32, y = float32(c − s); the chunk's y·yᵀ in
// float32 summed in float64 in chunk order, and its row sums in float64
// (linalg.AddShiftedOuterRows32, the packed kernel where gram.PackedSyrk
// says; when keep, the chunk is shifted in place first, linalg.ShiftRows32,
// and stays so, then linalg.AddOuterRows32: the same values). With δ = Σ y / n, c̄ = s + δ and
// G_c = Σ y·yᵀ − n·δδᵀ: the shift keeps the float32 values centred to
// within the sample's error, so the correction cancels little (an
// uncentred C loses about two digits, see fromSample).
func (ny Nystrom) shiftedGram(out *NystromMap, n, w int, shift []float64, keep bool, chunk func(p0, p1 int) ([]float32, int)) error {
	m := len(shift)
	w = min(w, n)
	g := mat.NewSymDense(m, ny.pool.Float64s(m*m))
	packed := gram.PackedSyrk()
	acc, pack := ny.pool.Float32s(m*m), ny.pool.Float32s(linalg.PackScratch32(m, w))
	defer ny.pool.Put32(acc)
	defer ny.pool.Put32(pack)
	chunks := (n + w - 1) / w
	sums := make([]float64, chunks*m)
	for q := 0; q < chunks; q++ {
		p0 := q * w
		p1 := min(p0+w, n)
		if err := ny.stopped(fmt.Sprintf("the kernel rows of point %d of %d", p0, n)); err != nil {
			return err
		}
		cw := p1 - p0
		y, ld := chunk(p0, p1)
		var err error
		if keep {
			linalg.ShiftRows32(y, ld, cw, shift, sums[q*m:(q+1)*m])
			err = linalg.AddOuterRows32(g, y, cw, ld, packed, acc, pack)
		} else {
			err = linalg.AddShiftedOuterRows32(g, y, cw, ld, shift, sums[q*m:(q+1)*m], packed, acc, pack)
		}
		if err != nil {
			return err
		}
	}
	delta, cbar := make([]float64, m), make([]float64, m)
	for a := range delta {
		t := 0.0
		for q := 0; q < chunks; q++ {
			t += sums[q*m+a]
		}
		delta[a] = t / float64(n)
		cbar[a] = shift[a] + delta[a]
	}
	raw := g.RawSymmetric()
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			raw.Data[a*raw.Stride+b] -= float64(n) * delta[a] * delta[b]
		}
	}
	out.crossMean, out.gram = cbar, g
	return nil
}

// crossBlock is the landmarks whose kernel rows fromSample computes
// between two checks of the context.
const crossBlock = 256

// stopped returns status.Cancelled when the fit's context has ended.
func (ny Nystrom) stopped(where string) error {
	if ny.Context != nil && ny.Context.Err() != nil {
		return status.Cancelled(context.Cause(ny.Context), where)
	}
	return nil
}

// TrainGram returns F_cᵀF_c (k×k, float64; F_c the training features
// centred by their means μ) and μ, and true, for a map that holds the
// training points' kernel rows instead of their features (landmarks chosen
// on a sample, Nystrom.Sample): the matrix fromSample formed. Other maps
// (and released ones) report false. The matrix is the map's own.
func (m *NystromMap) TrainGram() (*mat.SymDense, []float64, bool) {
	if m.gram == nil || (m.cross == nil && m.crossRows == nil) {
		return nil, nil, false
	}
	return m.gram, append([]float64(nil), m.gramMean...), true
}

// ScoresDense returns a zeroed r×c matrix for TrainScores's dst, in
// memory the fit's buffers gave back where the map still has them (pages
// already written: a fresh one costs a fault), else new; the matrix is
// the caller's to keep.
func (m *NystromMap) ScoresDense(r, c int) *mat.Dense {
	return mat.NewDense(r, c, m.pool.Float64s(r*c))
}

// TrainScores sets dst (n×s) to F_c·V for V (k×s) from the training
// points' kernel rows, without forming F: C_cᵀ·(R⁻ᵀ·V) (linalg.MulT32Into)
// on the stored C − s·1ᵀ with c̄ − s subtracted in float64, or — for a map
// that keeps a way to compute them again (crossByRanges) — chunk by chunk
// on C with c̄ subtracted in float64 (integer rows: scoreBlock points at a
// time per goroutine; float32 products: each block of points as soon as
// its rows are mapped, gram.KernelRows.RangeRows32Each; the same values).
// It needs the kernel rows (TrainGram's maps).
func (m *NystromMap) TrainScores(dst, v *mat.Dense) error {
	var k, n int
	switch {
	case m.cross != nil:
		k, n = m.cross.Dims()
	case m.crossRows != nil:
		k, n = len(m.Landmarks), m.n
	default:
		return invalidf("NystromMap.TrainScores: the map holds no kernel rows")
	}
	vr, s := v.Dims()
	if r, c := dst.Dims(); vr != k || r != n || c != s {
		return invalidf("NystromMap.TrainScores: V %d×%d, dst %d×%d for %d features of %d points", vr, s, r, c, k, n)
	}
	w := mat.DenseCopyOf(v)
	rr := m.R.RawMatrix()
	linalg.B64.Trsm(blas.Left, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: rr.Stride, Data: rr.Data}, w.RawMatrix())
	if m.cross != nil {
		var delta []float64 // c̄ − s: none where C was stored centred
		for a, v := range m.crossMean {
			if d := v - m.crossShift[a]; d != 0 {
				if delta == nil {
					delta = make([]float64, k)
				}
				delta[a] = d
			}
		}
		linalg.MulT32Into(dst, m.cross, w, delta)
		return nil
	}
	if m.crossSerial != nil {
		// Each goroutine computes the rows of scoreBlock points and their
		// scores while the rows are in its cache.
		plan := linalg.NewT32Scores(w, m.crossMean)
		par.Blocks(0, (n+scoreBlock-1)/scoreBlock, func(lo, hi int) {
			buf := m.pool.Float32s(k * scoreBlock)
			defer m.pool.Put32(buf)
			var sc linalg.T32Scratch
			for b := lo; b < hi; b++ {
				p0, p1 := b*scoreBlock, min((b+1)*scoreBlock, n)
				m.crossSerial(p0, p1, buf, p1-p0)
				plan.Block(dst.Slice(p0, p1, 0, s).(*mat.Dense), buf, p1-p0, p1-p0, &sc)
			}
		})
		return nil
	}
	cw := min(rangeChunk, n)
	buf, err := linalg.NewDense32(k, cw)
	if err != nil {
		return err
	}
	defer buf.Free()
	var plan *linalg.T32Scores
	if m.crossEach != nil {
		plan = linalg.NewT32Scores(w, m.crossMean)
	}
	for p0 := 0; p0 < n; p0 += cw {
		p1 := min(p0+cw, n)
		y := buf.Data[:k*(p1-p0)]
		if plan == nil {
			m.crossRows(p0, p1, y, p1-p0)
			linalg.MulT32Into(dst.Slice(p0, p1, 0, s).(*mat.Dense), &linalg.Dense32{Rows: k, Cols: p1 - p0, Data: y}, w, m.crossMean)
			continue
		}
		// Float32 products: each block of points multiplied as soon as
		// its rows are mapped, while they are in cache.
		m.crossEach(p0, p1, y, p1-p0, func() func(q0, q1 int) {
			var sc linalg.T32Scratch
			return func(q0, q1 int) {
				plan.Block(dst.Slice(q0, q1, 0, s).(*mat.Dense), y[q0-p0:], p1-p0, q1-q0, &sc)
			}
		})
	}
	return nil
}

// scoreBlock is the points whose integer kernel rows TrainScores computes
// and multiplies at once on one goroutine: 1 MB of float32 at k = 2000,
// kept in cache between the two.
const scoreBlock = 128

// materializeCross stores C_c (k×n float32, each value c − c̄ rounded
// once) for a map that computes its kernel rows again, so that Train can
// form F from it.
func (m *NystromMap) materializeCross() bool {
	k, n := len(m.Landmarks), m.n
	c, err := linalg.NewDense32(k, n)
	if err != nil {
		return false
	}
	m.crossRows(0, n, c.Data, n)
	if linalg.CenterRows32(c, m.crossMean) != nil {
		c.Free()
		return false
	}
	m.cross, m.crossShift, m.crossRows, m.crossSerial, m.crossEach = c, m.crossMean, nil, nil, nil
	m.releaseRowsData()
	return true
}

// trainFromCross forms F from the stored kernel rows C − s·1ᵀ, in place:
// Fᵀ = R⁻¹·(C − s·1ᵀ) + (R⁻¹·s)·1ᵀ in float32 (strsm; R⁻¹·s = μ where C
// was stored centred, s = c̄), and the stored features' means; the map
// then holds features like any float32 fit.
func (m *NystromMap) trainFromCross() {
	c := m.cross
	k, n := c.Dims()
	r32 := make([]float32, k*k)
	for a := 0; a < k; a++ {
		for b := 0; b <= a; b++ {
			r32[a*k+b] = float32(m.R.At(a, b))
		}
	}
	// In column blocks: strsm on k×w panels of the k×n storage (F_c),
	// then each feature's mean μ added back.
	const w = 4096
	for j0 := 0; j0 < n; j0 += w {
		cols := min(w, n-j0)
		linalg.B32.Trsm(blas.Left, blas.NoTrans, 1, blas32.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: k, Data: r32},
			blas32.General{Rows: k, Cols: cols, Stride: n, Data: c.Data[j0:]})
	}
	mu, means := m.gramMean, make([]float64, k)
	if !slices.Equal(m.crossShift, m.crossMean) {
		mu = append([]float64(nil), m.crossShift...)
		rr := m.R.RawMatrix()
		linalg.B64.Trsm(blas.Left, blas.NoTrans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: rr.Stride, Data: rr.Data},
			blas64.General{Rows: k, Cols: 1, Stride: 1, Data: mu})
	}
	par.Blocks(0, k, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			row, s := c.Data[a*n:(a+1)*n], 0.0
			for j, v := range row {
				row[j] = float32(float64(v) + mu[a])
				s += float64(row[j])
			}
			means[a] = s / float64(n)
		}
	})
	m.ft32, m.train, m.means = c, mat.Transpose{Matrix: c}, means
	m.cross, m.crossShift, m.crossMean, m.gram, m.gramMean = nil, nil, nil, nil, nil
}
