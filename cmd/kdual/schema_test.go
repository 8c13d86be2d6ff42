package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	model := filepath.Join(dir, "m.npz")
	require.NoError(t, os.WriteFile(csv, []byte("1,2\n3,4\n5,7\n2,2\n0,1\n"), 0o644))
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "1", "--save", model)
	require.Equal(t, 0, code, stderr)
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
		{[]string{"kpca", "fit", "--input", csv, "--components", "2", "--bandwidth", "1.5"},
			[]string{"kpca", "fit", "--input", csv, "--components", "2", "--sigma", "1.5"}},
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
	_, viaGamma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--solver", "dense", "--gamma", "0.5")
	_, viaSigma, _ := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--solver", "dense", "--sigma", "1")
	require.NotEmpty(t, viaGamma)
	require.Equal(t, viaSigma, viaGamma)
	oldBLAS, oldGo := native.Threads(), runtime.GOMAXPROCS(0)
	code, _, _ := runCLI(t, "kpca", "fit", "--input", csv, "--components", "2", "--threads", "1")
	require.Equal(t, 0, code)
	require.Equal(t, 1, native.Threads())
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	require.NoError(t, native.SetThreads(oldBLAS))
	runtime.GOMAXPROCS(oldGo)
	for _, args := range [][]string{
		{"kpca", "fit", "--input", csv, "--threads", "-1"},
		{"kpca", "fit", "--input", csv, "--kernel", "laplace", "--gamma", "0.5"},
		{"kpca", "fit", "--input", csv, "--gamma", "0.5", "--sigma", "1"},
		{"kpca", "fit", "--input", csv, "--kernel", "linear", "--sigma", "1"},
		{"ppca", "--components", "2", "--sigma", "1", "--gamma", "1"},
		{"bench", "kpca", "--decay-c", "0.1"},
		{"eig", "--components", "-1"},
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
}
