package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/probe"
	"github.com/kdual/kdual/paths"
)

// envAsCLI makes the test binary behave as the kdual command (main's
// start-up, then run with the process's arguments), so that tests can run
// the command in processes of its own.
const envAsCLI = "KDUAL_TEST_AS_CLI"

// The command's tests run run() in this process, under the settings main
// makes (gonum on OpenBLAS, the thread timeout, the paths of the rules);
// with envAsCLI set, the binary is the command.
func TestMain(m *testing.M) {
	if os.Getenv(envAsCLI) == "1" {
		restartForCore(os.Stderr)
		if err := setupProcess(); err != nil {
			fmt.Fprintln(os.Stderr, "kdual:", err)
			os.Exit(2)
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	if err := setupProcess(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// cliProcess runs the command in a process of its own and returns its
// exit status, standard output and standard error.
func cliProcess(t *testing.T, env []string, args ...string) (int, []byte, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envAsCLI+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "%v: %s", err, errOut.String())
		code = ee.ExitCode()
	}
	return code, out.Bytes(), errOut.String()
}

// A generic core chosen by OpenBLAS (faked: this machine's OpenBLAS may
// know its processor) makes the command restart itself once with the
// matching core, say so on stderr and in kdual info; a core the user set
// is never overridden.
func TestCoreRestart(t *testing.T) {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		t.Setenv("OPENBLAS_CORETYPE", "")
		os.Unsetenv("OPENBLAS_CORETYPE")
	}
	want := paths.WantCore(paths.Detect().CPU)
	code, out, stderr := cliProcess(t, []string{envFakeCore + "=Prescott"}, "info", "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r infoReport
	require.NoError(t, json.Unmarshal(out, &r))
	if want == "" {
		require.NotContains(t, stderr, "restarting")
		return
	}
	require.Contains(t, stderr, "restarting with OPENBLAS_CORETYPE="+want)
	require.Equal(t, 1, strings.Count(stderr, "restarting"), "restarted more than once")
	require.Equal(t, "kdual restart from Prescott", r.CoreSource)
	require.True(t, strings.EqualFold(want, r.Core), "OpenBLAS runs %s, want %s", r.Core, want)
	require.False(t, r.CoreCheck.Restart)
	// The user's choice stands.
	code, out, stderr = cliProcess(t, []string{envFakeCore + "=Prescott", "OPENBLAS_CORETYPE=Prescott"}, "info", "--json", "-")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal(out, &r))
	require.NotContains(t, stderr, "restarting")
	require.Equal(t, "OPENBLAS_CORETYPE=Prescott", r.CoreSource)
}

// Two processes with the same inputs and options (memory budget included)
// give the same bytes: scores, eigenvalues (JSON) and saved models, for
// every operator, Nyström in float64 and float32, and transform — one of
// the two runs beside a competing load. n = 2100 is just above the
// planner's float32-for-speed threshold (2048).
func TestSameBitsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "x.csv")
	r := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	for i := 0; i < 2100; i++ {
		for j := 0; j < 12; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%.17g", r.NormFloat64()+float64(i%5))
		}
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	base := []string{"kpca", "fit", "--input", csv, "--components", "4"}
	for _, c := range [][]string{
		{"--operator", "auto", "--tol", "1e-4", "--memory", "2GiB"},
		{"--operator", "float64", "--memory", "2GiB"},
		{"--operator", "float32", "--tol", "1e-4", "--memory", "2GiB"},
		{"--operator", "float32", "--products", "float32", "--tol", "1e-4", "--memory", "2GiB"},
		{"--operator", "matrix-free", "--tol", "1e-6", "--memory", "2GiB"},
		{"--solver", "lbfgs", "--memory", "2GiB"},
		{"--approx", "nystrom", "--landmarks", "200"},
		{"--approx", "nystrom", "--landmarks", "200", "--approx-precision", "float32"},
	} {
		var outs [2][]byte
		var models [2][]byte
		for run := 0; run < 2; run++ {
			model := filepath.Join(dir, fmt.Sprintf("m%d.npz", run))
			args := append(append(append([]string{}, base...), c...), "--json", "-", "--save", model)
			var stopLoad func()
			if run == 1 {
				stopLoad = competingLoad()
			}
			code, out, stderr := cliProcess(t, nil, args...)
			if stopLoad != nil {
				stopLoad()
			}
			require.Equal(t, 0, code, "%v: %s", c, stderr)
			outs[run] = stripTimes(t, out)
			m, err := os.ReadFile(model)
			require.NoError(t, err)
			models[run] = m
		}
		require.Equal(t, string(outs[0]), string(outs[1]), "%v: eigenvalues or scores differ between processes", c)
		require.True(t, bytes.Equal(models[0], models[1]), "%v: saved models differ", c)
		code, t1, stderr := cliProcess(t, nil, "kpca", "transform", "--model", filepath.Join(dir, "m0.npz"), "--input", csv)
		require.Equal(t, 0, code, stderr)
		stop := competingLoad()
		code, t2, stderr := cliProcess(t, nil, "kpca", "transform", "--model", filepath.Join(dir, "m0.npz"), "--input", csv)
		stop()
		require.Equal(t, 0, code, stderr)
		require.Equal(t, string(t1), string(t2), "%v: transform differs between processes", c)
	}
}

