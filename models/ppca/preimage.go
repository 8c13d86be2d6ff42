package ppca

import (
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
)

// PreImage maps centred kernel vectors (rows of kc, N columns: from
// Reconstruct, Generate or Sample) back to input space with the kernel
// smoother of kernel.Smoother (see the package documentation for its
// stabilising term). nearest > 0 keeps only the nearest largest weights.
// It also returns how many rows had no positive weight and were given the
// training mean.
func (m *Dual) PreImage(kc *mat.Dense, nearest int) (*mat.Dense, int, error) {
	if err := m.check(); err != nil {
		return nil, 0, err
	}
	if m.x == nil {
		return nil, 0, invalidf("PreImage: the model was fitted on a kernel matrix, not on inputs")
	}
	if err := m.checkKernelRows("PreImage", kc); err != nil {
		return nil, 0, err
	}
	return kernel.Smoother(kc, m.center.RowMeans, m.x, nearest, kernel.DiagonalMean(m.kc, m.center))
}
