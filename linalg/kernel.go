package linalg

import (
	"math"

	"github.com/kdual/kdual/native"
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

// rbfScale returns c and whether to take a square root, for
// native.RBFTile: exp(c·‖x−y‖²) or exp(c·‖x−y‖).
func (k Kernel) rbfScale() (c float64, laplace bool) {
	if k.Kind == Laplace {
		return -1 / k.Sigma, true
	}
	return -1 / (2 * k.Sigma * k.Sigma), false
}

// mirrorTile copies the upper-triangle part of tile t into the lower
// triangle, writing whole row segments (the reads are strided but stay in
// the tile's cache lines).
func mirrorTile(data []float64, ld int, t tile) {
	for j := t.j0; j < t.j1; j++ {
		hi := min(t.i1, j) // rows i < j of column j
		if hi <= t.i0 {
			continue
		}
		dst := data[j*ld+t.i0 : j*ld+hi]
		for i := range dst {
			dst[i] = data[(t.i0+i)*ld+j]
		}
	}
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
// Cost: n²d flops for the inner products of the upper triangle, in 64×64
// tiles; each tile is then mapped element-wise and mirrored while it is in
// cache (the diagonal of the distance-based kernels is exactly 1). On
// processors with AVX-512 the tiles run on native.DotNT and native.RBFTile
// in parallel goroutines; elsewhere one OpenBLAS dsyrk computes the inner
// products and the map runs in parallel Go.
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
	f := k.elementMap(d)
	norms := rowSqNorms(x)
	distance := k.Kind == Gaussian || k.Kind == Laplace
	data, ld := graw.Data, graw.Stride
	vectorMap := distance && useDotKernel && native.HasDotKernel()
	c, laplace := k.rbfScale()
	innerProducts(x, x, data, ld, true, func(t tile) {
		if vectorMap {
			native.RBFTile(t.i1-t.i0, t.j1-t.j0, data[t.i0*ld+t.j0:], ld, norms[t.i0:t.i1], norms[t.j0:t.j1], c, laplace)
		}
		for i := t.i0; i < t.i1; i++ {
			row := data[i*ld : i*ld+n]
			if f != nil && !vectorMap {
				ni := norms[i]
				for j := max(t.j0, i); j < t.j1; j++ {
					row[j] = f(row[j], ni, norms[j])
				}
			}
			if distance && t.i0 == t.j0 {
				row[i] = 1
			}
		}
		mirrorTile(data, ld, t)
	})
	return g, nil
}

// CrossGram returns the m×n kernel matrix K_ij = k(x_i, y_j) between the
// rows of the m×d matrix x and the n×d matrix y (tiled like Gram; one
// OpenBLAS dgemm where native.DotNT is not available).
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
	raw := out.RawMatrix()
	var after func(t tile)
	if f := k.elementMap(d); f != nil {
		nx, ny := rowSqNorms(x), rowSqNorms(y)
		vectorMap := (k.Kind == Gaussian || k.Kind == Laplace) && useDotKernel && native.HasDotKernel()
		c, laplace := k.rbfScale()
		after = func(t tile) {
			if vectorMap {
				native.RBFTile(t.i1-t.i0, t.j1-t.j0, raw.Data[t.i0*raw.Stride+t.j0:], raw.Stride, nx[t.i0:t.i1], ny[t.j0:t.j1], c, laplace)
				return
			}
			for i := t.i0; i < t.i1; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+n]
				for j := t.j0; j < t.j1; j++ {
					row[j] = f(row[j], nx[i], ny[j])
				}
			}
		}
	}
	innerProducts(x, y, raw.Data, raw.Stride, false, after)
	return out, nil
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
