package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// Files written by NumPy 1.24 (testdata/npy): every dtype and layout a
// user's numpy.save produces reads as the same matrix.
func TestReadNumPyFiles(t *testing.T) {
	want := mat.NewDense(4, 3, nil)
	for i := 0; i < 12; i++ {
		want.Set(i/3, i%3, float64(i)*0.5-1)
	}
	read := func(name string, opt CSVOptions) (*Table, error) {
		return ReadTable(filepath.Join("testdata", "npy", name), opt)
	}
	for _, name := range []string{"f8.npy", "f4_fortran.npy", "xy.npz"} {
		tb, err := read(name, CSVOptions{})
		require.NoError(t, err, name)
		require.True(t, mat.Equal(want, tb.X), name)
	}
	tb, err := read("xy.npz", CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"0", "1", "1", "2"}, tb.Labels)

	tb, err = read("i2_big.npy", CSVOptions{})
	require.NoError(t, err)
	var twice mat.Dense
	twice.Scale(2, want)
	require.True(t, mat.Equal(&twice, tb.X))

	tb, err = read("u1_3d.npy", CSVOptions{MaxRows: 2})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, tb.X.RawMatrix().Data)
	require.Equal(t, 6, tb.X.RawMatrix().Cols)

	tb, err = read("b1_1d.npy", CSVOptions{})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 0, 1}, tb.X.RawMatrix().Data)

	// A prefix of a Fortran-order array, and a label column taken out.
	tb, err = read("f4_fortran.npy", CSVOptions{MaxRows: 3, LabelColumn: -1})
	require.NoError(t, err)
	require.True(t, mat.Equal(want.Slice(0, 3, 0, 2), tb.X))
	require.Equal(t, []string{"0", "1.5", "3"}, tb.Labels)

	for name, msg := range map[string]string{
		"nan.npy":  "NaN at row 1 column 2",
		"c16.npy":  "dtype",
		"two.npz":  "arrays a, b",
		"none.npy": "no such file",
	} {
		_, err := read(name, CSVOptions{})
		require.ErrorContains(t, err, msg, name)
	}
	tb, err = read("nan.npy", CSVOptions{AllowNonFinite: true})
	require.NoError(t, err)
	require.Equal(t, 2, tb.X.RawMatrix().Rows)
}

// Broken .npy streams are format errors, never panics or allocations on
// the header's word: every truncation, a huge header length, a huge shape
// with no data behind it, and a corrupted member of a compressed archive.
func TestReadNPYBroken(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "npy", "f8.npy"))
	require.NoError(t, err)
	for cut := 0; cut < len(raw); cut += 7 {
		_, err := ReadNPY(bytes.NewReader(raw[:cut]), CSVOptions{})
		require.ErrorIs(t, err, ErrFormat, "cut at %d", cut)
	}
	hugeHeader := append([]byte(nil), raw[:12]...)
	hugeHeader[6], hugeHeader[8], hugeHeader[9], hugeHeader[10], hugeHeader[11] = 2, 0, 0, 0, 0x7f
	_, err = ReadNPY(bytes.NewReader(hugeHeader), CSVOptions{})
	require.ErrorContains(t, err, "header of")

	dict := "{'descr': '<f8', 'fortran_order': False, 'shape': (40000000, 10), }\n"
	head := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), 0)
	head = append(head, dict...)
	var before, after runtimeMem
	before.read()
	_, err = ReadNPY(bytes.NewReader(head), CSVOptions{})
	after.read()
	require.ErrorContains(t, err, "data end after 0 of 400000000")
	require.Less(t, after.total-before.total, uint64(16<<20))

	// Empty arrays, whichever dimension is zero, are refused by name.
	for _, shape := range []string{"(0, 3)", "(2, 0)", "(2, 3, 0)", "(0,)"} {
		_, err = ReadNPY(bytes.NewReader(npyHeader("<f8", shape, 0)), CSVOptions{})
		require.ErrorIs(t, err, ErrFormat, shape)
		require.ErrorContains(t, err, "empty array", shape)
	}

	z, err := os.ReadFile(filepath.Join("testdata", "npy", "xy.npz"))
	require.NoError(t, err)
	for i := 40; i < len(z)-120; i += 11 {
		bad := append([]byte(nil), z...)
		bad[i] ^= 0x55
		_, err := ReadNPZ(bytes.NewReader(bad), int64(len(bad)), CSVOptions{})
		if err == nil {
			continue // a byte of a name or padding: the arrays are intact
		}
		require.ErrorIs(t, err, ErrFormat, "byte %d", i)
	}
}

