// Package approx builds low-rank feature maps of a kernel, so that kernel
// methods run past the size where the n×n kernel matrix fits: the Nyström
// approximation with landmarks chosen by randomly pivoted Cholesky (Chen,
// Epperly, Tropp and Webber 2022, in the block form with rejection
// sampling of Epperly, Tropp and Webber 2024) or uniformly, and random
// Fourier features. A map gives the training points' features F (n×k, so
// that K ≈ K̂ = F·Fᵀ) and the features of new points, and says how far K̂
// is from K where that can be known without K.
package approx

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("approx: "+format+": %w", append(args, status.ErrInvalid)...)
}

// Sampler chooses the Nyström landmarks.
type Sampler int

const (
	// RPCholesky samples each landmark with probability proportional to
	// the diagonal of the current residual K − K̂ (randomly pivoted
	// Cholesky): points the landmarks so far explain badly are likely,
	// explained ones (and duplicates of landmarks) are not.
	RPCholesky Sampler = iota
	// Uniform takes landmarks in a uniformly random order, skipping any
	// whose residual is below the cut-off (near-duplicates).
	Uniform
)

func (s Sampler) String() string {
	switch s {
	case RPCholesky:
		return "rpcholesky"
	case Uniform:
		return "uniform"
	}
	return fmt.Sprintf("Sampler(%d)", int(s))
}

// ParseSampler reads rpcholesky or uniform.
func ParseSampler(s string) (Sampler, error) {
	switch s {
	case "rpcholesky", "rpchol":
		return RPCholesky, nil
	case "uniform":
		return Uniform, nil
	}
	return 0, invalidf("sampler %q: want rpcholesky or uniform", s)
}

// Nystrom configures a Nyström approximation K̂ = K(X, L)·K(L, L)⁻¹·K(L, X)
// of rank at most Rank, built as a partial Cholesky factor F (n×k, k ≤
// Rank) with K̂ = F·Fᵀ: each round samples Block candidate pivots S,
// forms their Block×Block residual K(S, S) − F_S·F_Sᵀ and accepts
// candidates one by one on it (for RPCholesky, candidate j with
// probability r_j/d_j, r_j its residual after the candidates accepted
// before it and d_j its residual when sampled: the accelerated RPCholesky
// of Epperly, Tropp and Webber, which gives the landmarks of sequential
// RPCholesky at block cost); then only the accepted T get kernel columns
// K(X, T), by the level-3 Gram engine, less F·F_Tᵀ (a refused candidate
// costs O(k·Block + d·Block), not O(n·(d + k))). A candidate whose
// residual is at most Cutoff·max(diag K) is never accepted, so repeated or
// near-duplicate points cannot make the factor singular, and the factor
// stops at the numerical rank of K.
//
// Cost: O(n·k·(d + k)) time and O(n·k) memory; K is never formed.
type Nystrom struct {
	// Rank is m, the most landmarks (1 ≤ m ≤ n).
	Rank int
	// Sampler: RPCholesky (the default) or Uniform.
	Sampler Sampler
	// TraceTol, when > 0, stops as soon as the relative trace error
	// tr(K − K̂)/tr(K) is at most TraceTol (the adaptive mode: RPCholesky
	// is incremental); Rank still bounds the landmarks.
	TraceTol float64
	// Block is the candidates per round; 0 means min(Rank, 256). Refused
	// candidates cost little (their kernel rows are never formed), and
	// larger rounds run OpenBLAS at a better rate, up to about this size
	// (docs/measurements.md).
	Block int
	// Cutoff is the relative residual below which a candidate is refused;
	// 0 means 1e-12.
	Cutoff float64
	// Seed of the sampling; 0 means 1.
	Seed uint64
	// Sample is how many rows the landmarks are chosen among: one row
	// drawn from each of Sample equal strata of the rows (Strata), then
	// the rounds on those rows alone (their updates cost Sample·m²/2
	// multiply-adds instead of n·m²/2). The map over all n rows is then
	// completed from their kernel rows C = K(L, X) without forming F (see
	// NystromMap.TrainGram): F_cᵀF_c and the trace error over all n rows
	// come from C·Cᵀ; Train forms F if asked. −1 means all rows; 0 means
	// the rule: 2·Rank rows with Float32 (or Fit32, FitLevels8), the
	// RPCholesky sampler and no TraceTol, when n ≥ 16·Rank and the
	// updates saved, (n − 2·Rank)·Rank²/2, reach 2·10⁹ multiply-adds
	// (n ≥ 16 000 at Rank 1000, 17 000 at 500, 64 500 at 250); all rows
	// otherwise (sampleRatio says what the rule rests on). The sample
	// applies to float32 features only: a positive Sample with float64
	// features is refused.
	Sample int
	// Float32 computes the kernel rows by OpenBLAS sgemm on a float32 copy
	// of the data (shifted by its mean for distance kernels) — or, for data
	// on an 8-bit grid (images), by exact integer products where the
	// processor has AVX-512 VNNI (gram.NewKernelRowsInt8) — and builds
	// and stores F in float32: half the memory of F and about twice the
	// rate of its big products. Kernel entries are within
	// gram.KernelRows.EntryBound; each round's rows of F come from a
	// float32 update and a float32 product with L⁻¹ (errors of order
	// t·2⁻²⁴·|L⁻¹|·|G| an entry for a round of t landmarks and its
	// kernel-minus-update block G, the order the float32 update makes
	// anyway); the
	// residual diagonal and the traces are float64 sums over the stored
	// values, so the trace error is that of the stored F. Cutoff defaults
	// to 1e-5 (float32 residuals below it are rounding noise). Fit32
	// implies it.
	Float32 bool
	// ResidualSample, when > 0, estimates ‖K − K̂‖₂ from below on that
	// many rows chosen uniformly (Info.ResidualNormLower): the largest
	// eigenvalue of one p×p block of K − K̂, by TopEigenvalue.
	ResidualSample int
	// TopEigenvalue returns the largest eigenvalue of the symmetric
	// matrix a, or a lower bound on it (a Ritz value), seeded by seed; nil
	// means LAPACK's dsyevr for the top one (linalg.SymEigValues, O(p³)).
	// Package kpca passes eig's Lanczos (O(p²) a step).
	TopEigenvalue func(a *mat.SymDense, seed uint64) (float64, error)
	// Context, when set, is checked before every round (and, with a
	// Sample, between blocks of the kernel rows C and of C_c·C_cᵀ): once
	// it has ended Fit stops with status.Cancelled.
	Context context.Context
	// Progress, when set, is called after every round with the landmarks
	// accepted so far and Rank.
	Progress func(landmarks, rank int)
	// pool lends scratch buffers (a fit on a sample and its completion
	// share one); nil allocates them.
	pool *scratch.Pool
	// ofSample marks a sampled fit's own fit: its map has no landmarks'
	// rows (XL nil), which fromSample gathers once C's buffers are back
	// in the pool.
	ofSample bool
}

