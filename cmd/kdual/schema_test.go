package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/models/kmvda"
	"github.com/kdual/kdual/models/ppca"
	"github.com/kdual/kdual/native"
)

// jsonKeys returns the key paths of a JSON document: its top-level keys;
// "key.sub" for the keys of an object value; "key[].sub" for the keys of
// the objects in an array value; "[].key" for a top-level array of
// objects.
func jsonKeys(t *testing.T, doc []byte) map[string]bool {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(doc, &v), "%s", doc)
	out := map[string]bool{}
	var obj func(prefix string, m map[string]any, depth int)
	obj = func(prefix string, m map[string]any, depth int) {
		for k, x := range m {
			p := prefix + k
			out[p] = true
			if depth > 0 {
				continue
			}
			switch y := x.(type) {
			case map[string]any:
				obj(p+".", y, depth+1)
			case []any:
				if len(y) > 0 {
					if e, ok := y[0].(map[string]any); ok {
						obj(p+"[].", e, depth+1)
					}
				}
			}
		}
	}
	switch y := v.(type) {
	case map[string]any:
		obj("", y, 0)
	case []any:
		require.NotEmpty(t, y)
		obj("[].", y[0].(map[string]any), 1)
	}
	return out
}

// documentedKeys reads docs/json.md: for every section "## kdual …" the
// keys of its table (first column, in backquotes), the optional ones
// (marked "optional" in the type column) apart.
func documentedKeys(t *testing.T) map[string]map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]*)\\|")
	out := map[string]map[string]bool{}
	var cur map[string]bool
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "## `kdual ") {
			name := strings.TrimSuffix(strings.TrimPrefix(line, "## `"), "`")
			cur = map[string]bool{}
			out[name] = cur
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil && cur != nil {
			cur[m[1]] = !strings.Contains(m[2], "optional")
		}
	}
	return out
}

// Every command's JSON uses snake_case keys, and exactly the keys that
// docs/json.md documents for it (optional ones may be absent); every
// command's -h exits 0.
func TestJSONSchemaDocumented(t *testing.T) {
	_, csv, model := smallModel(t)
	runs := map[string][]string{
		"kdual info":           {"info", "--json"},
		"kdual eig":            {"eig", "--n", "60", "--components", "3", "--json", "-"},
		"kdual kpca fit":       {"kpca", "fit", "--input", csv, "--components", "1", "--json", "-"},
		"kdual kpca transform": {"kpca", "transform", "--model", model, "--input", csv, "--json", "-"},
		"kdual kpca robust":    {"kpca", "robust", "--seeds", "1", "--tau", "10", "--json", "-"},
		"kdual kpca sparse":    {"kpca", "sparse", "--n", "60", "--d", "4", "--components", "2", "--eps", "0,0.1", "--json", "-"},
		"kdual bench kpca":     {"bench", "kpca", "--n", "80", "--d", "6", "--components", "3", "--solvers", "lbfgs", "--repeat", "1", "--json", "-"},
		"kdual rkm forecast":   {"rkm", "forecast", "--json", "-"},
		"kdual ppca":           {"ppca", "--components", "2", "--json", "-"},
		"kdual kmvda":          {"kmvda", "--data", "poses", "--kernel", "linear", "--components", "5", "--train", "12", "--test", "12", "--json", "-"},
	}
	docs := documentedKeys(t)
	snake := regexp.MustCompile(`^(\[\]\.)?[a-z0-9_]+((\[\])?\.[a-z0-9_]+)?$`)
	for name, args := range runs {
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		got := jsonKeys(t, []byte(out))
		want, ok := docs[name]
		require.True(t, ok, "docs/json.md has no section %q", name)
		var undocumented, missing []string
		for k := range got {
			require.Regexp(t, snake, k, name)
			if _, ok := want[k]; !ok {
				undocumented = append(undocumented, k)
			}
		}
		for k, required := range want {
			if required && !got[k] {
				missing = append(missing, k)
			}
		}
		sort.Strings(undocumented)
		sort.Strings(missing)
		require.Empty(t, undocumented, "%s: keys not in docs/json.md", name)
		require.Empty(t, missing, "%s: documented keys not in the output", name)
	}
	for _, args := range [][]string{{"info"}, {"eig"}, {"kpca", "fit"}, {"kpca", "transform"}, {"kpca", "robust"},
		{"kpca", "sparse"}, {"bench", "kpca"}, {"bench", "figures"}, {"bench", "lapack"}, {"rkm", "forecast"},
		{"ppca"}, {"kmvda"}, {"kmvda", "table"}} {
		code, _, stderr := runCLI(t, append(args, "-h")...)
		require.Equal(t, 0, code, "%v -h: %s", args, stderr)
	}
}

