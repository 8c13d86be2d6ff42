package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"gonum.org/v1/gonum/mat"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
)

// withoutNotes drops the lines that say what was read or planned
// ("kdual: read …", "kdual: operator …"), leaving errors and warnings.
func withoutNotes(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "kdual: read ") && !strings.HasPrefix(l, "kdual: operator ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// An OpenBLAS that does not report its thread timeout (linked statically,
// say) is named as such, not as a power of two.
func TestSpinLine(t *testing.T) {
	require.Equal(t, "BLAS spin:  idle OpenBLAS threads spin 2^24 cycles, then sleep (kdual's default; OPENBLAS_THREAD_TIMEOUT overrides)",
		spinLine(24, "kdual"))
	unknown := spinLine(-1, "openblas")
	require.Contains(t, unknown, "unknown")
	require.NotContains(t, unknown, "2^-1")
}

// The core's source: the environment's OPENBLAS_CORETYPE, or kdual's own
// restart with it (after OpenBLAS had chosen its generic kernels), each
// named in the JSON and in the text.
func TestInfoCoreSource(t *testing.T) {
	t.Setenv("OPENBLAS_CORETYPE", "Haswell")
	t.Setenv(envRestarted, "")
	code, out, _ := runCLI(t, "info", "--json")
	require.Equal(t, 0, code)
	var r infoReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "OPENBLAS_CORETYPE=Haswell", r.CoreSource)
	_, text, _ := runCLI(t, "info")
	require.Contains(t, text, "(set by the environment: OPENBLAS_CORETYPE=Haswell)")
	t.Setenv(envRestarted, "Prescott")
	code, out, _ = runCLI(t, "info", "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "kdual restart from Prescott", r.CoreSource)
	_, text, _ = runCLI(t, "info")
	require.Contains(t, text, "OpenBLAS had chosen its generic Prescott kernels")
	_, text, _ = runCLI(t, "info", "--restarted-core")
	require.Equal(t, native.CoreName()+"\n", text)
	t.Setenv(envRestarted, "")
	_, text, _ = runCLI(t, "info", "--restarted-core")
	require.Empty(t, text)
}

func TestInfo(t *testing.T) {
	code, out, _ := runCLI(t, "info", "--json")
	require.Equal(t, 0, code)
	var r infoReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.True(t, strings.HasPrefix(r.OpenBLAS, "OpenBLAS"))
	require.GreaterOrEqual(t, r.Threads, 1)
	if v := os.Getenv("OPENBLAS_CORETYPE"); v != "" {
		require.Equal(t, "OPENBLAS_CORETYPE="+v, r.CoreSource)
	} else {
		require.Equal(t, "openblas", r.CoreSource)
	}
	require.True(t, strings.HasPrefix(r.Kernels, "avx2+fma") || strings.HasPrefix(r.Kernels, "sse2"), r.Kernels)
	// Every path's choice is reported with its reason, by the rules (the
	// test process sets none) and without a timing.
	require.Equal(t, "rules", r.Paths.Source)
	require.Len(t, r.Paths.Reasons, len(paths.Known)+btoi(r.Paths.Core.Want != ""))
	for _, why := range r.Paths.Reasons {
		require.NotEmpty(t, why.Why, why.Path)
	}
	require.Equal(t, paths.Rules(coreFacts()).InnerNative, r.Paths.InnerNative)
	if !r.CPU.VNNI {
		require.False(t, r.Paths.Int8, "exact integer kernel rows without VNNI")
	}
	if r.Paths.WideSymm || r.Paths.WideSingle {
		require.True(t, r.CPU.AVX512F)
		require.Contains(t, r.Kernels, "avx-512")
	}
	code, out, _ = runCLI(t, "info")
	require.Equal(t, 0, code)
	require.Contains(t, out, "core:")
	require.Contains(t, out, "kernels:")
	require.Contains(t, out, "paths:")
	require.Contains(t, out, "int8:")
}

func TestEigRandSymJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eig.json")
	code, _, stderr := runCLI(t, "eig", "--matrix", "randsym", "--n", "120", "--k", "5", "--repeat", "2", "--json", path)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, f := range []string{"matrix", "n", "components", "solver", "seconds", "kernel_seconds", "apply_seconds", "residual_max", "orthogonality", "eigenvalues"} {
		require.Contains(t, fields, f)
	}
	var r eigReport
	require.NoError(t, json.Unmarshal(raw, &r))
	require.Equal(t, 5, r.K)
	eigJSON := func(args ...string) eigReport {
		code, _, stderr := runCLI(t, append(append([]string{"eig", "--matrix", "randsym"}, args...), "--json", path)...)
		require.Equal(t, 0, code, stderr)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var rep eigReport
		require.NoError(t, json.Unmarshal(raw, &rep))
		return rep
	}
	// A Krylov solver's passes take part of its time, never more.
	b := eigJSON("--n", "120", "--k", "5", "--solver", "block")
	require.Greater(t, b.Passes, 0)
	require.Greater(t, b.ApplySeconds, 0.0)
	require.LessOrEqual(t, b.ApplySeconds, b.Seconds)
	require.Equal(t, "block", b.Solver)
	// Each solver's own flags are taken.
	for _, args := range [][]string{{"--solver", "lanczos", "--ncv", "30", "--tol", "1e-12"}, {"--solver", "block", "--block", "6", "--ncv", "40"},
		{"--solver", "randomized", "--oversample", "5", "--power-iters", "4", "--normalizer", "qr"}} {
		rep := eigJSON(append([]string{"--n", "120", "--k", "5"}, args...)...)
		for i, v := range rep.Values {
			require.InDelta(t, 1/float64(i+1), v, 1e-3, "%v", args)
		}
	}
	// Too small for a Krylov basis: LAPACK ran, and the report says so.
	small := eigJSON("--n", "8", "--components", "3", "--solver", "lanczos")
	require.True(t, strings.HasPrefix(small.Solver, "dense (from lanczos"), small.Solver)
	require.LessOrEqual(t, r.ResidualMax, 1e-13)
	require.LessOrEqual(t, r.Orthogonality, 1e-13)
	// randsym has λ_i = 1/i exactly.
	for i, v := range r.Values {
		require.InDelta(t, 1/float64(i+1), v, 1e-13)
	}
}

func TestEigFashion(t *testing.T) {
	if _, err := os.Stat(dataset.FashionDir); err != nil {
		code, _, stderr := runCLI(t, "eig", "--matrix", "fashion", "--n", "50")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "dataset-fashion-mnist")
		return
	}
	code, out, stderr := runCLI(t, "eig", "--matrix", "fashion", "--n", "300", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r eigReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 300, r.K)
	require.Greater(t, r.Sigma, 0.0)
	require.LessOrEqual(t, r.ResidualMax, 1e-13)
	// A Gaussian kernel matrix is positive semi-definite with unit diagonal:
	// its eigenvalues sum to n and none is below −n·ε.
	sum := 0.0
	for _, v := range r.Values {
		sum += v
		require.Greater(t, v, -1e-12*300)
	}
	require.InDelta(t, 300, sum, 1e-9)
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"eig", "--n", "0"},
		{"eig", "--n", "10", "--k", "11"},
		{"eig", "--k", "-1"},
		{"eig", "--solver", "magic"},
		{"eig", "--matrix", "zeros", "--n", "5"},
		{"eig", "--repeat", "0"},
		{"eig", "--bogus"},
		{"eig", "extra"},
		// Flags the solver or matrix asked would ignore.
		{"eig", "--n", "50", "--solver", "dense", "--ncv", "30"},
		{"eig", "--n", "50", "--solver", "lanczos", "--block", "4"},
		{"eig", "--n", "50", "--solver", "lanczos", "--oversample", "5"},
		{"eig", "--n", "50", "--solver", "block", "--power-iters", "2"},
		{"eig", "--n", "50", "--normalizer", "qr"},
		{"eig", "--n", "50", "--solver", "dense", "--tol", "1e-3"},
		{"eig", "--n", "50", "--matrix", "randsym", "--sigma", "3"},
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	code, _, _ := runCLI(t, "help")
	require.Equal(t, 0, code)
}

