package kpca

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Levels8Source is 8-bit data read by rows: n rows of d levels (entry
// Step·level), such as an uncompressed IDX file (dataset.IDX8File).
type Levels8Source interface {
	Dims() (n, d int)
	// ReadRows reads rows [i0, i0 + len(dst)/d) into dst.
	ReadRows(i0 int, dst []uint8) error
}

// Stream is Nyström kernel PCA of 8-bit data larger than memory, read in
// two passes of chunks: the landmarks are chosen by RPCholesky
// (approx.Nystrom.FitLevels8) among a sample of the rows; the first pass
// computes every row's features f(x) = R⁻¹·k(L, x) (K(L, L) = R·Rᵀ, float32
// as the in-memory fit stores them) chunk by chunk and accumulates their
// sums, FᵀF and the exact trace error Σ k(x, x) − ‖f(x)‖²; the top
// Components eigenpairs of F_cᵀF_c come from LAPACK; the second pass
// computes the kernel rows again and hands each chunk's scores
// (f(x) − μ)ᵀ·V = k(L, x)ᵀ·R⁻ᵀV − μᵀV (float64, no triangular solve per
// row) to Scores. Memory: the sample's fit (Sample·(2d + 4m) bytes), then
// O(m² + Chunk·(d + m)) — Bytes gives it — whatever n.
type Stream struct {
	Components int
	// Kernel: a kernel with a unit diagonal (Gaussian, Laplace), whose
	// rows of 8-bit data are exact integer products where the processor
	// has them.
	Kernel kernel.Kernel
	// Rank is m, the most landmarks.
	Rank int
	// Step is the value of one level (1/255 for pixels scaled to [0, 1]).
	Step float64
	// Sample is how many rows the landmarks are chosen among; 0 means
	// the rule min(n, max(100·Rank, 100 000)): one row drawn uniformly
	// from each of Sample equal strata of the rows, in order.
	Sample int
	// Chunk is the rows read and processed at a time; 0 means 16 384.
	Chunk int
	// Seed of the sample and of RPCholesky; 0 means 1.
	Seed uint64
	// NoCenter fits the uncentred kernel.
	NoCenter bool
	// Context, when set, is checked between chunks and rounds.
	Context context.Context
	// Scores, when set, receives in order the scores of rows
	// [i0, i0 + rows of scores) (rows × Components; it must not keep
	// scores, which is reused). Signs: each eigenvector's entry of
	// largest magnitude is positive.
	Scores func(i0 int, scores *mat.Dense) error
}

// StreamResult is a streamed fit's outcome.
type StreamResult struct {
	N, D, Rank, Sample, Chunk int
	Values                    []float64 // the top Components eigenvalues of the centred K̂
	Landmarks                 []int     // rows of the source, in pivot order
	// TraceError is tr(K − K̂)/tr K over all n rows, exact for the stored
	// float32 features; EigenvalueBound is tr(K − K̂): each eigenvalue of
	// K̂ is at most the same of K, which is at most it plus this.
	TraceError, EigenvalueBound                              float64
	Passes                                                   int // over the data: 1, or 2 with Scores
	SampleSeconds, FirstSeconds, SolveSeconds, SecondSeconds float64
	// Bytes is the memory the streamed passes hold at once (the chunk's
	// buffers and the m×m matrices), by the formula of Stream.Bytes.
	Bytes int64
}

// Bytes is the memory the two passes hold at once for rank m, chunk c, d
// columns and s components: the chunk's levels and their packed copy
// (2·c·d), its kernel rows against the landmarks in float64 and its
// features in float32 (12·c·m), its scores and their products (16·c·s,
// plus 8·c·4), the m×m matrices (FᵀF in float64 and float32, R in
// float32: 16·m²) and the packed block of FᵀF's products
// (linalg.PackScratch32).
func (st Stream) Bytes(m, c, d, s int) int64 {
	m64, c64 := int64(m), int64(c)
	return 2*c64*int64(d) + 12*c64*m64 + 16*c64*int64(s) + 32*c64 + 16*m64*m64 + 4*int64(linalg.PackScratch32(m, c))
}

// sampleBytes is the memory of the landmarks' choice on a sample of ns
// rows: the levels and their packed copy (2·ns·d) and the sample's float32
// features (4·ns·m).
func (Stream) sampleBytes(ns, d, m int) int64 {
	return 2*int64(ns)*int64(d) + 4*int64(ns)*int64(m)
}

func (st Stream) check(n, d int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kpca: Stream: "+format+": %w", append(args, status.ErrInvalid)...)
	}
	switch {
	case n < 2 || d < 1:
		return bad("%d rows of %d levels", n, d)
	case st.Rank < 1 || st.Rank > n:
		return bad("Rank %d, want 1 … %d", st.Rank, n)
	case st.Components < 1 || st.Components > st.Rank:
		return bad("Components %d, want 1 … Rank = %d", st.Components, st.Rank)
	case !st.NoCenter && st.Components >= n:
		return bad("Components %d, want at most n − 1 = %d (a centred kernel of n rows has rank n − 1 at most)", st.Components, n-1)
	case !(st.Step > 0) || math.IsInf(st.Step, 0):
		return bad("Step %g, want a finite positive level", st.Step)
	case st.Sample < 0 || st.Chunk < 0:
		return bad("Sample %d, Chunk %d: want 0 (the defaults) or more", st.Sample, st.Chunk)
	case !st.Kernel.UnitDiagonal():
		return bad("kernel %v: a streamed fit needs a unit diagonal: --kernel gaussian, rbf, laplace or laplacian", st.Kernel.Kind)
	}
	return st.Kernel.Check()
}