func FuzzReadNPY(f *testing.F) {
	for _, name := range []string{"f8.npy", "f4_fortran.npy", "i2_big.npy", "u1_3d.npy"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "npy", name))
		require.NoError(f, err)
		f.Add(raw, 0)
		f.Add(raw, 2)
	}
	// Size amplification: a declared shape of 10¹⁶ values over 8 bytes.
	f.Add(npyHeader("<f8", "(100000000, 100000000)", 8), 0)
	f.Add(npyHeader("<f4", "(9223372036854775807, 2)", 8), 0)
	f.Fuzz(func(t *testing.T, in []byte, maxRows int) {
		tb, err := ReadNPY(bytes.NewReader(in), CSVOptions{MaxRows: maxRows})
		if err != nil {
			require.ErrorIs(t, err, ErrFormat)
			return
		}
		r, c := tb.X.Dims()
		require.True(t, r > 0 && c > 0)
	})
}

// Columns choose the features by number or header name, in the order
// given; columns not chosen are never parsed (they may hold text); names
// need a header; a chosen label column, a repeat or an unknown name is an
// error. NumPy files take numbers.
func TestColumns(t *testing.T) {
	text := "id,height,name,weight,class\nA1,1.5,bob,60,x\nB2,1.7,amy,55,y\nC3,1.8,joe,80,x\n"
	read := func(opt CSVOptions) (*Table, error) { return ReadCSV(strings.NewReader(text), opt) }
	tb, err := read(CSVOptions{Columns: []string{"weight", "height"}, LabelColumn: -1})
	require.NoError(t, err)
	require.Equal(t, []float64{60, 1.5, 55, 1.7, 80, 1.8}, tb.X.RawMatrix().Data)
	require.Equal(t, []string{"x", "y", "x"}, tb.Labels)
	tb, err = read(CSVOptions{Columns: []string{"2", "-2"}})
	require.NoError(t, err)
	require.Equal(t, []float64{1.5, 60, 1.7, 55, 1.8, 80}, tb.X.RawMatrix().Data)
	require.Equal(t, "id", tb.Header[0])
	for _, bad := range [][]string{{"size"}, {"2", "height"}, {"9"}, {"0"}, {"class"}} {
		_, err := read(CSVOptions{Columns: bad, LabelColumn: -1})
		require.ErrorIs(t, err, ErrFormat, "%v", bad)
	}
	_, err = read(CSVOptions{}) // without Columns the text columns are an error
	require.ErrorIs(t, err, ErrFormat)

	tb, err = ReadTable(filepath.Join("testdata", "npy", "f8.npy"), CSVOptions{Columns: []string{"3", "1"}})
	require.NoError(t, err)
	require.Equal(t, []float64{0, -1, 1.5, 0.5}, tb.X.RawMatrix().Data[:4])
	_, err = ReadTable(filepath.Join("testdata", "npy", "f8.npy"), CSVOptions{Columns: []string{"a"}})
	require.ErrorIs(t, err, ErrFormat)
}

// npyHeader is a version-1 .npy file: the header for descr and shape, then
// data bytes of zeros.
func npyHeader(descr, shape string, data int) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	out = append(out, h...)
	return append(out, make([]byte, data)...)
}

