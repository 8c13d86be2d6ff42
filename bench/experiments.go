package bench

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
)

// RobustRow is one noise level of the robustness experiment (Table 4 of the
// dual-KPCA paper): mean test reconstruction MSE over the seeds.
type RobustRow struct {
	Tau    float64 `json:"tau"`
	Square float64 `json:"square"`
	Huber2 float64 `json:"huber2"`
	Huber1 float64 `json:"huber1"`
	// Feature-space test reconstruction error k(x,x) − ‖z(x)‖², which
	// needs no pre-image: square, H²κ, H¹κ.
	FeatureSquare float64 `json:"feature_square"`
	FeatureHuber2 float64 `json:"feature_huber2"`
	FeatureHuber1 float64 `json:"feature_huber1"`
	Seeds         int     `json:"seeds"`
}

// RobustIris runs Table 4's setting: Iris, a clean 20% test split, a
// fraction omega of the training rows replaced by bᵢxᵢ with bᵢ ~ N(0, τ²),
// the kernel exp(−‖z−y‖²/2), s components, the square loss against H²κ
// (κ = 0.8κ_max) and H¹κ (κ = 0.6κ_max) by DCA; pre-images by kernel ridge
// regression (α = 1). MSE = mean over test points of ‖x − x̂‖².
// It stops with ctx (between fits, and inside each through FitContext)
// with an error wrapping status.ErrStopped.
func RobustIris(ctx context.Context, taus []float64, seeds, s int, omega float64) ([]RobustRow, error) {
	iris, err := dataset.Iris()
	if err != nil {
		return nil, err
	}
	n, d := iris.X.Dims()
	nTest := n / 5
	rows := make([]RobustRow, 0, len(taus))
	losses := []kpca.Loss{{Kind: kpca.Square}, {Kind: kpca.Huber2, Param: 0.8, Relative: true}, {Kind: kpca.Huber1, Param: 0.6, Relative: true}}
	for _, tau := range taus {
		row := RobustRow{Tau: tau, Seeds: seeds}
		for seed := 1; seed <= seeds; seed++ {
			rng := dataset.NewRand(uint64(seed))
			perm := rng.Perm(n)
			test := mat.NewDense(nTest, d, nil)
			train := mat.NewDense(n-nTest, d, nil)
			for i, p := range perm {
				if i < nTest {
					test.SetRow(i, iris.X.RawRowView(p))
				} else {
					train.SetRow(i-nTest, iris.X.RawRowView(p))
				}
			}
			nBad := int(math.Floor(omega * float64(n-nTest)))
			for _, i := range rng.Perm(n - nTest)[:nBad] {
				b := tau * rng.NormFloat64()
				r := train.RawRowView(i)
				for j := range r {
					r[j] *= b
				}
			}
			for li, loss := range losses {
				m := &kpca.KPCA{Components: s, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, NoCenter: true,
					Solver: kpca.DCA{Loss: loss}, FitInverse: true}
				if loss.Kind == kpca.Square {
					m.Solver = kpca.Eigen{Solver: eig.DenseSolver{}}
				}
				if err := m.FitContext(ctx, train); err != nil {
					return nil, fmt.Errorf("bench: robust τ=%g seed %d: %w", tau, seed, err)
				}
				mse, err := reconstructionMSE(m, test)
				if err != nil {
					return nil, err
				}
				fe, err := featureError(m, test)
				if err != nil {
					return nil, err
				}
				switch li {
				case 0:
					row.Square += mse / float64(seeds)
					row.FeatureSquare += fe / float64(seeds)
				case 1:
					row.Huber2 += mse / float64(seeds)
					row.FeatureHuber2 += fe / float64(seeds)
				case 2:
					row.Huber1 += mse / float64(seeds)
					row.FeatureHuber1 += fe / float64(seeds)
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// featureError is the mean over the rows x of k(x,x) − ‖z(x)‖² = 1 − ‖z‖²
// for the Gaussian kernel (uncentred model): the squared distance from φ(x)
// to the learned subspace, whose directions are orthonormal.
func featureError(m *kpca.KPCA, x *mat.Dense) (float64, error) {
	z, err := m.Transform(x)
	if err != nil {
		return 0, err
	}
	r, _ := z.Dims()
	t := 0.0
	for i := 0; i < r; i++ {
		n := mat.Norm(z.RowView(i), 2)
		t += 1 - n*n
	}
	return t / float64(r), nil
}

func reconstructionMSE(m *kpca.KPCA, x *mat.Dense) (float64, error) {
	z, err := m.Transform(x)
	if err != nil {
		return 0, err
	}
	xr, err := m.InverseTransform(z)
	if err != nil {
		return 0, err
	}
	var diff mat.Dense
	diff.Sub(xr, x)
	r, _ := x.Dims()
	f := mat.Norm(&diff, 2)
	return f * f / float64(r), nil
}

// SparseRow is one ε of the sparsity experiment (Fig. 4 of the paper).
type SparseRow struct {
	Eps       float64 `json:"eps"`
	ZeroRows  float64 `json:"zero_rows"` // fraction of zero rows of H
	Error     float64 `json:"error"`     // kernel-space reconstruction error
	ErrorRate float64 `json:"error_ratio"`
	// Captured is the variance the s directions capture, ‖G_c·proj‖²_F, as
	// a fraction of the square loss's Σ_{i≤s} λ_i.
	Captured float64 `json:"captured"`
}

// SparseRows runs Fig. 4's setting: X standard normal n×d, the Gaussian
// kernel with the median bandwidth, s components, ℓ²_ε by DCA over the ε
// grid. The reconstruction error is that of the training points in feature
// space, Σᵢ‖φ_c(xᵢ) − P φ_c(xᵢ)‖² = Tr G_c − ‖G_c·proj‖²_F (the learned
// directions are orthonormal), and the ratio is to the square loss's.
// It stops with ctx (inside each fit) with an error wrapping
// status.ErrStopped.
func SparseRows(ctx context.Context, n, d, s int, eps []float64, seed uint64) ([]SparseRow, error) {
	x, err := dataset.StandardNormal(n, d, seed)
	if err != nil {
		return nil, err
	}
	sigma, err := kernel.MedianSigma(x)
	if err != nil {
		return nil, err
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
	g, err := kernel.Gram(x, k)
	if err != nil {
		return nil, err
	}
	if _, err := linalg.CenterKernelInPlace(g); err != nil {
		return nil, err
	}
	trace := 0.0
	for i := 0; i < n; i++ {
		trace += g.At(i, i)
	}
	var base float64
	out := make([]SparseRow, 0, len(eps)+1)
	for i, e := range append([]float64{0}, eps...) {
		m := &kpca.KPCA{Components: s, NoCenter: true, Solver: kpca.DCA{Loss: kpca.Loss{Kind: kpca.Eps2, Param: e}}}
		gc := mat.NewSymDense(n, nil)
		gc.CopySym(g)
		if err := m.FitGramContext(ctx, gc); err != nil {
			return nil, fmt.Errorf("bench: sparse ε=%g: %w", e, err)
		}
		scores, _ := m.Scores()
		sn := mat.Norm(scores, 2)
		recon := trace - sn*sn
		h, _ := m.Dual()
		zero := 0
		for r := 0; r < n; r++ {
			if mat.Norm(h.RowView(r), 2) == 0 {
				zero++
			}
		}
		if i == 0 {
			base = recon
			if len(eps) > 0 && eps[0] == 0 {
				continue
			}
		}
		out = append(out, SparseRow{Eps: e, ZeroRows: float64(zero) / float64(n), Error: recon, ErrorRate: recon / base,
			Captured: (trace - recon) / (trace - base)})
	}
	return out, nil
}
