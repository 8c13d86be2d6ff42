package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every long command stops on Ctrl-C (a cancelled runCtx): exit status
// 130, nothing on stdout, no output file left behind.
func TestEveryCommandCancels(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "s.txt")
	var text []byte
	for i := 0; i < 300; i++ {
		text = append(text, []byte("1.5\n2.5\n0.5\n")...)
	}
	require.NoError(t, os.WriteFile(series, text, 0o644))
	for _, c := range []struct {
		name string
		args []string
		out  string
	}{
		{"kpca fit", []string{"kpca", "fit", "--data", "fashion", "--n", "600", "--components", "3", "--save", "OUT"}, "m.npz"},
		{"kpca robust", []string{"kpca", "robust", "--json", "OUT"}, "r.json"},
		{"ppca", []string{"ppca", "--data", "fashion", "--classes", "0,1", "--n", "300", "--components", "2", "--sigma", "4", "--json", "OUT"}, "p.json"},
		{"rkm forecast", []string{"rkm", "forecast", "--data", series, "--json", "OUT"}, "f.json"},
		{"kmvda", []string{"kmvda", "--json", "OUT"}, "k.json"},
		{"kpca sparse", []string{"kpca", "sparse", "--n", "300", "--json", "OUT"}, "sp.json"},
		{"bench kpca", []string{"bench", "kpca", "--data", "fashion", "--n", "500", "--json", "OUT"}, "b.json"},
		{"bench approx", []string{"bench", "approx", "--n", "2000", "--json", "OUT"}, "a.json"},
		{"eig", []string{"eig", "--n", "3000", "--json", "OUT"}, "e.json"},
	} {
		out := filepath.Join(dir, c.out)
		args := append([]string(nil), c.args...)
		for i, a := range args {
			if a == "OUT" {
				args[i] = out
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		runCtx = ctx
		code, stdout, stderr := runCLI(t, args...)
		runCtx = context.Background()
		require.Equal(t, exitStopped, code, "%s: %s", c.name, stderr)
		require.Empty(t, stdout, c.name)
		_, err := os.Stat(out)
		require.True(t, os.IsNotExist(err), "%s left %s", c.name, c.out)
	}
}
