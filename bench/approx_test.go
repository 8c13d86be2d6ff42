package bench

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// The largest principal angle of a known rotation, and of the same space
// in another basis; the eigenvalue error is the largest relative one.
func TestApproxMeasures(t *testing.T) {
	u := mat.NewDense(4, 2, []float64{1, 0, 0, 1, 0, 0, 0, 0})
	th := 0.3
	z := mat.NewDense(4, 2, []float64{math.Cos(th), 0, 0, 2, math.Sin(th), 0, 0, 0})
	require.InDelta(t, th*180/math.Pi, LargestAngleDeg(u, z), 1e-10)
	same := mat.NewDense(4, 2, []float64{1, 1, 2, -1, 0, 0, 0, 0})
	require.InDelta(t, 0, LargestAngleDeg(u, same), 1e-6)
	require.InDelta(t, 0.1, EigError([]float64{9, 2.1}, []float64{10, 2}), 1e-12)
	require.True(t, math.IsInf(EigError([]float64{9}, []float64{10, 2}), 1))
}
