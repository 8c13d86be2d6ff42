package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/status"
)

// The largest principal angle of a known rotation, and of the same space
// in another basis; the eigenvalue error is the largest relative one.
func TestApproxMeasures(t *testing.T) {
	u := mat.NewDense(4, 2, []float64{1, 0, 0, 1, 0, 0, 0, 0})
	th := 0.3
	z := mat.NewDense(4, 2, []float64{math.Cos(th), 0, 0, 2, math.Sin(th), 0, 0, 0})
	require.InDelta(t, th*180/math.Pi, LargestAngleDeg(u, z), 1e-10)
	same := mat.NewDense(4, 2, []float64{1, 1, 2, -1, 0, 0, 0, 0})
	require.InDelta(t, 0, LargestAngleDeg(u, same), 1e-6)
	require.InDelta(t, 0.1, EigError([]float64{9, 2.1}, []float64{10, 2}), 1e-12)
	require.True(t, math.IsInf(EigError([]float64{9}, []float64{10, 2}), 1))
}

// unitColumns gives an orthonormal basis of the same space, with no n×n
// matrix, on a tall matrix with columns of very different norms.
func TestUnitColumns(t *testing.T) {
	n, s := 5000, 6
	z := mat.NewDense(n, s, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < s; j++ {
			z.Set(i, j, math.Pow(10, float64(j))*math.Sin(float64((i+1)*(j+2))))
		}
	}
	q := unitColumns(z)
	var g mat.Dense
	g.Mul(q.T(), q)
	require.True(t, mat.EqualApprox(&g, eye(s), 1e-12))
	require.InDelta(t, 0, LargestAngleDeg(q, z), 1e-5)
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

// The log axis is labelled at 1, 2 and 5 times the powers of ten within
// its range, in increasing order, each label its value.
func TestTicks125(t *testing.T) {
	var got []float64
	var labels []string
	for _, tk := range (ticks125{}).Ticks(0.5, 30) {
		got = append(got, tk.Value)
		labels = append(labels, tk.Label)
	}
	want := []float64{0.5, 1, 2, 5, 10, 20}
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-12*want[i])
	}
	require.Equal(t, []string{"0.5", "1", "2", "5", "10", "20"}, labels)
	require.Empty(t, (ticks125{}).Ticks(3, 4.5))
	// Both ends count, a power of ten at the top too.
	for hi, want := range map[float64][]float64{50: {2, 5, 10, 20, 50}, 100: {2, 5, 10, 20, 50, 100}} {
		var ends []float64
		for _, tk := range (ticks125{}).Ticks(2, hi) {
			ends = append(ends, tk.Value)
		}
		require.Equal(t, want, ends, "2 to %g", hi)
	}
}

// readExact takes a kpca fit's JSON of the same n points and bandwidth,
// and refuses one of other sizes, another σ, or ragged scores.
func TestReadExact(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, fmt.Sprintf("e%d.json", len(body)))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	good := write(`{"eigenvalues": [3, 2, 1], "scores": [[1, 2, 9], [3, 4, 9], [5, 6, 9]], "sigma": 2.5}`)
	vals, sc, err := readExact(good, 3, 2, 2.5)
	require.NoError(t, err)
	require.Equal(t, []float64{3, 2}, vals)
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6}, sc.RawMatrix().Data)
	for _, c := range []struct {
		path string
		n, s int
		want string
	}{
		{good, 4, 2, "3 score rows"},
		{good, 3, 4, "3 eigenvalues"},
		{write(`{"eigenvalues": [3, 2], "scores": [[1, 2], [3], [5, 6]], "sigma": 2.5}`), 3, 2, "score row 1 has 1 values"},
		{write(`{"eigenvalues": [3, 2], "scores": [[1, 2], [3, 4], [5, 6]], "sigma": 2.6}`), 3, 2, "σ = 2.6"},
		{write(`{"eigenvalues": [3, 2], "scores": [[1, 2], [3, 4], [5, 6]]}`), 3, 2, "σ = 0"},
	} {
		_, _, err := readExact(c.path, c.n, c.s, 2.5)
		require.ErrorIs(t, err, status.ErrInvalid, c.want)
		require.Contains(t, err.Error(), c.want)
	}
	_, _, err = readExact(write(`not json`), 3, 2, 2.5)
	require.Error(t, err)
	_, _, err = readExact(filepath.Join(dir, "none.json"), 3, 2, 2.5)
	require.Error(t, err)
}

// A large run at a small size, on each image set: the report describes the
// fit it made (the data's bytes, the rank asked for, eigenvalues in
// decreasing order and positive), its eigenvalue bound is the trace error
// times the Gaussian kernel's trace n, and a second run with the same
// configuration gives the same bits; σ is the median heuristic on the
// first n Fashion-MNIST training images on both sets. Without
// Fashion-MNIST the run is an error naming what is missing.
func TestApproxLargeSmall(t *testing.T) {
	const n, m, s = 300, 24, 4
	var sigma float64
	if f, err := dataset.LoadFashion("", "train", n); err == nil {
		sigma, err = kernel.MedianSigma(f.X)
		require.NoError(t, err)
	}
	for _, images := range []string{"float32", "8bit"} {
		cfg := ApproxLargeConfig{N: n, M: m, S: s, Seed: 3, Images: images, Block: 8}
		rep, err := ApproxLarge(context.Background(), cfg, nil)
		if errors.Is(err, dataset.ErrMissing) {
			require.Contains(t, err.Error(), "dataset-fashion-mnist")
			return
		}
		require.NoError(t, err, images)
		require.Equal(t, images, rep.Images)
		require.Equal(t, 784, rep.D)
		require.Equal(t, sigma, rep.Sigma, images)
		bytes := int64(n * 784)
		if images == "float32" {
			bytes *= 4
		}
		require.Equal(t, bytes, rep.DataBytes, images)
		require.Equal(t, m, rep.Rank, images)
		require.Len(t, rep.Eigenvalues, s)
		for i, v := range rep.Eigenvalues {
			require.Greater(t, v, 0.0, "%s λ%d", images, i+1)
			if i > 0 {
				require.LessOrEqual(t, v, rep.Eigenvalues[i-1], "%s λ%d", images, i+1)
			}
		}
		require.True(t, rep.TraceError > 0 && rep.TraceError < 1, "%s: trace error %g", images, rep.TraceError)
		require.InEpsilon(t, rep.TraceError*n, rep.EigenvalueBound, 1e-12, images)
		again, err := ApproxLarge(context.Background(), cfg, nil)
		require.NoError(t, err)
		require.Equal(t, rep.Eigenvalues, again.Eigenvalues, images)
		require.Equal(t, rep.TraceError, again.TraceError, images)
	}
	_, err := ApproxLarge(context.Background(), ApproxLargeConfig{N: n, M: m, S: s, Images: "png"}, nil)
	require.ErrorIs(t, err, status.ErrInvalid)
	for _, images := range []string{"float32", "8bit"} {
		_, err = ApproxLarge(context.Background(), ApproxLargeConfig{N: 0, M: m, S: s, Images: images}, nil)
		require.Error(t, err, images)
	}
}
