package dataset

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	require.NoError(t, x.ReadRows(250, got), "the last items")
	require.Equal(t, all[70150*d:70200*d], got)
	require.Error(t, x.ReadRows(290, got), "past the end")
	require.Error(t, x.ReadRows(251, got), "one item past the end")
	require.Error(t, x.ReadRows(0, got[:d+1]), "not whole items")
	// One dimension (a labels file: items of one byte) is a valid IDX file
	// too; no dimension or a zero one is not.
	labels := filepath.Join(t.TempDir(), "labels.idx")
	lf, err := os.Create(labels)
	require.NoError(t, err)
	require.NoError(t, WriteIDX8Header(lf, 5))
	_, err = lf.Write([]byte{3, 1, 4, 1, 5})
	require.NoError(t, err)
	require.NoError(t, lf.Close())
	l, err := OpenIDX8(labels)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, [2]int{5, 1}, [2]int{l.N, l.D})
	one := make([]uint8, 2)
	require.NoError(t, l.ReadRows(3, one))
	require.Equal(t, []uint8{1, 5}, one)
	require.Error(t, WriteIDX8Header(io.Discard))
	require.Error(t, WriteIDX8Header(io.Discard, 5, 0))
}

// movedPlain is moved as first written: each pixel's source point
// interpolated by bilinear with its bounds tests, the draws in the same
// order. moved must give the same bytes.
func (a *Augment8) movedPlain(r *rand.Rand, i int) (out [784]uint8) {
	const side = 28
	from := a.base[((i-70000)%60000)*784:][:784]
	dr, dc := float64(r.IntN(3)-1), float64(r.IntN(3)-1)
	th := (r.Float64()*20 - 10) * math.Pi / 180
	cs, sn := math.Cos(th), math.Sin(th)
	const c0 = (side - 1) / 2.0
	var bits uint64
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			py, px := float64(y)-dr-c0, float64(x)-dc-c0
			v := bilinear(from, side, cs*py+sn*px+c0, -sn*py+cs*px+c0)
			if (y*side+x)%4 == 0 {
				bits = r.Uint64()
			}
			v += float64(normal16[bits&0xffff])
			bits >>= 16
			switch {
			case v < 0:
				v = 0
			case v > 255:
				v = 255
			}
			out[y*side+x] = uint8(v + 0.5)
		}
	}
	return out
}

// The padded interpolation of moved gives the plain one's bytes on every
// copy of several generator streams (every training image once, with the
// shifts and angles the streams draw).
func TestMovedPlain(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
	}
	a, err := NewAugment8("", 7)
	require.NoError(t, err)
	for b := uint64(0); b < 15; b++ {
		r1 := rand.New(rand.NewPCG(7, b))
		r2 := rand.New(rand.NewPCG(7, b))
		for i := 70000 + int(b)*augment8Block; i < 70000+int(b+1)*augment8Block; i++ {
			require.Equal(t, a.movedPlain(r2, i), a.moved(r1, i), "image %d", i)
		}
	}
}

// bilinear interpolates the side×side image at (y, x), zero outside it.
func bilinear(img []uint8, side int, y, x float64) float64 {
	// Floors by truncation of positive values (the points lie within a
	// few pixels of the image: y, x > −4).
	const off = 4
	r, c := int(y+off)-off, int(x+off)-off
	fy, fx := y-float64(r), x-float64(c)
	var a, b, e, f float64 // (r, c), (r, c+1), (r+1, c), (r+1, c+1)
	if r >= 0 && r < side {
		row := img[r*side : (r+1)*side]
		if c >= 0 && c < side {
			a = float64(row[c])
		}
		if c+1 >= 0 && c+1 < side {
			b = float64(row[c+1])
		}
	}
	if r+1 >= 0 && r+1 < side {
		row := img[(r+1)*side : (r+2)*side]
		if c >= 0 && c < side {
			e = float64(row[c])
		}
		if c+1 >= 0 && c+1 < side {
			f = float64(row[c+1])
		}
	}
	return (1-fy)*((1-fx)*a+fx*b) + fy*((1-fx)*e+fx*f)
}

// An IDX header is the magic (two zero bytes, 0x08 for bytes, the number
// of dimensions) and each dimension as a big-endian 32-bit count: the
// largest is written, one more is an error rather than a truncated header;
// OpenIDX8 refuses a file of any other magic, type or size.
func TestWriteIDX8Header(t *testing.T) {
	var head bytes.Buffer
	require.NoError(t, WriteIDX8Header(&head, 1<<32-1, 1))
	require.Equal(t, []byte{0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1}, head.Bytes())
	require.ErrorIs(t, WriteIDX8Header(io.Discard, 1<<32, 1), ErrFormat)
	require.ErrorIs(t, WriteIDX8Header(io.Discard, 0), ErrFormat)
	require.ErrorIs(t, WriteIDX8Header(io.Discard, make([]int, 256)...), ErrFormat)
	// Refused: gzip, a type other than bytes, a size the header does not say.
	for name, body := range map[string][]byte{
		"gz":    {0x1f, 0x8b, 8, 0},
		"magic": {0, 1, 0x08, 1, 0, 0, 0, 1, 7}, // a valid file but for its second byte
		"float": {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0},
		"short": {0, 0, 0x08, 2, 0, 0, 0, 3, 0, 0, 0, 2, 1, 2, 3},
	} {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, body, 0o644))
		_, err := OpenIDX8(p)
		require.ErrorIs(t, err, ErrFormat, name)
		// A gzip file is named as such (the distributed files are).
		require.Equal(t, name == "gz", strings.Contains(err.Error(), "gzip"), "%s: %v", name, err)
	}
}