// Info says how a feature map was built and how far it is from the
// kernel.
type Info struct {
	Method  string `json:"method"`            // nystrom or rff
	Sampler string `json:"sampler,omitempty"` // nystrom: rpcholesky or uniform
	// Rank is k, the features (landmarks accepted, or random features).
	Rank int `json:"rank"`
	// TraceError is tr(K − K̂)/tr(K) (Nyström: exact, since K − K̂ is
	// positive semi-definite and its diagonal is known — up to the
	// cut-off: a point whose residual fell below Cutoff·max diag K counts
	// as 0; random features: not known, 0, and left out of the JSON).
	TraceError float64 `json:"trace_error"`
	// EigenvalueBound bounds the eigenvalue error of the centred kernel
	// (Nyström): λ_i(K̂_c) ≤ λ_i(K_c) ≤ λ_i(K̂_c) + EigenvalueBound, with
	// EigenvalueBound = tr(K − K̂) ≥ ‖K − K̂‖₂ (M(K − K̂)M is positive
	// semi-definite with trace at most tr(K − K̂)).
	EigenvalueBound float64 `json:"eigenvalue_bound,omitempty"`
	// ResidualNormLower, when estimated (Nyström.ResidualNorm), is
	// λ_max of the residual on a random principal submatrix: a lower bound
	// of ‖K − K̂‖₂ (the largest eigenvalue of a principal submatrix is at
	// most the matrix's), so ‖K − K̂‖₂ lies in [ResidualNormLower,
	// EigenvalueBound].
	ResidualNormLower float64 `json:"residual_norm_lower,omitempty"`
	// Precision of the stored features: float32, or empty for float64.
	Precision string `json:"precision,omitempty"`
	// Products: the arithmetic of the kernel rows' inner products
	// (gram.KernelRows.Arithmetic: int8, grid, float32 or float64;
	// Nyström only).
	Products string `json:"products,omitempty"`
	// Rounds of candidates (Nyström), Rejected candidates.
	Rounds   int `json:"rounds,omitempty"`
	Rejected int `json:"rejected,omitempty"`
	// Sample: the rows the landmarks were chosen among (Nystrom.Sample),
	// when not all of them.
	Sample  int     `json:"sample,omitempty"`
	Seconds float64 `json:"seconds"`
}