// Every command's --help lists its flags and exits 0, without a panic
// recovered inside the flag package (deprecated aliases once printed one).
func TestHelpOutput(t *testing.T) {
	for _, args := range [][]string{
		{"info"}, {"eig"}, {"kpca", "fit"}, {"kpca", "transform"}, {"kpca", "robust"}, {"kpca", "sparse"},
		{"bench", "kpca"}, {"bench", "approx"}, {"rkm", "forecast"}, {"kmvda"}, {"ppca"},
	} {
		code, out, stderr := runCLI(t, append(args, "--help")...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.NotContains(t, out+stderr, "panic", "%v", args)
		require.Contains(t, out+stderr, "  -", "%v: no flags listed", args)
	}
}

func TestBenchKPCAJSON(t *testing.T) {
	code, out, stderr := runCLI(t, "bench", "kpca", "--data", "randn", "--n", "150", "--d", "8", "--s", "3",
		"--kernel", "gaussian", "--bandwidth", "paper", "--delta", "1e-2,1e-4", "--solvers", "lbfgs,lanczos,randomized,block,dense,dense-full",
		"--repeat", "1", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	var prob map[string]any
	require.NoError(t, json.Unmarshal(raw["problem"], &prob))
	for _, f := range []string{"data", "n", "d", "components", "kernel", "sigma", "center", "gram_seconds", "float32"} {
		require.Contains(t, prob, f)
	}
	var results []map[string]any
	require.NoError(t, json.Unmarshal(raw["results"], &results))
	require.Len(t, results, 12)
	for _, r := range results {
		for _, f := range []string{"solver", "delta", "seconds", "eta", "passes", "matvecs", "iterations", "params"} {
			require.Contains(t, r, f)
		}
		if r["seconds"] != nil {
			require.Less(t, r["eta"].(float64), r["delta"].(float64), "%v", r)
			if s := r["solver"].(string); s != "dense" && s != "dense-full" {
				require.Greater(t, r["passes"].(float64), 0.0) // LAPACK reads the matrix itself
			}
		}
	}
}

// --data-out and --start-out write the data (n×d) and L-BFGS's start
// (n×s) as little-endian float64 for the peers; they are refused where
// there is nothing to write (a matrix without data, no lbfgs run).
func TestBenchKPCAPeerFiles(t *testing.T) {
	dir := t.TempDir()
	xf, hf := filepath.Join(dir, "x.bin"), filepath.Join(dir, "h.bin")
	code, _, stderr := runCLI(t, "bench", "kpca", "--data", "randn", "--n", "60", "--d", "5", "--s", "3", "--solvers", "lanczos,lbfgs",
		"--repeat", "1", "--data-out", xf, "--start-out", hf, "--json", filepath.Join(dir, "r.json"))
	require.Equal(t, 0, code, stderr)
	for _, c := range []struct {
		path string
		size int
	}{{xf, 60 * 5}, {hf, 60 * 3}} {
		raw, err := os.ReadFile(c.path)
		require.NoError(t, err)
		require.Len(t, raw, 8*c.size, c.path)
		nonzero := 0
		for i := 0; i < c.size; i++ {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), c.path)
			if v != 0 {
				nonzero++
			}
		}
		require.Equal(t, c.size, nonzero, c.path)
	}
	for _, args := range [][]string{
		{"--data", "decay", "--n", "60", "--data-out", xf},
		{"--data", "randn", "--n", "60", "--solvers", "lanczos,block", "--start-out", hf},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "kpca", "--repeat", "1"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
}

// Without --json, bench kpca prints the problem line and one row per
// solver and δ; bench compare sets two reports side by side with the
// fastest of each and their ratio; a missing or bad report is an error.
func TestBenchKPCATextAndCompare(t *testing.T) {
	dir := t.TempDir()
	args := []string{"bench", "kpca", "--data", "randn", "--n", "80", "--d", "4", "--s", "2", "--repeat", "1", "--solvers", "lbfgs,lanczos", "--quiet"}
	code, out, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.True(t, strings.HasPrefix(lines[0], "randn n=80 d=4 s=2 laplace"), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "solver"), lines[1])
	require.Len(t, lines, 2+2*2, "a row per solver and δ")
	for _, l := range lines[2:] {
		require.Regexp(t, `^(lbfgs|lanczos) +0\.(01|0001) `, l)
	}
	ours := filepath.Join(dir, "ours.json")
	code, _, stderr = runCLI(t, append(args, "--json", ours)...)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = runCLI(t, "bench", "compare", ours, ours)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "| 0.01 | kdual | lbfgs |")
	require.Contains(t, out, "| 0.01 | peer | lanczos |")
	require.Regexp(t, `δ=0\.01: kdual best \w+ [0-9.]+s, peer best \w+ [0-9.]+s, kdual-best/peer-best 1\.00;`, out)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("not json"), 0o644))
	for _, c := range [][]string{{ours}, {ours, bad}, {filepath.Join(dir, "none.json"), ours}} {
		code, _, _ = runCLI(t, append([]string{"bench", "compare"}, c...)...)
		require.NotEqual(t, 0, code, "%v", c)
	}
}

func TestBenchKPCAFloat32Centred(t *testing.T) {
	code, out, stderr := runCLI(t, "bench", "kpca", "--data", "randn", "--n", "120", "--d", "6", "--s", "3",
		"--kernel", "laplace", "--float32", "--center", "--delta", "1e-3", "--solvers", "lbfgs,lanczos,block",
		"--repeat", "1", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Problem struct {
			Float32   bool    `json:"float32"`
			Center    bool    `json:"center"`
			PeakRSSGB float64 `json:"peak_rss_gb"`
		} `json:"problem"`
		Results []struct {
			Seconds *float64 `json:"seconds"`
			Eta     float64  `json:"eta"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.Problem.Float32)
	require.True(t, rep.Problem.Center)
	require.Greater(t, rep.Problem.PeakRSSGB, 0.0)
	require.Len(t, rep.Results, 3)
	for _, r := range rep.Results {
		require.NotNil(t, r.Seconds)
		require.Less(t, r.Eta, 1e-3)
	}
}

// --float64-time puts the same rows' float64 times beside a float32 run
// (each reaching δ there too), and nothing without it or on float64.
func TestBenchKPCAFloat64Time(t *testing.T) {
	type report struct {
		Problem struct {
			Operator        string  `json:"operator"`
			Float64GramSecs float64 `json:"float64_gram_seconds"`
		} `json:"problem"`
		Results []struct {
			Seconds        *float64 `json:"seconds"`
			Float64Seconds *float64 `json:"float64_seconds"`
			Eta            float64  `json:"eta"`
			Float64Eta     float64  `json:"float64_eta"`
			EtaOnFloat64   float64  `json:"eta_on_float64"`
		} `json:"results"`
	}
	for _, c := range []struct {
		operator string
		flag     bool
	}{{"float32", true}, {"float32", false}, {"float64", true}} {
		args := []string{"bench", "kpca", "--data", "randn", "--n", "150", "--d", "6", "--s", "3", "--kernel", "laplace",
			"--operator", c.operator, "--delta", "1e-2,1e-4", "--solvers", "lanczos,block", "--repeat", "1", "--json", "-"}
		if c.flag {
			args = append(args, "--float64-time")
		}
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		var rep report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Equal(t, c.operator, rep.Problem.Operator)
		require.Len(t, rep.Results, 4)
		with := c.flag && c.operator == "float32"
		require.Equal(t, with, rep.Problem.Float64GramSecs > 0, "%+v", c)
		deltas := []float64{1e-2, 1e-4, 1e-2, 1e-4}
		for i, r := range rep.Results {
			require.NotNil(t, r.Seconds)
			require.Less(t, r.Eta, deltas[i])
			if with {
				require.NotNil(t, r.Float64Seconds, "row %d", i)
				require.Less(t, r.Float64Eta, deltas[i], "row %d", i)
				// The float32 answer itself, scored on the float64 matrix.
				require.Greater(t, r.EtaOnFloat64, 0.0, "row %d", i)
				require.Less(t, r.EtaOnFloat64, deltas[i], "row %d", i)
			} else {
				require.Nil(t, r.Float64Seconds, "row %d", i)
				require.Zero(t, r.EtaOnFloat64, "row %d", i)
			}
		}
	}
}

func TestKPCACommands(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "x.csv")
	require.NoError(t, os.WriteFile(csv, []byte("a,b\n1,2\n2,1\n3,5\n4,4\n0,1\n5,2\n"), 0o644))
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--solver", "lbfgs")
	require.Equal(t, 0, code, stderr)
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 6)
	code, out, stderr = runCLI(t, "kpca", "transform", "--input", csv, "--apply", csv, "--components", "2", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Scores      [][]float64 `json:"scores"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Eigenvalues, 2)
	require.Len(t, r.Scores, 6)
	code, _, _ = runCLI(t, "kpca", "fit", "--input", csv, "--components", "6")
	require.Equal(t, 1, code)
	code, _, _ = runCLI(t, "kpca", "fit")
	require.Equal(t, 2, code)
	code, out, stderr = runCLI(t, "kpca", "sparse", "--n", "120", "--d", "4", "--components", "2", "--eps", "0,0.2", "--json")
	require.Equal(t, 0, code, stderr)
	var rows []map[string]float64
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 2)
	require.InDelta(t, 1, rows[0]["error_ratio"], 1e-9, "ε = 0 is the square loss")
	// The data's seed is 1 unless given: the same rows as --seed 1, not
	// those of another seed.
	bySeed := map[string]string{}
	for _, seed := range []string{"", "1", "2"} {
		args := []string{"kpca", "sparse", "--n", "120", "--d", "4", "--components", "2", "--eps", "0.2"}
		if seed != "" {
			args = append(args, "--seed", seed)
		}
		code, out, stderr = runCLI(t, append(args, "--json")...)
		require.Equal(t, 0, code, stderr)
		bySeed[seed] = out
	}
	require.Equal(t, bySeed["1"], bySeed[""])
	require.NotEqual(t, bySeed["2"], bySeed[""])
}

