package kernel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

func TestPaperSigma(t *testing.T) {
	// Entries 0…7 in a 4×2 matrix: mean 3.5, variance 5.25 (population).
	x := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	s, err := PaperSigma(Laplace, x)
	require.NoError(t, err)
	require.InDelta(t, 0.01*2*5.25, s, 1e-15)
	s, err = PaperSigma(Gaussian, x)
	require.NoError(t, err)
	require.InDelta(t, 0.1*math.Sqrt(2)*math.Sqrt(5.25), s, 1e-15)
	_, err = PaperSigma(Linear, x)
	require.ErrorIs(t, err, linalg.ErrInvalid)
	_, err = PaperSigma(Gaussian, mat.NewDense(3, 2, nil))
	require.ErrorIs(t, err, linalg.ErrInvalid, "constant data")
}

func TestParseKindAndMedian(t *testing.T) {
	for name, want := range map[string]linalg.KernelKind{"linear": Linear, "rbf": Gaussian, "gaussian": Gaussian, "laplace": Laplace, "poly": Polynomial} {
		k, err := ParseKind(name)
		require.NoError(t, err)
		require.Equal(t, want, k)
	}
	_, err := ParseKind("sigmoid")
	require.ErrorIs(t, err, linalg.ErrInvalid)
	x := mat.NewDense(3, 1, []float64{0, 1, 3}) // distances 1, 2, 3
	s, err := MedianSigma(x)
	require.NoError(t, err)
	require.InDelta(t, 2, s, 1e-15)
	_, err = MedianSigma(mat.NewDense(3, 1, nil))
	require.ErrorIs(t, err, linalg.ErrInvalid)
}