// FeatureMap is a low-rank feature map of a kernel on the training points.
type FeatureMap interface {
	// Train returns the training points' features F (n×k), K ≈ F·Fᵀ: a
	// *mat.Dense, or the mat.Transpose of a k×n *mat.Dense (Nyström keeps
	// Fᵀ, one feature per row); gonum's products take either without a
	// copy. The matrix is the map's own: callers must not modify it.
	Train() mat.Matrix
	// Map returns the features of the rows of y (m×d).
	Map(y *mat.Dense) (*mat.Dense, error)
	// Info reports the map.
	Info() Info
	// ReleaseTrain drops the training features (a model keeps only what
	// Map needs); Train returns nil afterwards.
	ReleaseTrain()
}

// MarshalJSON writes the fields above, without trace_error for random
// features (they have none).
func (i Info) MarshalJSON() ([]byte, error) {
	type plain Info
	if i.Method != "rff" {
		return json.Marshal(plain(i))
	}
	return json.Marshal(struct {
		plain
		TraceError *float64 `json:"trace_error,omitempty"`
	}{plain: plain(i)})
}

// kernelDiag returns k(x_i, x_i) for every row.
func kernelDiag(x *mat.Dense, k kernel.Kernel) []float64 {
	n, _ := x.Dims()
	d := make([]float64, n)
	for i := range d {
		row := x.RawRowView(i)
		d[i] = k.Eval(row, row)
	}
	return d
}

// Fit builds the Nyström map of kernel k on the rows of x (n×d, not
// modified). With Float32 the rows are first shifted by their mean and
// rounded to float32 (a copy of n·d float32s, which a map that computes
// C's kernel rows again keeps until its ReleaseTrain), and F is stored in
// float32;
// rows on an 8-bit grid (images) instead get exact integer products where
// the processor has them (gram.NewKernelRowsInt8: n·d bytes, no float32
// copy).
func (ny Nystrom) Fit(xm mat.Matrix, k kernel.Kernel) (*NystromMap, error) {
	start := time.Now()
	x := linalg.DenseOf(xm)
	if x == nil {
		return nil, invalidf("Nystrom: empty data")
	}
	if err := checkPSD(k); err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	if err := ny.check(n); err != nil {
		return nil, err
	}
	ny.collect(n, dim)
	src := nySource{n: n, dim: dim, row: func(i int, dst []float64) { copy(dst, x.RawRowView(i)) }}
	if ny.Float32 {
		// Data on an 8-bit grid (images) get exact integer kernel rows
		// where the processor runs them faster (gram.NewKernelRowsInt8;
		// every entry passed its grid check, so the data are finite);
		// others a shifted float32 copy and sgemm.
		rows, err := kernel.RowsInt8(x, k, rowOptions)
		if err != nil {
			return nil, err
		}
		if rows != nil {
			src.rows, src.f32 = rows, true
			return ny.fitOrSample(src, k, start, sampleOfGrid(x, k, rows))
		}
	} else if ny.Sample > 0 {
		return nil, invalidf("Nystrom: Sample %d with float64 features: the sample applies to float32 features only", ny.Sample)
	}
	if err := linalg.CheckFinite("approx: Nystrom", x); err != nil {
		return nil, err
	}
	if ny.Float32 {
		x32, err := shiftedFloat32(x, k)
		if err != nil {
			return nil, err
		}
		rows, err := kernel.Rows32(x32, k, gram.GramOptions{})
		if err != nil {
			x32.Free()
			return nil, err
		}
		src.rows, src.f32, src.data32, src.ownsData = rows, true, x32, true
		// The kernel rows see the shifted float32 data: so must the
		// candidates (the landmarks stay the caller's rows).
		src.krow = func(i int, dst []float64) {
			for j, v := range x32.Row(i) {
				dst[j] = float64(v)
			}
		}
		return keepOrFree(ny.fitOrSample(src, k, start, sampleOfDense(x, k)))(x32)
	} else {
		rows, err := kernel.Rows(x, k, gram.GramOptions{})
		if err != nil {
			return nil, err
		}
		src.rows = rows
	}
	return ny.fit(src, k, start)
}