func TestBenchFigures(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "bench", "figures", "--out", dir, "--fig1-n", "200", "--fig1-c", "0.05,0.2",
		"--fig2-n", "200", "--fig2-s", "3,6")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "fig1_decay.png")
	for _, f := range []string{"fig1_decay.png", "fig2_s.png", "figures.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Greater(t, st.Size(), int64(100), f)
	}
	var figs struct {
		Fig1 []struct {
			C     float64 `json:"c"`
			Iters int     `json:"lbfgs_iterations"`
		} `json:"fig1"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "figures.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &figs))
	require.Len(t, figs.Fig1, 2)
	for _, r := range figs.Fig1 {
		require.Greater(t, r.Iters, 0)
	}
}

func TestBenchTablesSmall(t *testing.T) {
	dir := t.TempDir()
	// max-n below every paper task: nothing runs, the table has its header.
	code, out, stderr := runCLI(t, "bench", "tables", "--max-n", "100", "--out", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "| task | n | kernel |")
	_, err := os.Stat(filepath.Join(dir, "tables-laplace.json"))
	require.NoError(t, err)
}

func TestPPCA(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "toy.png")
	code, out, stderr := runCLI(t, "ppca", "--data", "toy", "--q", "3", "--sample", "50", "--plot", png, "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r struct {
		N         int       `json:"n"`
		Q         int       `json:"components"`
		Sigma2    float64   `json:"sigma2"`
		Explained float64   `json:"explained_variance"`
		Values    []float64 `json:"eigenvalues"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 20, r.N)
	require.Equal(t, 3, r.Q)
	// σ²_ML = Σ_{p>q} λ_p/(N(N−q)) lies between λ_{q+1}'s share and λ_q/N.
	require.LessOrEqual(t, r.Sigma2, r.Values[2]/20)
	require.Greater(t, r.Explained, 0.0)
	require.Less(t, r.Explained, 1.0)
	st, err := os.Stat(png)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(1000))

	// --nearest keeps the pre-image smoother's k largest weights: the fit
	// is the same, the reconstructions differ, and k beyond N is refused.
	recon := func(args ...string) (float64, float64) {
		code, out, stderr := runCLI(t, append([]string{"ppca", "--data", "toy", "--components", "2", "--json", "-"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var p struct {
			MSE    float64 `json:"reconstruction_mse"`
			Sigma2 float64 `json:"sigma2"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		return p.MSE, p.Sigma2
	}
	all, s2 := recon()
	one, s2one := recon("--nearest", "1")
	every, _ := recon("--nearest", "20")
	require.Equal(t, s2, s2one)
	require.NotEqual(t, all, one)
	require.InDelta(t, all, every, 1e-12*all, "the 20 largest of 20 weights are all of them")
	for _, bad := range []string{"21", "-1"} {
		code, _, stderr := runCLI(t, "ppca", "--data", "toy", "--components", "2", "--nearest", bad)
		require.NotEqual(t, 0, code, bad)
		require.Contains(t, stderr, "nearest", bad)
	}
	// Flags the fit would ignore.
	for _, bad := range [][]string{{"--kernel", "linear", "--sigma", "3"}, {"--kernel", "linear", "--gamma", "0.5"}, {"--classes", "3,4"}} {
		code, _, stderr := runCLI(t, append([]string{"ppca", "--data", "toy", "--components", "2"}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
	}

	// --gamma is scikit-learn's γ: σ = 1/√(2γ), the same fit as that σ
	// (γ = 0.5 is σ = 1, γ = 2 is σ = 0.5).
	for _, c := range [][2]string{{"0.5", "1"}, {"2", "0.5"}} {
		_, byGamma, stderr := runCLI(t, "ppca", "--data", "toy", "--q", "2", "--gamma", c[0], "--json", "-")
		require.Contains(t, stderr, "--gamma now means scikit-learn's γ")
		_, bySigma, _ := runCLI(t, "ppca", "--data", "toy", "--q", "2", "--sigma", c[1], "--json", "-")
		var g, s struct {
			Values []float64 `json:"eigenvalues"`
		}
		require.NoError(t, json.Unmarshal([]byte(byGamma), &g))
		require.NoError(t, json.Unmarshal([]byte(bySigma), &s))
		require.NotEmpty(t, g.Values)
		require.Equal(t, s.Values, g.Values, "γ = %s", c[0])
	}

	digits := filepath.Join(dir, "digits.png")
	code, out, stderr = runCLI(t, "ppca", "--data", "digits", "--classes", "0,1", "--sigma2", "0.0005", "--plot", digits)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "N=360")
	_, err = os.Stat(digits)
	require.NoError(t, err)

	code, _, _ = runCLI(t, "ppca", "--data", "toy")
	require.Equal(t, 2, code) // neither q nor σ²
	code, _, stderr = runCLI(t, "ppca", "--data", "toy", "--q", "25")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "q = 25")
	code, _, _ = runCLI(t, "ppca", "--data", "digits", "--classes", "0,1", "--n", "400", "--q", "2")
	require.Equal(t, 1, code) // only 360 zeros and ones
}

func TestRKMForecast(t *testing.T) {
	var forecasts [][]float64
	for _, args := range [][]string{
		{"--setting", "primal", "--train", "eig"},
		{"--setting", "dual", "--train", "eig"},
		{"--setting", "dual", "--train", "stiefel", "--rotate"},
	} {
		code, out, stderr := runCLI(t, append([]string{"rkm", "forecast", "--data", "sines", "--json", "-"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var r struct {
			Setting  string    `json:"setting"`
			MSE      *float64  `json:"mse"`
			Forecast []float64 `json:"forecast"`
			Truth    []float64 `json:"truth"`
			NTrain   int       `json:"n_train"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.Equal(t, args[1], r.Setting)
		require.Len(t, r.Forecast, 100)
		require.Equal(t, 359, r.NTrain)
		// The sum of two sines is a linear recurrence of order 4: s = 4
		// linear components forecast it to rounding.
		require.NotNil(t, r.MSE)
		require.Less(t, *r.MSE, 1e-8)
		forecasts = append(forecasts, r.Forecast)
	}
	for i := range forecasts[0] {
		require.InDelta(t, forecasts[0][i], forecasts[1][i], 1e-8)
		require.InDelta(t, forecasts[0][i], forecasts[2][i], 1e-4)
	}
	png := filepath.Join(t.TempDir(), "f.png")
	code, out, stderr := runCLI(t, "rkm", "forecast", "--data", "sines", "--plot", png)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "plot:")
	_, err := os.Stat(png)
	require.NoError(t, err)
	code, _, _ = runCLI(t, "rkm", "forecast", "--setting", "sideways")
	require.Equal(t, 2, code)
	// Flags the training asked would ignore: Stiefel's without --train
	// stiefel, the features' bandwidth without random features.
	for _, c := range []struct {
		flag string
		args []string
	}{{"--lr", []string{"--lr", "0.5"}}, {"--max-iter", []string{"--max-iter", "5"}}, {"--tol", []string{"--tol", "1e-3"}},
		{"--rotate", []string{"--rotate"}}, {"--rotate", []string{"--train", "eig", "--rotate"}},
		{"--sigma", []string{"--sigma", "3"}}, {"--sigma", []string{"--rff", "0", "--sigma", "3"}}} {
		code, _, stderr := runCLI(t, append([]string{"rkm", "forecast", "--data", "sines"}, c.args...)...)
		require.Equal(t, 2, code, "%v", c.args)
		require.Contains(t, stderr, c.flag, "%v", c.args)
	}
	code, _, stderr = runCLI(t, "rkm", "forecast", "--data", "sines", "--rff", "50", "--sigma", "3", "--horizon", "5", "--quiet")
	require.Equal(t, 0, code, stderr)
	// The random features' default bandwidth is the Santa Fe setting's
	// σ = 2.1856: the forecast is the one that σ given gives, and another
	// σ's differs.
	forecast := func(extra ...string) string {
		code, out, stderr := runCLI(t, append([]string{"rkm", "forecast", "--data", "sines", "--rff", "50", "--horizon", "5", "--json", "-"}, extra...)...)
		require.Equal(t, 0, code, stderr)
		var r struct {
			Forecast []float64 `json:"forecast"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return fmt.Sprint(r.Forecast)
	}
	byDefault := forecast()
	require.Equal(t, forecast("--sigma", "2.1856"), byDefault)
	require.NotEqual(t, forecast("--sigma", "1"), byDefault)
	code, _, _ = runCLI(t, "rkm")
	require.Equal(t, 2, code)
}

// A forecasting model saved by --save forecasts the same values from the
// same history with --model (its lag and scaling, no training); a --lag
// other than the model's is refused naming both, the model's own is
// accepted, and a model that is not a forecaster is refused.
func TestRKMForecastSavedModel(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "r.npz")
	type report struct {
		Lag      int       `json:"lag"`
		Model    string    `json:"model"`
		Forecast []float64 `json:"forecast"`
		NTrain   int       `json:"n_train"`
	}
	run := func(args ...string) report {
		code, out, stderr := runCLI(t, append([]string{"rkm", "forecast", "--data", "sines", "--json", "-", "--quiet"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var r report
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r
	}
	trained := run("--save", model)
	saved := run("--model", model)
	require.Equal(t, model, saved.Model)
	require.Equal(t, trained.Lag, saved.Lag)
	require.Equal(t, trained.NTrain, saved.NTrain)
	require.Equal(t, trained.Forecast, saved.Forecast)
	own := run("--model", model, "--lag", strconv.Itoa(trained.Lag))
	require.Equal(t, trained.Forecast, own.Forecast)
	code, _, stderr := runCLI(t, "rkm", "forecast", "--data", "sines", "--model", model, "--lag", strconv.Itoa(trained.Lag-1), "--quiet")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, fmt.Sprintf("--lag %d, the model's is %d", trained.Lag-1, trained.Lag))
	kpcaModel := filepath.Join(dir, "k.npz")
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", waveCSV(t, 50), "--kernel", "gaussian", "--save", kpcaModel, "--quiet")
	require.Equal(t, 0, code, stderr)
	code, _, _ = runCLI(t, "rkm", "forecast", "--data", "sines", "--model", kpcaModel, "--quiet")
	require.NotEqual(t, 0, code)
}

func TestKMvDA(t *testing.T) {
	code, out, stderr := runCLI(t, "kmvda", "--data", "sketch", "--train", "60", "--test", "40", "--kernel", "rbf", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Kind   string `json:"kind"`
		Choice struct {
			Sigma float64 `json:"sigma"`
			L     int     `json:"components"`
		} `json:"choice"`
		Pairs []struct {
			Gallery  string  `json:"gallery"`
			Accuracy float64 `json:"rank1"`
		} `json:"pairs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "rbf", r.Kind)
	require.Greater(t, r.Choice.Sigma, 0.0)
	require.Len(t, r.Pairs, 2)
	for _, p := range r.Pairs {
		// 40 test identities: chance is 2.5%.
		require.Greater(t, p.Accuracy, 0.2, "%+v", r)
	}
	code, out, stderr = runCLI(t, "kmvda", "--data", "poses", "--train", "12", "--test", "10", "--kernel", "rff", "--m", "128", "--l", "10")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "gallery +0°, probe -45°")

	dir := t.TempDir()
	code, out, stderr = runCLI(t, "kmvda", "table", "--quick", "--out", dir, "--m", "128", "--m-max", "256", "--crossover", "20,40", "--crossover-m", "64")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "| sketch | rbf |")
	for _, f := range []string{"kmvda_table.md", "kmvda_table.json", "kmvda_fig3_m.png", "kmvda_fig4_l.png", "kmvda_crossover.png"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
	code, _, _ = runCLI(t, "kmvda", "--kernel", "cubic")
	require.Equal(t, 2, code)
}

// A σ given on the command line is the σ used (only l and the
// regularisation are then chosen, and the line says so); numeric flags out
// of range are usage errors and counts that leave nothing to validate on
// are typed errors — none of them an index panic.
func TestKMvDAFlags(t *testing.T) {
	base := []string{"kmvda", "--data", "poses", "--train", "12", "--test", "10"}
	code, out, stderr := runCLI(t, append(base, "--kernel", "rbf", "--sigma", "3")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "σ=3 ")
	require.Contains(t, out, "(validation ")
	code, out, stderr = runCLI(t, append(base, "--kernel", "rbf", "--sigma", "3", "--components", "4", "--reg", "0.01")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "σ=3 reg=0.01 l=4 (given)")
	// The l grid is the one the help names.
	_, _, help := runCLI(t, "kmvda", "-h")
	require.Contains(t, help, "validation split among 10, 20, 50, 100, 200, 400)")
	// σ and l given, the regularisation not: it alone is chosen, among
	// bench.MvRegs (never left at 0).
	code, out, stderr = runCLI(t, append(base, "--kernel", "rbf", "--sigma", "3", "--components", "4")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "(validation ")
	require.Regexp(t, `σ=3 reg=(0\.001|0\.01|0\.1) l=4 `, out)
	for _, bad := range [][]string{
		{"--components", "-3"}, {"--val", "-2"}, {"--train", "-5"}, {"--test", "-5"}, {"--sigma", "-3"},
		{"--sigma", "NaN"}, {"--sigma", "Inf"}, {"--reg", "NaN"}, {"--test-frac", "2"}, {"--kernel", "rff", "--m", "0"},
		// Flags the run would ignore.
		{"--kernel", "linear", "--sigma", "2"}, {"--m", "100"}, {"--test-frac", "0.3"},
		{"--kernel", "rbf", "--sigma", "3", "--components", "4", "--reg", "0.01", "--val", "3"},
		{"--kernel", "linear", "--components", "4", "--reg", "0.01", "--val", "3"},
	} {
		code, _, stderr = runCLI(t, append(base, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
		require.NotContains(t, stderr, "panic", "%v", bad)
	}
	for _, bad := range [][]string{{"--val", "11"}, {"--train", "1"}} {
		code, _, stderr = runCLI(t, append(base, bad...)...)
		require.Equal(t, 1, code, "%v: %s", bad, stderr)
		require.Contains(t, stderr, "identities", "%v", bad)
	}
	code, _, stderr = runCLI(t, append(base, "--train", "3")...)
	require.Equal(t, 0, code, "three identities leave one to validate on: %s", stderr)
	dir := t.TempDir()
	ids, err := parseCrossover(" 3, 10,400")
	require.NoError(t, err)
	require.Equal(t, []int{3, 10, 400}, ids)
	for _, bad := range []string{"2", "3,2", "", "x", "4,,5"} {
		_, err := parseCrossover(bad)
		require.ErrorIs(t, err, errUsage, "%q", bad)
	}
	for _, bad := range [][]string{{"--m", "0"}, {"--m-max", "0"}, {"--crossover-m", "0"}, {"--crossover", "0"}, {"--crossover", "-5,x"}} {
		code, _, stderr = runCLI(t, append([]string{"kmvda", "table", "--quick", "--out", dir}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
	}
}

func TestKMvDACSV(t *testing.T) {
	dir := t.TempDir()
	// Two views of 12 classes with 3 samples each: view 2 is view 1 mixed
	// by a fixed matrix, both with noise.
	var a, b strings.Builder
	for c := 0; c < 12; c++ {
		for k := 0; k < 3; k++ {
			x := []float64{math.Cos(float64(c)) * 3, math.Sin(float64(c)) * 3, float64(c%4) - 1.5}
			n := func(i int) float64 { return 0.05 * math.Sin(float64(7*c+3*k+i)) }
			fmt.Fprintf(&a, "%g,%g,%g,%d\n", x[0]+n(0), x[1]+n(1), x[2]+n(2), c)
			fmt.Fprintf(&b, "%g,%g,%g,%d\n", x[0]-x[1]+n(3), x[1]+2*x[2]+n(4), x[0]+x[2]+n(5), c)
		}
	}
	pa, pb := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	require.NoError(t, os.WriteFile(pa, []byte(a.String()), 0o644))
	require.NoError(t, os.WriteFile(pb, []byte(b.String()), 0o644))
	code, out, stderr := runCLI(t, "kmvda", "--data", pa+","+pb, "--kernel", "linear", "--l", "3", "--reg", "0.001", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Pairs []struct {
			Gallery  string  `json:"gallery"`
			Probe    string  `json:"probe"`
			Accuracy float64 `json:"rank1"`
		} `json:"pairs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Pairs, 2)
	// Each view against the other, both ways.
	require.Equal(t, [2]string{"a.csv", "b.csv"}, [2]string{r.Pairs[0].Gallery, r.Pairs[0].Probe})
	require.Equal(t, [2]string{"b.csv", "a.csv"}, [2]string{r.Pairs[1].Gallery, r.Pairs[1].Probe})
	for _, p := range r.Pairs {
		require.Greater(t, p.Accuracy, 0.5) // 6 test classes: chance is 1/6
	}
	code, _, _ = runCLI(t, "kmvda", "--data", pa)
	require.Equal(t, 2, code) // one view
	// CSV files are split by --test-frac, not by identity counts.
	// The test fraction lies strictly between 0 and 1.
	for _, bad := range [][]string{{"--train", "6"}, {"--test", "4"}, {"--test-frac", "0"}, {"--test-frac", "1"}} {
		code, _, stderr = runCLI(t, append([]string{"kmvda", "--data", pa + "," + pb, "--kernel", "linear"}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
	}
	code, _, stderr = runCLI(t, "kmvda", "--data", pa+","+pb, "--kernel", "linear", "--l", "3", "--reg", "0.001", "--test-frac", "0.3")
	require.Equal(t, 0, code, stderr)
	// One feature and the label: the fewest columns a view file has.
	var one strings.Builder
	for c := 0; c < 12; c++ {
		for k := 0; k < 3; k++ {
			fmt.Fprintf(&one, "%g,%d\n", float64(c)+0.01*float64(k), c)
		}
	}
	p1 := filepath.Join(dir, "one.csv")
	require.NoError(t, os.WriteFile(p1, []byte(one.String()), 0o644))
	code, _, stderr = runCLI(t, "kmvda", "--data", p1+","+p1, "--kernel", "linear", "--l", "1", "--reg", "0.001")
	require.Equal(t, 0, code, stderr)
}

// The kernel operators through the CLI: every operator gives the same
// eigenvalues, the JSON carries the timing and memory fields, the check
// pass measures the residuals, and bad values are usage errors (exit 2).
func TestKPCAOperators(t *testing.T) {
	csv := waveCSV(t, 300)
	var ref []float64
	for _, op := range []string{"float64", "float32", "matrix-free"} {
		code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "4", "--operator", op,
			"--tol", "1e-12", "--check", "--format", "json")
		require.Equal(t, 0, code, stderr)
		var r struct {
			Eigenvalues []float64 `json:"eigenvalues"`
			Operator    string    `json:"operator"`
			Kernel      float64   `json:"kernel_seconds"`
			Solve       float64   `json:"solve_seconds"`
			Fit         float64   `json:"fit_seconds"`
			Peak        int64     `json:"peak_rss_bytes"`
			Check       struct {
				MaxRelative float64   `json:"max_relative"`
				Residuals   []float64 `json:"residuals"`
				Lambda1     float64   `json:"lambda1"`
			} `json:"check"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.Equal(t, op, r.Operator)
		require.Len(t, r.Check.Residuals, 4, "the check measured every pair")
		require.InDelta(t, r.Eigenvalues[0], r.Check.Lambda1, 1e-9*r.Eigenvalues[0])
		worst := 0.0
		for _, v := range r.Check.Residuals {
			worst = max(worst, v/r.Check.Lambda1)
		}
		require.Equal(t, worst, r.Check.MaxRelative)
		require.Greater(t, r.Fit, 0.0)
		require.GreaterOrEqual(t, r.Fit, r.Solve)
		require.Greater(t, r.Peak, int64(0))
		tol := 1e-9
		if op == "float32" {
			tol = 1e-5
		}
		require.Less(t, r.Check.MaxRelative, tol, op)
		if ref == nil {
			ref = r.Eigenvalues
		}
		for i := range ref {
			require.InDelta(t, ref[i], r.Eigenvalues[i], tol*ref[0], "%s value %d", op, i)
		}
	}
	for _, bad := range [][]string{{"--operator", "float16"}, {"--memory", "lots"}, {"--products", "half"}, {"--memory", "-1GiB"}} {
		args := append([]string{"kpca", "fit", "--input", csv}, bad...)
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
	}
	code, out, stderr := runCLI(t, "bench", "kpca", "--data", "randn", "--n", "150", "--d", "5", "--s", "3",
		"--kernel", "gaussian", "--bandwidth", "median", "--operator", "matrix-free", "--delta", "1e-3",
		"--solvers", "lanczos,lbfgs", "--repeat", "1", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Problem struct {
			Operator string `json:"operator"`
		} `json:"problem"`
		Results []struct {
			Operator string   `json:"operator"`
			Seconds  *float64 `json:"seconds"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "matrix-free", rep.Problem.Operator)
	for _, r := range rep.Results {
		require.Equal(t, "matrix-free", r.Operator)
		require.NotNil(t, r.Seconds)
	}
}

// Flags that are accepted must do something: --apply on fit, an unknown
// --format, a bad --bandwidth or --tol are usage errors (exit 2); -h and
// --version exit 0.
func TestCLIRefusesWhatItWouldIgnore(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("a,b\n1,2\n3,4\n5,7\n2,2\n"), 0o644))
	for _, args := range [][]string{
		{"kpca", "fit", "--input", csv, "--components", "1", "--apply", csv},
		{"kpca", "fit", "--input", csv, "--components", "1", "--format", "xml"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--bandwidth", "foo"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--tol", "-1"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--tol", "NaN"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--loss", "huber1"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--param", "0.1"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--start-rank", "2", "--solver", "lanczos"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--start-rank", "2", "--operator", "float32"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--relative"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--solver", "dca", "--param", "0.1"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--solver", "dca", "--loss", "eps2", "--param", "0.1", "--relative"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--solver", "magic"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--scale", "0"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--scale", "NaN"},
		{"kpca", "fit", "--input", csv, "--components", "1", "--save", dir},
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	// A kernel whose values overflow is named as such.
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "1", "--kernel", "poly", "--degree", "100000")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "the kernel matrix has entries that are not finite")
	code, _, _ = runCLI(t, "kpca", "-h")
	require.Equal(t, 0, code)
	code, out, _ := runCLI(t, "--version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "kdual")
}

// fit --save then transform --model: the saved model projects new rows as
// the fitted one does (the old transform path refits on the same data);
// a damaged model file is a one-line error.
func TestKPCASaveAndTransform(t *testing.T) {
	dir := t.TempDir()
	train, newRows, model := filepath.Join(dir, "train.csv"), filepath.Join(dir, "new.csv"), filepath.Join(dir, "m.npz")
	require.NoError(t, os.WriteFile(train, []byte("a,b,c\n1,2,0.5\n3,4,1\n5,7,2\n2,2,3\n0,1,1\n4,4,4\n"), 0o644))
	require.NoError(t, os.WriteFile(newRows, []byte("1,1,1\n2,3,0\n"), 0o644))
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", train, "--components", "2", "--solver", "dense", "--save", model)
	require.Equal(t, 0, code, stderr)
	code, viaModel, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", newRows)
	require.Equal(t, 0, code, stderr)
	code, viaRefit, _ := runCLI(t, "kpca", "transform", "--input", train, "--apply", newRows, "--components", "2", "--solver", "dense")
	require.Equal(t, 0, code)
	require.Equal(t, viaRefit, viaModel)
	require.Len(t, strings.Split(strings.TrimSpace(viaModel), "\n"), 2)

	raw, err := os.ReadFile(model)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(model, raw[:len(raw)/2], 0o644))
	code, _, stderr = runCLI(t, "kpca", "transform", "--model", model, "--input", newRows)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "bad model file")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	code, _, _ = runCLI(t, "kpca", "fit", "--input", train, "--model", model)
	require.Equal(t, 2, code)
}

// A CSV with a label column of names and a semicolon-separated copy give
// the same scores; without --label-column the names are an error naming
// the line and column.
func TestKPCALabelColumnAndDelimiter(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "iris.csv"), filepath.Join(dir, "iris.txt")
	rows := "5.1,3.5,1.4,setosa\n7.0,3.2,4.7,versicolor\n6.3,3.3,6.0,virginica\n5.0,3.6,1.4,setosa\n6.9,3.1,4.9,versicolor\n"
	require.NoError(t, os.WriteFile(a, []byte("sl,sw,pl,species\n"+rows), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(strings.ReplaceAll(rows, ",", ";")), 0o644))
	code, outA, stderr := runCLI(t, "kpca", "fit", "--input", a, "--label-column", "-1", "--components", "2", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	code, outB, stderr := runCLI(t, "kpca", "fit", "--input", b, "--label-column", "4", "--delimiter", ";", "--components", "2", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, outA, outB)
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", a, "--components", "2")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "line 2 column 4")
	code, _, _ = runCLI(t, "kpca", "fit", "--input", a, "--delimiter", "ab")
	require.Equal(t, 2, code)
}

// A cancelled run (Ctrl-C cancels runCtx in main) ends with exit status
// 130, one line naming where it stopped, and nothing on stdout; a .npy
// input fits like the same CSV.
func TestKPCAInterruptedAndNumPyInput(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2\n3,4\n5,7\n2,2\n0,1\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runCtx = ctx
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "1")
	runCtx = context.Background()
	require.Equal(t, 128+int(syscall.SIGINT), code, "the status shells report for Ctrl-C: %s", stderr)
	require.Empty(t, out)
	require.Contains(t, stderr, "interrupted")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(withoutNotes(stderr)), "\n")+1, "one line: %q", stderr)

	// The same five rows as an .npy file (float64, C order).
	npy := filepath.Join(dir, "d.npy")
	head := "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 2), }\n"
	raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(head)), 0)
	raw = append(raw, head...)
	for _, v := range []float64{1, 2, 3, 4, 5, 7, 2, 2, 0, 1} {
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
	}
	require.NoError(t, os.WriteFile(npy, raw, 0o644))
	code, fromCSV, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "1", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	code, fromNPY, stderr := runCLI(t, "kpca", "fit", "--input", npy, "--components", "1", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, fromCSV, fromNPY)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Numeric flags out of range are usage errors naming the flag, found
// before any data is read or memory allocated.
func TestFlagRanges(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2\n3,4\n5,7\n2,2\n0,1\n"), 0o644))
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"kpca", "fit", "--input", csv, "--threads", "100000"}, "--threads"},
		{[]string{"kpca", "fit", "--input", csv, "--threads", "-1"}, "--threads"},
		{[]string{"kpca", "fit", "--input", csv, "--max-rows", "-3"}, "--max-rows"},
		{[]string{"kpca", "fit", "--input", csv, "--sigma", "1e-300"}, "--sigma"},
		{[]string{"kpca", "fit", "--input", csv, "--kernel", "laplace", "--sigma", "-2"}, "--sigma"},
		{[]string{"kpca", "fit", "--data", "fashion", "--n", "100000000"}, "--n"},
		{[]string{"bench", "kpca", "--data", "randn", "--n", "50", "--delta", "1e-3,0"}, "--delta"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.flag, "%v", c.args)
	}
}

// --mpi-timeout is refused without --mpi (its default: dist.DefaultTimeout).
func TestMPITimeoutDefault(t *testing.T) {
	code, _, stderr := runCLI(t, "kpca", "fit", "--data", "fashion", "--n", "10", "--mpi-timeout", "30s")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "--mpi-timeout")
}

// -h and --help exit 0 on every command and subcommand.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"bench"}, {"bench", "kpca"}, {"bench", "approx"}, {"rkm"}, {"rkm", "forecast"}, {"kpca", "fit"},
		{"kpca", "transform"}, {"kmvda"}, {"ppca"}, {"eig"}, {"info"}, {"tune"}} {
		for _, h := range []string{"-h", "--help"} {
			code, _, stderr := runCLI(t, append(append([]string{}, args...), h)...)
			require.Equal(t, 0, code, "%v %s: %s", args, h, stderr)
		}
	}
}

// --version names the release of the VERSION file (stamped by make build;
// a test binary has none, so the module's version stands in).
func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "--version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "kdual "), out)
	old := release
	defer func() { release = old }()
	release = "1.2.3"
	_, out, _ = runCLI(t, "--version")
	require.True(t, strings.HasPrefix(out, "kdual 1.2.3"), out)
}

// Flags that would be ignored are errors naming them: fit flags on a
// transform with --model, --n without --data.
func TestIgnoredFlagsAreErrors(t *testing.T) {
	_, csv, model := smallModel(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"kpca", "transform", "--model", model, "--input", csv, "--components", "5"}, "--components"},
		{[]string{"kpca", "transform", "--model", model, "--input", csv, "--sigma", "3"}, "--sigma"},
		{[]string{"kpca", "fit", "--input", csv, "--n", "3"}, "--n"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.flag)
	}
	code, _, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", csv)
	require.Equal(t, 0, code, stderr)
}

// What was read is said on stderr (shape, header, label column), and
// --quiet says nothing but errors.
func TestReadLineAndQuiet(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("a,b,c\n1,2,x\n3,4,y\n5,7,x\n2,2,y\n"), 0o644))
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--label-column", "3", "--components", "1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "kdual: read 4×2 from "+csv+" (header row; label column 3 left out)\n")
	require.Contains(t, stderr, "kdual: operator ")
	// No header, no label column, no columns chosen: the shape alone.
	plain := filepath.Join(dir, "plain.csv")
	require.NoError(t, os.WriteFile(plain, []byte("1,2\n3,4\n5,7\n2,2\n"), 0o644))
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", plain, "--components", "1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "kdual: read 4×2 from "+plain+"\n")
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--columns", "b,a", "--components", "1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "kdual: read 4×2 from "+csv+" (header row; columns b,a)\n")
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--label-column", "3", "--components", "1", "--quiet")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.NotEmpty(t, out)
	require.True(t, quietArgs([]string{"kpca", "fit", "--quiet"}))
	require.True(t, quietArgs([]string{"kpca", "-h"}))
	require.True(t, quietArgs([]string{"--version"}))
	require.False(t, quietArgs([]string{"kpca", "fit", "--", "-h"}))
	require.False(t, quietArgs([]string{"kpca", "fit", "--", "--quiet"}))
	require.False(t, quietArgs([]string{"kpca", "fit", "--quiet=false"}))
}

// A mistyped flag is one line naming the nearest flag and how to list
// them (exit 2); -h lists the command's flags and exits 0.
func TestFlagTypoSuggestion(t *testing.T) {
	code, _, stderr := runCLI(t, "kpca", "fit", "--compnents", "3")
	require.Equal(t, 2, code)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	require.Contains(t, stderr, "unknown flag --compnents; did you mean --components?")
	require.Contains(t, stderr, "kdual kpca fit -h")
	code, _, stderr = runCLI(t, "ppca", "--zzzzzz")
	require.Equal(t, 2, code)
	require.NotContains(t, stderr, "did you mean")
	code, _, stderr = runCLI(t, "kpca", "fit", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "-components")
	require.Equal(t, 1, editDistance("compnents", "components"))
	require.Equal(t, 3, editDistance("kitten", "sitting"))
	require.Equal(t, 0, editDistance("", ""))
	// The nearest flag within a third of the name's length (rounded down),
	// or the first one edit further when that is at most two edits:
	// sigam → sigma (a transposition, two edits), m → n,
	// componentsxyzw → components (4 of 14), not with 8 more letters.
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	for _, name := range []string{"sigma", "seed", "components", "n"} {
		fs.Int(name, 0, "")
	}
	for name, want := range map[string]string{"sigam": "sigma", "sed": "seed", "componentsxyz": "components",
		"componentsxyzw": "components", "componentsabcdefgh": "", "m": "n", "xyzzy": "", "sigmaaaa": ""} {
		require.Equal(t, want, closestFlag(fs, name), "%q", name)
	}
}

// Output paths are checked before any work: a missing or unwritable
// directory is a usage error naming the flag, at once; the probe file is
// removed.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"kpca", "fit", "--data", "fashion", "--n", "20000", "--save", filepath.Join(dir, "no", "m.npz")},
		{"kpca", "fit", "--data", "fashion", "--n", "20000", "--json", filepath.Join(dir, "no", "r.json")},
		{"ppca", "--plot", filepath.Join(dir, "no", "p.png")},
		{"rkm", "forecast", "--save", filepath.Join(dir, "no", "r.npz")},
		{"kmvda", "table", "--out", filepath.Join(dir, "no")},
		{"tune", "--out", filepath.Join(dir, "no", "profile.json")},
	} {
		start := time.Now()
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "does not exist", "%v", args)
		require.Less(t, time.Since(start), time.Second, "%v", args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no probe left behind")
	// A read-only directory (not for root, who may write anywhere).
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		code, _, stderr := runCLI(t, "kpca", "fit", "--data", "fashion", "--n", "100", "--save", filepath.Join(ro, "m.npz"))
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "cannot write")
	}
}

// A model file given as data is refused, pointing at --model.
func TestModelFileAsInputRefused(t *testing.T) {
	_, _, model := smallModel(t)
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", model, "--components", "1")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--model")
}

// kpca fit --plot draws the first two components to a PNG and says so; a
// plot that cannot be written is an error; one component is a usage error
// found before the fit.
func TestKPCAPlot(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2,a\n3,4,b\n5,7,a\n2,2,b\n0,1,a\n4,4,b\n"), 0o644))
	png := filepath.Join(dir, "s.png")
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--label-column", "3", "--components", "2", "--plot", png)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(png)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(raw, []byte("\x89PNG")), "a PNG file")
	require.Contains(t, stderr, "plot written to "+png)
	// A plot that cannot be written fails the command, never silently.
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--plot", dir)
	require.NotEqual(t, 0, code, stderr)
	require.NotContains(t, stderr, "plot written")
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--components", "1", "--plot", png)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "--plot")
}

// kpca transform -h lists transform's flags, not fit's.
func TestTransformHelp(t *testing.T) {
	code, _, stderr := runCLI(t, "kpca", "transform", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "-model")
	require.NotContains(t, stderr, "-components")
	require.NotContains(t, stderr, "-solver")
	require.True(t, helpAsked([]string{"--input", "x", "--help"}))
	require.False(t, helpAsked([]string{"--", "-h"}))
}

// rkm forecast prints the forecast itself, one step per line, with the
// held-out value when there is one.
func TestRKMForecastPrinted(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "s.txt")
	var text strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&text, "%.6f\n", math.Sin(float64(i)/5)+0.3*math.Sin(float64(i)/3))
	}
	require.NoError(t, os.WriteFile(series, []byte(text.String()), 0o644))
	code, out, stderr := runCLI(t, "rkm", "forecast", "--data", series, "--test", "0", "--horizon", "4", "--components", "4")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "step,forecast", lines[1])
	require.Len(t, lines, 6)
	require.True(t, strings.HasPrefix(lines[5], "4,"))
	code, out, stderr = runCLI(t, "rkm", "forecast", "--data", series, "--test", "10", "--components", "4")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "step,forecast,actual\n1,")
	// One step with a held-out value is scored (MSE and MAE of that step);
	// steps past the series' end are not.
	var rep struct {
		NTest    int       `json:"n_test"`
		MSE      *float64  `json:"mse"`
		MAE      *float64  `json:"mae"`
		Forecast []float64 `json:"forecast"`
		Truth    []float64 `json:"truth"`
	}
	code, out, stderr = runCLI(t, "rkm", "forecast", "--data", series, "--test", "10", "--horizon", "1", "--components", "4", "--json", "-")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, 1, rep.NTest)
	require.Len(t, rep.Forecast, 1)
	require.Len(t, rep.Truth, 1)
	require.NotNil(t, rep.MSE)
	require.NotNil(t, rep.MAE)
	e := rep.Forecast[0] - rep.Truth[0]
	require.InDelta(t, e*e, *rep.MSE, 1e-12*(1+e*e))
	require.InDelta(t, math.Abs(e), *rep.MAE, 1e-12*(1+math.Abs(e)))
	rep.MSE, rep.MAE = nil, nil
	code, out, stderr = runCLI(t, "rkm", "forecast", "--data", series, "--test", "0", "--horizon", "4", "--components", "4", "--json", "-")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Nil(t, rep.MSE)
	require.Nil(t, rep.MAE)
	require.Len(t, rep.Forecast, 4)
}

// kpca fit --fit-inverse saves the pre-image map; transform --inverse maps
// scores back to input space exactly as the library's InverseTransform of
// the saved model; a model without the map, and --alpha alone, are errors.
func TestKPCAInverseCLI(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2,0.5\n3,4,1\n5,7,2\n2,2,0\n0,1,1\n4,4,3\n6,1,2\n"), 0o644))
	model, scores := filepath.Join(dir, "m.npz"), filepath.Join(dir, "z.csv")
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--fit-inverse", "--alpha", "0.05", "--save", model)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, os.WriteFile(scores, []byte(out), 0o644))
	code, pre, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", scores, "--inverse")
	require.Equal(t, 0, code, stderr)
	f, err := os.Open(model)
	require.NoError(t, err)
	m, err := kpca.Load(f)
	f.Close()
	require.NoError(t, err)
	z, err := dataset.ReadTable(scores, dataset.CSVOptions{})
	require.NoError(t, err)
	want, err := m.InverseTransform(z.X)
	require.NoError(t, err)
	got, err := dataset.ReadTable(writeTemp(t, dir, "p.csv", pre), dataset.CSVOptions{})
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(want, got.X, 1e-15))
	plain := filepath.Join(dir, "plain.npz")
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--save", plain)
	require.Equal(t, 0, code, stderr)
	code, _, _ = runCLI(t, "kpca", "transform", "--model", plain, "--input", scores, "--inverse")
	require.Equal(t, 1, code)
	code, _, _ = runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--alpha", "0.1")
	require.Equal(t, 2, code)
}

// scikit-learn's rbf with γ unset takes γ = 1/d in the fit and 1/s in the
// pre-image map (its kernel's default at the scores' dimension), and so
// does kpca fit --kernel rbf: on the training scores Z the map's output X̂
// = K_Z·A with (K_Z + αI)·A = X, so K_Z·(X − X̂)/α = X̂ for K_Z the
// Gaussian exp(−‖z − z'‖²/s) of the scores, and not for γ = 1/d.
func TestKPCAInverseRBFDefaultGamma(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2,0.5,1\n3,4,1,0\n5,7,2,2\n2,2,0,1\n0,1,1,3\n4,4,3,1\n6,1,2,0\n"), 0o644))
	model := filepath.Join(dir, "m.npz")
	const alpha = 0.5
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "rbf", "--components", "2", "--fit-inverse", "--alpha", "0.5", "--save", model)
	require.Equal(t, 0, code, stderr)
	scores := writeTemp(t, dir, "z.csv", out)
	code, pre, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", scores, "--inverse")
	require.Equal(t, 0, code, stderr)
	x, err := dataset.ReadTable(csv, dataset.CSVOptions{})
	require.NoError(t, err)
	z, err := dataset.ReadTable(scores, dataset.CSVOptions{})
	require.NoError(t, err)
	xh, err := dataset.ReadTable(writeTemp(t, dir, "p.csv", pre), dataset.CSVOptions{})
	require.NoError(t, err)
	var a mat.Dense
	a.Sub(x.X, xh.X)
	a.Scale(1/alpha, &a)
	resid := func(gamma float64) float64 {
		kz, err := kernel.Gram(z.X, kernel.Kernel{Kind: kernel.Gaussian, Gamma: gamma})
		require.NoError(t, err)
		var r mat.Dense
		r.Mul(kz, &a)
		r.Sub(&r, xh.X)
		return mat.Norm(&r, math.Inf(1)) / mat.Norm(x.X, math.Inf(1))
	}
	require.Less(t, resid(1.0/2), 1e-9)
	require.Greater(t, resid(1.0/4), 1e-3)
}

func writeTemp(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// kdual bench small reports the first and the steady fit per size.
func TestBenchSmall(t *testing.T) {
	code, out, stderr := runCLI(t, "bench", "small", "--n", "30,40", "--repeat", "3", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		N       int     `json:"n"`
		First   float64 `json:"first_seconds"`
		Median  float64 `json:"median_seconds"`
		Solver  string  `json:"solver"`
		Lambda1 float64 `json:"lambda1"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, 40, rows[1].N)
	require.Equal(t, "dense", rows[0].Solver)
	require.Greater(t, rows[0].First, 0.0)
	require.Greater(t, rows[0].Lambda1, 0.0)
	// The default setting: the first n Fashion-MNIST training images, the
	// Gaussian kernel of σ = 11.5, 5 components, the library's defaults.
	f, err := dataset.LoadFashion("", "train", 30)
	require.NoError(t, err)
	m := &kpca.KPCA{Components: 5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 11.5}}
	require.NoError(t, m.Fit(f.X))
	vals, _ := m.Eigenvalues()
	require.Equal(t, vals[0], rows[0].Lambda1)
	// Above eig.Auto's dense limit the library's default is block Krylov
	// at its default tolerance: the same bits.
	code, out, stderr = runCLI(t, "bench", "small", "--n", "700", "--repeat", "1", "--json", "-")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	require.NotEqual(t, "dense", rows[0].Solver)
	f, err = dataset.LoadFashion("", "train", 700)
	require.NoError(t, err)
	m = &kpca.KPCA{Components: 5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 11.5}}
	require.NoError(t, m.Fit(f.X))
	vals, _ = m.Eigenvalues()
	require.Equal(t, vals[0], rows[0].Lambda1)
	code, _, _ = runCLI(t, "bench", "small", "--n", "3", "--components", "5")
	require.Equal(t, 2, code)
}

// smallModel writes a 5×2 CSV and a one-component model fitted on it, in a
// fresh directory: (directory, CSV, model).
func smallModel(t *testing.T) (string, string, string) {
	t.Helper()
	dir := t.TempDir()
	csv := writeTemp(t, dir, "d.csv", "1,2\n3,4\n5,7\n2,2\n0,1\n")
	model := filepath.Join(dir, "m.npz")
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "1", "--save", model)
	require.Equal(t, 0, code, stderr)
	return dir, csv, model
}

// --sample with --approx nystrom: the landmarks' sample is reported in the
// JSON (none with -1: all rows, nor with 0 at a size where the rule saves
// too little); bad values and combinations are usage errors (exit 2).
func TestKPCAApproxSample(t *testing.T) {
	csv := waveCSV(t, 900)
	common := []string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "3", "--approx", "nystrom",
		"--landmarks", "10", "--approx-precision", "float32", "--format", "json"}
	for _, c := range []struct {
		sample string
		want   int
	}{{"0", 0}, {"-1", 0}, {"200", 200}} {
		code, out, stderr := runCLI(t, append(common, "--sample", c.sample)...)
		require.Equal(t, 0, code, stderr)
		var r struct {
			Eigenvalues []float64 `json:"eigenvalues"`
			Approx      struct {
				Sample     int     `json:"sample"`
				TraceError float64 `json:"trace_error"`
			} `json:"approx"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.Equal(t, c.want, r.Approx.Sample, "--sample %s", c.sample)
		require.Len(t, r.Eigenvalues, 3)
		require.Greater(t, r.Approx.TraceError, 0.0)
	}
	for _, bad := range [][]string{
		{"--approx", "nystrom", "--landmarks", "10", "--sample", "-2", "--approx-precision", "float32"},
		{"--approx", "nystrom", "--landmarks", "10", "--sample", "100"},
		{"--approx", "rff", "--sample", "100"},
		{"--sample", "100"},
	} {
		code, _, stderr := runCLI(t, append([]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian"}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, stderr)
	}
}

// waveCSV writes n rows (sin i, cos 3i, (i mod 7)/7) to a CSV file in a
// test directory and returns its path.
func waveCSV(t *testing.T, n int) string {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "x.csv")
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%g,%g,%g\n", math.Sin(float64(i)), math.Cos(float64(3*i)), float64(i%7)/7)
	}
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	return csv
}

// --scale s multiplies the data in place: a fit (and the new rows of
// --apply) on data scaled by 0.5 prints the same scores as the same fit on
// the halved numbers (exact: halving is exact in binary), and scaleData
// touches only a view's own columns.
func TestKPCAScale(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	require.NoError(t, os.WriteFile(a, []byte("2,4,1\n6,8,2\n10,14,4\n4,4,6\n0,2,2\n8,8,8\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("1,2,0.5\n3,4,1\n5,7,2\n2,2,3\n0,1,1\n4,4,4\n"), 0o644))
	code, scaled, stderr := runCLI(t, "kpca", "transform", "--input", a, "--apply", a, "--scale", "0.5", "--components", "2", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	code, plain, stderr := runCLI(t, "kpca", "transform", "--input", b, "--apply", b, "--components", "2", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, plain, scaled)

	x := mat.NewDense(3, 4, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	v := x.Slice(0, 3, 1, 3).(*mat.Dense)
	scaleData(v, 3)
	require.Equal(t, []float64{1, 6, 9, 4, 5, 18, 21, 8, 9, 30, 33, 12}, x.RawMatrix().Data)
	scaleData(x, 1)
	require.Equal(t, []float64{1, 6, 9, 4, 5, 18, 21, 8, 9, 30, 33, 12}, x.RawMatrix().Data)
}

// fit --scale is saved with the model: transform --model scales new data
// the same way without being told (the training data give the training
// scores back), pre-images come back in the data's own units, and a
// different --scale is a usage error.
func TestKPCAScaleSavedWithModel(t *testing.T) {
	dir := t.TempDir()
	csv := writeTemp(t, dir, "d.csv", "1,2,0.5\n3,4,1\n5,7,2\n2,2,0\n0,1,1\n4,4,3\n6,1,2\n")
	model := filepath.Join(dir, "m.npz")
	code, fit, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "rbf", "--gamma", "0.5", "--components", "2",
		"--scale", "0.25", "--fit-inverse", "--save", model)
	require.Equal(t, 0, code, stderr)
	code, again, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", csv)
	require.Equal(t, 0, code, stderr)
	want, err := dataset.ReadTable(writeTemp(t, dir, "a.csv", fit), dataset.CSVOptions{})
	require.NoError(t, err)
	got, err := dataset.ReadTable(writeTemp(t, dir, "b.csv", again), dataset.CSVOptions{})
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(want.X, got.X, 1e-12), "transform without --scale")
	code, _, _ = runCLI(t, "kpca", "transform", "--model", model, "--input", csv, "--scale", "0.5")
	require.Equal(t, 2, code)
	code, _, stderr = runCLI(t, "kpca", "transform", "--model", model, "--input", csv, "--scale", "0.25")
	require.Equal(t, 0, code, stderr)
	// Pre-images of the training scores, in the data's units: near the
	// data (the ridge map smooths), not near the data scaled by ¼.
	code, pre, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", writeTemp(t, dir, "z.csv", fit), "--inverse")
	require.Equal(t, 0, code, stderr)
	p, err := dataset.ReadTable(writeTemp(t, dir, "p.csv", pre), dataset.CSVOptions{})
	require.NoError(t, err)
	x, err := dataset.ReadTable(csv, dataset.CSVOptions{})
	require.NoError(t, err)
	var d, q mat.Dense
	d.Sub(p.X, x.X)
	q.Scale(0.25, x.X)
	q.Sub(p.X, &q)
	require.Less(t, mat.Norm(&d, 2), mat.Norm(&q, 2))
}

// The text forecast: a header naming the columns, then one line a step,
// the held-out value beside the steps that have one, an empty third field
// past them, and two fields where nothing was held out.
func TestPrintRKMColumns(t *testing.T) {
	var b strings.Builder
	printRKM(&b, &bench.RKMReport{Data: "x", Setting: "dual", Forecast: []float64{1.5, 2, 3}, Truth: []float64{1.25}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{"step,forecast,actual", "1,1.5,1.25", "2,2,", "3,3,"}, lines[1:])
	b.Reset()
	printRKM(&b, &bench.RKMReport{Data: "x", Setting: "dual", Forecast: []float64{1.5, 2}})
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{"step,forecast", "1,1.5", "2,2"}, lines[1:])
}

// bench lapack times gonum's decompositions on kdual's LAPACK or gonum's
// own, each row with a small relative residual; an unknown op or
// implementation is a usage error.
func TestBenchLAPACKCLI(t *testing.T) {
	for _, impl := range []string{"openblas", "gonum"} {
		code, out, stderr := runCLI(t, "bench", "lapack", "--n", "40", "--impl", impl)
		require.Equal(t, 0, code, stderr)
		var rows []struct {
			Op      string  `json:"op"`
			N       int     `json:"n"`
			Impl    string  `json:"impl"`
			Seconds float64 `json:"seconds"`
			Check   float64 `json:"check"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rows))
		require.Len(t, rows, 6, impl)
		for _, r := range rows {
			require.Equal(t, impl, r.Impl)
			require.Equal(t, 40, r.N)
			require.Greater(t, r.Seconds, 0.0, r.Op)
			require.Less(t, r.Check, 1e-12, "%s on %s", r.Op, impl)
		}
	}
	for _, bad := range [][]string{{"--ops", "magic"}, {"--impl", "fortran"}} {
		code, _, _ := runCLI(t, append([]string{"bench", "lapack", "--n", "20"}, bad...)...)
		require.Equal(t, 2, code, "%v", bad)
	}
}

// The papers' experiments name their setting in the table: kpca sparse's
// defaults d = 20 and s = 5 (Fig. 4's), ε = 0 (the square loss itself)
// with no zero rows and ratios 1; kpca robust's Iris, ω = 0.08 and s = 4
// (= d); one row per ε or τ in the order given.
func TestExperimentDefaults(t *testing.T) {
	for _, c := range []struct {
		args, want []string
	}{
		{[]string{"kpca", "sparse", "--n", "80", "--eps", "0,0.2"},
			[]string{"ℓ²_ε, n=80, d=20, s=5", "| 0 | 0.0% | 1.0000 | 1.0000 |", "\n| 0.2 | "}},
		{[]string{"kpca", "robust", "--tau", "10,50", "--seeds", "1"},
			[]string{"Iris, ω=0.08, s=4, means over 1 seeds", "\n| 10 | ", "\n| 50 | "}},
	} {
		code, out, stderr := runCLI(t, c.args...)
		require.Equal(t, 0, code, "%v: %s", c.args, stderr)
		for _, w := range c.want {
			require.Contains(t, out, w, "%v", c.args)
		}
	}
}