// One vocabulary: the old flag names still work for one release, with a
// warning; --gamma is scikit-learn's γ (γ = 1/(2σ²)); --threads is on every
// command; bad values are usage errors.
func TestVocabulary(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("1,2\n3,4\n5,7\n2,2\n0,1\n4,1\n"), 0o644))
	for _, c := range []struct{ old, now []string }{
		{[]string{"eig", "--n", "50", "--k", "3"}, []string{"eig", "--n", "50", "--components", "3"}},
		{[]string{"ppca", "--q", "2"}, []string{"ppca", "--components", "2"}},
		{[]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2", "--bandwidth", "1.5"},
			[]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2", "--sigma", "1.5"}},
		{[]string{"kpca", "fit", "--input", csv, "--components", "2", "--solver", "dense", "--format", "json"},
			[]string{"kpca", "fit", "--input", csv, "--components", "2", "--solver", "dense", "--json", "-"}},
	} {
		code, outOld, errOld := runCLI(t, c.old...)
		require.Equal(t, 0, code, "%v: %s", c.old, errOld)
		require.Contains(t, errOld, "deprecated", "%v", c.old)
		code, outNew, errNew := runCLI(t, c.now...)
		require.Equal(t, 0, code, "%v: %s", c.now, errNew)
		require.NotContains(t, errNew, "deprecated")
		if c.now[0] == "kpca" {
			var a, b map[string]any
			if json.Unmarshal([]byte(outOld), &a) == nil && json.Unmarshal([]byte(outNew), &b) == nil {
				require.Equal(t, a["eigenvalues"], b["eigenvalues"])
				continue
			}
			require.Equal(t, outOld, outNew)
		}
	}
	// γ = 0.5 is σ = 1.
	_, viaGamma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2", "--solver", "dense", "--gamma", "0.5")
	_, viaSigma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2", "--solver", "dense", "--sigma", "1")
	require.NotEmpty(t, viaGamma)
	require.Equal(t, viaSigma, viaGamma)
	oldBLAS, oldGo := native.Threads(), runtime.GOMAXPROCS(0)
	code, _, _ := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--threads", "1")
	require.Equal(t, 0, code)
	require.Equal(t, 1, native.Threads())
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	require.NoError(t, native.SetThreads(oldBLAS))
	runtime.GOMAXPROCS(oldGo)
	// --gamma for laplace is 1/σ.
	_, byGamma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "laplace", "--gamma", "0.5", "--solver", "dense")
	_, bySigma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "laplace", "--sigma", "2", "--solver", "dense")
	require.Equal(t, bySigma, byGamma)
	for _, args := range [][]string{
		{"kpca", "fit", "--input", csv, "--threads", "-1"},
		{"kpca", "fit", "--input", csv, "--kernel", "linear", "--gamma", "0.5"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--degree", "2"},
		{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--gamma", "0.5", "--sigma", "1"},
		{"kpca", "fit", "--input", csv, "--kernel", "linear", "--sigma", "1"},
		{"kpca", "fit", "--input", csv, "--kernel", "cosine", "--gamma", "1"},
		{"kpca", "fit", "--input", csv, "--kernel", "laplacian", "--sigma", "1"},
		{"kpca", "fit", "--input", csv, "--kernel", "sigmoid", "--degree", "2"},
		{"kpca", "fit", "--input", csv, "--kernel", "rbf", "--coef0", "2"},
		{"kpca", "fit", "--input", csv, "--kernel", "sigmoid", "--solver", "lbfgs"},
		{"kpca", "fit", "--input", csv, "--kernel", "sigmoid", "--approx", "nystrom"},
		{"ppca", "--components", "2", "--sigma", "1", "--gamma", "1"},
		{"bench", "kpca", "--decay-c", "0.1"},
		{"eig", "--components", "-1"},
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
}

// Every model a command fits can be saved; a saved forecasting model
// forecasts as the one that was trained; the other models load with their
// package's Load.
func TestSaveEveryModel(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "s.txt")
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "%g\n", math.Sin(0.2*float64(i))+0.3*math.Cos(0.53*float64(i)))
	}
	require.NoError(t, os.WriteFile(series, []byte(b.String()), 0o644))
	rkmFile := filepath.Join(dir, "r.npz")
	code, trained, stderr := runCLI(t, "rkm", "forecast", "--data", series, "--test", "20", "--components", "4", "--save", rkmFile, "--json", "-")
	require.Equal(t, 0, code, stderr)
	code, loaded, stderr := runCLI(t, "rkm", "forecast", "--data", series, "--test", "20", "--model", rkmFile, "--json", "-")
	require.Equal(t, 0, code, stderr)
	var a, c map[string]any
	require.NoError(t, json.Unmarshal([]byte(trained), &a))
	require.NoError(t, json.Unmarshal([]byte(loaded), &c))
	require.Equal(t, a["forecast"], c["forecast"])
	require.Equal(t, a["mse"], c["mse"])
	code, _, _ = runCLI(t, "rkm", "forecast", "--data", series, "--model", rkmFile, "--train", "stiefel")
	require.Equal(t, 2, code)

	ppcaFile, kmvdaFile := filepath.Join(dir, "p.npz"), filepath.Join(dir, "k.npz")
	code, _, stderr = runCLI(t, "ppca", "--components", "2", "--save", ppcaFile)
	require.Equal(t, 0, code, stderr)
	f, err := os.Open(ppcaFile)
	require.NoError(t, err)
	p, err := ppca.LoadDual(f)
	f.Close()
	require.NoError(t, err)
	require.Equal(t, 2, p.LatentDim())
	code, _, stderr = runCLI(t, "kmvda", "--data", "poses", "--kernel", "linear", "--components", "4", "--train", "12", "--test", "12", "--save", kmvdaFile)
	require.Equal(t, 0, code, stderr)
	f, err = os.Open(kmvdaFile)
	require.NoError(t, err)
	k, err := kmvda.Load(f)
	f.Close()
	require.NoError(t, err)
	vals, err := k.Eigenvalues()
	require.NoError(t, err)
	require.Len(t, vals, 4)
}

