// Package kernel is kdual's one home for kernels: the kernel functions
// (Kernel, Kind) and their facts (PSD, NonNegative, UnitDiagonal,
// ShiftInvariant), the bandwidth rules the papers use (PaperSigma, the
// median heuristic), random Fourier features (RFF), and kernel matrices of
// data — Gram, CrossGram, the float32 half-stored GramTiles32 and on-demand
// Rows — which hand the kernel's element map (ElementMap) to package
// gram's kernel-agnostic engine.
//
// Bandwidth rules for the distance kernels (σ in exp(−‖x−y‖²/(2σ²)) and
// exp(−‖x−y‖/σ)):
//   - Paper: the rule of the dual-KPCA paper's code: Laplace
//     σ = 0.01·d·var(X), Gaussian σ = 0.1·√d·std(X), with var and std over
//     all entries of the n×d matrix X;
//   - Median: the median pairwise distance of the first min(n, 1000) rows.
package kernel

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("kernel: "+format+": %w", append(args, status.ErrInvalid)...)
}

// Kind names a kernel function.
type Kind int

const (
	// Linear is k(x, y) = ⟨x, y⟩.
	Linear Kind = iota
	// Gaussian is k(x, y) = exp(−‖x−y‖²/(2σ²)).
	Gaussian
	// Laplace is k(x, y) = exp(−‖x−y‖/σ).
	Laplace
	// Polynomial is k(x, y) = (γ⟨x, y⟩ + c₀)^degree.
	Polynomial
	// Sigmoid is k(x, y) = tanh(γ⟨x, y⟩ + c₀), scikit-learn's sigmoid.
	// It is not positive semi-definite in general (PSD reports false).
	Sigmoid
	// Cosine is k(x, y) = ⟨x, y⟩/(‖x‖·‖y‖), and 0 when x or y is 0
	// (scikit-learn's cosine_similarity).
	Cosine
	// Laplacian is k(x, y) = exp(−γ‖x − y‖₁), scikit-learn's laplacian:
	// an L1 distance, computed directly (no BLAS form, O(d) per entry).
	// Laplace is the papers' L2 form.
	Laplacian
)

