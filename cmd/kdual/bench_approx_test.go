package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/native"
)

// `kdual bench approx` on a small Fashion set: a row per method, rank and
// precision, errors that shrink with m for Nyström, the float32 rows within
// float32 rounding of the float64 ones (uniform landmarks are the same),
// the exact vectors written, the report and plot drawn; bad flags exit 2.
func TestBenchApprox(t *testing.T) {
	for _, bad := range [][]string{
		{"bench", "approx", "--m", "0"},
		{"bench", "approx", "--precision", "float16"},
		{"bench", "approx", "--methods", "svd"},
		{"bench", "approx", "--n", "100", "--m", "200"},
		{"bench", "approx", "--large", "100", "--m", "10,20"},
		{"bench", "approx", "--large", "100", "--m", "10", "--block", "-1"},
		{"bench", "approx", "--large", "100", "--m", "10", "--images", "png"},
		{"bench", "approx", "--n", "300", "--m", "20", "--components", "0"},
		{"bench", "approx", "--n", "300", "--m", "20", "--repeat", "0"},
		// Flags the run asked would ignore.
		{"bench", "approx", "--large", "100", "--m", "10", "--n", "500"},
		{"bench", "approx", "--large", "100", "--m", "10", "--repeat", "2"},
		{"bench", "approx", "--large", "100", "--m", "10", "--methods", "uniform"},
		{"bench", "approx", "--large", "100", "--m", "10", "--exact-tol", "1e-6"},
		{"bench", "approx", "--n", "300", "--m", "20", "--images", "8bit"},
		{"bench", "approx", "--n", "300", "--m", "20", "--block", "16"},
		{"bench", "approx", "--n", "300", "--m", "20", "--exact", "e.json", "--exact-tol", "1e-6"},
		{"bench", "approx-report"},
	} {
		code, _, _ := runCLI(t, bad...)
		require.Equal(t, 2, code, "%v", bad)
	}
	if _, err := os.Stat(dataset.FashionDir); err != nil {
		code, _, stderr := runCLI(t, "bench", "approx", "--n", "300", "--m", "20")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "dataset-fashion-mnist")
		return
	}
	// Two images, the fewest --n takes.
	code, _, stderr := runCLI(t, "bench", "approx", "--n", "2", "--m", "1", "--components", "1")
	require.Equal(t, 0, code, stderr)
	// One large run at a small size on each image set: the report's keys
	// are the documented ones, the 8-bit set's kernel rows exact integer
	// ones where the processor has them.
	for _, images := range []string{"float32", "8bit"} {
		code, out, stderr := runCLI(t, "bench", "approx", "--large", "400", "--m", "30", "--components", "3",
			"--images", images, "--block", "8", "--quiet")
		require.Equal(t, 0, code, stderr)
		var rep bench.ApproxLargeReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Equal(t, images, rep.Images)
		require.Equal(t, 30, rep.Rank)
		require.Len(t, rep.Eigenvalues, 3)
		require.Greater(t, rep.Rounds, 1, "blocks of 8 take several rounds")
		require.True(t, rep.TraceError > 0 && rep.TraceError < 1, "%g", rep.TraceError)
		if images == "8bit" && native.HasInt8() {
			require.Equal(t, "int8", rep.Products)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "a.json")
	code, _, stderr = runCLI(t, "bench", "approx", "--n", "600", "--m", "30,120", "--components", "5", "--repeat", "1",
		"--precision", "float64,float32", "--vectors-out", filepath.Join(dir, "u.npy"), "--json", out)
	require.Equal(t, 0, code, stderr)
	var rep bench.ApproxReport
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	// Exactly the keys docs/json.md documents (optional ones may be absent).
	want := documentedKeys(t)["kdual bench approx"]
	got := jsonKeys(t, b)
	for k := range got {
		_, ok := want[k]
		require.True(t, ok, "undocumented key %q", k)
	}
	for k, required := range want {
		require.True(t, got[k] || !required, "documented key %q missing", k)
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, 600, rep.N)
	require.Len(t, rep.Exact.Eigenvalues, 5)
	// The exact solution is exact: Lanczos at the documented default
	// tolerance, the dense solver's eigenvalues of the same centred
	// Gaussian kernel (the first 600 images, median σ).
	require.Contains(t, rep.Exact.Source, "Lanczos tol 1e-08")
	x, err := dataset.FashionAugmented("", 600, 1)
	require.NoError(t, err)
	sigma, err := kernel.MedianSigma(x)
	require.NoError(t, err)
	require.Equal(t, sigma, rep.Sigma)
	dense := &kpca.KPCA{Components: 5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}, Solver: kpca.Eigen{Solver: eig.DenseSolver{}}}
	require.NoError(t, dense.Fit(x))
	dv, _ := dense.Eigenvalues()
	for i, v := range dv {
		require.InDelta(t, v, rep.Exact.Eigenvalues[i], 1e-7*dv[0], "exact eigenvalue %d", i)
	}
	require.Len(t, rep.Rows, 2*(2+2+1)) // (rpcholesky, uniform) × 2 precisions + rff, × 2 ranks
	byKey := map[string]bench.ApproxRow{}
	for _, r := range rep.Rows {
		byKey[r.Method+r.Precision+string(rune('0'+r.M/30))] = r
		require.Greater(t, r.Seconds, 0.0)
		require.GreaterOrEqual(t, r.AngleDeg, 0.0)
		require.LessOrEqual(t, r.AngleDeg, 90.0)
		if r.Method != "rff" {
			require.NotNil(t, r.TraceError)
		}
	}
	for _, name := range []string{"nystrom-rpcholesky", "nystrom-uniform"} {
		small, big := byKey[name+"float64"+"1"], byKey[name+"float64"+"4"]
		require.Less(t, big.EigError, small.EigError, name)
		require.Less(t, *big.TraceError, *small.TraceError, name)
	}
	u64, u32 := byKey["nystrom-uniformfloat64"+"4"], byKey["nystrom-uniformfloat32"+"4"]
	require.InDelta(t, u64.EigError, u32.EigError, 1e-4)
	require.InDelta(t, *u64.TraceError, *u32.TraceError, 1e-5)
	st, err := os.Stat(filepath.Join(dir, "u.npy"))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(600*5*8))
	png := filepath.Join(dir, "a.png")
	code, table, stderr := runCLI(t, "bench", "approx-report", "--ours", out, "--png", png)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, table, "nystrom-rpcholesky (float32)")
	st, err = os.Stat(png)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(1000))

	// --exact takes kpca fit's JSON of the same images and bandwidth as the
	// exact solution (as make bench-approx does at n = 70 000); one of
	// another bandwidth is refused.
	exact := filepath.Join(dir, "exact.json")
	code, _, stderr = runCLI(t, "kpca", "fit", "--data", "fashion", "--n", "600", "--components", "5", "--kernel", "gaussian",
		"--sigma", "median", "--json", exact, "--quiet")
	require.Equal(t, 0, code, stderr)
	approxArgs := []string{"bench", "approx", "--n", "600", "--m", "30", "--components", "5", "--repeat", "1", "--methods", "rpcholesky", "--quiet"}
	code, js, stderr := runCLI(t, append(approxArgs, "--exact", exact)...)
	require.Equal(t, 0, code, stderr)
	var fromFile bench.ApproxReport
	require.NoError(t, json.Unmarshal([]byte(js), &fromFile))
	require.Equal(t, exact, fromFile.Exact.Source)
	for i, v := range fromFile.Exact.Eigenvalues {
		require.InDelta(t, rep.Exact.Eigenvalues[i], v, 1e-7*v, "eigenvalue %d", i)
	}
	other := filepath.Join(dir, "other.json")
	code, _, stderr = runCLI(t, "kpca", "fit", "--data", "fashion", "--n", "600", "--components", "5", "--kernel", "gaussian",
		"--sigma", "5", "--json", other, "--quiet")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLI(t, append(approxArgs, "--exact", other)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "σ = 5")
}
