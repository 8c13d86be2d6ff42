package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestReadCSV(t *testing.T) {
	tb, err := ReadCSV(strings.NewReader("a,b,c\n1,2,3\n\n# comment\n4,5.5,-6e1\n"), CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, tb.Header)
	require.Equal(t, []float64{1, 2, 3, 4, 5.5, -60}, tb.X.RawMatrix().Data)

	tb, err = ReadCSV(strings.NewReader("1;2\n3;4\n5;6\n"), CSVOptions{Comma: ';', MaxRows: 2})
	require.NoError(t, err)
	require.Nil(t, tb.Header)
	r, c := tb.X.Dims()
	require.Equal(t, [2]int{2, 2}, [2]int{r, c})
	// MaxRows counts data rows (a header is not one): the first k, for
	// every k, and all of them from k = 3 on.
	for k := 1; k <= 4; k++ {
		tb, err = ReadCSV(strings.NewReader("x;y\n1;2\n3;4\n5;6\n"), CSVOptions{Comma: ';', MaxRows: k})
		require.NoError(t, err)
		require.Equal(t, []float64{1, 2, 3, 4, 5, 6}[:2*min(k, 3)], tb.X.RawMatrix().Data, "MaxRows %d", k)
	}

	tb, err = ReadCSV(strings.NewReader("  1.5   2\n3\t 4\n"), CSVOptions{Comma: ' '})
	require.NoError(t, err)
	require.Equal(t, []float64{1.5, 2, 3, 4}, tb.X.RawMatrix().Data)

	bad := map[string]string{
		"ragged":      "1,2\n3\n",
		"not number":  "1,2\n3,x\n",
		"nan":         "1,NaN\n",
		"inf":         "1,2\n+Inf,3\n",
		"minus inf":   "1,2\n3,-inf\n",
		"overflow":    "1,2\n3,-1e999\n",
		"empty":       "",
		"header only": "a,b\n",
	}
	for name, in := range bad {
		_, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		require.ErrorIs(t, err, ErrFormat, name)
	}
	// A row of another length names its line and both counts, longer or
	// shorter, after a header or not.
	for in, says := range map[string]string{
		"1,2\n3\n":          "line 2 has 1 fields, earlier rows have 2",
		"a,b\n1,2\n3,4,5\n": "line 3 has 3 fields, earlier rows have 2",
	} {
		_, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		require.ErrorIs(t, err, ErrFormat, in)
		require.Contains(t, err.Error(), says, in)
	}
	tb, err = ReadCSV(strings.NewReader("1,NaN\n"), CSVOptions{AllowNonFinite: true})
	require.NoError(t, err)
	require.True(t, math.IsNaN(tb.X.At(0, 1)))
}