// competingLoad keeps every CPU busy in this process until stopped.
func competingLoad() (stop func()) {
	var done atomic.Bool
	for i := 0; i < runtime.NumCPU(); i++ {
		go func() {
			x := 1.0
			for !done.Load() {
				for k := 0; k < 1000; k++ {
					x = x*1.0000001 + 1e-9
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true) }
}

// stripTimes removes the keys that hold wall-clock times from a JSON
// report (everything else must be the same bits).
func stripTimes(t *testing.T, doc []byte) []byte {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(doc, &v), "%s", doc)
	var walk func(x any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case map[string]any:
			for k, e := range y {
				if strings.HasSuffix(k, "seconds") || k == "peak_rss_bytes" || k == "memory_peak_bytes" {
					delete(y, k)
					continue
				}
				y[k] = walk(e)
			}
		case []any:
			for i, e := range y {
				y[i] = walk(e)
			}
		}
		return x
	}
	out, err := json.Marshal(walk(v))
	require.NoError(t, err)
	return out
}

// No timing decides anything in a default run: fits of every operator,
// Nyström, RFF, the eigensolver command and info time nothing (the
// measurements live in gram.Tune, which counts itself).
func TestNoProbeInDefaultRuns(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "x.csv")
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "%d,%d,%g\n", i%17, (i*7)%13, float64(i%5)/3)
	}
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	before := probe.Count()
	for _, args := range [][]string{
		{"info"},
		{"eig", "--n", "60", "--components", "3"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--operator", "float64"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--operator", "float32", "--tol", "1e-4"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--operator", "matrix-free", "--tol", "1e-6"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--solver", "lbfgs"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--approx", "nystrom", "--landmarks", "50", "--approx-precision", "float32"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--approx", "rff", "--features", "64"},
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
	}
	require.Equal(t, before, probe.Count(), "a default run timed something")
}

// --memory's sizes: plain bytes, decimal units (powers of 1000) and
// binary ones (powers of 1024), spaces allowed before the unit; anything
// not positive, not a number or past half of int64 is a usage error.
func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{
		"": 0, "4096": 4096, "12B": 12, "5KB": 5000, "5 KB": 5000, "3MB": 3e6, "2GB": 2e9, "1TB": 1e12,
		"5KiB": 5 << 10, "3MiB": 3 << 20, "1.5GiB": 3 << 29, "2TiB": 2 << 40, " 8GiB": 8 << 30, "4e6TB": 4e18,
	} {
		got, err := parseBytes(s)
		require.NoError(t, err, "%q", s)
		require.Equal(t, want, got, "%q", s)
	}
	for _, bad := range []string{"lots", "-1GiB", "0", "0MB", "NaN", "Inf", "1e30TB", "1e7TB", "5XB", "GiB"} {
		_, err := parseBytes(bad)
		require.ErrorIs(t, err, errUsage, "%q", bad)
	}
}

