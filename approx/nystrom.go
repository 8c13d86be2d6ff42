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

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/rng"
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
	// larger rounds run OpenBLAS at a better rate: Fashion-MNIST
	// n = 20 000, m = 1000, float32, medians of 5 fits in two series:
	// Block 128 0.73/0.70 s, 192 0.70/0.68, 256 0.70/0.69, 320 0.68/0.66.
	Block int
	// Cutoff is the relative residual below which a candidate is refused;
	// 0 means 1e-12.
	Cutoff float64
	// Seed of the sampling; 0 means 1.
	Seed uint64
	// Float32 computes the kernel rows by OpenBLAS sgemm on a float32 copy
	// of the data (shifted by its mean for distance kernels) — or, for data
	// on an 8-bit grid (images), by exact integer products where the
	// processor has AVX-512 VNNI (gram.NewKernelRowsInt8) — and builds
	// and stores F in float32: half the memory of F and about twice the
	// rate of its big products. Kernel entries are within
	// gram.KernelRows.EntryBound; each round's rows of F come from a
	// float32 update and a float32 triangular solve (errors of order
	// 2⁻²⁴·‖L⁻¹‖ an entry, the order the float32 update makes anyway); the
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
	// Context, when set, is checked before every round: once it has ended
	// Fit stops with status.Cancelled.
	Context context.Context
	// Progress, when set, is called after every round with the landmarks
	// accepted so far and Rank.
	Progress func(landmarks, rank int)
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
	Rounds   int     `json:"rounds,omitempty"`
	Rejected int     `json:"rejected,omitempty"`
	Seconds  float64 `json:"seconds"`
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

// NystromMap is the Nyström feature map of a kernel on training points X:
// F = K(X, L)·R⁻ᵀ with K(L, L) = R·Rᵀ (R lower triangular, the landmarks'
// rows of F), and for a new point f(y) = R⁻¹·K(L, y).
type NystromMap struct {
	Kernel    kernel.Kernel
	Landmarks []int      // indices of the landmarks in X, in pivot order
	XL        *mat.Dense // the landmarks' rows of X (k×d)
	R         *mat.Dense // k×k lower triangular, K(L, L) = R·Rᵀ
	train     mat.Matrix // F (n×k): the transpose of k×n float64 or float32 storage
	ft32      *linalg.Dense32
	means     []float64 // the training features' means, when the fit kept them
	info      Info
}

// Train returns F as the transpose of the stored Fᵀ: a *mat.Dense, or a
// *linalg.Dense32 with Float32 (nil for a rebuilt or released map).
func (m *NystromMap) Train() mat.Matrix { return m.train }

// ReleaseTrain drops the training features (and frees float32 storage):
// Map, the landmarks and the factor stay; Train returns nil afterwards.
func (m *NystromMap) ReleaseTrain() {
	m.train, m.means = nil, nil
	if m.ft32 != nil {
		// Unmapping tens of megabytes takes the system milliseconds:
		// nothing waits for it (the storage is the map's alone).
		go m.ft32.Free()
		m.ft32 = nil
	}
}

// Info reports the map.
func (m *NystromMap) Info() Info { return m.info }

// TrainMeans returns the training features' column means when the fit
// computed them on the way (float32 features), else ColumnMeans of Train;
// nil once the training features are released or centred.
func (m *NystromMap) TrainMeans() []float64 {
	if m.train == nil {
		return nil
	}
	if m.means != nil {
		return append([]float64(nil), m.means...)
	}
	return ColumnMeans(m.train)
}

