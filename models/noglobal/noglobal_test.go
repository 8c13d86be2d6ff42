package noglobal

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	gblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	glapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kmvda"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/models/ppca"
	"github.com/kdual/kdual/models/rkm"
)

// Every method of these panics (a nil embedded interface): a call that
// reaches gonum's globals fails the test with its stack.
type (
	poisoned64     struct{ blas.Float64 }
	poisoned32     struct{ blas.Float32 }
	poisonedLAPACK struct{ lapack.Float64 }
)

// noGlobals runs f with the poisoned globals installed, and gonum's own
// back afterwards.
func noGlobals(t *testing.T, name string, f func() error) {
	t.Helper()
	blas64.Use(poisoned64{})
	blas32.Use(poisoned32{})
	lapack64.Use(poisonedLAPACK{})
	defer func() {
		blas64.Use(gblas.Implementation{})
		blas32.Use(gblas.Implementation{})
		lapack64.Use(glapack.Implementation{})
	}()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s reached gonum's global BLAS or LAPACK: %v\n%s", name, r, debug.Stack())
			}
		}()
		err = f()
	}()
	require.NoError(t, err, name)
}

func data(n, d int, seed uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64()+float64(i%3))
		}
	}
	return x
}

// Kernel PCA: every solver, every operator, float32 products, Nyström
// (float64 and float32) and random features, transform, inverse transform,
// save and load.
func TestKPCA(t *testing.T) {
	x := data(300, 6, 1)
	g := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	type fit struct {
		name string
		m    kpca.KPCA
	}
	fits := []fit{
		{"dense", kpca.KPCA{Solver: kpca.Eigen{Solver: eig.DenseSolver{}}}},
		{"lanczos", kpca.KPCA{Solver: kpca.Eigen{Solver: eig.Lanczos{}}}},
		{"block", kpca.KPCA{Solver: kpca.Eigen{Solver: eig.BlockKrylov{}}}},
		{"randomized", kpca.KPCA{Solver: kpca.Eigen{Solver: eig.Randomized{}}}},
		{"auto", kpca.KPCA{}},
		{"lbfgs", kpca.KPCA{Solver: kpca.LBFGS{}}},
		{"dca huber1", kpca.KPCA{Solver: kpca.DCA{Loss: kpca.Loss{Kind: kpca.Huber1, Param: 0.6, Relative: true}}}},
		{"dca eps2", kpca.KPCA{Solver: kpca.DCA{Loss: kpca.Loss{Kind: kpca.Eps2, Param: 0.01}}}},
		{"float64", kpca.KPCA{Operator: eig.OperatorFloat64, Solver: kpca.Eigen{Solver: eig.BlockKrylov{Tol: 1e-8}}}},
		{"float32", kpca.KPCA{Operator: eig.OperatorFloat32, Solver: kpca.Eigen{Solver: eig.BlockKrylov{Tol: 1e-4}}}},
		{"matrix-free", kpca.KPCA{Operator: eig.OperatorMatrixFree, Solver: kpca.Eigen{Solver: eig.BlockKrylov{Tol: 1e-6}}}},
		{"float32 products", kpca.KPCA{Operator: eig.OperatorMatrixFree, Products: 1, Solver: kpca.Eigen{Solver: eig.BlockKrylov{Tol: 1e-4}}}},
		{"nystrom", kpca.KPCA{Approx: approx.Nystrom{Rank: 60, Seed: 2}}},
		{"nystrom float32", kpca.KPCA{Approx: approx.Nystrom{Rank: 60, Seed: 2, Float32: true}}},
		{"rff", kpca.KPCA{Approx: approx.RFF{Features: 80, Seed: 2}}},
		{"inverse", kpca.KPCA{FitInverse: true, Alpha: 0.1}},
		{"laplace", kpca.KPCA{Kernel: kernel.Kernel{Kind: kernel.Laplace, Sigma: 3}}},
		{"linear", kpca.KPCA{Kernel: kernel.Kernel{Kind: kernel.Linear}}},
	}
	for _, c := range fits {
		m := c.m
		m.Components = 3
		if m.Kernel.Kind == 0 && m.Kernel.Sigma == 0 {
			m.Kernel = g
		}
		noGlobals(t, "kpca "+c.name, func() error {
			if err := m.Fit(x); err != nil {
				return err
			}
			z, err := m.Transform(x.Slice(0, 20, 0, 6))
			if err != nil {
				return err
			}
			if c.m.FitInverse {
				if _, err := m.InverseTransform(z); err != nil {
					return err
				}
			}
			var buf bytes.Buffer
			if err := m.Save(&buf); err != nil {
				return err
			}
			back, err := kpca.Load(bytes.NewReader(buf.Bytes()))
			if err != nil {
				return err
			}
			_, err = back.Transform(x.Slice(0, 5, 0, 6))
			return err
		})
		vals, err := m.Eigenvalues()
		require.NoError(t, err, c.name)
		require.False(t, math.IsNaN(vals[0]), c.name)
	}
}

// Multi-view RKMs (primal and dual, eig and Stiefel) and forecasting;
// kernel MvDA (linear, RBF, random features); probabilistic PCA in dual
// and primal form with reconstructions and samples.
func TestOtherModels(t *testing.T) {
	series := make([]float64, 200)
	for i := range series {
		series[i] = math.Sin(0.2*float64(i)) + 0.3*math.Sin(0.05*float64(i))
	}
	xs, ys, err := rkm.LagEmbed(series[:180], 6)
	require.NoError(t, err)
	for _, setting := range []rkm.Setting{rkm.Primal, rkm.Dual} {
		for _, training := range []rkm.Training{rkm.Eig, rkm.Stiefel} {
			name := fmt.Sprintf("rkm %v %v", setting, training)
			noGlobals(t, name, func() error {
				m := &rkm.Model{Views: []rkm.View{{Features: rkm.Identity{}}, {Features: rkm.Identity{}}}, Components: 2,
					Setting: setting, Training: training}
				if err := m.Fit([]*mat.Dense{xs, ys}); err != nil {
					return err
				}
				_, err := rkm.Forecast(m, series[:180], 6, 5)
				return err
			})
		}
	}
	v0 := data(40, 5, 4)
	v1 := data(40, 5, 5)
	labels := make([]int, 40)
	for i := range labels {
		labels[i] = i % 3
	}
	for _, kind := range []kmvda.Kind{kmvda.Linear, kmvda.RBF, kmvda.RFF} {
		noGlobals(t, fmt.Sprintf("kmvda %v", kind), func() error {
			m := &kmvda.Model{Kind: kind, Sigma: 3, Features: 64, Dim: 2}
			if err := m.Fit([]*mat.Dense{v0, v1}, [][]int{labels, labels}); err != nil {
				return err
			}
			_, err := m.Transform(1, v1)
			return err
		})
	}
	x := data(120, 4, 6)
	for _, solver := range []eig.Solver{nil, eig.Lanczos{}} {
		noGlobals(t, fmt.Sprintf("ppca dual %T", solver), func() error {
			m := &ppca.Dual{Q: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Solver: solver}
			if err := m.Fit(x); err != nil {
				return err
			}
			h, err := m.Transform(x.Slice(0, 10, 0, 4))
			if err != nil {
				return err
			}
			if _, err := m.Reconstruct(h); err != nil {
				return err
			}
			if solver == nil {
				_, err = m.Sample(5, 1)
			}
			return err
		})
	}
	noGlobals(t, "ppca primal", func() error {
		m := &ppca.Primal{Q: 2}
		return m.Fit(x)
	})
}