// --profile puts a profile's paths in force: kdual info names the file and
// reports its values, with reasons that follow them (a hand-written
// profile records none); a fit on the portable paths it asks for gives the
// default paths' eigenvalues to rounding; a profile with an unknown field
// or a missing file is a usage error naming the flag.
func TestProfileFlag(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, applyPaths(paths.Rules(coreFacts()))) })
	dir := t.TempDir()
	prof := filepath.Join(dir, "portable.json")
	require.NoError(t, os.WriteFile(prof, []byte(`{"version": 1, "paths": {"grid": true}}`), 0o644))
	code, out, stderr := runCLI(t, "info", "--profile", prof, "--json")
	require.Equal(t, 0, code, stderr)
	var r infoReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "profile "+prof, r.Paths.Source)
	require.True(t, r.Paths.Grid)
	require.False(t, r.Paths.InnerNative || r.Paths.MapNative || r.Paths.Int8 || r.Paths.SymmNative || r.Paths.WideSymm)
	reasons := map[string]paths.Reason{}
	for _, why := range r.Paths.Reasons {
		reasons[why.Path] = why
	}
	require.Equal(t, "off", reasons["int8"].Choice)
	require.Equal(t, "go", reasons["map"].Choice)
	require.Equal(t, "on", reasons["grid"].Choice)
	require.Contains(t, reasons["int8"].Why, "set in the profile")
	_, text, _ := runCLI(t, "info", "--profile", prof)
	require.Contains(t, text, "paths:      profile "+prof)
	require.Contains(t, text, "int8:       off — set in the profile")

	csv := waveCSV(t, 200)
	fit := func(args ...string) []float64 {
		code, out, stderr := runCLI(t, append([]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "4", "--json", "-", "--quiet"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var res struct {
			Eigenvalues []float64 `json:"eigenvalues"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		return res.Eigenvalues
	}
	portable := fit("--profile", prof)
	require.NoError(t, applyPaths(paths.Rules(coreFacts())))
	rules := fit()
	require.Len(t, portable, 4)
	for i := range rules {
		require.InDelta(t, rules[i], portable[i], 1e-12*rules[0], "eigenvalue %d", i)
	}

	// kdual tune writes a profile that loads back as what it printed.
	tuned := filepath.Join(dir, "tuned.json")
	code, out, stderr = runCLI(t, "tune", "--out", tuned)
	require.Equal(t, 0, code, stderr)
	code, js, stderr := runCLI(t, "info", "--profile", tuned, "--json")
	require.Equal(t, 0, code, stderr)
	var tr infoReport
	require.NoError(t, json.Unmarshal([]byte(js), &tr))
	require.Equal(t, "profile "+tuned, tr.Paths.Source)
	require.GreaterOrEqual(t, len(tr.Paths.Reasons), len(paths.Known))
	for i, path := range paths.Known {
		why := tr.Paths.Reasons[i]
		c, _ := tr.Paths.Choice(path)
		require.Equal(t, c, why.Choice, path)
		require.NotContains(t, why.Why, "set in the profile", path)
		require.Contains(t, out, fmt.Sprintf("%-11s %-40s %s", path+":", c, why.Why), "tune printed what it saved")
	}

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 1, "paths": {"turbo": true}}`), 0o644))
	for _, file := range []string{bad, filepath.Join(dir, "none.json")} {
		code, _, stderr := runCLI(t, "info", "--profile", file)
		require.Equal(t, 2, code, file)
		require.Contains(t, stderr, "--profile", file)
	}
}

