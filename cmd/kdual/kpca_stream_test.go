package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
)

// writeLevels writes n rows of d random clustered levels as an 8-bit IDX
// file and returns its path.
func writeLevels(t *testing.T, n, d int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 3))
	path := filepath.Join(t.TempDir(), "x.idx")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, dataset.WriteIDX8Header(f, n, d))
	b := make([]byte, n*d)
	for i := 0; i < n; i++ {
		c := r.IntN(3)
		for j := 0; j < d; j++ {
			b[i*d+j] = byte(min(255, 70*c+5*j+r.IntN(50)))
		}
	}
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// kdual kpca fit --stream on an IDX file whose sample is every row: the
// eigenvalues of the in-memory Nyström fit of the same file (--input,
// float32 features) to the features' rounding, the scores file n×s with
// the in-memory scores up to each component's sign, the trace error
// reported; flags that do not apply are refused.
func TestKPCAStreamCLI(t *testing.T) {
	const n, d = 1500, 16
	path := writeLevels(t, n, d)
	scale := "0.00392156862745098"
	dir := t.TempDir()
	scores := filepath.Join(dir, "s.npy")
	common := []string{"kpca", "fit", "--approx", "nystrom", "--landmarks", "60", "--components", "3", "--kernel", "gaussian",
		"--sigma", "0.7", "--scale", scale, "--json", "-", "--quiet"}
	code, out, stderr := runCLI(t, append(common, "--stream", path, "--chunk", "400", "--scores-out", scores)...)
	require.Equal(t, 0, code, stderr)
	var rep streamReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, n, rep.Info.N)
	require.Equal(t, 2, rep.Info.Passes)
	require.Equal(t, n, rep.Info.Sample)
	require.True(t, rep.Info.TraceError > 0 && rep.Info.TraceError < 1)
	code, out, stderr = runCLI(t, append(common, "--input", path, "--approx-precision", "float32")...)
	require.Equal(t, 0, code, stderr)
	var mem struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Scores      [][]float64 `json:"scores"`
		Info        struct {
			Approx struct {
				TraceError float64 `json:"trace_error"`
			} `json:"approx"`
		} `json:"info"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &mem))
	for i, v := range mem.Eigenvalues {
		require.InDelta(t, v, rep.Eigenvalues[i], 1e-5*mem.Eigenvalues[0], "eigenvalue %d", i)
	}
	require.InDelta(t, mem.Info.Approx.TraceError, rep.Info.TraceError, 1e-5)
	// NPY 1.0 as NumPy writes it: the header (after the magic, version and
	// its length) padded with spaces to a newline that ends a multiple of
	// 64 bytes, the data float64 little-endian after it.
	raw, err := os.ReadFile(scores)
	require.NoError(t, err)
	require.Equal(t, "\x93NUMPY\x01\x00", string(raw[:8]))
	hl := int(binary.LittleEndian.Uint16(raw[8:10]))
	require.Zero(t, (10+hl)%64, "header length %d", hl)
	require.Equal(t, byte('\n'), raw[10+hl-1])
	require.Equal(t, 10+hl+8*n*3, len(raw))
	f, err := os.Open(scores)
	require.NoError(t, err)
	defer f.Close()
	var sc mat.Dense
	require.NoError(t, npy.Read(f, &sc))
	r, c := sc.Dims()
	require.Equal(t, [2]int{n, 3}, [2]int{r, c})
	for j := 0; j < 3; j++ {
		sign := 1.0
		if sc.At(0, j)*mem.Scores[0][j] < 0 {
			sign = -1
		}
		for i := 0; i < n; i++ {
			require.InDelta(t, mem.Scores[i][j], sign*sc.At(i, j), 1e-3*math.Sqrt(mem.Eigenvalues[0]), "score (%d, %d)", i, j)
		}
	}
	// Without --sigma the median bandwidth of the scaled rows (the first
	// 1000: here every row), as the in-memory fit of the same file says.
	small := writeLevels(t, 600, d)
	median := []string{"kpca", "fit", "--approx", "nystrom", "--landmarks", "40", "--kernel", "gaussian", "--scale", scale, "--json", "-", "--quiet"}
	code, out, stderr = runCLI(t, append(median, "--stream", small)...)
	require.Equal(t, 0, code, stderr)
	var sr streamReport
	require.NoError(t, json.Unmarshal([]byte(out), &sr))
	code, out, stderr = runCLI(t, append(median, "--input", small, "--approx-precision", "float32")...)
	require.Equal(t, 0, code, stderr)
	var ms struct {
		Sigma float64 `json:"sigma"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ms))
	require.Greater(t, ms.Sigma, 0.0)
	require.Equal(t, ms.Sigma, sr.Info.Sigma)
	// Without --json: a line on the fit, then λ1 … λs as in the JSON.
	code, text, stderr := runCLI(t, "kpca", "fit", "--approx", "nystrom", "--landmarks", "40", "--kernel", "gaussian", "--scale", scale,
		"--stream", small, "--quiet")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	require.Len(t, lines, 1+len(sr.Eigenvalues))
	require.True(t, strings.HasPrefix(lines[0], "streamed Nyström KPCA: n = 600, d = 16, m = 40 landmarks"), lines[0])
	for i, l := range lines[1:] {
		var v float64
		_, err := fmt.Sscanf(l, fmt.Sprintf("λ%d = %%g", i+1), &v)
		require.NoError(t, err, l)
		require.InDelta(t, sr.Eigenvalues[i], v, 1e-9*sr.Eigenvalues[0], l)
	}
	for _, bad := range [][]string{
		{"kpca", "fit", "--stream", path, "--components", "2", "--kernel", "gaussian"},                          // no --approx
		{"kpca", "fit", "--stream", path, "--approx", "nystrom", "--kernel", "gaussian", "--solver", "lanczos"}, // a solver
		{"kpca", "fit", "--stream", path, "--approx", "nystrom", "--kernel", "gaussian", "--chunk", "0"},        // chunk
		{"kpca", "fit", "--input", path, "--approx", "nystrom", "--kernel", "gaussian", "--chunk", "10"},        // --chunk alone
		{"kpca", "transform", "--stream", path, "--approx", "nystrom", "--kernel", "gaussian"},                  // transform
	} {
		code, _, _ := runCLI(t, bad...)
		require.Equal(t, 2, code, "%v", bad)
	}
	code, _, _ = runCLI(t, "kpca", "fit", "--stream", filepath.Join(dir, "none.idx"), "--approx", "nystrom", "--kernel", "gaussian")
	require.Equal(t, 1, code, "a missing file")
	// A fit that fails after the scores file was opened leaves nothing
	// behind: no scores, no partial file.
	failed := t.TempDir()
	code, _, _ = runCLI(t, "kpca", "fit", "--stream", path, "--approx", "nystrom", "--landmarks", "10", "--components", "20",
		"--kernel", "gaussian", "--sigma", "0.7", "--scale", scale, "--scores-out", filepath.Join(failed, "s.npy"), "--quiet")
	require.NotEqual(t, 0, code)
	left, err := os.ReadDir(failed)
	require.NoError(t, err)
	require.Empty(t, left)
}
