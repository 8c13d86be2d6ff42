// Package kernel names the kernels of kdual's models and the bandwidth
// rules the papers use, on top of linalg's Gram routines.
//
// Bandwidth rules for the distance kernels (σ in exp(−‖x−y‖²/(2σ²)) and
// exp(−‖x−y‖/σ)):
//   - Paper: the rule of the dual-KPCA paper's code: Laplace
//     σ = 0.01·d·var(X), Gaussian σ = 0.1·√d·std(X), with var and std over
//     all entries of the n×d matrix X;
//   - Median: the median pairwise distance of the first min(n, 1000) rows.
package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// Kernel is linalg's kernel description.
type Kernel = linalg.Kernel

// Kernel kinds.
const (
	Linear     = linalg.Linear
	Gaussian   = linalg.Gaussian
	Laplace    = linalg.Laplace
	Polynomial = linalg.Polynomial
)

// ParseKind reads a kernel name: linear, gaussian (or rbf), laplace,
// polynomial.
func ParseKind(name string) (linalg.KernelKind, error) {
	switch name {
	case "linear":
		return Linear, nil
	case "gaussian", "rbf":
		return Gaussian, nil
	case "laplace", "laplacian":
		return Laplace, nil
	case "polynomial", "poly":
		return Polynomial, nil
	}
	return 0, fmt.Errorf("kernel: unknown kernel %q (linear, gaussian, laplace, polynomial): %w", name, linalg.ErrInvalid)
}

// PaperSigma returns the paper's bandwidth for kind on x.
func PaperSigma(kind linalg.KernelKind, x *mat.Dense) (float64, error) {
	n, d := x.Dims()
	if n*d < 2 {
		return 0, fmt.Errorf("kernel: PaperSigma needs at least two values: %w", linalg.ErrInvalid)
	}
	raw := x.RawMatrix()
	mean, sq := 0.0, 0.0
	for i := 0; i < n; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mean += v
		}
	}
	mean /= float64(n * d)
	for i := 0; i < n; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			sq += (v - mean) * (v - mean)
		}
	}
	variance := sq / float64(n*d)
	var s float64
	switch kind {
	case Laplace:
		s = 0.01 * float64(d) * variance
	case Gaussian:
		s = 0.1 * math.Sqrt(float64(d)) * math.Sqrt(variance)
	default:
		return 0, fmt.Errorf("kernel: the paper rule is for laplace and gaussian, not %s: %w", kind, linalg.ErrInvalid)
	}
	if !(s > 0) {
		return 0, fmt.Errorf("kernel: constant data gives bandwidth %g: %w", s, linalg.ErrInvalid)
	}
	return s, nil
}

// MedianSigma is the median heuristic on the first min(n, 1000) rows.
func MedianSigma(x *mat.Dense) (float64, error) {
	s, err := linalg.MedianDistance(x, 1000)
	if err == nil && !(s > 0) {
		err = fmt.Errorf("kernel: median distance is %g: %w", s, linalg.ErrInvalid)
	}
	return s, err
}
