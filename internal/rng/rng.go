// Package rng is kdual's one seeded random generator: PCG with the seed as
// its first word and a fixed second word, so one seed means one stream
// everywhere (eigensolver starts, random features, samples, data). It
// depends on the standard library and the status leaf only, so every layer
// can use it.
package rng

import (
	"fmt"
	"math/rand/v2"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/status"
)

// ErrShape is returned for a non-positive shape.
var ErrShape = fmt.Errorf("rng: invalid shape: %w", status.ErrInvalid)

// New returns the generator for seed.
func New(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x6b6475616c)) // "kdual"
}

// StandardNormal returns n·d independent N(0, 1) draws (an n×d row-major
// matrix) from the generator of seed.
func StandardNormal(n, d int, seed uint64) ([]float64, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("%w: %d×%d must be positive", ErrShape, n, d)
	}
	if err := bigmem.Fits(fmt.Sprintf("a %d×%d normal matrix", n, d), 8, n, d); err != nil {
		return nil, err
	}
	r := New(seed)
	data := make([]float64, n*d)
	for i := range data {
		data[i] = r.NormFloat64()
	}
	return data, nil
}
