package kernel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
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

// The RFF Gram matrix approaches the Gaussian one with an error that falls
// like 1/√D: the mean absolute error times √D stays within a factor 2 of
// its value at the smallest D, and D = 4096 is at least 5× better than 64.
func TestRFFApproachesGaussian(t *testing.T) {
	x, err := dataset.StandardNormal(40, 3, 1)
	require.NoError(t, err)
	const sigma = 1.5
	g, err := linalg.Gram(x, linalg.Kernel{Kind: linalg.Gaussian, Sigma: sigma})
	require.NoError(t, err)
	errAt := func(d int) float64 {
		total := 0.0
		const seeds = 8
		for seed := uint64(1); seed <= seeds; seed++ {
			r, err := NewRFF(3, d, sigma, seed)
			require.NoError(t, err)
			f, err := r.Map(x)
			require.NoError(t, err)
			var k mat.Dense
			k.Mul(f, f.T())
			for i := 0; i < 40; i++ {
				for j := 0; j < 40; j++ {
					total += math.Abs(k.At(i, j) - g.At(i, j))
				}
			}
		}
		return total / (seeds * 40 * 40)
	}
	base := errAt(64) * 8
	for _, d := range []int{256, 1024, 4096} {
		scaled := errAt(d) * math.Sqrt(float64(d))
		require.InDelta(t, 1, scaled/base, 0.5, "D=%d", d)
	}
	require.Less(t, errAt(4096), errAt(64)/5)

	r, err := NewRFF(3, 100, sigma, 2)
	require.NoError(t, err)
	r.Normalize = true
	f, err := r.Map(x)
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		require.InDelta(t, 1, mat.Norm(f.RowView(i), 2), 1e-12)
	}
	_, err = r.Map(mat.NewDense(2, 4, nil))
	require.ErrorIs(t, err, linalg.ErrInvalid)
	_, err = NewRFF(3, 10, 0, 1)
	require.ErrorIs(t, err, linalg.ErrInvalid)
}