func (k Kind) String() string {
	switch k {
	case Linear:
		return "linear"
	case Gaussian:
		return "gaussian"
	case Laplace:
		return "laplace"
	case Polynomial:
		return "polynomial"
	case Sigmoid:
		return "sigmoid"
	case Cosine:
		return "cosine"
	case Laplacian:
		return "laplacian"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Kernel is a kernel function with its parameters. The zero value is the
// linear kernel, kdual's default kernel (as scikit-learn's KernelPCA's).
// Parameters left at zero take scikit-learn's defaults where it has one:
// γ = 1/d (polynomial, sigmoid, laplacian), degree 3, c₀ = 1.
type Kernel struct {
	Kind Kind
	// Sigma is the bandwidth σ > 0 of the Gaussian and Laplace kernels
	// (or give Gamma instead; one of them is required).
	Sigma float64
	// Degree of the polynomial kernel; 0 means 3 (scikit-learn's default).
	Degree int
	// Gamma is scikit-learn's γ. It multiplies ⟨x, y⟩ in the polynomial
	// and sigmoid kernels and ‖x − y‖₁ in the laplacian (0: unset, 1/d).
	// For the Gaussian and Laplace kernels it is given instead of Sigma:
	// exp(−γ‖x − y‖²) is the Gaussian with σ = 1/√(2γ), exp(−γ‖x − y‖)
	// the Laplace with σ = 1/γ (Bandwidth). No kernel has a valid γ of 0,
	// so 0 always means unset.
	Gamma float64
	// Coef0 is c₀ of the polynomial and sigmoid kernels. When it is 0 and
	// Coef0Set is false it is unset and means scikit-learn's c₀ = 1; set
	// Coef0Set to ask for c₀ = 0 (the homogeneous polynomial).
	Coef0    float64
	Coef0Set bool
}

// C0 returns the c₀ the polynomial and sigmoid kernels use: Coef0, or 1
// (scikit-learn's default) when it is unset.
func (k Kernel) C0() float64 {
	if k.Coef0 == 0 && !k.Coef0Set {
		return 1
	}
	return k.Coef0
}

// GammaFor returns the γ the polynomial, sigmoid and laplacian kernels use
// on data of dimension d: Gamma, or 1/d (scikit-learn's default) when it
// is unset.
func (k Kernel) GammaFor(d int) float64 {
	if k.Gamma != 0 {
		return k.Gamma
	}
	return 1 / float64(max(d, 1))
}

// PSD reports whether every kernel matrix of k is positive semi-definite
// (false only for the sigmoid kernel). Solvers that rely on it (the dual
// L-BFGS and DCA fits, Nyström, the randomized range finder) refuse
// kernels that are not.
func (k Kernel) PSD() bool { return k.Kind != Sigmoid }

// NonNegative reports whether every entry k(x, y) is ≥ 0 for all data:
// the exponential kernels (Gaussian, Laplace, laplacian).
func (k Kernel) NonNegative() bool {
	return k.Kind == Gaussian || k.Kind == Laplace || k.Kind == Laplacian
}

// UnitDiagonal reports whether k(x, x) = 1 exactly for every x (the
// exponential kernels; the cosine kernel is 0 at x = 0).
func (k Kernel) UnitDiagonal() bool { return k.NonNegative() }

// ShiftInvariant reports whether k(x + c, y + c) = k(x, y) for every
// vector c, so the data may be centred before the kernel is evaluated
// (the distance kernels: Gaussian, Laplace, laplacian).
func (k Kernel) ShiftInvariant() bool { return k.NonNegative() }

// Check returns an error wrapping status.ErrInvalid when k cannot be
// evaluated (a bandwidth that is not positive and finite, a negative
// degree, an unknown kind).
func (k Kernel) Check() error {
	switch k.Kind {
	case Linear:
	case Gaussian, Laplace:
		if k.Sigma != 0 && k.Gamma != 0 {
			return invalidf("%s kernel: σ = %g and γ = %g both given: give one", k.Kind, k.Sigma, k.Gamma)
		}
		if k.Sigma == 0 && k.Gamma != 0 && !(k.Gamma > 0 && !math.IsInf(k.Gamma, 0)) {
			return invalidf("%s kernel: γ = %g must be positive and finite", k.Kind, k.Gamma)
		}
		sigma := k.Bandwidth()
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return invalidf("%s kernel: bandwidth σ = %g must be positive and finite", k.Kind, sigma)
		}
		if math.IsInf(1/(2*sigma*sigma), 0) {
			return invalidf("%s kernel: bandwidth σ = %g is too small: 1/(2σ²) overflows", k.Kind, sigma)
		}
	case Polynomial, Sigmoid:
		if k.Degree < 0 {
			return invalidf("polynomial kernel: degree %d < 0", k.Degree)
		}
		if k.Kind == Sigmoid && k.Degree != 0 {
			return invalidf("sigmoid kernel: degree %d given: only the polynomial kernel has one", k.Degree)
		}
		if math.IsNaN(k.Gamma) || math.IsInf(k.Gamma, 0) || math.IsNaN(k.Coef0) || math.IsInf(k.Coef0, 0) {
			return invalidf("%s kernel: γ = %g, c₀ = %g must be finite", k.Kind, k.Gamma, k.Coef0)
		}
		if k.Sigma != 0 {
			return invalidf("%s kernel: σ = %g given: its scale is γ", k.Kind, k.Sigma)
		}
	case Cosine:
		if k.Sigma != 0 || k.Gamma != 0 || k.Degree != 0 || k.Coef0 != 0 {
			return invalidf("cosine kernel: it has no parameter (σ = %g, γ = %g, degree %d, c₀ = %g given)", k.Sigma, k.Gamma, k.Degree, k.Coef0)
		}
	case Laplacian:
		if k.Sigma != 0 {
			return invalidf("laplacian kernel: σ = %g given: its scale is γ in exp(−γ‖x−y‖₁)", k.Sigma)
		}
		if k.Gamma < 0 || math.IsNaN(k.Gamma) || math.IsInf(k.Gamma, 0) {
			return invalidf("laplacian kernel: γ = %g must be positive and finite", k.Gamma)
		}
	default:
		return invalidf("unknown kernel kind %d", int(k.Kind))
	}
	return nil
}

// Bandwidth returns σ of the Gaussian and Laplace kernels: Sigma, or when
// it is 0 the σ that Gamma gives (1/√(2γ) Gaussian, 1/γ Laplace); 0 when
// neither is set.
func (k Kernel) Bandwidth() float64 {
	if k.Sigma != 0 || k.Gamma == 0 {
		return k.Sigma
	}
	if k.Kind == Laplace {
		return 1 / k.Gamma
	}
	return 1 / math.Sqrt(2*k.Gamma)
}

// ElementMap returns the Gram engine's description of k for data of
// dimension d (linalg computes kernel matrices from it without knowing
// kernels).
func (k Kernel) ElementMap(d int) gram.ElementMap {
	switch k.Kind {
	case Gaussian:
		if k.Sigma == 0 && k.Gamma > 0 {
			return gram.ElementMap{Kind: gram.MapExpSq, C: -k.Gamma}
		}
		return gram.ElementMap{Kind: gram.MapExpSq, C: -1 / (2 * k.Sigma * k.Sigma)}
	case Laplace:
		return gram.ElementMap{Kind: gram.MapExpDist, C: -1 / k.Bandwidth()}
	case Polynomial:
		deg := k.Degree
		if deg == 0 {
			deg = 3
		}
		return gram.ElementMap{Kind: gram.MapPower, Gamma: k.GammaFor(d), Coef0: k.C0(), Degree: deg}
	case Sigmoid:
		return gram.ElementMap{Kind: gram.MapTanh, Gamma: k.GammaFor(d), Coef0: k.C0()}
	case Cosine:
		return gram.ElementMap{Kind: gram.MapCosine}
	case Laplacian:
		return gram.ElementMap{Kind: gram.MapExpL1, C: -k.GammaFor(d)}
	}
	return gram.ElementMap{Kind: gram.MapIdentity}
}

// Eval returns k(x, y) for two points of the same dimension (the formula
// the Gram routines are tested against).
func (k Kernel) Eval(x, y []float64) float64 {
	var dot, nx, ny float64
	for i, v := range x {
		dot += v * y[i]
		nx += v * v
		ny += y[i] * y[i]
	}
	switch k.Kind {
	case Gaussian:
		if k.Sigma == 0 && k.Gamma > 0 {
			return math.Exp(-k.Gamma * math.Max(nx+ny-2*dot, 0))
		}
		return math.Exp(-math.Max(nx+ny-2*dot, 0) / (2 * k.Sigma * k.Sigma))
	case Laplace:
		return math.Exp(-math.Sqrt(math.Max(nx+ny-2*dot, 0)) / k.Bandwidth())
	case Polynomial:
		em := k.ElementMap(len(x))
		return math.Pow(em.Gamma*dot+em.Coef0, float64(em.Degree))
	case Sigmoid:
		return math.Tanh(k.GammaFor(len(x))*dot + k.C0())
	case Cosine:
		if nx == 0 || ny == 0 {
			return 0
		}
		return dot / (math.Sqrt(nx) * math.Sqrt(ny))
	case Laplacian:
		l1 := 0.0
		for i, v := range x {
			l1 += math.Abs(v - y[i])
		}
		return math.Exp(-k.GammaFor(len(x)) * l1)
	}
	return dot
}

// MedianDistance returns the median Euclidean distance over the pairs i < j
// of the first m rows of x (all rows when m ≤ 0 or m > n); the usual
// "median heuristic" for the bandwidth of distance-based kernels. It needs
// at least two rows.
func MedianDistance(x *mat.Dense, m int) (float64, error) {
	if x == nil || x.IsEmpty() {
		return 0, invalidf("MedianDistance: empty data")
	}
	n, _ := x.Dims()
	if m <= 0 || m > n {
		m = n
	}
	if m < 2 {
		return 0, invalidf("MedianDistance: need at least 2 rows, have %d", m)
	}
	d2, err := gram.SqDistances(x.Slice(0, m, 0, x.RawMatrix().Cols).(*mat.Dense))
	if err != nil {
		return 0, err
	}
	raw := d2.RawSymmetric()
	vals := make([]float64, 0, m*(m-1)/2)
	for i := 0; i < m; i++ {
		vals = append(vals, raw.Data[i*raw.Stride+i+1:i*raw.Stride+m]...)
	}
	sort.Float64s(vals)
	p := len(vals)
	med := math.Sqrt(vals[p/2])
	if p%2 == 0 {
		med = 0.5 * (math.Sqrt(vals[p/2-1]) + med)
	}
	return med, nil
}

// Prepare checks k and prepares the rows of x once for k's kernel
// matrices (gram.Prepare with k's element map): the source the operators
// and kernel rows are built from. With keepCopy the source holds an exact
// copy of x (gram.Source.Copy).
func Prepare(x gram.Data, k Kernel, o gram.GramOptions, keepCopy bool) (*gram.Source, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if m, ok := x.(*mat.Dense); x == nil || ok && (m == nil || m.IsEmpty()) {
		return nil, invalidf("Prepare: empty data")
	}
	_, d := x.Dims()
	return gram.Prepare(x, k.ElementMap(d), o, keepCopy)
}

// Gram returns the n×n kernel matrix K_ij = k(x_i, x_j) of the rows of the
// n×d matrix x, both triangles stored, by package gram's engine (gram.GramMap:
// level-3 BLAS panels with the element map fused per panel). x is not
// modified.
func Gram(x *mat.Dense, k Kernel) (*mat.SymDense, error) {
	return GramWith(x, k, gram.GramOptions{})
}

// GramWith is Gram with explicit engine options (float32 inner products,
// upper triangle only, forced paths).
func GramWith(x *mat.Dense, k Kernel, o gram.GramOptions) (*mat.SymDense, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("Gram: empty data")
	}
	_, d := x.Dims()
	return gram.GramMap(x, k.ElementMap(d), o)
}

