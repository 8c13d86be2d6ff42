package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/dataset"
)

// kdual data augment writes the 8-bit set as an uncompressed IDX file, in
// chunks, byte for byte dataset.FashionAugmented8's images (one image
// too), and leaves no partial file; bad flags exit 2.
func TestDataAugment(t *testing.T) {
	for _, bad := range [][]string{
		{"data"}, {"data", "shuffle"}, {"data", "augment", "--n", "0", "--out", "x.idx"},
		{"data", "augment", "--n", "5"}, {"data", "augment", "--n", "5", "--out", "x.idx", "--chunk", "0"},
	} {
		code, _, _ := runCLI(t, bad...)
		require.Equal(t, 2, code, "%v", bad)
	}
	// 2⁴⁰ images (862 TB): refused before anything is written.
	huge := filepath.Join(t.TempDir(), "huge.idx")
	code, _, errOut := runCLI(t, "data", "augment", "--n", "1099511627776", "--out", huge)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "free")
	_, err := os.Stat(huge + ".partial")
	require.True(t, os.IsNotExist(err), "a partial file was left")
	if _, err := os.Stat(dataset.FashionDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
	}
	const n = 70000 + 900
	dir := t.TempDir()
	out := filepath.Join(dir, "aug.idx")
	code, stdout, stderr := runCLI(t, "data", "augment", "--n", "70900", "--out", out, "--seed", "4", "--chunk", "7001")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.Contains(stdout, "70900 images"), stdout)
	f, err := dataset.OpenIDX8(out)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, []int{n, 28, 28}, f.Shape)
	want := make([]uint8, n*784)
	require.NoError(t, dataset.FashionAugmented8("", n, 4, want))
	got := make([]uint8, 1000*784)
	require.NoError(t, f.ReadRows(n-1000, got))
	require.Equal(t, want[(n-1000)*784:], got)
	require.NoError(t, f.ReadRows(0, got[:784]))
	require.Equal(t, want[:784], got[:784])
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a partial file was left")

	// The least set, one image: the first training image.
	one := filepath.Join(dir, "one.idx")
	code, _, stderr = runCLI(t, "data", "augment", "--n", "1", "--out", one, "--seed", "4")
	require.Equal(t, 0, code, stderr)
	g, err := dataset.OpenIDX8(one)
	require.NoError(t, err)
	defer g.Close()
	require.Equal(t, []int{1, 28, 28}, g.Shape)
	require.NoError(t, g.ReadRows(0, got[:784]))
	require.Equal(t, want[:784], got[:784])
}
