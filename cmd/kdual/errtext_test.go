package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// errorText keeps what a reader needs and drops the chain's prefixes: no
// package or function segment and no sentinel text is left, every other
// segment is kept in order, it is idempotent, and it never prints an
// empty message.
func TestErrorText(t *testing.T) {
	for in, want := range map[string]string{
		"kpca: Fit: eig: PlanOperator: n = 3, d = 2 needs at least 1.8 KiB, 1.0 KiB given: invalid input": "n = 3, d = 2 needs at least 1.8 KiB, 1.0 KiB given",
		"m.npz: kpca: bad model file: invalid input: not an .npz archive: zip: not a valid zip file":      "m.npz: bad model file: not an .npz archive: zip: not a valid zip file",
		"usage: --sigma: kernel: gaussian kernel: bandwidth σ = 1e-300 is too small":                      "--sigma: gaussian kernel: bandwidth σ = 1e-300 is too small",
		"kpca: Load: kpca: Load: truncated": "truncated",
		"x: row 3 is NaN: NaN":              "x: row 3 is NaN: NaN",
		"y: Inf":                            "y: Inf",
		"kpca: invalid input":               "kpca: invalid input",
		"read a.csv: line 2: line 2: short": "read a.csv: line 2: short",
	} {
		got := errorText(in)
		require.Equal(t, want, got, in)
		require.Equal(t, got, errorText(got), "idempotent")
	}
	// Through the commands: one prefix, the cause kept.
	dir := t.TempDir()
	csv := writeMatrix(t, dir, "x.csv", mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 7, 2, 0}))
	code, _, stderr := runCLI(t, "kpca", "fit", "--input", csv, "--components", "9", "--quiet")
	require.Equal(t, 1, code)
	require.True(t, strings.HasPrefix(stderr, "kdual kpca: Components = 9"), stderr)
	require.Equal(t, 1, strings.Count(stderr, "kpca:"), stderr)
	require.NotContains(t, stderr, "invalid input")
}
