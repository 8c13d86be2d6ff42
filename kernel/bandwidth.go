package kernel

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
)

// ParseKind reads a kernel name: linear, gaussian (or rbf), laplace,
// polynomial (or poly), sigmoid, cosine, laplacian (Kind.String's names
// and scikit-learn's).
func ParseKind(name string) (Kind, error) {
	switch name {
	case "linear":
		return Linear, nil
	case "gaussian", "rbf":
		return Gaussian, nil
	case "laplace":
		return Laplace, nil
	case "polynomial", "poly":
		return Polynomial, nil
	case "sigmoid":
		return Sigmoid, nil
	case "cosine":
		return Cosine, nil
	case "laplacian":
		return Laplacian, nil
	}
	return 0, fmt.Errorf("kernel: unknown kernel %q (linear, gaussian or rbf, laplace, polynomial or poly, sigmoid, cosine, laplacian): %w", name, status.ErrInvalid)
}

// PaperSigma returns the paper's bandwidth for kind on x.
func PaperSigma(kind Kind, x *mat.Dense) (float64, error) {
	n, d := x.Dims()
	if n*d < 2 {
		return 0, fmt.Errorf("kernel: PaperSigma needs at least two values: %w", status.ErrInvalid)
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
		return 0, fmt.Errorf("kernel: the paper rule is for laplace and gaussian, not %s: %w", kind, status.ErrInvalid)
	}
	if !(s > 0) {
		return 0, fmt.Errorf("kernel: constant data gives bandwidth %g: %w", s, status.ErrInvalid)
	}
	return s, nil
}

// MedianSigma is the median heuristic on the first min(n, 1000) rows.
func MedianSigma(x *mat.Dense) (float64, error) {
	s, err := MedianDistance(x, 1000)
	if err == nil && !(s > 0) {
		err = fmt.Errorf("kernel: median distance is %g: %w", s, status.ErrInvalid)
	}
	return s, err
}

// Bandwidth returns σ for kind on x by a rule's name: "paper" (PaperSigma),
// "median" (MedianSigma), or a positive number written out ("2.5").
func Bandwidth(rule string, kind Kind, x *mat.Dense) (float64, error) {
	switch rule {
	case "paper":
		return PaperSigma(kind, x)
	case "median":
		return MedianSigma(x)
	}
	s, err := strconv.ParseFloat(rule, 64)
	if err != nil || !(s > 0) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("kernel: bandwidth %q: want paper, median or a positive number: %w", rule, status.ErrInvalid)
	}
	return s, nil
}
