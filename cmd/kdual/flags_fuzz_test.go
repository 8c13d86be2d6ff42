package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every numeric flag of every command, given −1 (and NaN, for floats; −1 s
// for durations) on a small problem, ends in a result or a one-line error
// with exit code 0, 1 or 2: never a panic (kmvda's --components −1 and
// --val −2 once panicked with index errors, and out-of-range values were
// taken silently elsewhere).
func TestNumericFlagsNeverPanic(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csv, []byte("a,b,c\n1,2,0.5\n3,4,1\n5,7,2\n2,2,3\n0,1,1\n4,4,4\n1,0,2\n3,3,1\n"), 0o644))
	base := [][]string{
		{"eig", "--n", "50", "--components", "3", "--repeat", "1"},
		{"kpca", "fit", "--input", csv, "--components", "2"},
		{"kpca", "robust", "--data", "randn", "--n", "60"},
		{"kpca", "sparse", "--n", "60"},
		{"bench", "kpca", "--data", "randn", "--n", "80", "--d", "4", "--components", "2", "--repeat", "1"},
		{"bench", "approx", "--n", "300", "--m", "20", "--repeat", "1", "--quiet"},
		{"bench", "small", "--n", "150", "--repeat", "1"},
		{"rkm", "forecast"},
		{"kmvda", "--data", "poses", "--train", "12", "--test", "10"},
		{"ppca"},
		{"data", "augment", "--n", "100", "--out", filepath.Join(dir, "aug.idx")},
	}
	flagLine := regexp.MustCompile(`(?m)^  -(\S+) (int|float|value|duration)\b`)
	for _, b := range base {
		cmd := b[:1]
		if b[0] == "kpca" || b[0] == "bench" || b[0] == "rkm" || b[0] == "data" {
			cmd = b[:2]
		}
		_, out, errOut := runCLI(t, append(append([]string{}, cmd...), "--help")...)
		flags := flagLine.FindAllStringSubmatch(out+errOut, -1)
		require.NotEmpty(t, flags, "%v: no numeric flags in its help", cmd)
		for _, f := range flags {
			values := map[string][]string{"int": {"-1"}, "float": {"-1", "NaN"}, "value": {"-1", "NaN"}, "duration": {"-1s"}}[f[2]]
			for _, v := range values {
				args := append(append([]string{}, b...), "--"+f[1], v)
				code, o, e := runCLI(t, args...)
				require.Contains(t, []int{0, 1, 2}, code, "%v", args)
				require.NotContains(t, o+e, "panic", "%v", args)
				require.False(t, strings.Contains(e, "goroutine "), "%v", args)
			}
		}
	}
}