// ParseIris's header: n, d and the class names, one name the fewest.
func TestParseIrisHeader(t *testing.T) {
	l, err := ParseIris(strings.NewReader("2,2,only\n1,2,0\n3,4,0\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"only"}, l.Classes)
	require.Equal(t, []int{0, 0}, l.Labels)
	_, err = ParseIris(strings.NewReader("2,2\n1,2\n3,4\n"))
	require.ErrorIs(t, err, ErrFormat)
}

func TestIris(t *testing.T) {
	d, err := Iris()
	require.NoError(t, err)
	n, p := d.X.Dims()
	require.Equal(t, [2]int{150, 4}, [2]int{n, p})
	require.Equal(t, []string{"setosa", "versicolor", "virginica"}, d.Classes)
	counts := make([]int, 3)
	for _, l := range d.Labels {
		counts[l]++
	}
	require.Equal(t, []int{50, 50, 50}, counts)
	// Fisher's data: the mean sepal length is 5.843 cm.
	require.InDelta(t, 5.8433, stat.Mean(mat.Col(nil, 0, d.X), nil), 1e-4)
}

func TestDigits(t *testing.T) {
	d, err := Digits()
	require.NoError(t, err)
	n, p := d.X.Dims()
	require.Equal(t, [2]int{1797, 64}, [2]int{n, p})
	require.Equal(t, 0, d.Labels[0])
	require.Equal(t, 1, d.Labels[1])
	require.Equal(t, 16.0, mat.Max(d.X))
	require.Equal(t, 0.0, mat.Min(d.X))
}

func TestSantaFe(t *testing.T) {
	train, test, err := SantaFe()
	require.NoError(t, err)
	require.Len(t, train, 1000)
	require.Len(t, test, 100)
	require.Equal(t, []float64{86, 141, 95}, train[:3])
	require.Equal(t, []float64{72, 178, 122}, test[:3])
	back, err := ParseSeries(strings.NewReader(SeriesString(train)))
	require.NoError(t, err)
	require.Equal(t, train, back)
	_, err = ParseSeries(strings.NewReader("1 2\n3 4\n"))
	require.ErrorIs(t, err, ErrFormat)
}

// idxBytes encodes an IDX array of unsigned bytes.
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		_ = binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func TestReadIDX(t *testing.T) {
	raw := idxBytes([]int{3, 2}, []byte{1, 2, 3, 4, 5, 255})
	a, err := ReadIDX(bytes.NewReader(raw), 0)
	require.NoError(t, err)
	require.Equal(t, []int{3, 2}, a.Dims)
	require.Equal(t, []float64{1, 2, 3, 4, 5, 255}, a.Data)

	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	require.NoError(t, w.Close())
	b, err := ReadIDX(&gz, 2)
	require.NoError(t, err)
	require.Equal(t, []int{2, 2}, b.Dims)
	require.Equal(t, []float64{1, 2, 3, 4}, b.Data)

	// float64 type code
	var f bytes.Buffer
	f.Write([]byte{0, 0, 0x0E, 1})
	_ = binary.Write(&f, binary.BigEndian, uint32(2))
	_ = binary.Write(&f, binary.BigEndian, []float64{-1.5, 3})
	c, err := ReadIDX(&f, 0)
	require.NoError(t, err)
	require.Equal(t, []float64{-1.5, 3}, c.Data)

	// Every other type code, signed where IDX says so: 0x09 int8, 0x0B
	// int16, 0x0C int32, 0x0D float32 (big-endian).
	for code, want := range map[byte][]float64{0x09: {-128, -1, 0, 127}, 0x0B: {-32768, -2, 5, 32767},
		0x0C: {-2147483648, -3, 7, 2147483647}, 0x0D: {-2.5, 0.125, 1e10, -0}} {
		var b bytes.Buffer
		b.Write([]byte{0, 0, code, 1})
		_ = binary.Write(&b, binary.BigEndian, uint32(4))
		for _, v := range want {
			switch code {
			case 0x09:
				_ = binary.Write(&b, binary.BigEndian, int8(v))
			case 0x0B:
				_ = binary.Write(&b, binary.BigEndian, int16(v))
			case 0x0C:
				_ = binary.Write(&b, binary.BigEndian, int32(v))
			case 0x0D:
				_ = binary.Write(&b, binary.BigEndian, float32(v))
			}
		}
		got, err := ReadIDX(&b, 0)
		require.NoError(t, err, "type 0x%02x", code)
		require.Equal(t, want, got.Data, "type 0x%02x", code)
	}

	for name, in := range map[string][]byte{
		"short":     raw[:9],
		"magic":     append([]byte{1, 0}, raw[2:]...),
		"type":      append([]byte{0, 0, 0x07}, raw[3:]...),
		"no dims":   {0, 0, 8, 0},
		"truncated": raw[:len(raw)-1],
		"huge":      idxBytes([]int{1 << 30, 1 << 30}, nil),
		// (2³² − 1)³ elements overflow an int: the limit must refuse
		// them before the product wraps to a small or negative size.
		"overflow": idxBytes([]int{1<<32 - 1, 1<<32 - 1, 1<<32 - 1}, nil),
		"bad gzip": {0x1f, 0x8b, 0, 0},
	} {
		_, err := ReadIDX(bytes.NewReader(in), 0)
		require.ErrorIs(t, err, ErrFormat, name)
		if name == "huge" || name == "overflow" {
			// Refused on the header, before any data is read.
			require.ErrorContains(t, err, "more than kdual reads", name)
		}
	}
}

func TestLoadFashion(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		// make test installs dataset-fashion-mnist; only a bare go test
		// without it gets here, and then the loader must say so.
		_, err := LoadFashion("", "train", 10)
		require.ErrorIs(t, err, ErrMissing)
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist): only the missing-data error was checked")
	}
	f, err := LoadFashion("", "train", 100)
	require.NoError(t, err)
	n, d := f.X.Dims()
	require.Equal(t, [2]int{100, 784}, [2]int{n, d})
	require.LessOrEqual(t, mat.Max(f.X), 1.0)
	require.GreaterOrEqual(t, mat.Min(f.X), 0.0)
	require.Equal(t, 9, f.Labels[0]) // the first training image is an ankle boot
	te, err := LoadFashion("", "test", 5)
	require.NoError(t, err)
	require.Len(t, te.Labels, 5)
	_, err = LoadFashion("", "valid", 5)
	require.ErrorIs(t, err, ErrFormat)
	_, err = LoadFashion(t.TempDir(), "train", 5)
	require.True(t, errors.Is(err, ErrMissing))
}

// ReadIDX8 gives the bytes ReadIDX gives as values, plain or through
// gzip, whole or a prefix; it refuses every other type code by name and
// every malformed stream ReadIDX refuses, checks the gzip trailer, and
// allocates with the data that arrive, not with the header's word.
func TestReadIDX8(t *testing.T) {
	raw := idxBytes([]int{3, 2}, []byte{1, 2, 3, 4, 5, 255})
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	require.NoError(t, w.Close())
	for _, in := range [][]byte{raw, gz.Bytes()} {
		for _, c := range []struct {
			max  int
			dims []int
			data []byte
		}{{0, []int{3, 2}, []byte{1, 2, 3, 4, 5, 255}}, {2, []int{2, 2}, []byte{1, 2, 3, 4}}, {9, []int{3, 2}, []byte{1, 2, 3, 4, 5, 255}}} {
			dims, data, err := ReadIDX8(bytes.NewReader(in), c.max)
			require.NoError(t, err)
			require.Equal(t, c.dims, dims)
			require.Equal(t, c.data, data)
		}
	}
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x09, 1})
	_ = binary.Write(&b, binary.BigEndian, uint32(2))
	b.Write([]byte{1, 2})
	_, _, err := ReadIDX8(&b, 0)
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorContains(t, err, "0x09")

	badCRC := append([]byte(nil), gz.Bytes()...)
	badCRC[len(badCRC)-8] ^= 0xff
	_, _, err = ReadIDX8(bytes.NewReader(badCRC), 0)
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorContains(t, err, "checksum")
	for name, in := range map[string][]byte{
		"short":     raw[:9],
		"magic":     append([]byte{1, 0}, raw[2:]...),
		"type":      append([]byte{0, 0, 0x07}, raw[3:]...),
		"no dims":   {0, 0, 8, 0},
		"zero dim":  idxBytes([]int{3, 0}, nil),
		"truncated": raw[:len(raw)-1],
		"huge":      idxBytes([]int{1 << 30, 1 << 30}, nil),
		"bad gzip":  {0x1f, 0x8b, 0, 0},
	} {
		_, _, err := ReadIDX8(bytes.NewReader(in), 0)
		require.ErrorIs(t, err, ErrFormat, name)
	}
	huge := idxBytes([]int{478_000_000}, make([]byte, 10))
	var before, after runtimeMem
	before.read()
	_, _, err = ReadIDX8(bytes.NewReader(huge), 0)
	after.read()
	require.ErrorContains(t, err, "data ends after 0 of 478000000")
	require.Less(t, after.total-before.total, uint64(16<<20), "bytes allocated for a header alone")
}

