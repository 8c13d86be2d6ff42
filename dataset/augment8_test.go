package dataset

import (
	"math"
	"os"
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
