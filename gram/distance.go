package gram

import (
	"math"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/mat"
)

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
	return linalg.CheckFinite("gram: "+what, x)
}

// SqDistances returns the n×n matrix of squared Euclidean distances between
// the rows of x (both triangles stored, zero diagonal).
func SqDistances(x *mat.Dense) (*mat.SymDense, error) {
	if err := checkData("SqDistances: x", x); err != nil {
		return nil, err
	}
	// ‖x−y‖² from the linear kernel's ⟨x,y⟩ and the squared norms.
	g, err := GramMap(x, ElementMap{Kind: MapIdentity}, GramOptions{})
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
