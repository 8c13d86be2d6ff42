package dataset

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The 8-bit augmented set: the 70 000 images as the files hold them, then
// moved copies that stay close to their source (correlation above 0,
// 0.7 on average: 0.79 measured),
// the same bytes for the same seed whatever the goroutines, other bytes for
// another seed; bilinear interpolation reproduces pixels at grid points
// and averages between them.
func TestFashionAugmented8(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
	}
	const d = 784
	n := 70000 + 2*augment8Block + 10 // three generator blocks
	a := make([]uint8, n*d)
	require.NoError(t, FashionAugmented8("", n, 3, a))
	train, err := LoadFashion("", "train", 5)
	require.NoError(t, err)
	test, err := LoadFashion("", "test", 1)
	require.NoError(t, err)
	for j, v := range train.X.RawRowView(4) {
		require.Equal(t, uint8(math.Round(v*255)), a[4*d+j])
	}
	for j, v := range test.X.RawRowView(0) {
		require.Equal(t, uint8(math.Round(v*255)), a[60000*d+j])
	}
	corr := func(x, y []uint8) float64 {
		var sx, sy, sxx, syy, sxy float64
		for i := range x {
			u, v := float64(x[i]), float64(y[i])
			sx, sy, sxx, syy, sxy = sx+u, sy+v, sxx+u*u, syy+v*v, sxy+u*v
		}
		m := float64(len(x))
		return (sxy - sx*sy/m) / math.Sqrt((sxx-sx*sx/m)*(syy-sy*sy/m))
	}
	changed, sum := 0, 0.0
	for i := 70000; i < n; i++ {
		src, got := a[(i-70000)%60000*d:][:d], a[i*d:(i+1)*d]
		c := corr(src, got)
		require.Greater(t, c, 0.0, "image %d", i)
		sum += c
		if string(src) != string(got) {
			changed++
		}
	}
	require.Equal(t, n-70000, changed, "every copy is moved and noised")
	t.Logf("mean correlation %.3f", sum/float64(n-70000))
	require.Greater(t, sum/float64(n-70000), 0.7)
	old := runtime.GOMAXPROCS(1)
	b := make([]uint8, n*d)
	err = FashionAugmented8("", n, 3, b)
	runtime.GOMAXPROCS(old)
	require.NoError(t, err)
	require.Equal(t, a, b, "the bytes depend on the goroutines")
	require.NoError(t, FashionAugmented8("", n, 4, b))
	require.Equal(t, a[:70000*d], b[:70000*d])
	require.NotEqual(t, a[70000*d:], b[70000*d:], "another seed, the same copies")
	require.Error(t, FashionAugmented8("", 10, 3, make([]uint8, 9*d)))
	require.Error(t, FashionAugmented8("", 0, 3, nil))

	img := []uint8{0, 10, 20, 30}
	require.Equal(t, 20.0, bilinear(img, 2, 1, 0))
	require.Equal(t, 15.0, bilinear(img, 2, 0.5, 0.5))
	require.Equal(t, 5.0, bilinear(img, 2, 0, 0.5))
	require.Equal(t, 0.0, bilinear(img, 2, -3, 0))
}

// The noise table is N(0, 2²)'s quantiles: symmetric, increasing, with the
// normal's mean, variance and 1.96σ quantile.
func TestNormal16(t *testing.T) {
	var sum, sq float64
	for i, v := range normal16 {
		require.Equal(t, -v, normal16[len(normal16)-1-i])
		if i > 0 {
			require.Greater(t, v, normal16[i-1])
		}
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	m := float64(len(normal16))
	require.InDelta(t, 0, sum/m, 1e-6)
	require.InDelta(t, 4, sq/m, 4e-3)
	require.InDelta(t, 2*1.959964, float64(normal16[int(0.975*m)]), 1e-3)
}

// Any range of the set, made alone, is those images of the whole set; an
// IDX file of them written and read back by rows gives the same bytes; a
// compressed, mistyped or truncated file is refused.
func TestAugment8RangesAndIDX8(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
	}
	const d = 784
	n := 70000 + augment8Block + 500
	all := make([]uint8, n*d)
	require.NoError(t, FashionAugmented8("", n, 9, all))
	a, err := NewAugment8("", 9)
	require.NoError(t, err)
	for _, r := range [][2]int{{0, 5}, {69990, 70020}, {70000 + augment8Block - 3, 70000 + augment8Block + 7}, {n - 4, n}} {
		part := make([]uint8, (r[1]-r[0])*d)
		a.Fill(r[0], part)
		require.Equal(t, all[r[0]*d:r[1]*d], part, "range %v", r)
	}
	path := filepath.Join(t.TempDir(), "x.idx")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WriteIDX8Header(f, 300, 28, 28))
	_, err = f.Write(all[69900*d : 70200*d])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	x, err := OpenIDX8(path)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, 300, x.N)
	require.Equal(t, d, x.D)
	got := make([]uint8, 50*d)
	require.NoError(t, x.ReadRows(120, got))
	require.Equal(t, all[70020*d:70070*d], got)
	require.Error(t, x.ReadRows(290, got), "past the end")
	require.Error(t, x.ReadRows(0, got[:d+1]), "not whole items")
	// Refused: gzip, a type other than bytes, a size the header does not say.
	for name, body := range map[string][]byte{
		"gz":    {0x1f, 0x8b, 8, 0},
		"float": {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0},
		"short": {0, 0, 0x08, 2, 0, 0, 0, 3, 0, 0, 0, 2, 1, 2, 3},
	} {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, body, 0o644))
		_, err := OpenIDX8(p)
		require.Error(t, err, name)
	}
}