// CenterTrain subtracts mean (one value per feature) from the stored
// training features in place, each difference rounded once to the
// storage's precision: Train returns F − 1μᵀ afterwards. For a model that
// needs only the centred features (kernel PCA's k×k problem) and would
// otherwise centre a copy.
func (m *NystromMap) CenterTrain(mean []float64) error {
	t, ok := m.train.(mat.Transpose)
	if !ok {
		return invalidf("NystromMap.CenterTrain: no training features")
	}
	m.means = nil
	switch ft := t.Matrix.(type) {
	case *linalg.Dense32:
		return linalg.CenterRows32(ft, mean)
	case *mat.Dense:
		k, _ := ft.Dims()
		if len(mean) != k {
			return invalidf("NystromMap.CenterTrain: %d means for %d features", len(mean), k)
		}
		for e := 0; e < k; e++ {
			row := ft.RawRowView(e)
			for i := range row {
				row[i] -= mean[e]
			}
		}
		return nil
	}
	return invalidf("NystromMap.CenterTrain: features of type %T", t.Matrix)
}

// Map returns f(y)ᵀ = K(y, L)·R⁻ᵀ for the rows of y.
func (m *NystromMap) Map(y *mat.Dense) (*mat.Dense, error) {
	if y == nil || y.IsEmpty() {
		return nil, invalidf("Map: empty data")
	}
	if _, d := y.Dims(); d != m.XL.RawMatrix().Cols {
		return nil, invalidf("Map: data have %d columns, the landmarks %d", d, m.XL.RawMatrix().Cols)
	}
	if err := linalg.CheckFinite("approx: Map", y); err != nil {
		return nil, err
	}
	ky, err := kernel.CrossGram(y, m.XL, m.Kernel)
	if err != nil {
		return nil, err
	}
	linalg.B64.Trsm(blas.Right, blas.Trans, 1, lowerOf(m.R), ky.RawMatrix())
	return ky, nil
}

// NewNystromMap rebuilds a map from its parts (a saved model): the
// training features are not kept, so Train returns nil.
func NewNystromMap(k kernel.Kernel, xl, r *mat.Dense, info Info) (*NystromMap, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	kl, d := xl.Dims()
	if rr, rc := r.Dims(); rr != kl || rc != kl || d < 1 {
		return nil, invalidf("landmarks %d×%d with a %d×%d factor", kl, d, rr, rc)
	}
	for i := 0; i < kl; i++ {
		if !(r.At(i, i) > 0) {
			return nil, invalidf("factor diagonal %d is %g", i, r.At(i, i))
		}
	}
	return &NystromMap{Kernel: k, XL: xl, R: r, info: info}, nil
}

