package eig

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// LowRank is the n×n matrix F·Fᵀ of an n×k factor (a Nyström or
// random-feature approximation of a kernel) as an Operator, optionally
// doubly centred: M·F·Fᵀ·M = F_c·F_cᵀ with F_c = F − 1·μᵀ, μ the column
// means of F, applied without forming F_c. A pass costs two dgemms,
// O(n·k·b); memory is F's (a reference: F must not change) plus O(k·b).
// Safe for concurrent use.
type LowRank struct {
	f    mat.Matrix      // n×k: a *mat.Dense or the Transpose of one
	f32  *linalg.Dense32 // or the k×n float32 storage of F's transpose
	mean []float64       // nil when not centred
}

// NewLowRank returns the operator F·Fᵀ, centred when center is true. F is
// a *mat.Dense (n×k) or the mat.Transpose of a k×n one; the products use
// its storage as it is. F may also be the mat.Transpose of a k×n
// *linalg.Dense32 (float32 features): a pass then widens blocks of F to
// float64 and multiplies by dgemm, the products exact on the stored
// values.
func NewLowRank(f mat.Matrix, center bool) (*LowRank, error) {
	if t, ok := f.(mat.Transpose); ok {
		if ft, ok := t.Matrix.(*linalg.Dense32); ok {
			if err := linalg.CheckFinite32("eig: NewLowRank", ft); err != nil {
				return nil, err
			}
			op := &LowRank{f: f, f32: ft}
			if center {
				k, n := ft.Dims()
				op.mean = make([]float64, k)
				for j := range op.mean {
					s := 0.0
					for _, v := range ft.Row(j) {
						s += float64(v)
					}
					op.mean[j] = s / float64(n)
				}
			}
			return op, nil
		}
	}
	d := denseOrTranspose(f)
	if d == nil || d.IsEmpty() {
		return nil, fmt.Errorf("eig: NewLowRank: want a non-empty *mat.Dense or its Transpose, have %T: %w", f, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("eig: NewLowRank", d); err != nil {
		return nil, err
	}
	op := &LowRank{f: f}
	if center {
		n, k := f.Dims()
		op.mean = make([]float64, k)
		if _, tr := f.(mat.Transpose); tr {
			for j := 0; j < k; j++ {
				for _, v := range d.RawRowView(j)[:n] {
					op.mean[j] += v
				}
			}
		} else {
			for i := 0; i < n; i++ {
				for j, v := range d.RawRowView(i)[:k] {
					op.mean[j] += v
				}
			}
		}
		for j := range op.mean {
			op.mean[j] /= float64(n)
		}
	}
	return op, nil
}

// denseOrTranspose returns the *mat.Dense behind f, nil for other types.
func denseOrTranspose(f mat.Matrix) *mat.Dense {
	switch m := f.(type) {
	case *mat.Dense:
		return m
	case mat.Transpose:
		d, _ := m.Matrix.(*mat.Dense)
		return d
	}
	return nil
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
	if l.f32 != nil {
		linalg.MulTVec32(l.f32, x, y) // Fᵀx
	} else {
		linalg.Mul(y, l.f.T(), x) // Fᵀx
	}
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
	if l.f32 != nil {
		// F_c·y = F·y − 1·(μᵀy)
		linalg.MulT32Into(dst, l.f32, y, l.mean)
		return nil
	}
	tf := blas.NoTrans
	if _, tr := l.f.(mat.Transpose); tr {
		tf = blas.Trans
	}
	linalg.B64.Gemm(tf, blas.NoTrans, 1, denseOrTranspose(l.f).RawMatrix(), y.RawMatrix(), 0, dst.RawMatrix())
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

// FeatureGram is F_cᵀF_c (k×k) for float32 features F = ftᵀ (ft k×n)
// centred by their means (nil: FᵀF), applied without forming it: each
// Apply reads F once per 32 columns (linalg.OuterT32Mul, on the native
// build the written rules choose), about 2·n·k·b multiply-adds.
type FeatureGram struct {
	ft   *linalg.Dense32
	mean []float64
}

// FeatureGramFast reports whether FeatureGram's passes run the AVX-512 form
// of native.Outer32 (the written rules' float32-arithmetic blocks in
// 512-bit form, paths.Paths.WideSingle): the only form measured faster
// than forming F_cᵀF_c. The AVX2 and baseline forms compute the same
// products about 50 times slower (their 16-float vectors spill: n = 200 000,
// k = 2000, b = 32: 31.6 s against 0.64 s, and 3.8 s for ssyrk forming
// the matrix; docs/measurements.md).
func FeatureGramFast() bool {
	_, single, _ := paths.Current().Build().Wide512()
	return single
}

// NewFeatureGram returns the operator F_cᵀF_c of ft centred by mean (nil:
// not centred); ft and mean are read, never changed or copied.
func NewFeatureGram(ft *linalg.Dense32, mean []float64) *FeatureGram {
	return &FeatureGram{ft: ft, mean: mean}
}

// Dim returns k.
func (g *FeatureGram) Dim() int { return g.ft.Rows }

// Apply sets dst = F_cᵀF_c·x.
func (g *FeatureGram) Apply(dst, x *mat.Dense) error {
	if _, err := checkApply(g.ft.Rows, dst, x); err != nil {
		return err
	}
	return linalg.OuterT32Mul(paths.Current().Build(), g.ft, g.mean, x, dst)
}
