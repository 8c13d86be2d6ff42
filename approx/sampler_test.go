package approx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kdual/kdual/kernel"
)

// pivotLaw is the one-pivot RPCholesky law of the first two pivots of the
// kernel matrix k: P(i, j) = d_i/Σd · d′_j/Σd′, d′ the residual diagonal
// after pivot i, with residuals at most floor (the cut-off) never sampled.
func pivotLaw(k *mat.SymDense, floor float64) [][]float64 {
	n := k.SymmetricDim()
	p := make([][]float64, n)
	total := 0.0
	for i := 0; i < n; i++ {
		total += k.At(i, i)
	}
	for i := 0; i < n; i++ {
		p[i] = make([]float64, n)
		res := make([]float64, n)
		sum := 0.0
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			res[j] = k.At(j, j) - k.At(i, j)*k.At(i, j)/k.At(i, i)
			if res[j] <= floor {
				res[j] = 0
			}
			sum += res[j]
		}
		for j := range res {
			p[i][j] = k.At(i, i) / total * res[j] / sum
		}
	}
	return p
}

// chiSquare is Pearson's statistic of the counts against the law over
// trials, and its degrees of freedom (cells of positive probability,
// less one).
func chiSquare(counts map[[2]int]int, law [][]float64, trials int) (float64, int) {
	stat, cells := 0.0, 0
	for i, row := range law {
		for j, p := range row {
			if p == 0 {
				if counts[[2]int{i, j}] > 0 {
					return math.Inf(1), 1 // a pair the law never draws
				}
				continue
			}
			e := p * float64(trials)
			d := float64(counts[[2]int{i, j}]) - e
			stat += d * d / e
			cells++
		}
	}
	return stat, cells - 1
}

// The accelerated sampler's first two pivots follow the one-pivot law —
// whatever the block (the rejection step makes block sampling exact, Epperly,
// Tropp and Webber) — with the cut-off accounted for: two near-twin points
// each leave the other a residual below it, so the other is never the
// second pivot after its twin. Pearson's test over 6000 seeds passes at
// the 10⁻⁴ level; the same test rejects a block sampler without the
// rejection step (candidates drawn i.i.d. from the diagonal, both kept),
// the negative control that shows the test can fail.
func TestSamplerLaw(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 0, 1.2, 0, 0, 0.7, 2.5, 2, 2.5, 2.2, -1, 1.5})
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	km := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		for j := i; j < 6; j++ {
			km.SetSym(i, j, k.Eval(x.RawRowView(i), x.RawRowView(j)))
		}
	}
	const cut, trials = 0.05, 6000
	law := pivotLaw(km, cut)
	require.Zero(t, law[3][4], "the twins' residual after each other is below the cut-off")
	require.Zero(t, law[4][3])
	crit := distuv.ChiSquared{K: 29}.Quantile(1 - 1e-4) // at most 30 cells
	for _, block := range []int{2, 4} {
		counts := map[[2]int]int{}
		for s := 1; s <= trials; s++ {
			m, err := Nystrom{Rank: 2, Block: block, Seed: uint64(s), Cutoff: cut}.Fit(x, k)
			require.NoError(t, err)
			require.Len(t, m.Landmarks, 2)
			counts[[2]int{m.Landmarks[0], m.Landmarks[1]}]++
		}
		stat, df := chiSquare(counts, law, trials)
		require.Less(t, stat, crit, "block %d: χ² = %.1f on %d degrees of freedom", block, stat, df)
	}
	// The control: two candidates i.i.d. from the diagonal, both kept
	// (a repeat is drawn again), no rejection.
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[[2]int]int{}
	for s := 0; s < trials; s++ {
		draw := func() int { return r.IntN(6) } // the unit diagonal: uniform
		i, j := draw(), draw()
		for j == i {
			j = draw()
		}
		counts[[2]int{i, j}]++
	}
	stat, _ := chiSquare(counts, law, trials)
	require.Greater(t, stat, crit, "the test cannot tell a sampler without rejection from RPCholesky")
}

// The adaptive mode (TraceTol) stops at the first landmark after which the
// trace error is at most the tolerance: on a linear kernel of points on c
// orthogonal directions (rank c; a landmark explains its direction
// exactly), the fit stops with error ≤ τ, and without its last landmark
// the error was above τ — it did not stop late — while Rank bounds it.
func TestAdaptiveStop(t *testing.T) {
	const c, per = 8, 5
	x := mat.NewDense(c*per, c, nil)
	mass := make([]float64, c)
	total := 0.0
	for g := 0; g < c; g++ {
		for p := 0; p < per; p++ {
			a := 0.5 + float64(g) + 0.1*float64(p)
			x.Set(g*per+p, g, a)
			mass[g] += a * a
			total += a * a
		}
	}
	k := kernel.Kernel{Kind: kernel.Linear}
	for _, tol := range []float64{0.05, 0.3, 0.6} {
		for s := uint64(1); s <= 20; s++ {
			m, err := Nystrom{Rank: c * per, Block: 1, Seed: s, TraceTol: tol}.Fit(x, k)
			require.NoError(t, err)
			info := m.Info()
			explained := 0.0
			for _, l := range m.Landmarks {
				explained += mass[l/per]
			}
			require.InDelta(t, 1-explained/total, info.TraceError, 1e-12, "the trace error is the unexplained directions' mass")
			require.LessOrEqual(t, info.TraceError, tol, "stopped before the rule held")
			last := mass[m.Landmarks[len(m.Landmarks)-1]/per] / total
			require.Greater(t, info.TraceError+last, tol, "tol %g seed %d: stopped late", tol, s)
			groups := map[int]bool{}
			for _, l := range m.Landmarks {
				groups[l/per] = true
			}
			require.Len(t, groups, len(m.Landmarks), "a landmark on an explained direction")
		}
	}
	m, err := Nystrom{Rank: 3, Block: 1, Seed: 1, TraceTol: 0.01}.Fit(x, k)
	require.NoError(t, err)
	require.Len(t, m.Landmarks, 3, "Rank bounds the adaptive mode")
	// "At most" includes equality: on K = I (the linear kernel of the unit
	// vectors) each landmark explains exactly 1 of the trace 8, so with τ =
	// 1/2 the error is exactly τ after 4 landmarks, where the fit stops.
	eye := mat.NewDense(8, 8, nil)
	for i := 0; i < 8; i++ {
		eye.Set(i, i, 1)
	}
	m, err = Nystrom{Rank: 8, Block: 1, Seed: 3, TraceTol: 0.5}.Fit(eye, k)
	require.NoError(t, err)
	require.Len(t, m.Landmarks, 4)
	require.Equal(t, 0.5, m.Info().TraceError)
}