// Arrays of more than one 4096-value chunk read whole and in order (a
// 2500×3 float64 array written by npyio, and a prefix of it).
func TestReadNumPyManyChunks(t *testing.T) {
	x := mat.NewDense(2500, 3, nil)
	for i := 0; i < 2500; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, float64(3*i+j)*0.25)
		}
	}
	path := filepath.Join(t.TempDir(), "big.npy")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, npy.Write(f, x))
	require.NoError(t, f.Close())
	tb, err := ReadTable(path, CSVOptions{})
	require.NoError(t, err)
	require.True(t, mat.Equal(x, tb.X))
	tb, err = ReadTable(path, CSVOptions{MaxRows: 1500})
	require.NoError(t, err)
	require.True(t, mat.Equal(x.Slice(0, 1500, 0, 3), tb.X))
}

// Every integer dtype decodes to its values, signs and byte order
// included: a 2×2 array of each, written byte by byte.
func TestReadNumPyIntegerDtypes(t *testing.T) {
	for _, c := range []struct {
		descr string
		data  []byte
		want  []float64
	}{
		{"|i1", []byte{0xfd, 5, 0x7f, 0x80}, []float64{-3, 5, 127, -128}},
		{"|u1", []byte{0xfd, 5, 0x7f, 0x80}, []float64{253, 5, 127, 128}},
		{"<i2", []byte{0xfe, 0xff, 1, 1, 0, 0x80, 0xff, 0x7f}, []float64{-2, 257, -32768, 32767}},
		{">i2", []byte{0xff, 0xfe, 1, 1, 0x80, 0, 0x7f, 0xff}, []float64{-2, 257, -32768, 32767}},
		{"<u2", []byte{0xfe, 0xff, 1, 1, 0, 0x80, 0xff, 0x7f}, []float64{65534, 257, 32768, 32767}},
		{"<i4", []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0x80, 2, 1, 0, 0}, []float64{-1, 1, -2147483648, 258}},
		{"<u4", []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0x80, 2, 1, 0, 0}, []float64{4294967295, 1, 2147483648, 258}},
		{"<i8", append(append(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 7, 0, 0, 0, 0, 0, 0, 0), make([]byte, 8)...), 0, 1, 0, 0, 0, 0, 0, 0), []float64{-1, 7, 0, 256}},
		{"<u8", append(append(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 7, 0, 0, 0, 0, 0, 0, 0), make([]byte, 8)...), 0, 1, 0, 0, 0, 0, 0, 0), []float64{18446744073709551615, 7, 0, 256}},
	} {
		in := npyHeader(c.descr, "(2, 2)", 0)
		in = append(in, c.data...)
		tb, err := ReadNPY(bytes.NewReader(in), CSVOptions{})
		require.NoError(t, err, c.descr)
		require.Equal(t, c.want, tb.X.RawMatrix().Data, c.descr)
	}
}

// A non-finite value is named by its row and column in either order of
// storage.
func TestReadNumPyNamesNonFinite(t *testing.T) {
	for _, fortran := range []bool{false, true} {
		in := npyHeader("<f8", "(3, 2)", 0)
		if fortran {
			// The same header with True and one space less of padding.
			in = bytes.Replace(in, []byte("False, 'shape': (3, 2), } "), []byte("True, 'shape': (3, 2), }  "), 1)
		}
		// Row 2, column 2 holds the NaN: index 3 in C order, 4 in Fortran.
		vals := []float64{1, 4, 2, math.NaN(), 3, 6}
		if fortran {
			vals = []float64{1, 2, 3, 4, math.NaN(), 6}
		}
		for _, v := range vals {
			in = binary.LittleEndian.AppendUint64(in, math.Float64bits(v))
		}
		_, err := ReadNPY(bytes.NewReader(in), CSVOptions{})
		require.ErrorIs(t, err, ErrFormat, "fortran %v", fortran)
		require.ErrorContains(t, err, "value NaN at row 2 column 2", "fortran %v", fortran)
	}
}
