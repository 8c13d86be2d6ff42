package kpca

import (
	"fmt"
	"math"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
)

// Transform returns the m×s scores of the rows of x (m×d) by Eq. (8):
// z = k_cᵀ·H·M^{-1/2}·Q, with k_c centred like G.
func (k *KPCA) Transform(xm mat.Matrix) (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	x := linalg.DenseOf(xm)
	if x == nil {
		return nil, fmt.Errorf("kpca: Transform: empty data: %w", status.ErrInvalid)
	}
	if k.approx != nil {
		return k.transformApprox(x)
	}
	if k.distributed {
		return nil, errDistributed
	}
	if k.x == nil {
		return nil, fmt.Errorf("kpca: fitted with FitGram or FitOperator: use TransformGram: %w", status.ErrInvalid)
	}
	if _, d := x.Dims(); d != k.x.RawMatrix().Cols {
		return nil, fmt.Errorf("kpca: Transform: the data have %d columns, the model was fitted on %d: %w", d, k.x.RawMatrix().Cols, status.ErrInvalid)
	}
	kx, err := kernel.CrossGram(x, k.x, k.fitKernel)
	if err != nil {
		return nil, fmt.Errorf("kpca: Transform: %w", err)
	}
	return k.transformRows(kx, true)
}

// TransformGram projects m new points given their m×n kernel rows against
// the training points (uncentred; centred here like G, on a copy: kx is
// not modified).
func (k *KPCA) TransformGram(kx mat.Matrix) (*mat.Dense, error) {
	if k != nil && k.approx != nil {
		return nil, fmt.Errorf("kpca: TransformGram: an approximate model maps points, not kernel rows: %w", status.ErrInvalid)
	}
	if k != nil && k.fitted && k.distributed {
		return nil, errDistributed
	}
	return k.transformRows(linalg.DenseOf(kx), false)
}

// transformRows is TransformGram; owned kernel rows are centred in place.
func (k *KPCA) transformRows(kx *mat.Dense, owned bool) (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	if kx == nil || kx.IsEmpty() {
		return nil, fmt.Errorf("kpca: TransformGram: empty kernel rows: %w", status.ErrInvalid)
	}
	m, n := kx.Dims()
	if n != k.n {
		return nil, fmt.Errorf("kpca: kernel rows have %d columns, want %d: %w", n, k.n, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("kpca: kernel rows", kx); err != nil {
		return nil, err
	}
	if k.fitCenter {
		if !owned {
			kx = linalg.CopyOf(kx)
		}
		if err := k.center.CenterCross(kx); err != nil {
			return nil, err
		}
	}
	_, s := k.proj.Dims()
	z := mat.NewDense(m, s, nil)
	linalg.Mul(z, kx, k.proj)
	return z, nil
}

// CheckResiduals measures the fitted eigenpairs against the exact float64
// kernel of the training data, whatever operator the fit used: with
// V = scores·Λ^{-1/2} it returns r_i = ‖K_c v_i − λ_i v_i‖ (K_c centred
// unless NoCenter) and λ₁, from one pass of the matrix-free float64
// kernel over the block [V − 1·v̄ᵀ, 1/n] (memory: the data and one panel;
// time: about one Gram build). It needs Fit (not FitGram); an approximate
// model does not keep its training data: use CheckResidualsWith.
func (k *KPCA) CheckResiduals() (res []float64, lambda1 float64, err error) {
	if k == nil || !k.fitted {
		return nil, 0, ErrNotFitted
	}
	if k.x == nil {
		return nil, 0, fmt.Errorf("kpca: CheckResiduals needs the training data (Fit, not FitGram; CheckResidualsWith for an approximate model): %w", status.ErrInvalid)
	}
	return k.CheckResidualsWith(k.x)
}

// CheckResidualsWith is CheckResiduals against the exact kernel of x, which
// must be the training data (n rows): for an approximate model it measures
// how far the approximation's eigenpairs are from the exact kernel's.
func (k *KPCA) CheckResidualsWith(xm mat.Matrix) (res []float64, lambda1 float64, err error) {
	if k == nil || !k.fitted {
		return nil, 0, ErrNotFitted
	}
	x := linalg.DenseOf(xm)
	if x == nil || x.RawMatrix().Rows != k.n {
		return nil, 0, fmt.Errorf("kpca: CheckResidualsWith: want the %d training points: %w", k.n, status.ErrInvalid)
	}
	op, err := eig.NewKernelOp(x, k.fitKernel, gram.GramOptions{})
	if err != nil {
		return nil, 0, err
	}
	n, s := k.scores.Dims()
	v := mat.NewDense(n, s, nil)
	for j := 0; j < s; j++ {
		r := 1 / math.Sqrt(k.values[j])
		for i := 0; i < n; i++ {
			v.Set(i, j, k.scores.At(i, j)*r)
		}
	}
	b := mat.NewDense(n, s+1, nil)
	means := make([]float64, s)
	if k.fitCenter {
		for j := 0; j < s; j++ {
			for i := 0; i < n; i++ {
				means[j] += v.At(i, j)
			}
			means[j] /= float64(n)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < s; j++ {
			b.Set(i, j, v.At(i, j)-means[j])
		}
		b.Set(i, s, 1/float64(n))
	}
	y := mat.NewDense(n, s+1, nil)
	if err := op.Apply(y, b); err != nil {
		return nil, 0, err
	}
	// K_c v = K v′ − 1·(rᵀv′), r = K·1/n (the last column of y).
	rv := make([]float64, s)
	if k.fitCenter {
		for i := 0; i < n; i++ {
			for j := 0; j < s; j++ {
				rv[j] += y.At(i, s) * b.At(i, j)
			}
		}
	}
	res = make([]float64, s)
	for j := 0; j < s; j++ {
		sum := 0.0
		for i := 0; i < n; i++ {
			d := y.At(i, j) - rv[j] - k.values[j]*v.At(i, j)
			sum += d * d
		}
		res[j] = math.Sqrt(sum)
	}
	return res, k.values[0], nil
}
