// Package fuzz drives the public model APIs (kpca, ppca, rkm, kmvda) with
// random call orders, field changes and data, and fails on any panic: bad
// input and misuse must come back as errors.
package fuzz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kmvda"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/models/ppca"
	"github.com/kdual/kdual/models/rkm"
)

// script reads operations from the fuzzer's bytes.
type script struct {
	b []byte
	i int
}

func (s *script) next(n int) int {
	if s.i >= len(s.b) || n <= 0 {
		return 0
	}
	v := int(s.b[s.i]) % n
	s.i++
	return v
}

func (s *script) done() bool { return s.i >= len(s.b) }

var odd = []float64{0, -1, 1, 2.5, 1e-300, 1e300, math.NaN(), math.Inf(1)}

func (s *script) float() float64 { return odd[s.next(len(odd))] }

func (s *script) int() int { return []int{-1, 0, 1, 2, 3, 5, 40}[s.next(7)] }

// data returns an n×d matrix (sometimes with a NaN, sometimes empty).
func (s *script) data(r *rand.Rand) *mat.Dense {
	n, d := []int{0, 1, 2, 6, 12}[s.next(5)], []int{0, 1, 3}[s.next(3)]
	if n == 0 || d == 0 {
		return &mat.Dense{}
	}
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	if s.next(6) == 0 {
		x.Set(0, 0, math.NaN())
	}
	return x
}

func (s *script) kernel() kernel.Kernel {
	return kernel.Kernel{Kind: kernel.Kind(s.next(6) - 1), Sigma: s.float(), Degree: s.int(), Gamma: s.float()}
}

func run(t *testing.T, b []byte) {
	s := &script{b: b}
	r := rand.New(rand.NewPCG(uint64(len(b)), 7))
	kp := &kpca.KPCA{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Components: 2}
	pp := &ppca.Primal{Q: 1}
	pd := &ppca.Dual{Q: 1}
	rk := &rkm.Model{Components: 1, Views: []rkm.View{{Kernel: kernel.Kernel{Kind: kernel.Linear}}}}
	kv := &kmvda.Model{}
	for steps := 0; !s.done() && steps < 64; steps++ {
		x := s.data(r)
		switch s.next(24) {
		case 0:
			_ = kp.Fit(x)
		case 1:
			kp.Components = s.int()
		case 2:
			kp.Kernel = s.kernel()
		case 3:
			kp.Solver = []kpca.Solver{nil, kpca.Eigen{}, kpca.Eigen{Solver: eig.DenseSolver{}}, kpca.Eigen{Solver: eig.Lanczos{Tol: s.float()}},
				kpca.Eigen{Solver: eig.Randomized{Tol: s.float()}}, kpca.LBFGS{Tol: s.float(), MaxIter: s.int()},
				kpca.DCA{Loss: kpca.Loss{Kind: kpca.LossKind(s.next(8)), Param: s.float()}}}[s.next(7)]
		case 4:
			_, _ = kp.Transform(x)
		case 5:
			_, _ = kp.TransformGram(x)
		case 6:
			_, _ = kp.Eigenvalues()
			_, _ = kp.Scores()
			_, _ = kp.Dual()
			_ = kp.Info()
		case 7:
			kp.NoCenter, kp.Operator = s.next(2) == 0, eig.OperatorKind(s.next(5))
		case 8:
			kp.FitInverse, kp.Alpha = s.next(2) == 0, s.float()
			if s.next(2) == 0 {
				ik := s.kernel()
				kp.InverseKernel = &ik
			} else {
				kp.InverseKernel = nil
			}
		case 9:
			_, _ = kp.InverseTransform(x)
		case 10:
			g := mat.NewSymDense(max(1, s.int()), nil)
			_ = kp.FitGram(g)
		case 11:
			_ = pp.Fit(x)
			_, _ = pp.W()
			_, _ = pp.Mean()
		case 12:
			pp.Q, pp.Sigma2 = s.int(), s.float()
			pd.Q, pd.Sigma2 = s.int(), s.float()
		case 13:
			_, _ = pp.Transform(x)
			_, _ = pp.InverseTransform(x)
			_, _ = pp.ExplainedVariance()
			_, _ = pp.PosteriorCov()
		case 14:
			pd.Kernel = s.kernel()
			_ = pd.Fit(x)
		case 15:
			_, _ = pd.Transform(x)
			_, _ = pd.Sample(s.int(), 1)
			_, _ = pd.A()
			_, _ = pd.Eigenvalues()
		case 16:
			_, _ = pd.Generate(x)
			_, _ = pd.Reconstruct(x)
			_, _, _ = pd.PreImage(x, s.int())
		case 17:
			y := s.data(r)
			_ = rk.Fit([]*mat.Dense{x, y}[:1+s.next(2)])
		case 18:
			rk.Components = s.int()
			rk.Setting, rk.Training = rkm.Setting(s.next(4)), rkm.Training(s.next(3))
			rk.Views = append(rk.Views[:0], rkm.View{Kernel: s.kernel()})
		case 19:
			_, _ = rk.H()
			_, _ = rk.Gamma()
			_, _ = rk.U(s.int())
			_, _ = rk.Infer(s.int(), []*mat.Dense{x})
			_ = rk.Info().Setting
		case 20:
			_, _ = rkm.Forecast(rk, []float64{1, 2, 3, 4}, s.int(), s.int())
			_, _ = rkm.Forecast(nil, nil, s.int(), s.int())
		case 21:
			labels := make([]int, 0, 12)
			rows, _ := x.Dims()
			for i := 0; i < rows; i++ {
				labels = append(labels, s.next(3))
			}
			_ = kv.Fit([]*mat.Dense{x, s.data(r)}, [][]int{labels, labels})
		case 22:
			kv.Kind, kv.Sigma, kv.Dim, kv.Reg, kv.Features = kmvda.Kind(s.next(4)), s.float(), s.int(), s.float(), s.int()
		case 23:
			_, _ = kv.Transform(s.int(), x)
			_, _ = kv.Eigenvalues()
			_ = kv.Info()
		}
	}
}

// FuzzModels: go test -fuzz FuzzModels ./models/fuzz explores further; the
// seeds below and TestModelsDoNotPanic run in every go test.
func FuzzModels(f *testing.F) {
	for _, seed := range seeds() {
		f.Add(seed)
	}
	f.Fuzz(run)
}

func seeds() [][]byte {
	out := [][]byte{{0, 4, 1, 4}, {0, 1, 2, 4, 6, 5, 9}, {11, 13, 12, 11, 13}, {14, 15, 16, 12, 14, 15}, {17, 18, 17, 19, 20}, {21, 22, 21, 23}}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		b := make([]byte, 40)
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		out = append(out, b)
	}
	return out
}

// Two hundred random call sequences and the hand-made seeds, in go test.
func TestModelsDoNotPanic(t *testing.T) {
	for _, b := range seeds() {
		run(t, b)
	}
}