// The exit codes of docs/cli.md, one line of error each: usage errors 2,
// bad files and failures 1.
func TestExitCodesAndOneLineErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	good := write("good.csv", []byte("1,2\n3,4\n5,7\n2,2\n0,1\n"))
	model := filepath.Join(dir, "m.npz")
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", good, "--components", "1", "--save", model)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(model)
	require.NoError(t, err)
	truncated := write("trunc.npz", raw[:len(raw)*2/3])
	notModel := write("x.npz", []byte("PK\x03\x04 not really"))
	badCSV := write("bad.csv", []byte("1,2\n3,x\n"))
	ragged := write("ragged.csv", []byte("1,2\n3\n"))
	long := write("long.csv", []byte("1,2\n3,"+strings.Repeat("9", 300000)+"z\n"))
	badNPY := write("bad.npy", []byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<c16'}"))
	badIDX := write("bad-idx3-ubyte", []byte{0, 0, 8, 2, 0, 0, 0, 3})
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--solver", "magic"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--operator", "gpu"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--products", "float16"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--memory", "lots"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--kernel", "rbf2"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--components", "1", "--delimiter", "ab"}, 2},
		{[]string{"kpca", "fit", "--input", good, "--nope"}, 2},
		{[]string{"kpca", "fit"}, 2},
		{[]string{"kpca", "frobnicate"}, 2},
		{[]string{"eig", "--solver", "magic"}, 2},
		{[]string{"eig", "--normalizer", "svd"}, 2},
		{[]string{"eig", "--n", "0"}, 2},
		{[]string{"bench", "kpca", "--solvers", "magic", "--n", "50", "--d", "3", "--components", "2"}, 2},
		{[]string{"bench", "kpca", "--delta", "-1"}, 2},
		{[]string{"rkm", "forecast", "--setting", "sideways"}, 2},
		{[]string{"rkm", "forecast", "--train", "sgd"}, 2},
		{[]string{"rkm"}, 2},
		{[]string{"ppca"}, 2},
		{[]string{"ppca", "--components", "2", "--kernel", "poly"}, 2},
		{[]string{"kmvda", "--kernel", "poly"}, 2},
		{[]string{"kmvda", "--data", "one.csv"}, 2},
		{[]string{"frobnicate"}, 2},
		{[]string{"kpca", "transform", "--model", truncated, "--input", good}, 1},
		{[]string{"kpca", "transform", "--model", notModel, "--input", good}, 1},
		{[]string{"kpca", "transform", "--model", filepath.Join(dir, "missing.npz"), "--input", good}, 1},
		{[]string{"kpca", "fit", "--input", badCSV, "--components", "1"}, 1},
		{[]string{"kpca", "fit", "--input", ragged, "--components", "1"}, 1},
		{[]string{"kpca", "fit", "--input", long, "--components", "1"}, 1},
		{[]string{"kpca", "fit", "--input", badNPY, "--components", "1"}, 1},
		{[]string{"kpca", "fit", "--input", badIDX, "--components", "1"}, 1},
		{[]string{"kpca", "fit", "--input", good, "--components", "7"}, 1},
		{[]string{"kpca", "fit", "--input", good, "--components", "2", "--kernel", "linear", "--solver", "dense"}, 0},
		{[]string{"kpca", "fit", "--input", good, "--components", "3", "--kernel", "linear"}, 1},
	} {
		code, _, stderr := runCLI(t, c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		if c.code == 1 {
			line := strings.TrimRight(withoutNotes(stderr), "\n")
			require.NotContains(t, line, "\n", "%v: one line: %q", c.args, stderr)
			require.Less(t, len(line), 400, "%v: bounded: %d bytes", c.args, len(line))
			require.True(t, strings.HasPrefix(line, "kdual "), "%v: %q", c.args, line)
		}
	}
}