func lowerOf(r *mat.Dense) blas64.Triangular {
	raw := r.RawMatrix()
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: raw.Rows, Stride: raw.Stride, Data: raw.Data}
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
// rounded to float32 (a copy of n·d float32s), and F is stored in float32;
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
	src := nySource{n: n, dim: dim, row: func(i int, dst []float64) { copy(dst, x.RawRowView(i)) }}
	if ny.Float32 {
		// Data on an 8-bit grid (images) get exact integer kernel rows
		// where the processor runs them faster (gram.NewKernelRowsInt8;
		// every entry passed its grid check, so the data are finite);
		// others a shifted float32 copy and sgemm.
		rows, err := kernel.RowsInt8(x, k, gram.GramOptions{})
		if err != nil {
			return nil, err
		}
		if rows != nil {
			src.rows, src.f32 = rows, true
			return ny.fit(src, k, start)
		}
	}
	if err := linalg.CheckFinite("approx: Nystrom", x); err != nil {
		return nil, err
	}
	if ny.Float32 {
		x32, err := shiftedFloat32(x, k)
		if err != nil {
			return nil, err
		}
		defer x32.Free()
		rows, err := kernel.Rows32(x32, k, gram.GramOptions{})
		if err != nil {
			return nil, err
		}
		src.rows, src.f32 = rows, true
		// The kernel rows see the shifted float32 data: so must the
		// candidates (the landmarks stay the caller's rows).
		src.krow = func(i int, dst []float64) {
			for j, v := range x32.Row(i) {
				dst[j] = float64(v)
			}
		}
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
// during the call): kernel rows by OpenBLAS sgemm
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
	rows, err := kernel.Rows32(x, k, gram.GramOptions{})
	if err != nil {
		return nil, err
	}
	src := nySource{n: n, dim: dim, rows: rows, f32: true, row: func(i int, dst []float64) {
		for j, v := range x.Row(i) {
			dst[j] = float64(v)
		}
	}}
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
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := out.Row(i)
			for j, v := range x.RawRowView(i) {
				dst[j] = float32(v - mean[j])
			}
		}
	})
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
	par.For(0, nb, nil, func(lo, hi int) {
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

// nySource is the data of a fit: kernel rows, and row i of the data in
// float64 (for the landmarks and the diagonal).
type nySource struct {
	n, dim int
	rows   *gram.KernelRows
	row    func(i int, dst []float64)
	// krow, when set, is row i as the kernel rows see it (Fit's shifted
	// float32 copy); nil means row.
	krow func(i int, dst []float64)
	f32  bool // store F in float32
}

// newRows are a round's accepted pivots: their indices T, their rows of
// the data as the kernel rows see them (xt, t×d), their rows of F so far
// (ft, t×kc; nil when kc = 0), and L (t×t lower triangular, K(T, T) −
// F_T·F_Tᵀ = L·Lᵀ).
type newRows struct {
	idx       []int
	xt, ft, l *mat.Dense
}

// factor is the storage of Fᵀ (m×n, one feature per row).
type factor interface {
	// extend appends a round's features: rows [kc, kc+t) of Fᵀ become
	// L⁻¹·(K(T, X) − F_T·Fᵀ), the pivots' columns set to L exactly (the
	// earlier pivots' to 0, so that the landmarks' rows of F are lower
	// triangular), and their squares leave the residual diagonal res.
	extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error
	// gather sets dst (len(idx)×kc) to the rows idx of F over its first
	// kc features (dst[a][e] = F[idx[a]][e]), reading one stored feature
	// row at a time.
	gather(idx []int, kc int, dst *mat.Dense)
	// train returns F (n×kc) as a mat.Matrix: the transpose of the stored
	// rows.
	train(kc int) mat.Matrix
}

type factor64 struct {
	ft *mat.Dense
	gt *[]float64 // a t×n panel, reused: fresh pages are slow to touch
	tr *[]float64 // gather's transposed buffer, reused
}

func (f factor64) extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error {
	_, n := f.ft.Dims()
	t := len(r.idx)
	if cap(*f.gt) < t*n {
		*f.gt = make([]float64, t*n)
	}
	gt := mat.NewDense(t, n, (*f.gt)[:t*n])
	// G_Tᵀ = K(T, X) − F_T·Fᵀ (t×n): the kernel rows from the prepared
	// source (the data's shift and norms computed once), then one gemm.
	if err := rows.Cross(gt.RawMatrix().Data, n, r.xt, 0, n); err != nil {
		return err
	}
	if kc > 0 {
		linalg.B64.Gemm(blas.NoTrans, blas.NoTrans, -1, r.ft.RawMatrix(), f.ft.Slice(0, kc, 0, n).(*mat.Dense).RawMatrix(), 1,
			gt.RawMatrix())
	}
	// F_newᵀ = L⁻¹·G_Tᵀ (t×n), in place, then the pivots' columns.
	linalg.B64.Trsm(blas.Left, blas.NoTrans, 1, lowerOf(r.l), gt.RawMatrix())
	for e := 0; e < t; e++ {
		row := gt.RawRowView(e)
		for _, p := range pivots {
			row[p] = 0
		}
		for a, p := range r.idx {
			row[p] = r.l.At(a, e)
		}
	}
	par.For(0, n, nil, func(lo, hi int) {
		rs := res[lo:hi]
		for e := 0; e < t; e++ {
			row := gt.RawRowView(e)[lo:hi]
			copy(f.ft.RawRowView(kc + e)[lo:hi], row)
			for a, z := range row {
				rs[a] -= z * z
			}
		}
	})
	return nil
}

func (f factor64) gather(idx []int, kc int, dst *mat.Dense) {
	gatherRows(idx, kc, dst, f.tr, func(e int, out []float64) {
		row := f.ft.RawRowView(e)
		for a, i := range idx {
			out[a] = row[i]
		}
	})
}

// gatherRows sets dst (len(idx)×kc) from feature rows: fill(e, out) puts
// feature e of the points idx in out; the rows are gathered into a
// transposed buffer (sequential writes) and transposed in 64×64 blocks.
func gatherRows(idx []int, kc int, dst *mat.Dense, scratch *[]float64, fill func(e int, out []float64)) {
	p := len(idx)
	tr := grow(scratch, kc*p)
	par.For(0, kc, nil, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			fill(e, tr[e*p:(e+1)*p])
		}
	})
	raw := dst.RawMatrix()
	const blk = 64
	for a0 := 0; a0 < p; a0 += blk {
		for e0 := 0; e0 < kc; e0 += blk {
			for a := a0; a < min(a0+blk, p); a++ {
				row := raw.Data[a*raw.Stride:]
				for e := e0; e < min(e0+blk, kc); e++ {
					row[e] = tr[e*p+a]
				}
			}
		}
	}
}
func (f factor64) train(kc int) mat.Matrix {
	_, n := f.ft.Dims()
	return f.ft.Slice(0, kc, 0, n).(*mat.Dense).T()
}

