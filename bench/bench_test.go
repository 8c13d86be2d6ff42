package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/eig/eigtest"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/status"
)

func TestRandSymSpectrum(t *testing.T) {
	a, lambda, err := RandSym(60, 3)
	require.NoError(t, err)
	op, err := eig.NewDense(a)
	require.NoError(t, err)
	res, err := eig.DenseSolver{}.Solve(op, 60)
	require.NoError(t, err)
	for i, l := range lambda {
		require.InDelta(t, l, res.Values[i], 1e-13)
	}
	_, _, err = RandSym(0, 1)
	require.Error(t, err)
}

func TestEtaAndEigenEta(t *testing.T) {
	require.InDelta(t, 0.1, Eta(-0.9, -1), 1e-15)
	p := &KPCAProblem{Data: "randn", N: 100, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median"}
	b, err := p.Build()
	require.NoError(t, err)
	// The converged eigenpairs score η ≈ 0; a poor approximation does not.
	res, err := eig.DenseSolver{}.Solve(b.Op, 3)
	require.NoError(t, err)
	eta, err := EigenEta(b.Op, res, p.DOpt)
	require.NoError(t, err)
	require.Less(t, eta, 1e-12)
	res.Values[0] *= 0.5
	eta, err = EigenEta(b.Op, res, p.DOpt)
	require.NoError(t, err)
	require.Greater(t, eta, 1e-3)
	require.False(t, math.IsNaN(eta))
	_, err = (&KPCAProblem{Data: "nope", N: 10, S: 2, Kernel: "gaussian"}).Build()
	require.Error(t, err)
	// Seed 0 is the documented default seed 1: the same problem.
	p0 := &KPCAProblem{Data: "randn", N: 100, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median"}
	p1 := &KPCAProblem{Data: "randn", N: 100, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median", Seed: 1}
	p2 := &KPCAProblem{Data: "randn", N: 100, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median", Seed: 2}
	for _, q := range []*KPCAProblem{p0, p1, p2} {
		_, err := q.Build()
		require.NoError(t, err)
	}
	require.Equal(t, p1.DOpt, p0.DOpt)
	require.NotEqual(t, p1.DOpt, p2.DOpt)
}

func TestTablesTinyTask(t *testing.T) {
	rows, err := Tables([]TableTask{{Name: "tiny", Data: "randn", N: 150}}, "laplace", []float64{1e-2, 1e-4}, 200, 200, 1, io.Discard)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.SVD, "the full eigendecomposition ran")
		for _, res := range []KPCAResult{r.Ours, r.Lanczos, r.Block} {
			require.NotNil(t, res.Seconds, res.Solver)
			require.Less(t, res.Eta, r.Delta, res.Solver)
		}
	}
	var buf strings.Builder
	WriteTables(&buf, rows)
	require.Equal(t, 4, strings.Count(buf.String(), "\n"))
	require.Contains(t, buf.String(), "| tiny | 150 | laplace | 0.01 |")
}

// Every timed decomposition, on both of gonum's LAPACKs, returns a result
// whose residual is at rounding level; bad names are errors.
func TestLAPACKTimingsCheckTheirResults(t *testing.T) {
	for _, impl := range []string{"openblas", "gonum"} {
		res, err := LAPACK(60, LAPACKOps, impl, 3)
		require.NoError(t, err)
		require.Len(t, res, len(LAPACKOps))
		for i, r := range res {
			require.Equal(t, LAPACKOps[i], r.Op)
			require.Equal(t, impl, r.Impl)
			require.Less(t, r.Check, 1e-12, "%s on %s", r.Op, impl)
		}
	}
	_, err := LAPACK(60, []string{"qr"}, "netlib", 1)
	require.Error(t, err)
	_, err = LAPACK(60, []string{"schur"}, "openblas", 1)
	require.Error(t, err)
	_, err = LAPACK(0, []string{"qr"}, "openblas", 1)
	require.Error(t, err)
}

// The benchmark's full-spectrum reference solver runs eig's shared suite.
func TestFullDenseSharedSuite(t *testing.T) {
	eigtest.Run(t, eigtest.Solver{Name: "bench-full-dense", New: func(float64) eig.Solver { return fullDense{} },
		MaxPasses: func(int, int, float64) int { return 1 }})
}

// RunEigen with repeats times the chosen setting that many times again: a
// median is reported, with the search's η and setting (the same as with
// one run, whose search run is the timed one).
func TestRunEigenRepeats(t *testing.T) {
	p := &KPCAProblem{Data: "randn", N: 300, D: 6, S: 4, Kernel: "laplace", Bandwidth: "paper", Seed: 1}
	b, err := p.Build()
	require.NoError(t, err)
	one, err := RunEigen(SearchBlock, p, b, 1e-3, 1)
	require.NoError(t, err)
	three, err := RunEigen(SearchBlock, p, b, 1e-3, 3)
	require.NoError(t, err)
	require.NotNil(t, three.Seconds)
	require.Positive(t, *three.Seconds)
	require.Less(t, three.Eta, 1e-3)
	require.Equal(t, one.Params, three.Params)
	require.Equal(t, one.Eta, three.Eta)
}

// ScoreOn reproduces each row's own η when it scores the answers on the
// operator they came from, scores a float32 run's answers on the float64
// matrix within δ, and Compare shows those columns and the float64 ratio.
func TestScoreOnAndCompareFloat64(t *testing.T) {
	p := &KPCAProblem{Data: "randn", N: 300, D: 6, S: 4, Kernel: "laplace", Bandwidth: "paper", Operator: "float32", Seed: 1}
	b, err := p.Build()
	require.NoError(t, err)
	require.Equal(t, "float32", p.Operator)
	var rows []KPCAResult
	for _, d := range []float64{1e-2, 1e-4} {
		r, err := RunEigen(SearchBlock, p, b, d, 1)
		require.NoError(t, err)
		require.NotNil(t, r.answer)
		rows = append(rows, r)
		r, err = RunLBFGS(p, b, d, 1, "")
		require.NoError(t, err)
		require.NotNil(t, r.answer)
		rows = append(rows, r)
	}
	require.NoError(t, ScoreOn(b.Op, p.DOpt, rows))
	for _, r := range rows {
		// Eigensolver rows were scored by the same pass; L-BFGS's η is
		// from its own running cost.
		require.InEpsilon(t, r.Eta, r.EtaOnFloat64, 1e-9, "%s δ = %g: the same operator, the same η", r.Solver, r.Delta)
	}
	p64 := *p
	p64.Operator = "float64"
	b64, err := p64.Build()
	require.NoError(t, err)
	require.NoError(t, ScoreOn(b64.Op, p64.DOpt, rows))
	for _, r := range rows {
		require.Less(t, r.EtaOnFloat64, r.Delta, "%s δ = %g", r.Solver, r.Delta)
		require.NotEqual(t, r.Eta, r.EtaOnFloat64, "another matrix, another η")
	}
	// Times set by hand (the runs above take milliseconds): at δ = 10⁻²
	// block 0.5 s and L-BFGS 0.6 s, on float64 1.25 s and 0.9 s.
	for i, v := range []float64{0.5, 0.6, 0.7, 0.8} {
		f64 := []float64{1.25, 0.9, 1.5, 1.6}[i]
		rows[i].Seconds, rows[i].Float64Seconds = &v, &f64
	}
	one := 1.0
	peers := &Report{Results: []KPCAResult{{Solver: "eigsh", Delta: 1e-2, Seconds: &one}, {Solver: "eigsh", Delta: 1e-4, Seconds: &one}}}
	var buf strings.Builder
	Compare(&buf, &Report{Problem: *p, Results: rows}, peers)
	out := buf.String()
	require.Contains(t, out, "kdual's operator: float32")
	require.Contains(t, out, "| float64 seconds | η on float64 |")
	require.Contains(t, out, "| 0.01 | peer | eigsh | 1.000 | 0.0e+00 | 0 | 0 | | |")
	require.Contains(t, out, fmt.Sprintf("| 0.01 | kdual | block | 0.500 | %.1e | %d | %d | 1.250 | %.1e |", rows[0].Eta, rows[0].Passes, rows[0].MatVecs, rows[0].EtaOnFloat64))
	require.Contains(t, out, "δ=0.01: kdual best block 0.500s, peer best eigsh 1.000s, kdual-best/peer-best 0.50; on float64: kdual best lbfgs 0.900s, ratio 0.90;")
	require.Contains(t, out, "δ=0.0001: kdual best block 0.700s, peer best eigsh 1.000s, kdual-best/peer-best 0.70; on float64: kdual best block 1.500s, ratio 1.50;")
	// Without float64 times, no such columns.
	buf.Reset()
	Compare(&buf, &Report{Problem: *p, Results: rows[:0]}, peers)
	require.NotContains(t, buf.String(), "η on float64")
}

// TolGrid runs from 10⁻¹ to 10⁻¹³ loosest first, 1, 2 and 5 times each
// power of ten (three a decade), and contains every decade.
func TestTolGrid(t *testing.T) {
	g := TolGrid()
	require.Len(t, g, 3*12+1)
	require.Equal(t, 0.1, g[0])
	require.InEpsilon(t, 1e-13, g[len(g)-1], 1e-15)
	for i := 1; i < len(g); i++ {
		require.Less(t, g[i], g[i-1], "the grid runs loosest first")
		r := g[i-1] / g[i]
		require.True(t, math.Abs(r-2) < 1e-12 || math.Abs(r-2.5) < 1e-12, "steps of 2 and 2.5: %g/%g", g[i-1], g[i])
	}
	for e := 1; e <= 13; e++ {
		require.InEpsilon(t, math.Pow(10, -float64(e)), g[3*(e-1)], 1e-15)
	}
}

// The block family runs the planner's block Krylov for the problem, its
// tolerance and seed replaced by the search's: above the size from which
// the planner checks after every block, the candidates do too; the
// Lanczos family is unchanged.
func TestSearchBlockRunsThePlanned(t *testing.T) {
	for _, n := range []int{300, 5000} {
		p := &KPCAProblem{Data: "randn", N: n, D: 6, S: 4, Kernel: "laplace", Operator: "float64", Seed: 7}
		plan, err := eig.PlanOperator(eig.PlanInput{N: n, D: 6, K: 4, Want: eig.OperatorFloat64})
		require.NoError(t, err)
		p.block = plan.Solver.(eig.BlockKrylov)
		solvers, params := SearchBlock.Settings(p)
		require.Len(t, solvers, len(TolGrid()))
		for i, s := range solvers {
			want := plan.Solver.(eig.BlockKrylov)
			want.Tol, want.Seed = TolGrid()[i], 7
			require.Equal(t, want, s)
			require.Equal(t, TolGrid()[i], params[i]["tol"])
		}
		require.Equal(t, n >= 4000, solvers[0].(eig.BlockKrylov).CheckEachBlock, "n = %d", n)
	}
	// Build keeps the planner's block Krylov.
	p := &KPCAProblem{Data: "randn", N: 300, D: 6, S: 4, Kernel: "laplace", Operator: "float64", Seed: 1}
	_, err := p.Build()
	require.NoError(t, err)
	plan, err := eig.PlanOperator(eig.PlanInput{N: 300, D: 6, K: 4, Want: eig.OperatorFloat64, NonNegative: true})
	require.NoError(t, err)
	require.Equal(t, plan.Solver, p.block)
	ls, _ := SearchLanczos.Settings(&KPCAProblem{Seed: 3})
	require.Equal(t, eig.Lanczos{Tol: 0.1, Seed: 3}, ls[0])
}

// eigenResidual measures ‖A·v − λ·v‖ over the decomposition's columns: zero
// for A's own eigenpairs, and the largest mismatch for another matrix's
// (diag(1, 5, 7)'s pairs against diag(1, 2, 3): 3 at the second, 4 at the
// third, the largest).
func TestEigenResidual(t *testing.T) {
	a := mat.NewDense(3, 3, []float64{1, 0, 0, 0, 2, 0, 0, 0, 3})
	b := mat.NewDense(3, 3, []float64{1, 0, 0, 0, 5, 0, 0, 0, 7})
	for _, c := range []struct {
		of   *mat.Dense
		want float64
	}{{a, 0}, {b, 4}} {
		var e mat.Eigen
		require.True(t, e.Factorize(c.of, mat.EigenRight))
		require.InDelta(t, c.want, eigenResidual(a, &e), 1e-12)
	}
	// A general matrix with complex eigenvalues: its own pairs, to rounding.
	r := mat.NewDense(3, 3, []float64{0, -1, 0.5, 1, 0, 0.25, 0, 0.5, 2})
	var e mat.Eigen
	require.True(t, e.Factorize(r, mat.EigenRight))
	require.Less(t, eigenResidual(r, &e), 1e-13)
}

// meanSq is the mean of the squared entrywise differences.
func TestMeanSq(t *testing.T) {
	a := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	b := mat.NewDense(2, 3, []float64{1, 0, 3, 4, 5, 9})
	require.InDelta(t, (4.0+9)/6, meanSq(a, b), 1e-15)
	require.Zero(t, meanSq(a, a))
}

// Compare lists every row of both sides per δ, largest δ first, then per
// δ the fastest of each side, their ratio, and the paper's speed-up
// (randomized SVD over L-BFGS); rows without seconds are listed but never
// the fastest.
func TestCompare(t *testing.T) {
	sec := func(v float64) *float64 { return &v }
	ours := &Report{Problem: KPCAProblem{Data: "randn", N: 100}, Results: []KPCAResult{
		{Solver: "lbfgs", Delta: 1e-2, Seconds: sec(1.0), Eta: 5e-3, Passes: 7, MatVecs: 14},
		{Solver: "lanczos", Delta: 1e-2, Seconds: sec(0.5)},
		{Solver: "block", Delta: 1e-2},
		{Solver: "lbfgs", Delta: 1e-4, Seconds: sec(3.0)},
	}}
	peers := &Report{Results: []KPCAResult{
		{Solver: "randomized_svd", Delta: 1e-2, Seconds: sec(2.0)},
		{Solver: "eigsh", Delta: 1e-2, Seconds: sec(1.5)},
		{Solver: "eigsh", Delta: 1e-4, Seconds: sec(6.0)},
	}}
	var b strings.Builder
	Compare(&b, ours, peers)
	out := b.String()
	require.Contains(t, out, "| 0.01 | kdual | lbfgs | 1.000 | 5.0e-03 | 7 | 14 |")
	require.Contains(t, out, "| 0.01 | kdual | block | - |")
	require.Contains(t, out, "δ=0.01: kdual best lanczos 0.500s, peer best eigsh 1.500s, kdual-best/peer-best 0.33; speed-up RSVD/L-BFGS (the paper's) 2.00")
	require.Contains(t, out, "δ=0.0001: kdual best lbfgs 3.000s, peer best eigsh 6.000s, kdual-best/peer-best 0.50;")
	require.Less(t, strings.Index(out, "| 0.01 |"), strings.Index(out, "| 0.0001 |"), "the largest δ first")
}

// Of equally fast solvers Compare names the first listed the fastest, on
// each side and on float64 alike.
func TestCompareTies(t *testing.T) {
	sec := func(v float64) *float64 { return &v }
	ours := &Report{Problem: KPCAProblem{Data: "randn", N: 100, Operator: "float32"}, Results: []KPCAResult{
		{Solver: "lanczos", Delta: 1e-2, Seconds: sec(0.5), Float64Seconds: sec(0.8)},
		{Solver: "block", Delta: 1e-2, Seconds: sec(0.5), Float64Seconds: sec(0.8)},
	}}
	peers := &Report{Results: []KPCAResult{
		{Solver: "eigsh", Delta: 1e-2, Seconds: sec(1.0)},
		{Solver: "lobpcg", Delta: 1e-2, Seconds: sec(1.0)},
	}}
	var b strings.Builder
	Compare(&b, ours, peers)
	require.Contains(t, b.String(), "δ=0.01: kdual best lanczos 0.500s, peer best eigsh 1.000s, kdual-best/peer-best 0.50; on float64: kdual best lanczos 0.800s, ratio 0.80;")
}

// RunLBFGS's startOut receives the run's start H₀ — exactly the matrix
// kpca.SolveDual starts from at the problem's seed, n×s little-endian
// float64 row-major — with one repeat as with several; without a path
// nothing is written.
func TestRunLBFGSStartOut(t *testing.T) {
	p := &KPCAProblem{Data: "randn", N: 120, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median", Operator: "float64", Seed: 7}
	b, err := p.Build()
	require.NoError(t, err)
	var want []float64
	_, err = kpca.SolveDual(b.Op, p.S, kpca.DualOptions{Seed: p.Seed,
		StartOut: func(h0 *mat.Dense) { want = append([]float64(nil), h0.RawMatrix().Data...) }})
	require.NoError(t, err)
	require.Len(t, want, p.N*p.S)
	dir := t.TempDir()
	for _, repeat := range []int{1, 2} {
		path := filepath.Join(dir, fmt.Sprintf("h0-%d", repeat))
		r, err := RunLBFGS(p, b, 1e-3, repeat, path)
		require.NoError(t, err)
		require.Less(t, r.Eta, 1e-3)
		raw, err := os.ReadFile(path)
		require.NoError(t, err, "repeat %d", repeat)
		got := make([]float64, len(raw)/8)
		require.NoError(t, binary.Read(bytes.NewReader(raw), binary.LittleEndian, got))
		require.Equal(t, want, got, "repeat %d", repeat)
	}
	_, err = RunLBFGS(p, b, 1e-3, 1, "")
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}

// The synth1 problem's data is what its comment says: normal columns with
// variances 1/j (j = 1…d), centred — each column's sample variance within
// sampling error (four standard errors at n = 4000) of 1/j.
func TestSynth1Data(t *testing.T) {
	p := &KPCAProblem{Data: "synth1", N: 4000, D: 6, Seed: 2}
	x, err := p.data()
	require.NoError(t, err)
	r, c := x.Dims()
	require.Equal(t, [2]int{4000, 6}, [2]int{r, c})
	for j := 0; j < c; j++ {
		col := mat.Col(nil, j, x)
		mean, ss := 0.0, 0.0
		for _, v := range col {
			mean += v
		}
		require.InDelta(t, 0, mean/float64(r), 1e-12, "column %d is centred", j)
		for _, v := range col {
			ss += v * v
		}
		want := 1 / float64(j+1)
		require.InEpsilon(t, want, ss/float64(r-1), 4*math.Sqrt(2.0/float64(r)), "column %d", j)
	}
}

// RunPPCA with samples drawn and pre-imaged writes its plot and reports
// the samples; the toy data's plot is a PNG file.
func TestRunPPCASamplesPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toy.png")
	rep, err := RunPPCA(PPCAOptions{Data: "toy", Classes: "0,1", N: 20, Q: 1, Kernel: "rbf", Sigma: 2, Sample: 5, Seed: 1, Plot: path})
	require.NoError(t, err)
	require.NotNil(t, rep)
	require.Equal(t, 5, rep.Samples)
	require.Equal(t, path, rep.PlotPath)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\x89PNG")), "a PNG file")
}

// PlotScores draws with labels or without them (nil: one colour) and
// refuses fewer than two components or a label count other than the rows'.
func TestPlotScores(t *testing.T) {
	dir := t.TempDir()
	scores := mat.NewDense(4, 3, []float64{1, 2, 0, 3, 1, 0, -1, 0.5, 0, 2, -2, 0})
	for name, labels := range map[string][]string{"none": nil, "four": {"a", "b", "a", "c"}} {
		path := filepath.Join(dir, name+".png")
		require.NoError(t, PlotScores(path, scores, labels, name), name)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(b, []byte("\x89PNG")), name)
	}
	// Component 1 across, component 2 up: an SVG's tick labels show each
	// axis's range (here [0, 1] and [1000, 3000]).
	wide := mat.NewDense(3, 2, []float64{0, 1000, 0.5, 3000, 1, 2000})
	svg := filepath.Join(dir, "axes.svg")
	require.NoError(t, PlotScores(svg, wide, nil, "axes"))
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Contains(t, string(b), ">2000<")
	require.Contains(t, string(b), ">0.5<")
	require.ErrorIs(t, PlotScores(filepath.Join(dir, "x.png"), scores, []string{"a"}, ""), status.ErrInvalid)
	require.ErrorIs(t, PlotScores(filepath.Join(dir, "y.png"), mat.NewDense(4, 1, nil), nil, ""), status.ErrInvalid)
}

// RobustIris's rows: one per τ, every error a mean of squares or of
// k(x,x) − ‖z(x)‖² over test points — non-negative, and the feature errors
// below k(x,x) = 1 — and the same numbers when run again. featureError is
// 0 on the training points when the components span them all.
func TestRobustIrisRows(t *testing.T) {
	taus := []float64{0, 2}
	rows, err := RobustIris(context.Background(), taus, 2, 2, 0.1)
	require.NoError(t, err)
	require.Len(t, rows, len(taus))
	for i, r := range rows {
		require.Equal(t, taus[i], r.Tau)
		require.Equal(t, 2, r.Seeds)
		for name, v := range map[string]float64{"square": r.Square, "huber2": r.Huber2, "huber1": r.Huber1} {
			require.Greater(t, v, 0.0, "τ = %g %s", r.Tau, name)
		}
		for name, v := range map[string]float64{"square": r.FeatureSquare, "huber2": r.FeatureHuber2, "huber1": r.FeatureHuber1} {
			require.True(t, v > 0 && v < 1, "τ = %g feature %s = %g", r.Tau, name, v)
		}
	}
	again, err := RobustIris(context.Background(), taus, 2, 2, 0.1)
	require.NoError(t, err)
	require.Equal(t, rows, again)
	// Each error is the mean over the seeds: on clean data (ω = 0) the
	// mean of two splits' errors is within a factor of two of the first's.
	one, err := RobustIris(context.Background(), []float64{1}, 1, 2, 0)
	require.NoError(t, err)
	two, err := RobustIris(context.Background(), []float64{1}, 2, 2, 0)
	require.NoError(t, err)
	for name, v := range map[string][2]float64{"square": {one[0].Square, two[0].Square}, "huber2": {one[0].Huber2, two[0].Huber2},
		"huber1": {one[0].Huber1, two[0].Huber1}, "feature square": {one[0].FeatureSquare, two[0].FeatureSquare}} {
		require.True(t, v[1] > v[0]/2 && v[1] < 2*v[0], "%s: one seed %g, two %g", name, v[0], v[1])
	}

	// On the training points the mean residual is what the top s
	// eigenvalues of the (uncentred) kernel matrix leave of its trace n.
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 0.5, 2})
	for s := 1; s < 6; s++ {
		m := &kpca.KPCA{Components: s, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, NoCenter: true}
		require.NoError(t, m.Fit(x))
		fe, err := featureError(m, x)
		require.NoError(t, err)
		vals, _ := m.Eigenvalues()
		want := 6.0
		for _, v := range vals {
			want -= v
		}
		require.InDelta(t, want/6, fe, 1e-12, "s = %d", s)
	}
}

