package linalg

import (
	"math"
	"sort"

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

// ElementMap returns the Gram engine's description of k for data of
// dimension d.
func (k Kernel) ElementMap(d int) ElementMap {
	switch k.Kind {
	case Gaussian:
		return ElementMap{Kind: MapExpSq, C: -1 / (2 * k.Sigma * k.Sigma)}
	case Laplace:
		return ElementMap{Kind: MapExpDist, C: -1 / k.Sigma}
	case Polynomial:
		deg := k.Degree
		if deg == 0 {
			deg = 3
		}
		gamma := k.Gamma
		if gamma == 0 {
			gamma = 1 / float64(max(d, 1))
		}
		return ElementMap{Kind: MapPower, Gamma: gamma, Coef0: k.Coef0, Degree: deg}
	}
	return ElementMap{Kind: MapIdentity}
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

// SqDistances returns the n×n matrix of squared Euclidean distances between
// the rows of x (both triangles stored, zero diagonal).
func SqDistances(x *mat.Dense) (*mat.SymDense, error) {
	if err := checkData("SqDistances: x", x); err != nil {
		return nil, err
	}
	// ‖x−y‖² from the linear kernel's ⟨x,y⟩ and the squared norms.
	g, err := Gram(x, Kernel{Kind: Linear})
	if err != nil {
		return nil, err
	}
	n := g.SymmetricDim()
	raw := g.RawSymmetric()
	norms := rowSqNorms(x)
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := range row {
			row[j] = math.Max(norms[i]+norms[j]-2*row[j], 0)
		}
		row[i] = 0
	}
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