// crossChunk is the kernel rows factor32 computes at once where they come
// through a float64 panel (data off the 8-bit grid).
const crossChunk = 64

// factor32 keeps Fᵀ in float32 and builds each round's rows there in
// float32 arithmetic: the kernel rows K(T, X) rounded into the new rows
// (straight from the exact integer kernel of 8-bit data, else from a
// float64 panel), −F_T·Fᵀ added by sgemm, then strsm. The rounding this
// adds is of the order of what the float32 update makes anyway (entries
// of G off by about 2⁻²⁴·(|K| + |F_T·Fᵀ|), times ‖L⁻¹‖ in F);
// the residual diagonal subtracts the squares of the stored values, so
// the trace error is that of the stored F.
type factor32 struct {
	ft   *linalg.Dense32
	gt   *[]float64 // the float64 panel of kernel rows that lack Rows32
	tr   *[]float64 // gather's transposed buffer, reused
	fs   *[]float32 // F_T in float32, reused
	sums []float64  // each stored feature's sum over the points
}

func (f factor32) extend(kc int, rows *gram.KernelRows, r newRows, pivots []int, res []float64) error {
	n := f.ft.Cols
	t := len(r.idx)
	dst := f.ft.Data[kc*n : (kc+t)*n]
	dg := blas32.General{Rows: t, Cols: n, Stride: n, Data: dst}
	// K(T, X) into the new rows: by the exact integer kernel of 8-bit data
	// in float32 directly, else from a float64 panel.
	if !rows.Rows32(r.idx, dst, n) {
		// Through a float64 panel of crossChunk rows at a time, allocated
		// once: its size (and the kernel rows' float32 scratch) stays
		// fixed whatever t, so no round leaves a larger one behind
		// (at n = 10⁶ a panel of t rows is 8t MB).
		if *f.gt == nil {
			*f.gt = make([]float64, crossChunk*n)
		}
		for a0 := 0; a0 < t; a0 += crossChunk {
			a1 := min(a0+crossChunk, t)
			gt := (*f.gt)[:(a1-a0)*n]
			if err := rows.Cross(gt, n, r.xt.Slice(a0, a1, 0, r.xt.RawMatrix().Cols).(*mat.Dense), 0, n); err != nil {
				return err
			}
			out := dst[a0*n : a1*n]
			par.For(0, len(gt), nil, func(lo, hi int) {
				for i, v := range gt[lo:hi] {
					out[lo+i] = float32(v)
				}
			})
		}
	}
	// − F_T·Fᵀ, added by sgemm (β = 1).
	if kc > 0 {
		if cap(*f.fs) < t*kc {
			*f.fs = make([]float32, t*kc)
		}
		fs := (*f.fs)[:t*kc]
		for j := 0; j < t; j++ {
			for e, v := range r.ft.RawRowView(j) {
				fs[j*kc+e] = float32(v) // exact: gathered from float32
			}
		}
		linalg.B32.Gemm(blas.NoTrans, blas.NoTrans, -1, blas32.General{Rows: t, Cols: kc, Stride: kc, Data: fs},
			blas32.General{Rows: kc, Cols: n, Stride: n, Data: f.ft.Data[:kc*n]}, 1, dg)
	}
	l32 := make([]float32, t*t)
	for a := 0; a < t; a++ {
		for e := 0; e <= a; e++ {
			l32[a*t+e] = float32(r.l.At(a, e))
		}
	}
	linalg.B32.Trsm(blas.Left, blas.NoTrans, 1, blas32.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: t, Stride: t, Data: l32}, dg)
	for e := 0; e < t; e++ {
		row := dst[e*n : (e+1)*n]
		for _, p := range pivots {
			row[p] = 0
		}
		for a, p := range r.idx {
			row[p] = float32(r.l.At(a, e))
		}
	}
	// The squares leave the residual diagonal; the features' sums (for
	// their means) come along, by chunks of points added in chunk order.
	const chunk = 4096
	parts := make([]float64, (n+chunk-1)/chunk*t)
	par.For(0, (n+chunk-1)/chunk, nil, func(c0, c1 int) {
		for c := c0; c < c1; c++ {
			lo, hi := c*chunk, min((c+1)*chunk, n)
			rs := res[lo:hi]
			for e := 0; e < t; e++ {
				sum := 0.0
				for a, z := range dst[e*n+lo : e*n+hi] {
					v := float64(z)
					rs[a] -= v * v
					sum += v
				}
				parts[c*t+e] = sum
			}
		}
	})
	for c := 0; c < (n+chunk-1)/chunk; c++ {
		for e := 0; e < t; e++ {
			f.sums[kc+e] += parts[c*t+e]
		}
	}
	return nil
}

