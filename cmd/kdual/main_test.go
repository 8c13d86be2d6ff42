package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/dataset"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestInfo(t *testing.T) {
	code, out, _ := runCLI(t, "info", "--json")
	require.Equal(t, 0, code)
	var r infoReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.True(t, strings.HasPrefix(r.OpenBLAS, "OpenBLAS"))
	require.GreaterOrEqual(t, r.Threads, 1)
	code, out, _ = runCLI(t, "info")
	require.Equal(t, 0, code)
	require.Contains(t, out, "core:")
}

func TestEigRandSymJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eig.json")
	code, _, stderr := runCLI(t, "eig", "--matrix", "randsym", "--n", "120", "--k", "5", "--repeat", "2", "--json", path)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, f := range []string{"matrix", "n", "k", "solver", "seconds", "kernel_seconds", "residual_max", "orthogonality", "values"} {
		require.Contains(t, fields, f)
	}
	var r eigReport
	require.NoError(t, json.Unmarshal(raw, &r))
	require.Equal(t, 5, r.K)
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
	} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	code, _, _ := runCLI(t, "help")
	require.Equal(t, 0, code)
}
