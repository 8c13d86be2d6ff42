package linalg

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// KernelKind names a kernel function.
type KernelKind int

const (
	// Linear is k(x, y) = ⟨x, y⟩.
	Linear KernelKind = iota
	// Gaussian is k(x, y) = exp(−‖x−y‖²/(2σ²)).
	Gaussian
	// Laplace is k(x, y) = exp(−‖x−y‖/σ).
	Laplace
	// Polynomial is k(x, y) = (γ⟨x, y⟩ + c₀)^degree.
	Polynomial
)

func (k KernelKind) String() string {
	switch k {
	case Linear:
		return "linear"
	case Gaussian:
		return "gaussian"
	case Laplace:
		return "laplace"
	case Polynomial:
		return "polynomial"
	}
	return "unknown"
}

// Kernel is a kernel function with its parameters. The zero value is the
// linear kernel.
type Kernel struct {
	Kind KernelKind
	// Sigma is the bandwidth σ > 0 of the Gaussian and Laplace kernels.
	Sigma float64
	// Degree of the polynomial kernel; 0 means 3 (scikit-learn's default).
	Degree int
	// Gamma multiplies ⟨x, y⟩ in the polynomial kernel; 0 means 1/d.
	Gamma float64
	// Coef0 is the polynomial kernel's c₀, used as given (0: homogeneous).
	Coef0 float64
}

func (k Kernel) check() error {
	switch k.Kind {
	case Linear:
	case Gaussian, Laplace:
		if !(k.Sigma > 0) || math.IsInf(k.Sigma, 0) {
			return invalidf("%s kernel: bandwidth σ = %g must be positive and finite", k.Kind, k.Sigma)
		}
	case Polynomial:
		if k.Degree < 0 {
			return invalidf("polynomial kernel: degree %d < 0", k.Degree)
		}
		if math.IsNaN(k.Gamma) || math.IsInf(k.Gamma, 0) || math.IsNaN(k.Coef0) || math.IsInf(k.Coef0, 0) {
			return invalidf("polynomial kernel: γ = %g, c₀ = %g must be finite", k.Gamma, k.Coef0)
		}
	default:
		return invalidf("unknown kernel kind %d", int(k.Kind))
	}
	return nil
}

// elementMap returns the map from (inner product, ‖x‖², ‖y‖²) to k(x, y) for
// data of dimension d, or nil for the linear kernel.
func (k Kernel) elementMap(d int) func(g, nx, ny float64) float64 {
	switch k.Kind {
	case Gaussian:
		c := -1 / (2 * k.Sigma * k.Sigma)
		return func(g, nx, ny float64) float64 {
			return math.Exp(c * math.Max(nx+ny-2*g, 0))
		}
	case Laplace:
		c := -1 / k.Sigma
		return func(g, nx, ny float64) float64 {
			return math.Exp(c * math.Sqrt(math.Max(nx+ny-2*g, 0)))
		}
	case Polynomial:
		deg := k.Degree
		if deg == 0 {
			deg = 3
		}
		gamma := k.Gamma
		if gamma == 0 {
			gamma = 1 / float64(max(d, 1))
		}
		c0 := k.Coef0
		return func(g, _, _ float64) float64 { return intPow(gamma*g+c0, deg) }
	}
	return nil
}

func intPow(x float64, n int) float64 {
	r := 1.0
	for n > 0 {
		if n&1 == 1 {
			r *= x
		}
		x *= x
		n >>= 1
	}
	return r
}

func rowSqNorms(x *mat.Dense) []float64 {
	n, d := x.Dims()
	raw := x.RawMatrix()
	out := make([]float64, n)
	for i := range out {
		s := 0.0
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			s += v * v
		}
		out[i] = s
	}
	return out
}

func checkData(what string, x *mat.Dense) error {
	if x == nil || x.IsEmpty() {
		return invalidf("%s: empty data", what)
	}
	return CheckFinite(what, x)
}

// Gram returns the n×n kernel matrix K_ij = k(x_i, x_j) of the rows of the
// n×d matrix x, with both triangles stored.
//
// Cost: one dsyrk (n²d flops, half of a dgemm) for the inner products, then
// the element-wise map on the upper triangle in parallel Go (the diagonal
// of the distance-based kernels is exactly 1), then a tiled mirror.
func Gram(x *mat.Dense, k Kernel) (*mat.SymDense, error) {
	if err := checkData("Gram: x", x); err != nil {
		return nil, err
	}
	if err := k.check(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	g := mat.NewSymDense(n, nil)
	graw := g.RawSymmetric()
	xraw := x.RawMatrix()
	blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: n, Cols: d, Stride: xraw.Stride, Data: xraw.Data}, 0, graw)
	if f := k.elementMap(d); f != nil {
		norms := rowSqNorms(x)
		distance := k.Kind == Gaussian || k.Kind == Laplace
		parallelFor(n, func(i int) float64 { return float64(n - i) }, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := graw.Data[i*graw.Stride : i*graw.Stride+n]
				ni := norms[i]
				for j := i; j < n; j++ {
					row[j] = f(row[j], ni, norms[j])
				}
				if distance {
					row[i] = 1
				}
			}
		})
	}
	MirrorUpper(n, graw.Data, graw.Stride)
	return g, nil
}

// CrossGram returns the m×n kernel matrix K_ij = k(x_i, y_j) between the
// rows of the m×d matrix x and the n×d matrix y (one dgemm, then the
// element-wise map in parallel).
func CrossGram(x, y *mat.Dense, k Kernel) (*mat.Dense, error) {
	if err := checkData("CrossGram: x", x); err != nil {
		return nil, err
	}
	if err := checkData("CrossGram: y", y); err != nil {
		return nil, err
	}
	if err := k.check(); err != nil {
		return nil, err
	}
	m, d := x.Dims()
	n, dy := y.Dims()
	if d != dy {
		return nil, invalidf("CrossGram: x has %d columns, y has %d", d, dy)
	}
	out := mat.NewDense(m, n, nil)
	out.Mul(x, y.T())
	if f := k.elementMap(d); f != nil {
		nx, ny := rowSqNorms(x), rowSqNorms(y)
		raw := out.RawMatrix()
		parallelFor(m, nil, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+n]
				for j := range row {
					row[j] = f(row[j], nx[i], ny[j])
				}
			}
		})
	}
	return out, nil
}

// SqDistances returns the n×n matrix of squared Euclidean distances between
// the rows of x (both triangles stored, zero diagonal).
func SqDistances(x *mat.Dense) (*mat.SymDense, error) {
	if err := checkData("SqDistances: x", x); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	g := mat.NewSymDense(n, nil)
	graw := g.RawSymmetric()
	xraw := x.RawMatrix()
	blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: n, Cols: d, Stride: xraw.Stride, Data: xraw.Data}, 0, graw)
	norms := rowSqNorms(x)
	for i := 0; i < n; i++ {
		row := graw.Data[i*graw.Stride : i*graw.Stride+n]
		for j := i + 1; j < n; j++ {
			row[j] = math.Max(norms[i]+norms[j]-2*row[j], 0)
		}
		row[i] = 0
	}
	MirrorUpper(n, graw.Data, graw.Stride)
	return g, nil
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
	d2, err := SqDistances(x.Slice(0, m, 0, x.RawMatrix().Cols).(*mat.Dense))
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