// LoadFashionLevels gives LoadFashion's pixels times 255, exactly, for
// both splits; it refuses a split it does not know, a directory without
// the files, and more images than a split has.
func TestLoadFashionLevels(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		_, err := LoadFashionLevels("", "train", 10)
		require.ErrorIs(t, err, ErrMissing)
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist): only the missing-data error was checked")
	}
	for _, c := range []struct {
		split string
		n     int
	}{{"train", 100}, {"test", 7}} {
		lv, err := LoadFashionLevels("", c.split, c.n)
		require.NoError(t, err)
		f, err := LoadFashion("", c.split, c.n)
		require.NoError(t, err)
		require.Len(t, lv, c.n*784)
		for i, v := range f.X.RawMatrix().Data {
			require.Equal(t, v, float64(lv[i])/255, "%s pixel %d", c.split, i)
		}
	}
	_, err := LoadFashionLevels("", "valid", 5)
	require.ErrorIs(t, err, ErrFormat)
	_, err = LoadFashionLevels(t.TempDir(), "train", 5)
	require.ErrorIs(t, err, ErrMissing)
	_, err = LoadFashionLevels("", "test", 10001)
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorContains(t, err, "10000 images, 10001 asked for")
}

func TestGenerators(t *testing.T) {
	a, err := StandardNormal(2000, 3, 7)
	require.NoError(t, err)
	b, err := StandardNormal(2000, 3, 7)
	require.NoError(t, err)
	require.True(t, mat.Equal(a, b), "same seed, same data")
	c, err := StandardNormal(2000, 3, 8)
	require.NoError(t, err)
	require.False(t, mat.Equal(a, c))
	for _, sh := range [][2]int{{0, 3}, {3, 0}, {-1, 2}, {2, -1}} {
		_, err := StandardNormal(sh[0], sh[1], 1)
		require.ErrorIs(t, err, ErrFormat, "shape %v", sh)
	}
	// Moments within sampling error: the mean of 6000 N(0,1) has sd 0.013.
	require.InDelta(t, 0, stat.Mean(a.RawMatrix().Data, nil), 0.06)
	require.InDelta(t, 1, stat.Variance(a.RawMatrix().Data, nil), 0.08)

	cov := mat.NewSymDense(2, []float64{4, 1.2, 1.2, 1})
	x, err := MultivariateNormalCov(40000, []float64{1, -2}, cov, 3)
	require.NoError(t, err)
	sc := mat.NewSymDense(2, nil)
	stat.CovarianceMatrix(sc, x, nil)
	// Sample covariance entries have sd ≈ √(2/n)·σ² ≈ 0.03 for the largest.
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			require.InDelta(t, cov.At(i, j), sc.At(i, j), 0.12)
		}
	}
	require.InDelta(t, 1, stat.Mean(mat.Col(nil, 0, x), nil), 0.05)
	require.InDelta(t, -2, stat.Mean(mat.Col(nil, 1, x), nil), 0.05)

	_, err = StandardNormal(0, 3, 1)
	require.ErrorIs(t, err, ErrFormat)
	_, err = MultivariateNormal(5, []float64{1}, cov, 1)
	require.ErrorIs(t, err, ErrFormat)
	_, err = MultivariateNormalCov(5, nil, mat.NewSymDense(2, []float64{1, 2, 2, 1}), 1)
	require.ErrorIs(t, err, ErrFormat)
}

// The parsers must never panic and must either fail with ErrFormat or return
// a consistent table.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "a,b\n1,2\n", "-0,NaN\n", "+Inf,-Inf\n", "4.9e-324,1\n", "1,,2\n", "\n\n", "1;2",
		"\ufeff1,2\n3,4\n", "1e400,1\n2,3\n", "\"1,5\",2\n3,4\n", ",a,b\n1,2,3\n"} {
		f.Add(s)
	}
	// Size amplification: one line past the cap, for both separators.
	f.Add("1," + strings.Repeat("1", maxLine) + "\n")
	f.Add("1 " + strings.Repeat("2", maxLine) + "\n")
	f.Fuzz(func(t *testing.T, in string) {
		tb, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		r, c := tb.X.Dims()
		if r < 1 || c < 1 {
			t.Fatalf("empty table without error")
		}
		for _, v := range tb.X.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %g accepted", v)
			}
		}
	})
}