// Fit runs the streamed fit on src.
func (st Stream) Fit(src Levels8Source) (*StreamResult, error) {
	n, d := src.Dims()
	if err := st.check(n, d); err != nil {
		return nil, err
	}
	if st.Context == nil {
		st.Context = context.Background()
	}
	if st.Seed == 0 {
		st.Seed = 1
	}
	if st.Chunk == 0 {
		st.Chunk = 16384
	}
	res := &StreamResult{N: n, D: d, Chunk: st.Chunk}
	start := time.Now()
	nm, err := st.landmarks(src, res)
	if err != nil {
		return nil, err
	}
	res.SampleSeconds = time.Since(start).Seconds()
	m := res.Rank
	res.Bytes = st.Bytes(m, st.Chunk, d, st.Components)
	f := newStreamFeatures(st, nm, d, st.Chunk)
	t1 := time.Now()
	c64, sums, err := st.firstPass(src, f, res)
	if err != nil {
		return nil, err
	}
	res.FirstSeconds = time.Since(t1).Seconds()
	t2 := time.Now()
	mean := make([]float64, m)
	if !st.NoCenter {
		for a := range mean {
			mean[a] = sums[a] / float64(n)
		}
		linalg.SymRankOne(c64, c64, -float64(n), mat.NewVecDense(m, mean))
	}
	floor := 0.0
	if !st.NoCenter {
		floor = meanFloor(n, mean)
	}
	v, err := st.top(c64, res, floor)
	if err != nil {
		return nil, err
	}
	res.SolveSeconds = time.Since(t2).Seconds()
	res.Passes = 1
	if st.Scores == nil {
		return res, nil
	}
	// Second pass: the kernel rows again, and their scores
	// (f(x) − μ)ᵀV = k(L, x)ᵀW − μᵀV with W = R⁻ᵀV (m×s, float64): no
	// triangular solve per row.
	t3 := time.Now()
	s := st.Components
	w := mat.DenseCopyOf(v)
	linalg.B64.Trsm(blas.Left, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: m, Stride: m,
		Data: mat.DenseCopyOf(f.nm.R).RawMatrix().Data}, w.RawMatrix())
	mv := make([]float64, s)
	if !st.NoCenter {
		for a := 0; a < m; a++ {
			for j, x := range v.RawRowView(a) {
				mv[j] += mean[a] * x
			}
		}
	}
	scores := mat.NewDense(st.Chunk, s, nil)
	err = f.rowsPass(st.Context, src, func(i0, c int, cross []float64) error {
		out := scores.Slice(0, c, 0, s).(*mat.Dense)
		linalg.B64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: m, Cols: c, Stride: c, Data: cross}, w.RawMatrix(), 0, out.RawMatrix())
		for i := 0; i < c; i++ {
			for j := range mv {
				out.RawRowView(i)[j] -= mv[j]
			}
		}
		return st.Scores(i0, out)
	})
	if err != nil {
		return nil, err
	}
	res.Passes = 2
	res.SecondSeconds = time.Since(t3).Seconds()
	return res, nil
}

