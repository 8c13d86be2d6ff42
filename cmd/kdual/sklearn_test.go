package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
)

// kdual's kernels named the scikit-learn way give KernelPCA's numbers:
// eigenvalues to 1e-8 relative, the first five rows' scores and the
// transform of five points that are not training rows (through a saved
// model) to 1e-8 (each component's sign aligned on the scores), for Iris
// and 500 digits, against the
// references bench/peers/sklearn_kernels.py stored in testdata (scikit-learn
// 1.2.1, eigen_solver="dense"): linear, rbf, poly, sigmoid, cosine and
// laplacian (scikit-learn's L1 form), with their defaults and with
// parameters given.
func TestScikitLearnKernels(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "sklearn_kernels.json"))
	require.NoError(t, err)
	var ref struct {
		Cases []struct {
			Data, Kernel string
			Flags        []string
			Eigenvalues  []float64
			Scores       [][]float64
			New          [][]float64
			Transformed  [][]float64
		}
	}
	require.NoError(t, json.Unmarshal(raw, &ref))
	require.NotEmpty(t, ref.Cases)
	dir := t.TempDir()
	files := map[string]string{}
	for name, load := range map[string]func() (*mat.Dense, error){
		"iris": func() (*mat.Dense, error) { l, err := dataset.Iris(); return l.X, err },
		"digits500": func() (*mat.Dense, error) {
			l, err := dataset.Digits()
			if err != nil {
				return nil, err
			}
			return mat.DenseCopyOf(l.X.Slice(0, 500, 0, 64)), nil
		},
	} {
		x, err := load()
		require.NoError(t, err)
		files[name] = writeMatrix(t, dir, name+".csv", x)
	}
	for _, c := range ref.Cases {
		what := fmt.Sprintf("%s %s", c.Data, c.Kernel)
		model := filepath.Join(dir, "m.npz")
		args := append([]string{"kpca", "fit", "--input", files[c.Data], "--components", "3", "--solver", "dense", "--json", "-", "--save", model}, c.Flags...)
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, "%s: %s", what, stderr)
		var got struct {
			Eigenvalues []float64   `json:"eigenvalues"`
			Scores      [][]float64 `json:"scores"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), what)
		for i, want := range c.Eigenvalues {
			require.InDelta(t, want, got.Eigenvalues[i], 1e-8*math.Abs(c.Eigenvalues[0]), "%s: λ_%d", what, i+1)
		}
		// Points that are not training rows, through the saved model.
		require.Len(t, c.New, 5, what)
		newX := mat.NewDense(len(c.New), len(c.New[0]), nil)
		for i, row := range c.New {
			newX.SetRow(i, row)
		}
		code, out, stderr = runCLI(t, "kpca", "transform", "--model", model, "--input", writeMatrix(t, dir, "new.csv", newX))
		require.Equal(t, 0, code, "%s: %s", what, stderr)
		tr := csvNumbers(t, out)
		require.Len(t, tr, 5, what)
		scale := 1e-8 * math.Max(1, math.Abs(c.Scores[0][0]))
		for j := 0; j < 3; j++ {
			sign := math.Copysign(1, got.Scores[0][j]*c.Scores[0][j])
			for i := range c.Scores {
				require.InDelta(t, c.Scores[i][j], sign*got.Scores[i][j], scale, "%s: score (%d, %d)", what, i, j)
			}
			for i := range c.Transformed {
				require.InDelta(t, c.Transformed[i][j], sign*tr[i][j], scale, "%s: new point %d, component %d", what, i, j)
			}
		}
	}
}

// --kernel precomputed: the input is the kernel matrix; the fit equals
// the built-in kernel's (eigenvalues and scores to 1e-12), and a saved
// model transforms rows of the kernel against the training points like
// the built-in model transforms the points.
func TestPrecomputedKernel(t *testing.T) {
	dir := t.TempDir()
	l, err := dataset.Iris()
	require.NoError(t, err)
	x := l.X
	k := kernelOf(t, x, x)
	writeCSV := func(name string, m *mat.Dense) string { return writeMatrix(t, dir, name, m) }
	xcsv, kcsv := writeCSV("x.csv", x), writeCSV("k.csv", k)
	builtin, pre := filepath.Join(dir, "b.npz"), filepath.Join(dir, "p.npz")
	code, outB, stderr := runCLI(t, "kpca", "fit", "--input", xcsv, "--kernel", "rbf", "--gamma", "0.5", "--components", "3", "--solver", "dense", "--save", builtin)
	require.Equal(t, 0, code, stderr)
	code, outP, stderr := runCLI(t, "kpca", "fit", "--input", kcsv, "--kernel", "precomputed", "--components", "3", "--save", pre)
	require.Equal(t, 0, code, stderr)
	requireCSVClose(t, outB, outP, 1e-12)
	newX := mat.DenseCopyOf(x.Slice(10, 15, 0, 4))
	code, tB, stderr := runCLI(t, "kpca", "transform", "--model", builtin, "--input", writeCSV("new.csv", newX))
	require.Equal(t, 0, code, stderr)
	code, tP, stderr := runCLI(t, "kpca", "transform", "--model", pre, "--input", writeCSV("newk.csv", kernelOf(t, newX, x)))
	require.Equal(t, 0, code, stderr)
	requireCSVClose(t, tB, tP, 1e-12)
	// Not square, not symmetric, or with a kernel parameter: refused.
	code, _, _ = runCLI(t, "kpca", "fit", "--input", xcsv, "--kernel", "precomputed")
	require.Equal(t, 1, code)
	asym := mat.DenseCopyOf(k)
	asym.Set(1, 2, asym.At(1, 2)+0.1)
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", writeCSV("asym.csv", asym), "--kernel", "precomputed")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "K[2,3] and K[3,2] differ by", "the pair named from 1, as the file's rows and columns are counted")
	code, _, _ = runCLI(t, "kpca", "fit", "--input", kcsv, "--kernel", "precomputed", "--gamma", "1")
	require.Equal(t, 2, code)
}

// kernelOf is exp(−0.5‖a_i − b_j‖²), written out.
func kernelOf(t *testing.T, a, b *mat.Dense) *mat.Dense {
	t.Helper()
	ra, c := a.Dims()
	rb, _ := b.Dims()
	k := mat.NewDense(ra, rb, nil)
	for i := 0; i < ra; i++ {
		for j := 0; j < rb; j++ {
			d := 0.0
			for l := 0; l < c; l++ {
				v := a.At(i, l) - b.At(j, l)
				d += v * v
			}
			k.Set(i, j, math.Exp(-0.5*d))
		}
	}
	return k
}

// csvNumbers parses a CSV table of numbers, one row a line.
func csvNumbers(t *testing.T, text string) [][]float64 {
	t.Helper()
	var rows [][]float64
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var v []float64
		for _, f := range strings.Split(line, ",") {
			x, err := strconv.ParseFloat(f, 64)
			require.NoError(t, err)
			v = append(v, x)
		}
		rows = append(rows, v)
	}
	return rows
}

// requireCSVClose compares two CSV tables of numbers entry by entry, each
// column's sign aligned on its first row.
func requireCSVClose(t *testing.T, a, b string, tol float64) {
	t.Helper()
	ra, rb := csvNumbers(t, a), csvNumbers(t, b)
	require.Equal(t, len(ra), len(rb))
	for i := range ra {
		require.Len(t, rb[i], len(ra[i]))
		for j := range ra[i] {
			sign := math.Copysign(1, ra[0][j]*rb[0][j])
			require.InDelta(t, ra[i][j], sign*rb[i][j], tol*math.Max(1, math.Abs(ra[i][j])), "row %d col %d", i, j)
		}
	}
}

// writeMatrix writes m as kdual's CSV (the writer of its scores) to
// dir/name and returns the path.
func writeMatrix(t *testing.T, dir, name string, m *mat.Dense) string {
	t.Helper()
	var b strings.Builder
	writeCSV(&b, m)
	return writeTemp(t, dir, name, b.String())
}
