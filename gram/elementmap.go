package gram

import (
	"math"

	"github.com/kdual/kdual/native"
)

// MapKind names the element map of the Gram engine.
type MapKind int

const (
	// MapIdentity keeps the inner product g = ⟨x, y⟩ (the linear kernel).
	MapIdentity MapKind = iota
	// MapExpSq is exp(C·‖x − y‖²) (the Gaussian kernel, C = −1/(2σ²)).
	MapExpSq
	// MapExpDist is exp(C·‖x − y‖) (the Laplace kernel, C = −1/σ).
	MapExpDist
	// MapPower is (Gamma·g + Coef0)^Degree (the polynomial kernel).
	MapPower
	// MapTanh is tanh(Gamma·g + Coef0) (the sigmoid kernel).
	MapTanh
	// MapCosine is g/(‖x‖·‖y‖), and 0 when x or y is 0 (the cosine
	// kernel).
	MapCosine
	// MapExpL1 is exp(C·‖x − y‖₁) (scikit-learn's laplacian kernel). It
	// has no inner-product form: the engine computes the L1 distances
	// directly in float64 (O(d) per entry, no BLAS), whatever
	// GramOptions.Products says.
	MapExpL1
)

// ElementMap is the map the Gram engine applies to every inner product
// g = ⟨x, y⟩, given the squared norms of x and y. It is a plain value so
// that any kernel package can describe its kernels to the engine.
type ElementMap struct {
	Kind   MapKind
	C      float64 // scale of the exponent, ≤ 0 (MapExpSq, MapExpDist, MapExpL1)
	Gamma  float64 // MapPower, MapTanh
	Coef0  float64 // MapPower, MapTanh
	Degree int     // MapPower, ≥ 0
}

// distance reports whether the map depends on x and y only through
// ‖x − y‖: then the data may be shifted by any vector first, and the
// diagonal is exactly 1.
func (e ElementMap) distance() bool { return e.Kind == MapExpSq || e.Kind == MapExpDist }

// Shifted reports whether Prepare shifts the rows for e (the distance
// maps, which a shift leaves unchanged), into an array of its own unless
// the data are centred already; for other maps it reads the rows as given.
func (e ElementMap) Shifted() bool { return e.distance() }

// Check returns an error wrapping ErrInvalid when e cannot be applied.
func (e ElementMap) Check() error {
	switch e.Kind {
	case MapIdentity:
	case MapExpSq, MapExpDist, MapExpL1:
		if !(e.C <= 0) || math.IsInf(e.C, 0) {
			return invalidf("element map: exponent scale %g must be finite and ≤ 0", e.C)
		}
	case MapPower:
		if e.Degree < 0 || math.IsNaN(e.Gamma) || math.IsInf(e.Gamma, 0) || math.IsNaN(e.Coef0) || math.IsInf(e.Coef0, 0) {
			return invalidf("element map: power (%g·g + %g)^%d is not finite", e.Gamma, e.Coef0, e.Degree)
		}
	case MapTanh:
		if math.IsNaN(e.Gamma) || math.IsInf(e.Gamma, 0) || math.IsNaN(e.Coef0) || math.IsInf(e.Coef0, 0) {
			return invalidf("element map: tanh(%g·g + %g) is not finite", e.Gamma, e.Coef0)
		}
	case MapCosine:
	default:
		return invalidf("element map: unknown kind %d", int(e.Kind))
	}
	return nil
}

// apply maps one scalar (the portable reference of every path).
func (e ElementMap) apply(g, nx, ny float64) float64 {
	switch e.Kind {
	case MapExpSq:
		return math.Exp(e.C * math.Max(nx+ny-2*g, 0))
	case MapExpDist:
		return math.Exp(e.C * math.Sqrt(math.Max(nx+ny-2*g, 0)))
	case MapPower:
		return intPow(e.Gamma*g+e.Coef0, e.Degree)
	case MapTanh:
		return math.Tanh(e.Gamma*g + e.Coef0)
	case MapCosine:
		if nx == 0 || ny == 0 {
			return 0
		}
		return g / (math.Sqrt(nx) * math.Sqrt(ny))
	case MapExpL1:
		return math.Exp(e.C * g) // g is the L1 distance (l1Products)
	}
	return g
}

// mapRows applies em in place to rows [r0, r1) and columns [c0, c1) of
// the row-major block buf (stride ld), whose row i has squared norm ni[i]
// and column j nj[j] (indices relative to the block). Safe for concurrent
// use on disjoint rows.
func mapRows(buf []float64, ld, r0, r1, c0, c1 int, ni, nj []float64, em ElementMap, path MapPath, b native.Build) {
	if em.Kind == MapIdentity || r1 <= r0 || c1 <= c0 {
		return
	}
	if em.distance() && path == MapNative {
		b.RBFMap(r1-r0, c1-c0, buf[r0*ld+c0:], ld, ni[r0:r1], nj[c0:c1], em.C, em.Kind == MapExpDist)
		return
	}
	for i := r0; i < r1; i++ {
		row := buf[i*ld+c0 : i*ld+c1]
		n := ni[i]
		for j, g := range row {
			row[j] = em.apply(g, n, nj[c0+j])
		}
	}
}