func (f factor32) gather(idx []int, kc int, dst *mat.Dense) {
	gatherRows(idx, kc, dst, f.tr, func(e int, out []float64) {
		row := f.ft.Row(e)
		for a, i := range idx {
			out[a] = float64(row[i])
		}
	})
}
func (f factor32) train(kc int) mat.Matrix {
	return f.ft.TopRows(kc).T()
}

// fit is the block RPCholesky (or uniform) factorisation on a source.
func (ny Nystrom) fit(src nySource, k kernel.Kernel, start time.Time) (*NystromMap, error) {
	n, dim := src.n, src.dim
	m := ny.Rank
	b := ny.Block
	if b == 0 {
		b = 256
	}
	b = min(b, m)
	cut := ny.Cutoff
	if cut == 0 {
		cut = 1e-12
		if src.f32 {
			// The float32 residuals carry errors of about 10⁻⁷ of the
			// diagonal: smaller ones are noise.
			cut = 1e-5
		}
	}
	seed := ny.Seed
	if seed == 0 {
		seed = 1
	}
	r := rng.New(seed)
	rows := src.rows
	krow := src.krow
	if krow == nil {
		krow = src.row
	}
	diag := make([]float64, n)
	if k.UnitDiagonal() {
		// k(x, x) = exp(0) = 1 exactly (Eval's δ is 0 exactly for x = y).
		for i := range diag {
			diag[i] = 1
		}
	} else {
		par.For(0, n, nil, func(lo, hi int) {
			buf := make([]float64, dim)
			for i := lo; i < hi; i++ {
				src.row(i, buf)
				diag[i] = k.Eval(buf, buf)
			}
		})
	}
	trace, top := 0.0, 0.0
	for _, v := range diag {
		if !(v >= 0) {
			return nil, invalidf("Nystrom: the kernel's diagonal has %g: not positive semi-definite", v)
		}
		trace += v
		top = math.Max(top, v)
	}
	if !(trace > 0) {
		return nil, invalidf("Nystrom: the kernel's trace is %g", trace)
	}
	floor := cut * top
	res := append([]float64(nil), diag...) // residual diagonal d
	// Fᵀ (m×n, row e the e-th feature of every point: contiguous for the
	// updates); the first kcols rows are in use.
	var fac factor
	var ft32 *linalg.Dense32
	if src.f32 {
		var err error
		if ft32, err = linalg.NewDense32(m, n); err != nil {
			return nil, err
		}
		fac = factor32{ft: ft32, gt: new([]float64), tr: new([]float64), fs: new([]float32), sums: make([]float64, m)}
	} else {
		fac = factor64{ft: mat.NewDense(m, n, nil), gt: new([]float64), tr: new([]float64)}
	}
	kcols := 0
	var pivots []int
	chosen := make([]bool, n)
	order := r.Perm(n) // Uniform's order
	next := 0
	info := Info{Method: "nystrom", Sampler: ny.Sampler.String(), Products: rows.Arithmetic()}
	if src.f32 {
		info.Precision = "float32"
	}
	resTrace := trace
	empty := 0 // consecutive rounds that accepted nothing
	// Per-round buffers, reused: fresh pages cost a fault each, and
	// nothing collects garbage within a fit.
	var scr struct{ ks, fs, h, ft []float64 }
	var rfull *mat.Dense // R's rows so far (m×m)

	for kcols < m {
		if ny.TraceTol > 0 && resTrace <= ny.TraceTol*trace {
			break
		}
		if ny.Context != nil && ny.Context.Err() != nil {
			if ft32 != nil {
				ft32.Free()
			}
			return nil, status.Cancelled(context.Cause(ny.Context), fmt.Sprintf("Nyström round %d, %d landmarks", info.Rounds+1, kcols))
		}
		// Candidates.
		want := min(b, m-kcols)
		var cand []int
		switch ny.Sampler {
		case RPCholesky:
			cand = sampleProportional(r, res, want)
		case Uniform:
			for len(cand) < want && next < n {
				if i := order[next]; !chosen[i] {
					cand = append(cand, i)
				}
				next++
			}
		}
		if len(cand) == 0 {
			break // nothing left: the residual is zero (rank found)
		}
		info.Rounds++
		c := len(cand)
		xs := mat.NewDense(c, dim, nil)
		for j, i := range cand {
			krow(i, xs.RawRowView(j))
		}
		// H = K(S, S) − F_S·F_Sᵀ (c×c), the residual among the candidates.
		ks, err := among(rows, cand, xs, k, grow(&scr.ks, c*c))
		if err != nil {
			return nil, err
		}
		var fs *mat.Dense // F_S (c×kcols)
		if kcols > 0 {
			fs = mat.NewDense(c, kcols, grow(&scr.fs, c*kcols))
			fac.gather(cand, kcols, fs)
			linalg.SymRankK(ks, ks, -1, fs)
		}
		h := grow(&scr.h, c*c)
		kraw := ks.RawSymmetric()
		// H's lower triangle (all that the elimination below reads) from
		// the upper one of ks.
		for a := 0; a < c; a++ {
			for e, v := range kraw.Data[a*kraw.Stride+a : a*kraw.Stride+c] {
				h[(a+e)*c+a] = v
			}
		}
		// Accept in sampling order, eliminating each accepted candidate
		// from the candidates after it (the rest of H is never read
		// again).
		var acc []int         // positions in cand
		cols := [][]float64{} // Cholesky columns over cand (entries ≥ their own position)
		for j := 0; j < c; j++ {
			rj := h[j*c+j]
			i := cand[j]
			if chosen[i] || !(rj > floor) {
				// Explained to the cut-off: never sampled again (the
				// tracked residual may differ from rj by rounding).
				res[i] = 0
				info.Rejected++
				continue
			}
			if ny.Sampler == RPCholesky && !(r.Float64()*res[i] < rj) {
				info.Rejected++
				continue
			}
			sq := math.Sqrt(rj)
			col := make([]float64, c)
			for a := j; a < c; a++ {
				col[a] = h[a*c+j] / sq
			}
			// The lower triangle only: column j below the diagonal and
			// the diagonal are all that later steps read.
			for a := j + 1; a < c; a++ {
				if col[a] != 0 {
					floats.AddScaled(h[a*c+j+1:a*c+a+1], -col[a], col[j+1:a+1])
				}
			}
			acc = append(acc, j)
			cols = append(cols, col)
			chosen[i] = true
		}
		if len(acc) == 0 {
			empty++
			if (ny.Sampler == Uniform && next >= n) || maxOf(res) <= floor || empty >= 64 {
				break // the residual is below the cut-off (or keeps refusing): rank found
			}
			continue
		}
		empty = 0
		t := len(acc)
		// The accepted T's new features (their kernel rows only now).
		nr := newRows{idx: make([]int, t), xt: mat.NewDense(t, dim, nil), l: mat.NewDense(t, t, nil)}
		for a, j := range acc {
			nr.idx[a] = cand[j]
			copy(nr.xt.RawRowView(a), xs.RawRowView(j))
			for e := 0; e <= a; e++ {
				nr.l.Set(a, e, cols[e][j])
			}
		}
		if kcols > 0 {
			nr.ft = mat.NewDense(t, kcols, grow(&scr.ft, t*kcols))
			for a, j := range acc {
				copy(nr.ft.RawRowView(a), fs.RawRowView(j))
			}
		}
		if err := fac.extend(kcols, rows, nr, pivots, res); err != nil {
			if ft32 != nil {
				ft32.Free()
			}
			return nil, err
		}
		pivots = append(pivots, nr.idx...)
		// The new landmarks' rows of F, as stored: their earlier features
		// (F_T), then L (pivot columns were set to it), zeros after.
		if rfull == nil {
			rfull = mat.NewDense(m, m, nil)
		}
		for a := 0; a < t; a++ {
			row := rfull.RawRowView(kcols + a)
			if kcols > 0 {
				copy(row, nr.ft.RawRowView(a))
			}
			for e := 0; e <= a; e++ {
				v := nr.l.At(a, e)
				if src.f32 {
					v = float64(float32(v))
				}
				row[kcols+e] = v
			}
		}
		resTrace = 0
		for a, v := range res {
			if v < 0 || chosen[a] {
				v = 0
				res[a] = 0
			}
			resTrace += v
		}
		kcols += t
		if ny.Progress != nil {
			ny.Progress(kcols, m)
		}
	}
	if kcols == 0 {
		if ft32 != nil {
			ft32.Free()
		}
		return nil, invalidf("Nystrom: no landmark was accepted (the kernel's residual is below the cut-off)")
	}
	xl := mat.NewDense(kcols, dim, nil)
	for a, p := range pivots {
		src.row(p, xl.RawRowView(a))
	}
	// R: the landmarks' rows of F, lower triangular, assembled round by
	// round.
	rr := rfull
	if kcols < m {
		rr = linalg.CopyOf(rfull.Slice(0, kcols, 0, kcols))
	}
	info.Rank = kcols
	info.TraceError = resTrace / trace
	info.EigenvalueBound = resTrace
	if ny.ResidualSample > 0 {
		p := min(ny.ResidualSample, n)
		sample := r.Perm(n)[:p]
		xs := mat.NewDense(p, dim, nil)
		fs := mat.NewDense(p, kcols, nil)
		for a, i := range sample {
			src.row(i, xs.RawRowView(a))
		}
		fac.gather(sample, kcols, fs)
		e, err := among(src.rows, sample, xs, k, nil)
		if err != nil {
			return nil, err
		}
		linalg.SymRankK(e, e, -1, fs)
		top := ny.TopEigenvalue
		if top == nil {
			top = denseTop
		}
		lmax, err := top(e, seed)
		if err != nil {
			return nil, err
		}
		info.ResidualNormLower = math.Max(lmax, 0)
	}
	info.Seconds = time.Since(start).Seconds()
	out := &NystromMap{Kernel: k, Landmarks: pivots, XL: xl, R: rr, train: fac.train(kcols), info: info}
	if ft32 != nil {
		out.ft32 = ft32
		sums := fac.(factor32).sums
		out.means = make([]float64, kcols)
		for e := range out.means {
			out.means[e] = sums[e] / float64(n)
		}
	}
	return out, nil
}