// landmarks chooses the landmarks by RPCholesky among a stratified sample
// of the rows (res.Sample of them) and sets res.Rank and res.Landmarks.
func (st Stream) landmarks(src Levels8Source, res *StreamResult) (*approx.NystromMap, error) {
	n, d := src.Dims()
	ns := st.Sample
	if ns == 0 {
		ns = max(100*st.Rank, 100000)
	}
	ns = max(min(ns, n), st.Rank)
	res.Sample = ns
	// One row from each of ns equal strata, in order.
	pos := approx.Strata(rand.New(rand.NewPCG(st.Seed, 0x73747265616d)), n, ns) // "stream"
	sample := &linalg.Levels8{Rows: ns, Cols: d, Step: st.Step, Data: make([]uint8, ns*d)}
	for q, p := range pos {
		if err := src.ReadRows(p, sample.Data[q*d:(q+1)*d]); err != nil {
			return nil, err
		}
	}
	nm, err := approx.Nystrom{Rank: st.Rank, Seed: st.Seed, Context: st.Context, Sample: -1}.FitLevels8(sample, st.Kernel)
	if err != nil {
		return nil, fmt.Errorf("kpca: Stream: the landmarks: %w", err)
	}
	nm.ReleaseTrain()
	m := len(nm.Landmarks)
	if st.Components > m {
		return nil, &status.RankError{Matrix: "kpca: Stream: the sample's Nyström approximation", Rank: m, Asked: st.Components}
	}
	res.Rank = m
	for _, l := range nm.Landmarks {
		res.Landmarks = append(res.Landmarks, pos[l])
	}
	return nm, nil
}

// firstPass reads every row's features and returns FᵀF and the features'
// sums, setting the trace error.
func (st Stream) firstPass(src Levels8Source, f *streamFeatures, res *StreamResult) (*mat.SymDense, []float64, error) {
	n, m := res.N, res.Rank
	gram32, pack := make([]float32, m*m), make([]float32, linalg.PackScratch32(m, st.Chunk))
	c64 := mat.NewSymDense(m, nil)
	sums := make([]float64, m)
	norms := make([]float64, st.Chunk)
	resid := 0.0
	err := f.pass(st.Context, src, func(i0, c int, ft []float32) error {
		// Each feature's sum and each row's squared norm, in parallel
		// over features (the same sums whatever the goroutines: each is
		// one feature's, added in row order), then the rows' residuals in
		// row order.
		nrm := norms[:c]
		clear(nrm)
		par.Blocks(0, m, func(lo, hi int) {
			for a := lo; a < hi; a++ {
				s := 0.0
				for _, v := range ft[a*c : (a+1)*c] {
					s += float64(v)
				}
				sums[a] += s
			}
		})
		par.For(0, c, nil, func(lo, hi int) {
			for a := 0; a < m; a++ {
				for j, v := range ft[a*c+lo : a*c+hi] {
					nrm[lo+j] += float64(v) * float64(v)
				}
			}
		})
		for _, q := range nrm {
			resid += 1 - q
		}
		// FᵀF gains the chunk's products: float32 sums over panels of
		// points (the packed kernel where gram.PackedSyrk says), each
		// added in float64.
		return linalg.AddOuterRows32(c64, ft[:m*c], c, c, gram.PackedSyrk(), gram32, pack)
	})
	if err != nil {
		return nil, nil, err
	}
	res.TraceError, res.EigenvalueBound = math.Max(resid, 0)/float64(n), math.Max(resid, 0)
	return c64, sums, nil
}