// RKM's defaults by data set (sines: s = 4, lag 40; santafe: s = 144, lag
// 70, 5000 random features; others: 10, 10, none): S and Lag 0 and RFF < 0
// take them, any value given is kept — RFF 0 too (the exact kernel).
func TestRKMDefaults(t *testing.T) {
	for data, want := range map[string][3]int{"sines": {4, 40, 0}, "santafe": {144, 70, 5000}, "file.csv": {10, 10, 0}} {
		o := RKMOptions{Data: data, RFF: -1}.withDefaults()
		require.Equal(t, want, [3]int{o.S, o.Lag, o.RFF}, data)
		o = RKMOptions{Data: data, S: 3, Lag: 5, RFF: 0}.withDefaults()
		require.Equal(t, [3]int{3, 5, 0}, [3]int{o.S, o.Lag, o.RFF}, data)
		o = RKMOptions{Data: data, RFF: 7}.withDefaults()
		require.Equal(t, 7, o.RFF, data)
	}
}

// The randomized search tries oversampling 10, 20, 40, … up to 640 while
// s + oversampling columns fit in n (all n of them included).
func TestSearchRandomizedSettings(t *testing.T) {
	for _, c := range []struct {
		s, n int
		want []float64
	}{
		{4, 14, []float64{10}},
		{4, 13, nil},
		{5, 45, []float64{10, 20, 40}},
		{10, 100000, []float64{10, 20, 40, 80, 160, 320, 640}},
	} {
		_, params := SearchRandomized.Settings(&KPCAProblem{S: c.s, N: c.n, Seed: 1})
		var got []float64
		for _, p := range params {
			got = append(got, p["oversample"])
		}
		require.Equal(t, c.want, got, "s = %d, n = %d", c.s, c.n)
	}
}