// CrossGram returns the m×n kernel matrix K_ij = k(x_i, y_j) between the
// rows of x (m×d) and y (n×d) (gram.CrossGramMap).
func CrossGram(x, y *mat.Dense, k Kernel) (*mat.Dense, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("CrossGram: empty data")
	}
	_, d := x.Dims()
	return gram.CrossGramMap(x, y, k.ElementMap(d))
}

// GramTiles32 returns the kernel matrix of the rows of x in float32 half
// storage (gram.GramTiles32), never forming it in float64.
func GramTiles32(x *mat.Dense, k Kernel, o gram.GramOptions) (*gram.SymTiles32, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("GramTiles32: empty data")
	}
	_, d := x.Dims()
	return gram.GramTiles32(x, k.ElementMap(d), o)
}

// GramTiles32Band returns the tile rows [i0, i1) of GramTiles32's matrix
// (gram.GramTiles32Band): one process's share when the rows are split.
func GramTiles32Band(x *mat.Dense, k Kernel, o gram.GramOptions, i0, i1 int) (*gram.SymTiles32, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("GramTiles32Band: empty data")
	}
	_, d := x.Dims()
	return gram.GramTiles32Band(x, k.ElementMap(d), o, i0, i1)
}

// Rows prepares blocks of the kernel matrix of x on demand
// (gram.KernelRows), for matrix-free operators and out-of-sample rows.
func Rows(x *mat.Dense, k Kernel, o gram.GramOptions) (*gram.KernelRows, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("Rows: empty data")
	}
	_, d := x.Dims()
	return gram.NewKernelRows(x, k.ElementMap(d), o)
}

