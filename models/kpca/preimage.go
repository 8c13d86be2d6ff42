package kpca

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// preimage is kernel ridge regression from scores back to input space
// (Bakır, Weston and Schölkopf 2004), as scikit-learn's
// fit_inverse_transform: with Z the n×s training scores and X the data,
// A = (k(Z, Z) + αI)⁻¹ X, and x̂(z) = k(z, Z)·A, with k the model's
// InverseKernel (its Kernel when that is nil).
type preimage struct {
	z    *mat.Dense
	coef *mat.Dense
	kern kernel.Kernel
}

func (k *KPCA) fitInverse() error {
	alpha := k.fitAlpha
	if alpha == 0 {
		alpha = 1
	}
	if !(alpha > 0) {
		return fmt.Errorf("kpca: Alpha = %g must be positive: %w", alpha, status.ErrInvalid)
	}
	kern := k.fitKernel
	if k.InverseKernel != nil {
		kern = *k.InverseKernel
		if err := kern.Check(); err != nil {
			return fmt.Errorf("kpca: InverseKernel: %w", err)
		}
	}
	kz, err := kernel.Gram(k.scores, kern)
	if err != nil {
		return fmt.Errorf("kpca: pre-image kernel: %w", err)
	}
	n := kz.SymmetricDim()
	for i := 0; i < n; i++ {
		kz.SetSym(i, i, kz.At(i, i)+alpha)
	}
	var ch linalg.Cholesky
	if err := ch.Factorize(kz); err != nil {
		return fmt.Errorf("kpca: pre-image system: %w", err)
	}
	coef, err := ch.Solve(k.x)
	if err != nil {
		return err
	}
	k.inverse = &preimage{z: linalg.CopyOf(k.scores), coef: coef, kern: kern}
	return nil
}

// InverseTransform maps m×s scores back to m×d input space (needs
// FitInverse).
func (k *KPCA) InverseTransform(zm mat.Matrix) (*mat.Dense, error) {
	if k == nil || !k.fitted {
		return nil, ErrNotFitted
	}
	z := linalg.DenseOf(zm)
	if z == nil {
		return nil, fmt.Errorf("kpca: InverseTransform: empty scores: %w", status.ErrInvalid)
	}
	if k.inverse == nil {
		return nil, fmt.Errorf("kpca: InverseTransform needs FitInverse: %w", ErrNotFitted)
	}
	if _, s := z.Dims(); s != len(k.values) {
		return nil, fmt.Errorf("kpca: scores have %d columns, want %d: %w", s, len(k.values), status.ErrInvalid)
	}
	kz, err := kernel.CrossGram(z, k.inverse.z, k.inverse.kern)
	if err != nil {
		return nil, err
	}
	var out mat.Dense
	linalg.Mul(&out, kz, k.inverse.coef)
	return &out, nil
}
