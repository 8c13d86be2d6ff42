package approx

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// RFF configures random Fourier features of the Gaussian kernel as an
// approximation Method: the features themselves are kernel.RFF's (the one
// home of their formula); this is their FeatureMap. K ≈ Z·Zᵀ with Z the
// n×Features feature matrix, an unbiased approximation whose error shrinks
// like 1/√Features.
type RFF struct {
	// Features is D, the random features (≥ 1).
	Features int
	// Seed of the frequencies and phases; 0 means 1.
	Seed uint64
}

// RFFMap is the random-feature map of a Gaussian kernel on training
// points.
type RFFMap struct {
	RFF  *kernel.RFF
	z    *mat.Dense
	info Info
}

// Train returns Z (nil for a rebuilt map).
func (m *RFFMap) Train() mat.Matrix {
	if m.z == nil {
		return nil
	}
	return m.z
}

// ReleaseTrain drops the training features; Train returns nil afterwards.
func (m *RFFMap) ReleaseTrain() { m.z = nil }

// Info reports the map (the trace error of random features is not known
// without K: 0).
func (m *RFFMap) Info() Info { return m.info }

// Map returns the features of the rows of y.
func (m *RFFMap) Map(y *mat.Dense) (*mat.Dense, error) { return m.RFF.Map(y) }

// NewRFFMap rebuilds a map from a saved kernel.RFF (Train returns nil).
func NewRFFMap(f *kernel.RFF, info Info) *RFFMap { return &RFFMap{RFF: f, info: info} }

// Fit draws the features for kernel k (Gaussian only) and maps the rows
// of x.
func (c RFF) Fit(xm mat.Matrix, k kernel.Kernel) (*RFFMap, error) {
	start := time.Now()
	x := linalg.DenseOf(xm)
	if x == nil {
		return nil, invalidf("RFF: empty data")
	}
	if k.Kind != kernel.Gaussian {
		return nil, invalidf("RFF: random Fourier features approximate the gaussian kernel, not %v", k.Kind)
	}
	if c.Features < 1 {
		return nil, invalidf("RFF: %d features, want ≥ 1", c.Features)
	}
	seed := c.Seed
	if seed == 0 {
		seed = 1
	}
	n, d := x.Dims()
	if err := bigmem.Fits(fmt.Sprintf("RFF: %d features of %d points and their frequencies", c.Features, n), 8, n+d, c.Features); err != nil {
		return nil, err
	}
	f, err := kernel.NewRFF(d, c.Features, k.Bandwidth(), seed)
	if err != nil {
		return nil, err
	}
	z, err := f.Map(x)
	if err != nil {
		return nil, err
	}
	return &RFFMap{RFF: f, z: z, info: Info{Method: "rff", Rank: c.Features, Seconds: time.Since(start).Seconds()}}, nil
}

// Build is Fit as a Method.
func (c RFF) Build(x *mat.Dense, k kernel.Kernel) (FeatureMap, error) {
	m, err := c.Fit(x, k)
	if err != nil {
		return nil, err
	}
	return m, nil
}
