package bench

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// RandSym returns Q·diag(λ)·Qᵀ with λ_i = 1/i (i = 1…n) and Q the
// orthogonal factor of a seeded n×n standard-normal matrix; and λ.
func RandSym(n int, seed uint64) (*mat.SymDense, []float64, error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("bench: RandSym: n = %d: %w", n, status.ErrInvalid)
	}
	if err := bigmem.Fits(fmt.Sprintf("RandSym's three %d×%d matrices", n, n), 3*8, n, n); err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	g, err := dataset.StandardNormal(n, n, seed)
	if err != nil {
		return nil, nil, err
	}
	q, _, err := linalg.QR(g)
	if err != nil {
		return nil, nil, err
	}
	lambda := make([]float64, n)
	for i := range lambda {
		lambda[i] = 1 / float64(i+1)
	}
	ql := mat.DenseCopyOf(q)
	for i := 0; i < n; i++ {
		row := ql.RawRowView(i)
		for j := range row {
			row[j] *= lambda[j]
		}
	}
	a := mat.NewDense(n, n, nil)
	a.Mul(ql, q.T())
	s := linalg.SymPart(a)
	linalg.Symmetrize(s)
	return s, lambda, nil
}

// Kernel is a kernel matrix with how it was made.
type Kernel struct {
	G       *mat.SymDense
	Sigma   float64
	Seconds float64 // building the Gram matrix, loading excluded
}

// FashionGram builds the Gaussian kernel of the first n Fashion-MNIST
// training images (pixels in [0, 1], columns centred). sigma ≤ 0 means the
// median pairwise distance of the first min(n, 1000) images.
func FashionGram(n int, sigma float64) (*Kernel, error) {
	f, err := dataset.LoadFashion("", "train", n)
	if err != nil {
		return nil, err
	}
	linalg.CenterColumns(f.X)
	if sigma <= 0 {
		if sigma, err = kernel.MedianDistance(f.X, 1000); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	g, err := kernel.Gram(f.X, kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma})
	if err != nil {
		return nil, err
	}
	return &Kernel{G: g, Sigma: sigma, Seconds: time.Since(start).Seconds()}, nil
}