func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2}, []byte{1, 2, 3, 4}), 0)
	f.Add(idxBytes([]int{3}, []byte{1, 2}), 2)
	f.Add([]byte{0, 0, 0x0D, 1, 0, 0, 0, 1, 0x7f, 0xc0, 0, 0}, 0)
	f.Add([]byte{0x1f, 0x8b, 8, 0}, 0)
	// Size amplification: declared shapes far beyond the bytes that
	// follow, and a gzip stream inflating a thousand times.
	f.Add(idxBytes([]int{1 << 30, 1 << 30}, []byte{1, 2, 3}), 0)
	f.Add(idxBytes([]int{70000, 28, 28}, []byte{1, 2, 3}), 0)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(idxBytes([]int{1 << 24}, make([]byte, 1<<24)))
	_ = zw.Close()
	f.Add(gz.Bytes(), 0)
	f.Fuzz(func(t *testing.T, in []byte, maxItems int) {
		a, err := ReadIDX(bytes.NewReader(in), maxItems)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		total := 1
		for _, d := range a.Dims {
			total *= d
		}
		if total != len(a.Data) {
			t.Fatalf("dims %v but %d values", a.Dims, len(a.Data))
		}
	})
}

func FuzzParseSeries(f *testing.F) {
	for _, s := range []string{"1\n2\n", "  8.6e+01\n", "1 2\n", "x\n", "-0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseSeries(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if len(v) == 0 {
			t.Fatalf("empty series without error")
		}
	})
}

func TestImageTransforms(t *testing.T) {
	const side = 8
	img := make([]float64, side*side)
	img[3*side+5] = 1 // one bright pixel at (x=5, y=3)
	// The identity map and a 360° turn give the image back.
	same := Affine(img, side, [2][2]float64{{1, 0}, {0, 1}}, [2]float64{})
	require.InDeltaSlice(t, img, same, 1e-12)
	full := Rotate(img, side, 360)
	require.InDeltaSlice(t, img, full, 1e-9)
	// A shift by one pixel moves the bright pixel by one (output p reads
	// source p + shift).
	moved := Affine(img, side, [2][2]float64{{1, 0}, {0, 1}}, [2]float64{1, 0})
	require.InDelta(t, 1, moved[3*side+4], 1e-12)
	// Half a pixel each way: bilinear weights of ¼ on the four neighbours,
	// so the bright pixel spreads over the 2×2 outputs that read it.
	half := Affine(img, side, [2][2]float64{{1, 0}, {0, 1}}, [2]float64{0.5, 0.5})
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			want := 0.0
			if (x == 4 || x == 5) && (y == 2 || y == 3) {
				want = 0.25
			}
			require.InDelta(t, want, half[y*side+x], 1e-12, "(%d, %d)", x, y)
		}
	}
	// A 90° turn about the centre (3.5, 3.5) maps (5, 3) to (4, 5).
	r := Rotate(img, side, 90)
	require.InDelta(t, 1, r[5*side+4], 1e-9)
	// Sobel of a constant image is zero inside; its peak is 1 at edges.
	flat := make([]float64, side*side)
	for i := range flat {
		flat[i] = 0.5
	}
	s := Sobel(flat, side)
	require.Zero(t, s[3*side+3])
	require.InDelta(t, 1, maxOf(s), 1e-12)
	// A vertical step (columns 4… bright): inside, the two columns at the
	// step (and the last, against the zero border) share one magnitude and
	// the rest are zero; the transposed image gives the transposed
	// gradient (the x and y stencils are each other's transposes).
	step, stepT := make([]float64, side*side), make([]float64, side*side)
	for y := 0; y < side; y++ {
		for x := 4; x < side; x++ {
			step[y*side+x], stepT[x*side+y] = 1, 1
		}
	}
	g, gT := Sobel(step, side), Sobel(stepT, side)
	for y := 1; y < side-1; y++ {
		row := g[y*side : (y+1)*side]
		require.Greater(t, row[3], 0.0)
		require.Equal(t, row[3], row[4], "row %d", y)
		require.Equal(t, row[3], row[side-1], "row %d", y)
		for _, x := range []int{0, 1, 2, 5} {
			require.Zero(t, row[x], "row %d column %d", y, x)
		}
	}
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			require.InDelta(t, g[y*side+x], gT[x*side+y], 1e-15, "(%d, %d)", y, x)
		}
	}
	d := Downsample2(flat, side)
	require.Len(t, d, 16)
	require.InDelta(t, 0.5, d[5], 1e-15)
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func TestStandInViews(t *testing.T) {
	x, err := StandardNormal(5, 64, 1)
	require.NoError(t, err)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = math.Abs(x.RawMatrix().Data[i]) / 4
	}
	p, s, err := SketchViews(x, 8, 2)
	require.NoError(t, err)
	require.True(t, mat.Equal(p, x))
	r, c := s.Dims()
	require.Equal(t, []int{5, 64}, []int{r, c})
	for _, v := range s.RawMatrix().Data {
		require.True(t, v >= 0 && v <= 1)
	}
	views, labels, err := PoseViews(x, 8, []float64{-45, 0, 45}, 2, 0.05, 3)
	require.NoError(t, err)
	require.Len(t, views, 3)
	r, c = views[0].Dims()
	require.Equal(t, []int{10, 16}, []int{r, c})
	require.Equal(t, []int{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}, labels[2])
	_, _, err = SketchViews(x, 7, 1)
	require.ErrorIs(t, err, ErrFormat)
	_, _, err = PoseViews(x, 8, nil, 2, 0.05, 1)
	require.ErrorIs(t, err, ErrFormat)

	// Without noise, a view's samples are shifts of at most one pixel of
	// the rotated image, then 2×2 averages: images whose content keeps off
	// the border keep their mass, a quarter of it in the averaged pixels —
	// exactly at 0° (bilinear shifts conserve it), to the rotation's
	// resampling at 30°.
	blobs := mat.NewDense(3, 256, nil)
	for i := 0; i < 3; i++ {
		for r := 5; r < 11; r++ {
			for c := 5; c < 11; c++ {
				blobs.Set(i, r*16+c, float64((i+1)*(r+c))/80) // in [0, 1]
			}
		}
	}
	views, _, err = PoseViews(blobs, 16, []float64{0, 30}, 3, 0, 5)
	require.NoError(t, err)
	for j, v := range views {
		for q := 0; q < 9; q++ {
			want := 0.0
			for _, p := range blobs.RawRowView(q / 3) {
				want += p
			}
			got := 0.0
			for _, p := range v.RawRowView(q) {
				got += p
			}
			tol := 1e-9 // the shift alone at 0°; the rotation's resampling at 30°
			if j == 1 {
				tol = 0.02
			}
			require.InDelta(t, want/4, got, tol*want, "view %d row %d", j, q)
		}
	}
}