// RowsInt8 is Rows for data on an 8-bit grid with the integer path
// (gram.NewKernelRowsInt8): nil and no error when x does not qualify.
func RowsInt8(x *mat.Dense, k Kernel, o gram.GramOptions) (*gram.KernelRows, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, invalidf("RowsInt8: empty data")
	}
	_, d := x.Dims()
	return gram.NewKernelRowsInt8(x, k.ElementMap(d), o)
}

// RowsLevels8 prepares blocks of the kernel matrix of 8-bit data by
// exact integer products (gram.NewKernelRowsLevels8); nil and no error
// where they do not apply.
func RowsLevels8(x *linalg.Levels8, k Kernel, o gram.GramOptions) (*gram.KernelRows, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if err := x.Check("RowsLevels8: x"); err != nil {
		return nil, err
	}
	return gram.NewKernelRowsLevels8(x, k.ElementMap(x.Cols), o)
}

// Rows32 prepares blocks of the kernel matrix of float32 data read in
// place (gram.NewKernelRows32: sgemm products, float64 map).
func Rows32(x *linalg.Dense32, k Kernel, o gram.GramOptions) (*gram.KernelRows, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if x == nil || x.Rows < 1 || x.Cols < 1 {
		return nil, invalidf("Rows32: empty data")
	}
	return gram.NewKernelRows32(x, k.ElementMap(x.Cols), o)
}