// A problem written before the components were called so ("s") reads
// back with its S; where both keys are present, "components" wins.
func TestKPCAProblemOldKey(t *testing.T) {
	var p KPCAProblem
	require.NoError(t, json.Unmarshal([]byte(`{"data": "randn", "n": 50, "s": 4}`), &p))
	require.Equal(t, 4, p.S)
	require.Equal(t, 50, p.N)
	var q KPCAProblem
	require.NoError(t, json.Unmarshal([]byte(`{"components": 3, "s": 4}`), &q))
	require.Equal(t, 3, q.S)
	require.Error(t, json.Unmarshal([]byte(`{"s": "four"}`), &q))
}

// SparseRows: one row per ε in order; ε = 0 is the square loss itself (no
// zero rows, ratios 1); a larger ε zeroes some rows of H and cannot
// capture more variance than the square loss's top s directions, nor
// reconstruct better; every fraction within [0, 1].
func TestSparseRows(t *testing.T) {
	eps := []float64{0, 0.3}
	rows, err := SparseRows(context.Background(), 120, 10, 3, eps, 2)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, 0.0, rows[0].ZeroRows)
	require.InDelta(t, 1, rows[0].ErrorRate, 1e-9)
	require.InDelta(t, 1, rows[0].Captured, 1e-9)
	r := rows[1]
	require.Equal(t, 0.3, r.Eps)
	require.True(t, r.ZeroRows > 0 && r.ZeroRows <= 1, "zero rows %g", r.ZeroRows)
	require.Equal(t, r.ZeroRows*120, math.Round(r.ZeroRows*120), "a fraction of the 120 rows")
	require.GreaterOrEqual(t, r.ErrorRate, 1-1e-9)
	require.True(t, r.Captured > 0 && r.Captured <= 1+1e-9, "captured %g", r.Captured)
	require.InDelta(t, rows[0].Error*r.ErrorRate, r.Error, 1e-9*r.Error)
}