// The augmented set: the 70 000 images in order, then shifted noisy copies
// of the training images: each copy, less its noise, is its source moved
// by one pixel, and the noise has standard deviation 0.01.
func TestFashionAugmented(t *testing.T) {
	if _, err := os.Stat(FashionDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
	}
	x, err := FashionAugmented("", 70003, 5)
	require.NoError(t, err)
	train, err := LoadFashion("", "train", 3)
	require.NoError(t, err)
	test, err := LoadFashion("", "test", 1)
	require.NoError(t, err)
	require.Equal(t, train.X.RawRowView(0), x.RawRowView(0))
	require.Equal(t, test.X.RawRowView(0), x.RawRowView(60000))
	// One row past the training set is the first test image.
	x1 := make([]float32, 60001*784)
	require.NoError(t, FashionAugmented32("", 60001, 5, nil, x1))
	for j, v := range test.X.RawRowView(0) {
		require.Equal(t, float32(v), x1[60000*784+j])
	}
	var sum, sq float64
	count := 0
	for k := 0; k < 3; k++ {
		src, got := train.X.RawRowView(k), x.RawRowView(70000+k)
		best := math.Inf(1)
		var bestRes []float64
		for _, sh := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
			res := make([]float64, 784)
			m := 0.0
			for r := 0; r < 28; r++ {
				for c := 0; c < 28; c++ {
					v := 0.0
					if sr, sc := r-sh[0], c-sh[1]; sr >= 0 && sr < 28 && sc >= 0 && sc < 28 {
						v = src[sr*28+sc]
					}
					res[r*28+c] = got[r*28+c] - v
					m = math.Max(m, math.Abs(res[r*28+c]))
				}
			}
			if m < best {
				best, bestRes = m, res
			}
		}
		require.Less(t, best, 0.06, "copy %d is its source shifted by one pixel plus noise", k)
		for _, v := range bestRes {
			sum += v
			sq += v * v
			count++
		}
	}
	std := math.Sqrt(sq/float64(count) - (sum/float64(count))*(sum/float64(count)))
	require.InDelta(t, 0.01, std, 0.001)
	// The same seed gives the same bits, in every version: the benchmarks
	// that run on these rows (bench-kernelpca's n = 100 000) are compared
	// across sessions. A hash of the first eight copies' float64 bits.
	y, err := FashionAugmented("", 70008, 5)
	require.NoError(t, err)
	h := fnv.New64a()
	var word [8]byte
	for i := 70000; i < 70008; i++ {
		for _, v := range y.RawRowView(i) {
			binary.LittleEndian.PutUint64(word[:], math.Float64bits(v))
			_, _ = h.Write(word[:])
		}
	}
	require.Equal(t, uint64(0x390e4e74c05f46c7), h.Sum64(), "seed 5's copies changed")
	// The float32 rows are the float64 ones less the shift, rounded.
	shift := make([]float64, 784)
	for j := range shift {
		shift[j] = 0.001 * float64(j)
	}
	x32 := make([]float32, 70003*784)
	require.NoError(t, FashionAugmented32("", 70003, 5, shift, x32))
	for _, i := range []int{0, 59999, 60000, 69999, 70000, 70002} {
		for j, v := range x.RawRowView(i) {
			require.Equal(t, float32(v-shift[j]), x32[i*784+j], "row %d col %d", i, j)
		}
	}
	require.Error(t, FashionAugmented32("", 10, 1, nil, x32[:100]))
	small, err := FashionAugmented("", 10, 1)
	require.NoError(t, err)
	require.Equal(t, train.X.RawRowView(1), small.RawRowView(1))
	_, err = FashionAugmented("", 0, 1)
	require.Error(t, err)
}

// An IDX header with a zero dimension is a format error, not a panic later.
func TestReadIDXZeroDimension(t *testing.T) {
	head := []byte{0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}
	_, err := ReadIDX(bytes.NewReader(head), 0)
	require.ErrorIs(t, err, ErrFormat)
}

