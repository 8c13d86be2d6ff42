package eig

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// LowRank is the n×n matrix F·Fᵀ of an n×k factor (a Nyström or
// random-feature approximation of a kernel) as an Operator, optionally
// doubly centred: M·F·Fᵀ·M = F_c·F_cᵀ with F_c = F − 1·μᵀ, μ the column
// means of F, applied without forming F_c. A pass costs two dgemms,
// O(n·k·b); memory is F's (a reference: F must not change) plus O(k·b).
// Safe for concurrent use.
type LowRank struct {
	f    *mat.Dense
	mean []float64 // nil when not centred
}

// NewLowRank returns the operator F·Fᵀ, centred when center is true.
func NewLowRank(f *mat.Dense, center bool) (*LowRank, error) {
	if f == nil || f.IsEmpty() {
		return nil, fmt.Errorf("eig: NewLowRank: empty factor: %w", ErrInvalid)
	}
	if err := linalg.CheckFinite("eig: NewLowRank", f); err != nil {
		return nil, err
	}
	op := &LowRank{f: f}
	if center {
		n, k := f.Dims()
		op.mean = make([]float64, k)
		for i := 0; i < n; i++ {
			for j, v := range f.RawRowView(i)[:k] {
				op.mean[j] += v
			}
		}
		for j := range op.mean {
			op.mean[j] /= float64(n)
		}
	}
	return op, nil
}

// Dim returns n.
func (l *LowRank) Dim() int { n, _ := l.f.Dims(); return n }

// Apply sets dst = F_c·(F_cᵀ·x) (or F·(Fᵀ·x)).
func (l *LowRank) Apply(dst, x *mat.Dense) error {
	n, k := l.f.Dims()
	b, err := checkApply(n, dst, x)
	if err != nil {
		return err
	}
	y := mat.NewDense(k, b, nil)
	y.Mul(l.f.T(), x) // Fᵀx
	if l.mean != nil {
		// F_cᵀx = Fᵀx − μ·(1ᵀx)
		sums := make([]float64, b)
		for i := 0; i < n; i++ {
			for c, v := range x.RawRowView(i)[:b] {
				sums[c] += v
			}
		}
		for j := 0; j < k; j++ {
			row := y.RawRowView(j)
			for c := range row {
				row[c] -= l.mean[j] * sums[c]
			}
		}
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, l.f.RawMatrix(), y.RawMatrix(), 0, dst.RawMatrix())
	if l.mean != nil {
		// F_c·y = F·y − 1·(μᵀy)
		my := make([]float64, b)
		for j := 0; j < k; j++ {
			for c, v := range y.RawRowView(j) {
				my[c] += l.mean[j] * v
			}
		}
		for i := 0; i < n; i++ {
			row := dst.RawRowView(i)[:b]
			for c := range row {
				row[c] -= my[c]
			}
		}
	}
	return nil
}