// FashionGram's default σ is the median pairwise distance of the first
// 1000 (centred) images, not of all n; a σ given is kept.
func TestFashionGramMedian(t *testing.T) {
	k, err := FashionGram(1100, 0)
	if errors.Is(err, dataset.ErrMissing) {
		require.Contains(t, err.Error(), "dataset-fashion-mnist")
		return
	}
	require.NoError(t, err)
	f, err := dataset.LoadFashion("", "train", 1100)
	require.NoError(t, err)
	linalg.CenterColumns(f.X)
	want, err := kernel.MedianDistance(f.X, 1000)
	require.NoError(t, err)
	require.Equal(t, want, k.Sigma)
	all, err := kernel.MedianDistance(f.X, 1100)
	require.NoError(t, err)
	require.NotEqual(t, all, k.Sigma, "the premise: all 1100 give another median")
	require.Equal(t, 1100, k.G.SymmetricDim())
	given, err := FashionGram(50, 7)
	require.NoError(t, err)
	require.Equal(t, 7.0, given.Sigma)
}

// The decay problem (Fig. 1) has the prescribed spectrum e^{−c·i} up to
// its perturbation 0.01(X + Xᵀ), whose norm is about 0.003 (Weyl: every
// eigenvalue within it); the same seed, the same matrix; the reference
// cost is that of its top s eigenvalues.
func TestDecayProblemSpectrum(t *testing.T) {
	const n, c = 60, 0.1
	p := &KPCAProblem{Data: "decay", N: n, S: 5, Decay: c}
	b, err := p.Build()
	require.NoError(t, err)
	require.NotNil(t, b.G)
	var es mat.EigenSym
	require.True(t, es.Factorize(b.G, false))
	vals := es.Values(nil) // ascending
	for i := 0; i < n; i++ {
		require.InDelta(t, math.Exp(-c*float64(i)), vals[n-1-i], 0.01, "λ_%d", i+1)
	}
	again, err := (&KPCAProblem{Data: "decay", N: n, S: 5, Decay: c}).Build()
	require.NoError(t, err)
	require.True(t, mat.Equal(b.G, again.G))
	// The optimal dual cost is that of the top s eigenvalues.
	want, err := kpca.OptimalCost([]float64{vals[n-1], vals[n-2], vals[n-3], vals[n-4], vals[n-5]})
	require.NoError(t, err)
	require.InDelta(t, want, p.DOpt, 1e-10*math.Abs(want))
}

// The toy figure of dual probabilistic PCA puts each set's first column
// across and its second up: an SVG's tick labels show both ranges.
func TestPlotPPCAToyAxes(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "toy.svg")
	x := mat.NewDense(3, 2, []float64{0, 1000, 0.5, 3000, 1, 2000})
	require.NoError(t, plotPPCAToy(svg, x, x, nil, x, &PPCAReport{Q: 1}))
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Contains(t, string(b), ">2000<")
	require.Contains(t, string(b), ">0.5<")
}