// among returns the kernel among the data's rows idx: by the kernel rows'
// exact integer products where they have them (gram.KernelRows.Among),
// else by the Gram engine on those rows (xs, as the kernel rows see them).
func among(rows *gram.KernelRows, idx []int, xs *mat.Dense, k kernel.Kernel, buf []float64) (*mat.SymDense, error) {
	m := len(idx)
	if buf == nil {
		buf = make([]float64, m*m)
	}
	if rows.Among(idx, buf) {
		return mat.NewSymDense(m, buf), nil
	}
	return kernel.Gram(xs, k)
}

// grow returns (*b)[:size], allocating when the capacity is short.
func grow(b *[]float64, size int) []float64 {
	if cap(*b) < size {
		*b = make([]float64, size)
	}
	return (*b)[:size]
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// sampleProportional draws count indices i.i.d. with probability
// proportional to w (non-negative), by inversion of the cumulative sums;
// none when w is all zero.
func sampleProportional(r interface{ Float64() float64 }, w []float64, count int) []int {
	cum := make([]float64, len(w))
	s := 0.0
	for i, v := range w {
		s += v
		cum[i] = s
	}
	if !(s > 0) {
		return nil
	}
	out := make([]int, count)
	for c := range out {
		u := r.Float64() * s
		lo, hi := 0, len(cum)-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cum[mid] > u {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		// Skip zero-weight entries a rounding could land on.
		for lo < len(w)-1 && w[lo] == 0 {
			lo++
		}
		out[c] = lo
	}
	return out
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

// ColumnMeans returns the column means of a feature matrix F (n×k) as
// Train gives it (a *mat.Dense or the transpose of one), reading its
// storage in order.
func ColumnMeans(f mat.Matrix) []float64 {
	n, k := f.Dims()
	out := make([]float64, k)
	if d, ok := f.(*mat.Dense); ok {
		for i := 0; i < n; i++ {
			for j, v := range d.RawRowView(i)[:k] {
				out[j] += v
			}
		}
	} else if t, ok := f.(mat.Transpose); ok && isDense(t.Matrix) {
		d := t.Matrix.(*mat.Dense)
		for j := 0; j < k; j++ {
			s := 0.0
			for _, v := range d.RawRowView(j)[:n] {
				s += v
			}
			out[j] = s
		}
	} else if t, ok := f.(mat.Transpose); ok && is32(t.Matrix) {
		d := t.Matrix.(*linalg.Dense32)
		par.For(0, k, nil, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				s := 0.0
				for _, v := range d.Row(j)[:n] {
					s += float64(v)
				}
				out[j] = s
			}
		})
	} else {
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				out[j] += f.At(i, j)
			}
		}
	}
	for j := range out {
		out[j] /= float64(n)
	}
	return out
}

func isDense(m mat.Matrix) bool { _, ok := m.(*mat.Dense); return ok }
func is32(m mat.Matrix) bool    { _, ok := m.(*linalg.Dense32); return ok }

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
