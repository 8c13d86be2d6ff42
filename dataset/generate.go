package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
)

// NewRand returns kdual's seeded generator (internal/rng): one seed, one
// stream everywhere.
func NewRand(seed uint64) *rand.Rand { return rng.New(seed) }

// StandardNormal returns an n×d matrix of independent N(0, 1) entries
// (internal/rng's stream for seed).
func StandardNormal(n, d int, seed uint64) (*mat.Dense, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("dataset: StandardNormal: shape %d×%d must be positive: %w", n, d, ErrFormat)
	}
	data, err := rng.StandardNormal(n, d, seed)
	if err != nil {
		return nil, fmt.Errorf("dataset: StandardNormal: %w", err)
	}
	return mat.NewDense(n, d, data), nil
}

// MultivariateNormal returns n rows drawn from N(mean, LLᵀ), given a d×r
// factor L of the covariance (for example its Cholesky factor, or
// V·diag(√λ) from an eigendecomposition): row i is mean + L zᵢ with
// zᵢ ~ N(0, I_r). Cost: one n×r by r×d product. mean may be nil (zero).
func MultivariateNormal(n int, mean []float64, factor mat.Matrix, seed uint64) (*mat.Dense, error) {
	d, r := factor.Dims()
	if n < 1 {
		return nil, fmt.Errorf("dataset: MultivariateNormal: n = %d: %w", n, ErrFormat)
	}
	if mean != nil && len(mean) != d {
		return nil, fmt.Errorf("dataset: MultivariateNormal: mean has length %d, factor has %d rows: %w", len(mean), d, ErrFormat)
	}
	z, err := StandardNormal(n, r, seed)
	if err != nil {
		return nil, err
	}
	x := mat.NewDense(n, d, nil)
	x.Mul(z, factor.T())
	if mean != nil {
		for i := 0; i < n; i++ {
			row := x.RawRowView(i)
			for j := range row {
				row[j] += mean[j]
			}
		}
	}
	return x, nil
}

// MultivariateNormalCov is MultivariateNormal given the d×d covariance
// itself, factored by Cholesky (pure Go; for large d pass a factor).
func MultivariateNormalCov(n int, mean []float64, cov mat.Symmetric, seed uint64) (*mat.Dense, error) {
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("dataset: MultivariateNormalCov: covariance is not positive definite: %w", ErrFormat)
	}
	var l mat.TriDense
	ch.LTo(&l)
	return MultivariateNormal(n, mean, &l, seed)
}

// SumOfSines returns the multi-view RKM paper's toy series,
// x_ℓ = sin(2πt_ℓ) + 0.2·sin(2π·20·t_ℓ) at t_ℓ = 0, 0.01, …, (n−1)/100.
func SumOfSines(n int) []float64 {
	x := make([]float64, max(n, 0))
	for i := range x {
		t := float64(i) / 100
		x[i] = math.Sin(2*math.Pi*t) + 0.2*math.Sin(2*math.Pi*20*t)
	}
	return x
}