// Approximate KPCA from the command line: Nyström and random features fit,
// report their approximation, save and transform; their flags are checked.
func TestKPCAApprox(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%g,%g,%g\n", math.Sin(float64(i)), math.Cos(0.3*float64(i)), float64(i%7)/7)
	}
	require.NoError(t, os.WriteFile(csv, []byte(b.String()), 0o644))
	model := filepath.Join(dir, "m.npz")
	code, out, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "3", "--approx", "nystrom", "--landmarks", "20",
		"--save", model, "--json", "-")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Approx struct {
			Method     string  `json:"method"`
			Sampler    string  `json:"sampler"`
			Rank       int     `json:"rank"`
			TraceError float64 `json:"trace_error"`
		} `json:"approx"`
		Scores [][]float64 `json:"scores"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "nystrom", r.Approx.Method)
	require.Equal(t, "rpcholesky", r.Approx.Sampler)
	require.Equal(t, 20, r.Approx.Rank)
	require.Greater(t, r.Approx.TraceError, 0.0)
	code, tr, stderr := runCLI(t, "kpca", "transform", "--model", model, "--input", csv, "--json", "-")
	require.Equal(t, 0, code, stderr)
	var z struct {
		Scores [][]float64 `json:"scores"`
	}
	require.NoError(t, json.Unmarshal([]byte(tr), &z))
	for i := range z.Scores {
		for j := range z.Scores[i] {
			require.InDelta(t, r.Scores[i][j], z.Scores[i][j], 1e-9)
		}
	}
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "3", "--approx", "rff", "--features", "64")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "3", "--approx", "nystrom", "--landmarks", "40",
		"--sampler", "uniform", "--trace-tol", "0.05")
	require.Equal(t, 0, code, stderr)
	// Defaults: min(1000, n) landmarks, 1000 random features.
	for _, c := range []struct {
		args []string
		rank string
	}{{[]string{"--approx", "nystrom"}, `"rank": 60`}, {[]string{"--approx", "rff"}, `"rank": 1000`}} {
		code, out, stderr := runCLI(t, append([]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2", "--json", "-"}, c.args...)...)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, c.rank, "%v", c.args)
	}
	for _, args := range [][]string{
		{"--landmarks", "10"},
		{"--approx", "nystrom", "--landmarks", "0"},
		{"--approx", "rff", "--features", "0"},
		{"--approx", "sketch", "--landmarks", "10"},
		{"--approx", "nystrom", "--landmarks", "10", "--sampler", "leverage"},
		{"--approx", "nystrom", "--landmarks", "10", "--trace-tol", "2"},
		{"--approx", "nystrom", "--landmarks", "10", "--trace-tol", "1"},
		{"--approx", "nystrom", "--landmarks", "10", "--features", "5"},
		{"--approx", "rff", "--features", "10", "--landmarks", "5"},
		{"--approx", "nystrom", "--landmarks", "10", "--operator", "float32"},
	} {
		code, _, stderr := runCLI(t, append([]string{"kpca", "fit", "--input", csv, "--kernel", "gaussian", "--components", "2"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
}

// --columns picks features by name or number; unread columns may be text.
func TestKPCAColumns(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("id,a,note,b\nx1,1,hello,2\nx2,3,\"a, b\",4\nx3,5,z,7\nx4,2,q,2\nx5,0,w,1\n"), 0o644))
	code, byName, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--columns", "a,b", "--components", "1", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	code, byNumber, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--columns", "2,-1", "--components", "1", "--solver", "dense")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, byName, byNumber)
	code, _, stderr = runCLI(t, "kpca", "fit", "--input", csv, "--columns", "a,c", "--components", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `no column named "c"`)
}