// Fit32 builds the Nyström map of kernel k on the rows of a float32 data
// set x (n×d), read in place (not copied, not modified; it must not change
// during the call, nor — where the map computes C's kernel rows again
// instead of storing it, above crossStoreMax — until the map's
// ReleaseTrain, since TrainScores and Train read it again; the map keeps
// it reachable till then): kernel rows by OpenBLAS sgemm
// (gram.NewKernelRows32, so store x centred near the origin for distance
// kernels), F in float32 (n·k float32s), the residual diagonal and traces
// in float64. Float32 is implied. Memory: x, F, and one Block×n float64
// panel plus one Block×n float32 panel.
func (ny Nystrom) Fit32(x *linalg.Dense32, k kernel.Kernel) (*NystromMap, error) {
	start := time.Now()
	if err := checkPSD(k); err != nil {
		return nil, err
	}
	if err := linalg.CheckFinite32("approx: Nystrom", x); err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	if err := ny.check(n); err != nil {
		return nil, err
	}
	ny.collect(n, dim)
	rows, err := kernel.Rows32(x, k, gram.GramOptions{})
	if err != nil {
		return nil, err
	}
	src := nySource{n: n, dim: dim, rows: rows, f32: true, data32: x, row: func(i int, dst []float64) {
		for j, v := range x.Row(i) {
			dst[j] = float64(v)
		}
	}}
	return ny.fitOrSample(src, k, start, func(sub Nystrom, pos []int) (*NystromMap, error) {
		xs, err := linalg.NewDense32(len(pos), dim)
		if err != nil {
			return nil, err
		}
		defer xs.Free()
		for a, i := range pos {
			copy(xs.Row(a), x.Row(i))
		}
		return sub.Fit32(xs, k)
	})
}

// FitLevels8 builds the Nyström map of kernel k on 8-bit data (entries
// Step·level) read in place: the kernel rows by exact integer products
// (gram.NewKernelRowsLevels8: the packed levels, about n·d bytes beside
// x), F in float32 as with Float32 (implied). Where the integer path does
// not apply (see NewKernelRowsLevels8) the rows go through a float32 copy
// shifted by the column means (n·d float32s) and sgemm, as in Fit.
func (ny Nystrom) FitLevels8(x *linalg.Levels8, k kernel.Kernel) (*NystromMap, error) {
	start := time.Now()
	if err := checkPSD(k); err != nil {
		return nil, err
	}
	if err := x.Check("approx: Nystrom"); err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	if err := ny.check(n); err != nil {
		return nil, err
	}
	ny.collect(n, dim)
	src := nySource{n: n, dim: dim, f32: true, row: x.Row}
	rows, err := kernel.RowsLevels8(x, k, rowOptions)
	if err != nil {
		return nil, err
	}
	sample := func(sub Nystrom, pos []int) (*NystromMap, error) {
		xs := &linalg.Levels8{Rows: len(pos), Cols: dim, Step: x.Step, Data: make([]uint8, len(pos)*dim)}
		for a, i := range pos {
			copy(xs.Data[a*dim:(a+1)*dim], x.Data[i*dim:(i+1)*dim])
		}
		return sub.FitLevels8(xs, k)
	}
	if rows != nil {
		src.rows = rows
		return ny.fitOrSample(src, k, start, sample)
	}
	x32, err := linalg.NewDense32(n, dim)
	if err != nil {
		return nil, err
	}
	mean := make([]float64, dim)
	if k.ShiftInvariant() {
		sums := make([]int64, dim)
		for i := 0; i < n; i++ {
			for j, v := range x.Data[i*dim : (i+1)*dim] {
				sums[j] += int64(v)
			}
		}
		for j, v := range sums {
			mean[j] = x.Step * float64(v) / float64(n)
		}
	}
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := x32.Row(i)
			for j, v := range x.Data[i*dim : (i+1)*dim] {
				dst[j] = float32(x.Step*float64(v) - mean[j])
			}
		}
	})
	if src.rows, err = kernel.Rows32(x32, k, gram.GramOptions{}); err != nil {
		x32.Free()
		return nil, err
	}
	src.data32, src.ownsData = x32, true
	// The kernel rows see the shifted float32 data: so must the
	// candidates (the landmarks stay x's rows).
	src.krow = func(i int, dst []float64) {
		for j, v := range x32.Row(i) {
			dst[j] = float64(v)
		}
	}
	return keepOrFree(ny.fitOrSample(src, k, start, sample))(x32)
}

// keepOrFree returns a fit's map and error through a function of the
// float32 copy the fit made, which it frees unless the map keeps it (its
// kernel rows computed again read it: NystromMap.rowsData).
func keepOrFree(m *NystromMap, err error) func(x32 *linalg.Dense32) (*NystromMap, error) {
	return func(x32 *linalg.Dense32) (*NystromMap, error) {
		if m == nil || m.rowsData != x32 {
			x32.Free()
		}
		return m, err
	}
}

