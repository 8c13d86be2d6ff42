package gram

import "gonum.org/v1/gonum/mat"

// The engine's tests need kernels, which live in package kernel (it
// imports linalg, so linalg's own tests cannot import it). This is the
// minimum to name the element maps of the four kinds; package kernel's
// tests check its Kernel against its formula through the same engine.

type KernelKind int

const (
	Linear KernelKind = iota
	Gaussian
	Laplace
	Polynomial
)

type Kernel struct {
	Kind         KernelKind
	Sigma        float64
	Degree       int
	Gamma, Coef0 float64
}

func (k Kernel) ElementMap(d int) ElementMap {
	switch k.Kind {
	case Linear:
		return ElementMap{Kind: MapIdentity}
	case Gaussian:
		return ElementMap{Kind: MapExpSq, C: -1 / (2 * k.Sigma * k.Sigma)}
	case Laplace:
		return ElementMap{Kind: MapExpDist, C: -1 / k.Sigma}
	case Polynomial:
		deg, g := k.Degree, k.Gamma
		if deg == 0 {
			deg = 3
		}
		if g == 0 {
			g = 1 / float64(max(d, 1))
		}
		return ElementMap{Kind: MapPower, Gamma: g, Coef0: k.Coef0, Degree: deg}
	}
	return ElementMap{Kind: MapKind(-1)}
}

func cols(x *mat.Dense) int {
	if x == nil || x.IsEmpty() {
		return 0
	}
	_, d := x.Dims()
	return d
}

func Gram(x *mat.Dense, k Kernel) (*mat.SymDense, error) {
	return GramMap(x, k.ElementMap(cols(x)), GramOptions{})
}

func GramWith(x *mat.Dense, k Kernel, o GramOptions) (*mat.SymDense, error) {
	return GramMap(x, k.ElementMap(cols(x)), o)
}

func CrossGram(x, y *mat.Dense, k Kernel) (*mat.Dense, error) {
	return CrossGramMap(x, y, k.ElementMap(cols(x)))
}

func (k KernelKind) String() string {
	return [...]string{"linear", "gaussian", "laplace", "polynomial"}[k]
}