// The CSV a user has: quoted numbers and a quoted header with a comma, a
// label column of names (the iris layout), tab-separated files by their
// extension, gzip by its extension (checksum verified), and errors that
// name file, line and column and stay short.
func TestReadTableRealFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, gz bool) string {
		p := filepath.Join(dir, name)
		var b bytes.Buffer
		if gz {
			w := gzip.NewWriter(&b)
			_, _ = w.Write([]byte(text))
			require.NoError(t, w.Close())
		} else {
			b.WriteString(text)
		}
		require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
		return p
	}
	tb, err := ReadCSV(strings.NewReader("\"width, cm\",\"height\"\n\"1.5\",2\n3,\"4\"\n"), CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"width, cm", "height"}, tb.Header)
	require.Equal(t, []float64{1.5, 2, 3, 4}, tb.X.RawMatrix().Data)

	iris := "sepal_length,sepal_width,species\n5.1,3.5,setosa\n7.0,3.2,versicolor\n6.3,3.3,virginica\n"
	tb, err = ReadTable(write("iris.csv", iris, false), CSVOptions{LabelColumn: -1})
	require.NoError(t, err)
	require.Equal(t, []string{"setosa", "versicolor", "virginica"}, tb.Labels)
	r, c := tb.X.Dims()
	require.Equal(t, [2]int{3, 2}, [2]int{r, c})
	_, err = ReadTable(write("iris2.csv", iris, false), CSVOptions{})
	require.ErrorIs(t, err, ErrFormat, "names are not numbers without --label-column")
	for _, lc := range []int{4, 5, -4, -10} { // past either end of three columns
		_, err = ReadTable(write("iris3.csv", iris, false), CSVOptions{LabelColumn: lc})
		require.ErrorIs(t, err, ErrFormat, "label column %d of 3", lc)
	}

	tb, err = ReadTable(write("d.tsv", "a\tb\n1\t2\n", false), CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2}, tb.X.RawMatrix().Data)
	tb, err = ReadTable(write("d.csv.gz", "1,2\n3,4\n", true), CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 4}, tb.X.RawMatrix().Data)

	raw, err := os.ReadFile(filepath.Join(dir, "d.csv.gz"))
	require.NoError(t, err)
	raw[len(raw)-6] ^= 0xff // the CRC in the gzip trailer
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.csv.gz"), raw, 0o644))
	_, err = ReadTable(filepath.Join(dir, "bad.csv.gz"), CSVOptions{})
	require.ErrorIs(t, err, ErrFormat)

	long := strings.Repeat("x", 300000)
	_, err = ReadTable(write("long.csv", "1,2\n3,"+long+"\n", false), CSVOptions{})
	require.ErrorIs(t, err, ErrFormat)
	require.Less(t, len(err.Error()), 300)
	require.Contains(t, err.Error(), "long.csv")
	require.Contains(t, err.Error(), "line 2 column 2")

	// An IDX file (by its name) of 3×2×2 items: the dimensions after the
	// first are flattened into columns, which the options choose from; a
	// choice the table cannot meet names the file.
	idx := filepath.Join(dir, "items-idx3-ubyte")
	require.NoError(t, os.WriteFile(idx, idxBytes([]int{3, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), 0o644))
	tb, err = ReadTable(idx, CSVOptions{})
	require.NoError(t, err)
	rows, cols := tb.X.Dims()
	require.Equal(t, []int{3, 4}, []int{rows, cols})
	require.Equal(t, []float64{5, 6, 7, 8}, tb.X.RawRowView(1))
	tb, err = ReadTable(idx, CSVOptions{Columns: []string{"4", "1"}, MaxRows: 2})
	require.NoError(t, err)
	require.Equal(t, []float64{4, 1, 8, 5}, tb.X.RawMatrix().Data)
	tb, err = ReadTable(idx, CSVOptions{LabelColumn: -1})
	require.NoError(t, err)
	require.Equal(t, []string{"4", "8", "12"}, tb.Labels)
	_, err = ReadTable(idx, CSVOptions{LabelColumn: 9})
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "items-idx3-ubyte")
}

// gzip streams are checked: a wrong CRC in the trailer is an error (it was
// accepted and gave different data), a truncated stream reports the gzip
// error, and a header claiming 478 million elements with no data behind it
// fails having allocated about what arrived, not 3.6 GB.
func TestReadIDXGzipAndHugeHeaders(t *testing.T) {
	raw := idxBytes([]int{4, 3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(raw)
	require.NoError(t, w.Close())
	good := gz.Bytes()
	a, err := ReadIDX(bytes.NewReader(good), 0)
	require.NoError(t, err)
	require.Equal(t, 12, len(a.Data))

	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-8] ^= 0xff // first byte of the CRC-32
	_, err = ReadIDX(bytes.NewReader(badCRC), 0)
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "checksum")
	// A bound of as many items as the file holds, or more, reads the
	// whole stream: its trailer is checked too.
	for _, bound := range []int{4, 5} {
		_, err = ReadIDX(bytes.NewReader(badCRC), bound)
		require.ErrorIs(t, err, ErrFormat, "maxItems %d", bound)
		require.Contains(t, err.Error(), "checksum", "maxItems %d", bound)
	}

	badLen := append([]byte(nil), good...)
	badLen[len(badLen)-1] ^= 0xff // last byte of the length
	_, err = ReadIDX(bytes.NewReader(badLen), 0)
	require.ErrorIs(t, err, ErrFormat)

	for cut := 12; cut < len(good); cut += 3 {
		_, err = ReadIDX(bytes.NewReader(good[:cut]), 0)
		require.ErrorIs(t, err, ErrFormat, "cut at %d", cut)
		require.Contains(t, err.Error(), "gzip", "cut at %d", cut)
	}
	// A prefix read (maxItems) of a good stream does not need the trailer.
	b, err := ReadIDX(bytes.NewReader(good), 2)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6}, b.Data)

	// 12-byte header: 478 million uint8 elements, then 10 bytes of data.
	huge := idxBytes([]int{478_000_000}, make([]byte, 10))
	var before, after runtimeMem
	before.read()
	_, err = ReadIDX(bytes.NewReader(huge), 0)
	after.read()
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "data ends after 0 of 478000000")
	require.Less(t, after.total-before.total, uint64(16<<20), "bytes allocated for a header alone")

	// With the items bounded by the caller the header's size is allocated
	// at once, but never more than maxIDXPrealloc elements.
	huge2 := idxBytes([]int{2, 100_000_000}, make([]byte, 10))
	before.read()
	_, err = ReadIDX(bytes.NewReader(huge2), 2)
	after.read()
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "data ends after 0 of 200000000")
	require.Less(t, after.total-before.total, uint64(8*maxIDXPrealloc+16<<20), "bytes allocated for a bounded header")
}

