package rkm

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// Inference of a view from the others (Eqs. 15, 16) and the test kernels.

// Infer predicts view target of m new points from the other views (xs has
// one matrix per view, m rows each; xs[target] is ignored and may be nil).
// It returns the target view in input space (see the package
// documentation for the pre-images).
func (m *Model) Infer(target int, xs []*mat.Dense) (*mat.Dense, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	if target < 0 || target >= len(m.views) || len(xs) != len(m.views) {
		return nil, invalidf("target view %d with %d data matrices for %d views", target, len(xs), len(m.views))
	}
	if len(m.views) < 2 {
		return nil, invalidf("inference needs at least two views")
	}
	rows := -1
	for v, x := range xs {
		if v == target {
			continue
		}
		if x == nil || x.IsEmpty() {
			return nil, invalidf("view %d is empty", v)
		}
		r, c := x.Dims()
		if rows >= 0 && r != rows {
			return nil, invalidf("view %d has %d points, others %d", v, r, rows)
		}
		rows = r
		if _, d := m.views[v].x.Dims(); c != d {
			return nil, invalidf("view %d has %d columns, training had %d", v, c, d)
		}
		if err := linalg.CheckFinite(fmt.Sprintf("rkm: view %d", v), x); err != nil {
			return nil, err
		}
	}
	s := m.s
	tv := &m.views[target]
	// b = Σ_{w≠v} (test scores of view w), and the matrix Γ − (target
	// block), both in the model's setting.
	b := mat.NewDense(rows, s, nil)
	it, err := m.inferTarget(target)
	if err != nil {
		return nil, err
	}
	if m.setting == Primal {
		for v := range xs {
			if v == target {
				continue
			}
			phi, err := m.testFeatures(v, xs[v])
			if err != nil {
				return nil, err
			}
			uv := m.u.Slice(m.views[v].offset, m.views[v].offset+m.views[v].dim, 0, s)
			var t mat.Dense
			linalg.Mul(&t, phi, uv)
			b.Add(b, &t)
		}
	} else {
		for v := range xs {
			if v == target {
				continue
			}
			kc, err := m.testKernel(v, xs[v])
			if err != nil {
				return nil, err
			}
			var t mat.Dense
			linalg.Mul(&t, kc, m.h)
			b.Add(b, &t)
		}
	}
	// h* = b (Γ − block)^{-1}, rows: solve (Γ − block) h*ᵀ = bᵀ.
	var hs mat.Dense
	if err := linalg.Solve(&hs, it.a, b.T()); err != nil {
		return nil, fmt.Errorf("rkm: Γ minus the target view's block is singular (the other views do not determine the latent variables): %v: %w", err, ErrSingular)
	}
	h := linalg.CopyOf(hs.T())
	if tv.explicit {
		// φ̂_v = U_v h* (U_v = Φ_vᵀH in the dual); the kernel vector
		// against the training points is Φ_v φ̂_v.
		phi := mat.NewDense(rows, tv.dim, nil)
		linalg.Mul(phi, h, it.u.T())
		if _, ok := tv.fm.(Identity); ok {
			for i := 0; i < rows; i++ {
				row := phi.RawRowView(i)
				for j := range row {
					row[j] += tv.mean[j]
				}
			}
			return phi, nil
		}
		kc := mat.NewDense(rows, m.n, nil)
		linalg.Mul(kc, phi, tv.phi.T())
		out, _, err := kernel.Smoother(kc, tv.center.RowMeans, tv.x, 0, tv.diagonalMean())
		return out, err
	}
	// k̂_v = K_v H h*.
	kc := mat.NewDense(rows, m.n, nil)
	linalg.Mul(kc, h, it.kh.T())
	out, _, err := kernel.Smoother(kc, tv.center.RowMeans, tv.x, 0, tv.diagonalMean())
	return out, err
}

// target holds what inference of one view needs whatever the new points:
// Γ minus the view's block (s×s), and U_v (explicit views) or K_vH (dual,
// implicit views). Built on first use and kept until the next Fit, so a
// recursive forecast pays the n²s product once, not at every step.
type target struct {
	a, u, kh *mat.Dense
}

func (m *Model) inferTarget(v int) (*target, error) {
	if it, ok := m.targets[v]; ok {
		return it, nil
	}
	s := m.s
	tv := &m.views[v]
	it := &target{}
	var block mat.Dense
	if m.setting == Primal {
		ut := m.u.Slice(tv.offset, tv.offset+tv.dim, 0, s)
		linalg.Mul(&block, ut.T(), ut)
	} else {
		it.kh = mat.NewDense(m.n, s, nil)
		linalg.Mul(it.kh, tv.viewKernel(), m.h)
		linalg.Mul(&block, m.h.T(), it.kh)
	}
	if tv.explicit {
		var err error
		if it.u, err = m.U(v); err != nil {
			return nil, err
		}
	}
	sym := linalg.SymPart(&block)
	it.a = mat.NewDense(s, s, nil)
	it.a.Sub(m.gamma, sym)
	if m.targets == nil {
		m.targets = map[int]*target{}
	}
	m.targets[v] = it
	return it, nil
}

// testFeatures returns the centred features of new points of an explicit
// view.
func (m *Model) testFeatures(v int, x *mat.Dense) (*mat.Dense, error) {
	fv := &m.views[v]
	phi, err := fv.fm.Map(x)
	if err != nil {
		return nil, err
	}
	r, _ := phi.Dims()
	for i := 0; i < r; i++ {
		row := phi.RawRowView(i)
		for j := range row {
			row[j] -= fv.mean[j]
		}
	}
	return phi, nil
}

// testKernel returns the centred kernel vectors (rows) of new points
// against the training points of view v.
func (m *Model) testKernel(v int, x *mat.Dense) (*mat.Dense, error) {
	fv := &m.views[v]
	if fv.explicit {
		phi, err := m.testFeatures(v, x)
		if err != nil {
			return nil, err
		}
		r, _ := phi.Dims()
		kc := mat.NewDense(r, m.n, nil)
		linalg.Mul(kc, phi, fv.phi.T())
		return kc, nil
	}
	kc, err := kernel.CrossGram(x, fv.x, fv.kern)
	if err != nil {
		return nil, err
	}
	if err := fv.center.CenterCross(kc); err != nil {
		return nil, err
	}
	return kc, nil
}