// rowOptions are the options of the integer kernel rows (RowsInt8,
// RowsLevels8): the written rules (GridAuto); a variable so that tests can
// take the integer path on any processor (gram.GridOn: a portable loop).
var rowOptions = gram.GramOptions{}

// fitOrSample is the fit on src: on all its rows, or with the landmarks
// chosen among the rows Nystrom.Sample says, fitSample fitting those.
func (ny Nystrom) fitOrSample(src nySource, k kernel.Kernel, start time.Time, fitSample func(Nystrom, []int) (*NystromMap, error)) (*NystromMap, error) {
	if ns := ny.sampleSize(src.n, src.f32); ns < src.n {
		return ny.sampled(src, k, ns, start, fitSample)
	}
	return ny.fit(src, k, start)
}

// shiftedFloat32 returns the rows of x rounded to float32, shifted by
// their column means for distance kernels (which a shift leaves
// unchanged: smaller norms, smaller float32 errors).
func shiftedFloat32(x *mat.Dense, k kernel.Kernel) (*linalg.Dense32, error) {
	n, d := x.Dims()
	mean := make([]float64, d)
	if k.ShiftInvariant() {
		mean = columnMeans(x)
	}
	out, err := linalg.NewDense32(n, d)
	if err != nil {
		return nil, err
	}
	bigs := make([]float64, n) // each row's largest |x_ij − mean_j|
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst, big := out.Row(i), 0.0
			for j, v := range x.RawRowView(i) {
				e := v - mean[j]
				dst[j] = float32(e)
				if a := math.Abs(e); a > big {
					big = a
				}
			}
			bigs[i] = big
		}
	})
	if err := gram.CheckFloat32Range("Nystrom: float32 features", floats.Max(bigs), d); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// meanBlock is the rows per block of columnMeans.
const meanBlock = 256

// columnMeans returns the column means of x: column sums of blocks of
// meanBlock rows in parallel, added in block order, divided by n — the
// same bits whatever the number of goroutines.
func columnMeans(x *mat.Dense) []float64 {
	n, d := x.Dims()
	mean := make([]float64, d)
	nb := (n + meanBlock - 1) / meanBlock
	part := make([]float64, nb*d)
	par.Blocks(0, nb, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			sum := part[b*d : (b+1)*d]
			for i := b * meanBlock; i < min((b+1)*meanBlock, n); i++ {
				for j, v := range x.RawRowView(i) {
					sum[j] += v
				}
			}
		}
	})
	for b := 0; b < nb; b++ {
		for j, v := range part[b*d : (b+1)*d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	return mean
}

func (ny Nystrom) check(n int) error {
	if ny.Rank < 1 || ny.Rank > n {
		return invalidf("Nystrom: rank m = %d, want 1 ≤ m ≤ n = %d", ny.Rank, n)
	}
	if ny.Sampler != RPCholesky && ny.Sampler != Uniform {
		return invalidf("Nystrom: sampler %v", ny.Sampler)
	}
	if ny.TraceTol < 0 || math.IsNaN(ny.TraceTol) || ny.Block < 0 || ny.Cutoff < 0 || math.IsNaN(ny.Cutoff) {
		return invalidf("Nystrom: TraceTol %g, Block %d, Cutoff %g", ny.TraceTol, ny.Block, ny.Cutoff)
	}
	return nil
}

// Method builds a feature map of kernel k on the rows of x: Nystrom or
// RFF. Models take it as their approximation option.
type Method interface {
	Build(x *mat.Dense, k kernel.Kernel) (FeatureMap, error)
}

// Build is Fit as a Method.
func (ny Nystrom) Build(x *mat.Dense, k kernel.Kernel) (FeatureMap, error) {
	m, err := ny.Fit(x, k)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// checkPSD checks k and refuses kernels that are not positive
// semi-definite (the sigmoid): the pivoted Cholesky factor, and the trace
// error it reports, exist only for PSD kernel matrices.
func checkPSD(k kernel.Kernel) error {
	if err := k.Check(); err != nil {
		return err
	}
	if !k.PSD() {
		return invalidf("Nystrom: the %v kernel is not positive semi-definite: Nyström needs a PSD kernel (use the exact operators)", k.Kind)
	}
	return nil
}

// denseTop is TopEigenvalue's default: the largest eigenvalue by LAPACK.
func denseTop(a *mat.SymDense, _ uint64) (float64, error) {
	v, err := linalg.SymEigValues(a, 1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}