// --no-center fits the kernel matrix as it is: for the linear kernel its
// eigenvalues are the squared singular values of X, where the centred
// fit's are those of X less its column means.
func TestKPCANoCenter(t *testing.T) {
	x := mat.NewDense(5, 3, []float64{1, 2, 0.5, 3, 4, 1, 5, 7, 2, 2, 2, 3, 0, 1, 1})
	path := filepath.Join(t.TempDir(), "x.csv")
	var b strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "%g,%g,%g\n", x.At(i, 0), x.At(i, 1), x.At(i, 2))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	fit := func(args ...string) []float64 {
		code, out, stderr := runCLI(t, append([]string{"kpca", "fit", "--input", path, "--components", "3", "--json", "-", "--quiet"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var r struct {
			Eigenvalues []float64 `json:"eigenvalues"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r.Eigenvalues
	}
	squares := func(a mat.Matrix) []float64 {
		var svd mat.SVD
		require.True(t, svd.Factorize(a, mat.SVDNone))
		v := svd.Values(nil)
		for i := range v {
			v[i] *= v[i]
		}
		return v
	}
	var xc mat.Dense
	xc.CloneFrom(x)
	for j := 0; j < 3; j++ {
		m := mat.Sum(xc.ColView(j)) / 5
		for i := 0; i < 5; i++ {
			xc.Set(i, j, xc.At(i, j)-m)
		}
	}
	for _, c := range []struct {
		args []string
		want []float64
	}{{[]string{"--no-center"}, squares(x)}, {nil, squares(&xc)}} {
		got := fit(c.args...)
		require.Len(t, got, 3)
		for i := range got {
			require.InDelta(t, c.want[i], got[i], 1e-12*c.want[0], "%v value %d", c.args, i)
		}
	}
}

// The command's environment switches (KDUAL_GRAM, KDUAL_AVX512,
// KDUAL_HUGEPAGES) override the rules' paths, and a profile's when one is
// loaded; kdual info shows the values with their reasons; a bad value
// stops the command with exit 2 naming the variable.
func TestEnvironmentOverrides(t *testing.T) {
	env := []string{envGram + "=int8=off,map=go", envAVX512 + "=off", envHuge + "=on"}
	info := func(env []string, args ...string) infoReport {
		code, out, stderr := cliProcess(t, env, append([]string{"info", "--json"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var r infoReport
		require.NoError(t, json.Unmarshal(out, &r))
		return r
	}
	r := info(env)
	p := r.Paths
	require.False(t, p.Int8 || p.MapNative || p.WideSymm || p.WideSingle || p.WideSymv)
	require.True(t, p.HugePages)
	require.Equal(t, "rules + int8=off,map=go,avx512=off,hugepages=on", p.Source)
	rules := paths.Rules(coreFacts())
	require.Equal(t, rules.Grid, p.Grid, "a path not named keeps the rules' value")
	for i, path := range paths.Known {
		c, _ := p.Choice(path)
		require.Equal(t, c, p.Reasons[i].Choice, path)
	}
	prof := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, os.WriteFile(prof, []byte(`{"version": 1, "paths": {"grid": true, "map_native": true}}`), 0o644))
	r = info([]string{envGram + "=map=go"}, "--profile", prof)
	require.Equal(t, "profile "+prof+" + map=go", r.Paths.Source)
	require.False(t, r.Paths.MapNative, "the environment on top of the profile")
	require.True(t, r.Paths.Grid)
	for _, bad := range []string{envGram + "=turbo=on", envGram + "=int8=maybe", envAVX512 + "=maybe", envHuge + "=1"} {
		code, _, stderr := cliProcess(t, []string{bad}, "info")
		require.Equal(t, 2, code, bad)
		require.Contains(t, stderr, strings.SplitN(bad, "=", 2)[0], bad)
	}
}