type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

// growFloats keeps the values, appends zeros and doubles the capacity when
// it moves the slice, across the boundaries of the pieces it copies in.
func TestGrowFloats(t *testing.T) {
	s := make([]float64, 3<<20+5, 3<<20+5)
	for i := range s {
		s[i] = float64(i)
	}
	g := growFloats(s, 7)
	require.Len(t, g, len(s)+7)
	require.Equal(t, 2*cap(s), cap(g))
	for i := range s {
		if g[i] != float64(i) {
			require.Equal(t, float64(i), g[i], "element %d", i)
		}
	}
	for _, v := range g[len(s):] {
		require.Zero(t, v)
	}
	g[len(s)] = 9
	h := growFloats(g[:len(s)], 3) // room left: no move, zeros still
	require.Len(t, h, len(s)+3)
	require.Equal(t, &g[0], &h[0])
	require.Equal(t, []float64{0, 0, 0}, h[len(s):])
	require.Len(t, growFloats(nil, 4), 4)
}

// The first row is a header only when none of its non-empty fields is a
// number; otherwise it is data, and its bad fields are errors naming line
// and column. A byte order mark is dropped.
func TestCSVFirstRow(t *testing.T) {
	rows := "1,2,3\n4,5,6\n"
	for _, c := range []struct {
		name, first string
		header      bool
		err         string
	}{
		{"names", "a,b,c", true, ""},
		{"leading empty", ",b,c", true, ""},
		{"names with a label", "sepal_length,sepal_width,species", true, ""},
		{"data", "7,8,9", false, ""},
		{"bom", "\uFEFF7,8,9", false, ""},
		{"bom names", "\uFEFFa,b,c", true, ""},
		{"out of range", "1e400,8,9", false, "line 1 column 1: \"1e400\" is out of the range"},
		{"decimal comma", "\"1,5\",8,9", false, "line 1 column 1: \"1,5\" is not a number (a decimal comma"},
		{"empty field", "7,,9", false, "line 1 column 2: empty field"},
		{"word among numbers", "7,x,9", false, "line 1 column 2: \"x\" is not a number"},
		{"a space inside", "7,8 1,9", false, "line 1 column 2: \"8 1\" is not a number (it holds \" \": is that the field separator?)"},
		{"a semicolon inside", "7,8;1,9", false, "line 1 column 2: \"8;1\" is not a number (it holds \";\""},
	} {
		tab, err := ReadCSV(strings.NewReader(c.first+"\n"+rows), CSVOptions{})
		if c.err != "" {
			require.Error(t, err, c.name)
			require.Contains(t, err.Error(), c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		n, d := tab.X.Dims()
		require.Equal(t, 3, d, c.name)
		if c.header {
			require.Equal(t, 2, n, c.name)
			require.Len(t, tab.Header, 3, c.name)
			require.NotContains(t, tab.Header[0], "\uFEFF", c.name)
		} else {
			require.Equal(t, 3, n, c.name)
			require.Equal(t, 7.0, tab.X.At(0, 0), c.name)
		}
	}
}

// One endless line is an error after maxLine bytes, whatever the
// separator, without reading or keeping the rest: the bytes allocated stay
// a small multiple of maxLine (encoding/csv's buffer doubles up to it),
// not the line's length.
func TestCSVLineCap(t *testing.T) {
	for _, comma := range []rune{0, ';', '\t', ' '} {
		long := io.MultiReader(strings.NewReader("1,2\n"), &repeatReader{b: '1', n: 4 * maxLine})
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err := ReadCSV(long, CSVOptions{Comma: comma})
		runtime.ReadMemStats(&ms1)
		require.Error(t, err, "separator %q", comma)
		require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(12*maxLine), "separator %q", comma)
		if comma == ' ' {
			require.ErrorContains(t, err, "reading line 2: ", "the long line's own number")
		}
	}
}

// A whitespace-separated file whose reader fails after two lines names
// the line it could not read (the third) and the cause.
func TestCSVReadErrorLine(t *testing.T) {
	gone := errors.New("disk gone")
	r := io.MultiReader(strings.NewReader("1 2\n3 4\n"), iotest.ErrReader(gone))
	_, err := ReadCSV(r, CSVOptions{Comma: ' '})
	require.ErrorContains(t, err, "reading line 3: disk gone")
}

// lineCap's bound is on the bytes between newlines: lines of exactly max
// bytes pass (the newline not counted, the count starting again after
// it), and max + 1 bytes is an error, read in pieces or at once.
func TestLineCapBoundary(t *testing.T) {
	const max = 8
	read := func(s string, piece int) error {
		l := &lineCap{r: iotest.OneByteReader(strings.NewReader(s)), max: max, comma: ','}
		if piece > 1 {
			l.r = strings.NewReader(s)
		}
		_, err := io.ReadAll(l)
		return err
	}
	for _, piece := range []int{1, 64} {
		require.NoError(t, read("12345678\n12345678\n1234,678", piece), "piece %d", piece)
		err := read("12345678\n123456789\n", piece)
		require.ErrorIs(t, err, ErrFormat, "piece %d", piece)
		require.Contains(t, err.Error(), "longer than", "piece %d", piece)
		require.ErrorIs(t, read("123456789", piece), ErrFormat, "piece %d", piece)
	}
}

// A line of a million one-character fields (2 MiB, under the byte cap) is
// an error naming the field cap, with the bytes allocated bounded by
// what the cap allows (encoding/csv allocates about 160 bytes a field, growth included), for
// every separator.
func TestCSVFieldCap(t *testing.T) {
	for _, comma := range []rune{',', ';', '\t', ' '} {
		line := strings.Repeat("1"+string(comma), maxFields+10) + "1\n"
		opt := CSVOptions{Comma: comma}
		if comma == ',' {
			opt.Comma = 0
		}
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err := ReadCSV(strings.NewReader("1"+string(comma)+"2\n"+line), opt)
		runtime.ReadMemStats(&ms1)
		require.ErrorIs(t, err, ErrFormat, "separator %q", comma)
		require.Contains(t, err.Error(), "fields", "separator %q", comma)
		require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(len(line)+200*maxFields), "separator %q", comma)
	}
	// Just under the cap is a row like any other.
	tb, err := ReadCSV(strings.NewReader(strings.Repeat("1,", 999)+"1\n"), CSVOptions{})
	require.NoError(t, err)
	_, c := tb.X.Dims()
	require.Equal(t, 1000, c)
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// The sum of sines is sin(2πt) + 0.2·sin(40πt) at t = i/100: 0 at t = 0,
// 1 at a quarter period, −1 at three quarters (the fast term is 0 there).
func TestSumOfSines(t *testing.T) {
	x := SumOfSines(101)
	require.Len(t, x, 101)
	for i, want := range map[int]float64{0: 0, 25: 1, 50: 0, 75: -1, 100: 0} {
		require.InDelta(t, want, x[i], 1e-13, "x[%d]", i)
	}
	require.InDelta(t, math.Sin(2*math.Pi*0.03)+0.2*math.Sin(2*math.Pi*20*0.03), x[3], 1e-15)
	require.Empty(t, SumOfSines(0))
	require.Empty(t, SumOfSines(-4))
}

// ReadMatrix is ReadTable's matrix, its rows bounded when asked.
func TestReadMatrix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	require.NoError(t, os.WriteFile(path, []byte("a,b\n1,2\n3,4\n5,6\n"), 0o644))
	for maxRows, want := range map[int][]float64{0: {1, 2, 3, 4, 5, 6}, 2: {1, 2, 3, 4}, 9: {1, 2, 3, 4, 5, 6}} {
		x, err := ReadMatrix(path, maxRows)
		require.NoError(t, err)
		require.Equal(t, want, x.RawMatrix().Data, "maxRows %d", maxRows)
	}
	_, err := ReadMatrix(filepath.Join(t.TempDir(), "none.csv"), 0)
	require.Error(t, err)
}