// top sets res.Values to the top Components eigenvalues of c and returns
// their eigenvectors, each with its entry of largest magnitude positive
// (rankCheck with floor, the noise scale of c's centring).
func (st Stream) top(c *mat.SymDense, res *StreamResult, floor float64) (*mat.Dense, error) {
	s, m := st.Components, res.Rank
	e, _, err := topEig(c, s)
	if err != nil {
		return nil, fmt.Errorf("kpca: Stream: %w", err)
	}
	if err := rankCheck("kpca: Stream: the Nyström approximation, centred", e.Values, s, floor); err != nil {
		return nil, err
	}
	v := e.Vectors
	for j := 0; j < s; j++ {
		big := 0.0
		for a := 0; a < m; a++ {
			if x := v.At(a, j); math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		if big < 0 {
			for a := 0; a < m; a++ {
				v.Set(a, j, -v.At(a, j))
			}
		}
	}
	res.Values = e.Values[:s]
	return v, nil
}

// streamFeatures computes chunks of features f(x) = R⁻¹·k(L, x).
type streamFeatures struct {
	st    Stream
	nm    *approx.NystromMap
	d, m  int
	lv    []uint8
	cross []float64
	ft    []float32
	r32   []float32
	x64   *mat.Dense // the chunk in float64, where the integer path does not run
}

func newStreamFeatures(st Stream, nm *approx.NystromMap, d, chunk int) *streamFeatures {
	m := len(nm.Landmarks)
	f := &streamFeatures{st: st, nm: nm, d: d, m: m, lv: make([]uint8, chunk*d), cross: make([]float64, m*chunk),
		ft: make([]float32, m*chunk), r32: make([]float32, m*m)}
	for a := 0; a < m; a++ {
		for b := 0; b <= a; b++ {
			f.r32[a*m+b] = float32(nm.R.At(a, b))
		}
	}
	return f
}

// pass reads the source chunk by chunk and calls use(i0, c, ft) with the
// chunk's features (m×c, row a the a-th feature of the c rows): R⁻¹ times
// the kernel rows, in float32 (the triangular solve by OpenBLAS strsm).
func (f *streamFeatures) pass(ctx context.Context, src Levels8Source, use func(i0, c int, ft []float32) error) error {
	m := f.m
	return f.rowsPass(ctx, src, func(i0, c int, cross []float64) error {
		ft := f.ft[:m*c]
		for i, v := range cross {
			ft[i] = float32(v)
		}
		linalg.B32.Trsm(blas.Left, blas.NoTrans, 1, blas32.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: m, Stride: m, Data: f.r32},
			blas32.General{Rows: m, Cols: c, Stride: c, Data: ft})
		return use(i0, c, ft)
	})
}

// rowsPass reads the source chunk by chunk and calls use(i0, c, cross)
// with the chunk's kernel rows against the landmarks (m×c, row a the
// a-th landmark's).
func (f *streamFeatures) rowsPass(ctx context.Context, src Levels8Source, use func(i0, c int, cross []float64) error) error {
	n, d := src.Dims()
	m := f.m
	chunk := len(f.lv) / d
	for i0 := 0; i0 < n; i0 += chunk {
		if ctx.Err() != nil {
			return fmt.Errorf("kpca: Stream: %w", status.Cancelled(context.Cause(ctx), fmt.Sprintf("at row %d of %d", i0, n)))
		}
		c := min(chunk, n-i0)
		lv := f.lv[:c*d]
		if err := src.ReadRows(i0, lv); err != nil {
			return err
		}
		x := &linalg.Levels8{Rows: c, Cols: d, Step: f.st.Step, Data: lv}
		rows, err := kernel.RowsLevels8(x, f.st.Kernel, gram.GramOptions{})
		if err != nil {
			return err
		}
		if rows == nil {
			// No integer path: the chunk in float64 (8·c·d bytes more).
			if f.x64 == nil {
				f.x64 = mat.NewDense(chunk, d, nil)
			}
			xc := f.x64.Slice(0, c, 0, d).(*mat.Dense)
			for i := 0; i < c; i++ {
				x.Row(i, xc.RawRowView(i))
			}
			if rows, err = kernel.Rows(xc, f.st.Kernel, gram.GramOptions{}); err != nil {
				return err
			}
		}
		cross := f.cross[:m*c]
		if err := rows.Cross(cross, c, f.nm.XL, 0, c); err != nil {
			return err
		}
		if err := use(i0, c, cross); err != nil {
			return err
		}
	}
	return nil
}
