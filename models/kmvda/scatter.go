package kmvda

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// The scatter matrices of the primal and dual forms and the generalised
// eigenproblem D z = λ(S + εR)z.

// primalScatters builds D and S in feature space (p = Σ_j d_j).
func primalScatters(feats []*mat.Dense, labels [][]int, classOf map[int]int, sizes []float64) (d, s *mat.SymDense) {
	c := len(sizes)
	p, n := 0, 0
	offs := make([]int, len(feats))
	for j, f := range feats {
		offs[j] = p
		r, dj := f.Dims()
		p += dj
		n += r
	}
	// Class sums, scaled by 1/√n_i, as the rows of sc (c×p); t the total.
	sc := mat.NewDense(c, p, nil)
	t := make([]float64, p)
	s = mat.NewSymDense(p, nil)
	for j, f := range feats {
		r, dj := f.Dims()
		for k := 0; k < r; k++ {
			row := sc.RawRowView(classOf[labels[j][k]])[offs[j] : offs[j]+dj]
			for a, x := range f.RawRowView(k) {
				row[a] += x
				t[offs[j]+a] += x
			}
		}
		// blockdiag(X_jᵀX_j).
		block := mat.NewSymDense(dj, nil)
		linalg.SymOuterK(block, 1, f.T())
		for a := 0; a < dj; a++ {
			for b := a; b < dj; b++ {
				s.SetSym(offs[j]+a, offs[j]+b, block.At(a, b))
			}
		}
	}
	for i := 0; i < c; i++ {
		row := sc.RawRowView(i)
		f := 1 / math.Sqrt(sizes[i])
		for a := range row {
			row[a] *= f
		}
	}
	between := mat.NewSymDense(p, nil)
	linalg.SymOuterK(between, 1, sc.T())
	d = mat.NewSymDense(p, nil)
	d.CopySym(between)
	tv := mat.NewVecDense(p, t)
	linalg.SymRankOne(d, d, -1/float64(n), tv)
	between.ScaleSym(-1, between)
	s.AddSym(s, between)
	return d, s
}

// dualScatters builds D = K H^D K and S = K H^S K for K = blockdiag(K_j).
func dualScatters(ks []*mat.SymDense, labels [][]int, classOf map[int]int, sizes []float64) (d, s *mat.SymDense) {
	c := len(sizes)
	n := 0
	for _, k := range ks {
		n += k.SymmetricDim()
	}
	// KE/√n_i (n×c) and Ke (n).
	ke := mat.NewDense(n, c, nil)
	kt := make([]float64, n)
	s = mat.NewSymDense(n, nil)
	off := 0
	for j, k := range ks {
		nj := k.SymmetricDim()
		for a := 0; a < nj; a++ {
			row := ke.RawRowView(off + a)
			for b := 0; b < nj; b++ {
				v := k.At(a, b)
				row[classOf[labels[j][b]]] += v
				kt[off+a] += v
			}
		}
		// blockdiag(K_j K_j) = blockdiag(K_j K_jᵀ): one dsyrk (gonum has no
		// BLAS path for a product of two SymDense).
		kk := mat.NewSymDense(nj, nil)
		linalg.SymOuterK(kk, 1, linalg.CopyOf(k))
		for a := 0; a < nj; a++ {
			for b := a; b < nj; b++ {
				s.SetSym(off+a, off+b, kk.At(a, b))
			}
		}
		off += nj
	}
	for i := 0; i < c; i++ {
		f := 1 / math.Sqrt(sizes[i])
		for a := 0; a < n; a++ {
			ke.Set(a, i, ke.At(a, i)*f)
		}
	}
	between := mat.NewSymDense(n, nil)
	linalg.SymOuterK(between, 1, ke)
	d = mat.NewSymDense(n, nil)
	d.CopySym(between)
	linalg.SymRankOne(d, d, -1/float64(n), mat.NewVecDense(n, kt))
	between.ScaleSym(-1, between)
	s.AddSym(s, between)
	return d, s
}

// primalTrace is tr(S) of the primal problem on features feats.
func primalTrace(feats []*mat.Dense, labels [][]int, classOf map[int]int, sizes []float64) float64 {
	tr := 0.0
	for j, f := range feats {
		r, dj := f.Dims()
		class := make([][]float64, len(sizes))
		for k := 0; k < r; k++ {
			c := classOf[labels[j][k]]
			if class[c] == nil {
				class[c] = make([]float64, dj)
			}
			for a, x := range f.RawRowView(k) {
				tr += x * x
				class[c][a] += x
			}
		}
		for c, v := range class {
			for _, x := range v {
				tr -= x * x / sizes[c]
			}
		}
	}
	return tr
}

func blockDiag(ks []*mat.SymDense) *mat.SymDense {
	n := 0
	for _, k := range ks {
		n += k.SymmetricDim()
	}
	out := mat.NewSymDense(n, nil)
	off := 0
	for _, k := range ks {
		nj := k.SymmetricDim()
		for a := 0; a < nj; a++ {
			for b := a; b < nj; b++ {
				out.SetSym(off+a, off+b, k.At(a, b))
			}
		}
		off += nj
	}
	return out
}

// solveGEP returns the top l solutions of D z = λ (S + ε·R) z (R = I when
// ridge is nil) with ε = reg·scale, scale the mean diagonal of the
// within-class scatter (of the primal problem, for the RFF dual form).
func solveGEP(solver eig.Solver, d, s, ridge *mat.SymDense, l int, reg, scale float64) (*mat.Dense, []float64, float64, status.Status, error) {
	size := s.SymmetricDim()
	if scale == 0 {
		tr := 0.0
		for i := 0; i < size; i++ {
			tr += s.At(i, i)
		}
		scale = tr / float64(size)
	}
	if !(scale > 0) {
		return nil, nil, 0, status.Status{}, invalidf("the within-class scatter is zero")
	}
	switch {
	case reg == 0:
		reg = 1e-3
	case reg < 0:
		reg = math.Sqrt(2.2e-16)
	}
	eps := reg * scale
	a := mat.NewSymDense(size, nil)
	if ridge == nil {
		a.CopySym(s)
		for i := 0; i < size; i++ {
			a.SetSym(i, i, a.At(i, i)+eps)
		}
	} else {
		a.CopySym(ridge)
		a.ScaleSym(eps, a)
		a.AddSym(a, s)
	}
	var ch linalg.Cholesky
	if err := ch.Factorize(a); err != nil {
		return nil, nil, eps, status.Status{}, fmt.Errorf("kmvda: S + εI is not positive definite (ε = %g): %w", eps, err)
	}
	u := ch.UTo().RawTriangular()
	// C = U^{-T} D U^{-1}.
	cm := linalg.CopyOf(d)
	craw := cm.RawMatrix()
	linalg.B64.Trsm(blas.Left, blas.Trans, 1, u, craw)
	linalg.B64.Trsm(blas.Right, blas.NoTrans, 1, u, craw)
	op, err := eig.NewDense(linalg.SymPart(cm))
	if err != nil {
		return nil, nil, eps, status.Status{}, err
	}
	if solver == nil {
		solver = eig.Auto{}
	}
	res, err := solver.Solve(op, l)
	if err != nil {
		return nil, nil, eps, status.Status{}, fmt.Errorf("kmvda: %w", err)
	}
	z := linalg.CopyOf(res.Vectors)
	linalg.B64.Trsm(blas.Left, blas.NoTrans, 1, u, z.RawMatrix())
	return z, res.Values, eps, res.Status, nil
}