// Columns chosen by name make the first row a header even where one of
// its fields reads as a number (a year); by number only (a spec that
// reads as a number is a column number) they leave the detection as it
// is.
func TestColumnsByNameMeanAHeader(t *testing.T) {
	tb, err := ReadCSV(strings.NewReader("x,2019\n1,2\n3,4\n"), CSVOptions{Columns: []string{"x", "2"}})
	require.NoError(t, err)
	require.Equal(t, []string{"x", "2019"}, tb.Header)
	require.Equal(t, []float64{1, 2, 3, 4}, tb.X.RawMatrix().Data)
	tb, err = ReadCSV(strings.NewReader("5,2019\n1,2\n3,4\n"), CSVOptions{Columns: []string{"2"}})
	require.NoError(t, err)
	require.Nil(t, tb.Header)
	require.Equal(t, []float64{2019, 2, 4}, tb.X.RawMatrix().Data)
}

// The sketch's warp moves the edges' centroid of a centred blob by its
// shift, documented as at most ±1.5 pixels, and by nothing on average;
// rotation, scale and shear about the image's centre move that centroid
// little (the bound allows 0.6 pixel for them and the edges' rounding).
func TestSketchViewsShiftBound(t *testing.T) {
	const side, n = 24, 400
	x := mat.NewDense(n, side*side, nil)
	for i := 0; i < n; i++ {
		for r := 9; r < 15; r++ {
			for c := 9; c < 15; c++ {
				x.Set(i, r*side+c, 1)
			}
		}
	}
	centroid := func(img []float64) (float64, float64) {
		var sx, sy, w float64
		for k, v := range img {
			sx += v * float64(k%side)
			sy += v * float64(k/side)
			w += v
		}
		return sx / w, sy / w
	}
	photos, sketches, err := SketchViews(x, side, 3)
	require.NoError(t, err)
	px, py := centroid(Sobel(photos.RawRowView(0), side))
	var mx, my float64
	for i := 0; i < n; i++ {
		sx, sy := centroid(sketches.RawRowView(i))
		require.LessOrEqual(t, math.Abs(sx-px), 2.1, "identity %d", i)
		require.LessOrEqual(t, math.Abs(sy-py), 2.1, "identity %d", i)
		mx += (sx - px) / n
		my += (sy - py) / n
	}
	require.Less(t, math.Abs(mx), 0.3)
	require.Less(t, math.Abs(my), 0.3)
}
