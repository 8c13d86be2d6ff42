package modelfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

var errBad = errors.New("bad model file")

// A deflate bomb (a small archive whose member inflates a thousand times)
// is refused by its declared sizes before anything is inflated.
func TestCompressionBomb(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("header.npy")
	require.NoError(t, err)
	_, err = w.Write([]byte("not read"))
	require.NoError(t, err)
	w, err = zw.Create("x.npy")
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 256; i++ { // 256 MiB of zeros
		_, err = w.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.Less(t, buf.Len(), 1<<20, "the bomb is small")
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var head struct{}
	_, err = Open(bytes.NewReader(buf.Bytes()), errBad, &head)
	runtime.ReadMemStats(&ms1)
	require.ErrorIs(t, err, errBad)
	require.Contains(t, err.Error(), "compression bomb")
	require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(16<<20), "bytes allocated to refuse it")
}

// A written file reads back exactly (header, vector, matrix); a member
// read with the wrong shape, with a non-finite value, or past the size
// its shape allows is refused with the reader's error kind; a member
// exactly as large as its limit is read.
func TestRoundTripAndRefusals(t *testing.T) {
	type head struct{ Format string }
	var buf bytes.Buffer
	w := NewWriter(&buf, head{Format: "test"})
	w.Vec("v", []float64{1, -2.5, 3})
	w.Mat("m", mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6}))
	w.Vec("bad", []float64{1, math.NaN()})
	for i, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w.Vec(fmt.Sprintf("badv%d", i), []float64{1, x})
		w.Mat(fmt.Sprintf("badm%d", i), mat.NewDense(1, 2, []float64{x, 1}))
	}
	w.Vec("long", make([]float64, 20000))
	require.NoError(t, w.Close())
	var h head
	r, err := Open(bytes.NewReader(buf.Bytes()), errBad, &h)
	require.NoError(t, err)
	require.Equal(t, "test", h.Format)
	v, err := r.Vec("v", 3)
	require.NoError(t, err)
	require.Equal(t, []float64{1, -2.5, 3}, v)
	m, err := r.Mat("m", 2, 3)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6}, m.RawMatrix().Data)
	for _, e := range []error{
		func() error { _, err := r.Vec("v", 4); return err }(),
		func() error { _, err := r.Mat("m", 3, 2); return err }(),
		func() error { _, err := r.Mat("m", 0, 3); return err }(),
		func() error { _, err := r.Vec("bad", 2); return err }(),
		func() error { _, err := r.Vec("missing", 1); return err }(),
	} {
		require.ErrorIs(t, e, errBad)
	}
	for i := 0; i < 3; i++ {
		_, err := r.Vec(fmt.Sprintf("badv%d", i), 2)
		require.ErrorIs(t, err, errBad, "vector %d", i)
		_, err = r.Mat(fmt.Sprintf("badm%d", i), 1, 2)
		require.ErrorIs(t, err, errBad, "matrix %d", i)
	}
	// 20 000 values: 160 000 bytes and a header, past the limit for 1000
	// values (8 000 + 65 536 bytes); read whole as 20 000.
	_, err = r.member("long.npy", limit(1000))
	require.Error(t, err)
	b, err := r.member("long.npy", limit(20000))
	require.NoError(t, err)
	_, err = r.member("long.npy", int64(len(b)))
	require.NoError(t, err, "a member exactly at its limit")
	_, err = r.member("long.npy", int64(len(b))-1)
	require.Error(t, err, "a member one byte past its limit")
}

// EditHeader changes the header only: the edited file opens with the
// edited fields, and every other member reads back as written.
// HeaderVariants changes one integer field per file, never a kernel's.
func TestEditHeaderAndVariants(t *testing.T) {
	type kern struct {
		Degree int `json:"degree"`
	}
	type head struct {
		Format string `json:"format"`
		N      int    `json:"n"`
		Kernel kern   `json:"kernel"`
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, head{Format: "test", N: 3, Kernel: kern{Degree: 2}})
	w.Vec("v", []float64{1, -2.5, 3})
	w.Mat("m", mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
	require.NoError(t, w.Close())
	edited, err := EditHeader(buf.Bytes(), func(h map[string]any) { h["n"] = 7.0 })
	require.NoError(t, err)
	var h head
	r, err := Open(bytes.NewReader(edited), errBad, &h)
	require.NoError(t, err)
	require.Equal(t, head{Format: "test", N: 7, Kernel: kern{Degree: 2}}, h)
	v, err := r.Vec("v", 3)
	require.NoError(t, err)
	require.Equal(t, []float64{1, -2.5, 3}, v)
	m, err := r.Mat("m", 2, 2)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 4}, m.RawMatrix().Data)

	vars, err := HeaderVariants(buf.Bytes())
	require.NoError(t, err)
	require.NotEmpty(t, vars)
	for _, vr := range vars {
		require.Equal(t, "n", vr.Path)
		var hv head
		rv, err := Open(bytes.NewReader(vr.File), errBad, &hv)
		require.NoError(t, err)
		require.Equal(t, int(vr.Value), hv.N)
		require.Equal(t, 2, hv.Kernel.Degree)
		got, err := rv.Vec("v", 3)
		require.NoError(t, err)
		require.Equal(t, []float64{1, -2.5, 3}, got)
	}
}

// The writer's other members: a matrix view (its stride wider than its
// columns) is written as its values, a symmetric matrix as the full square
// that Sym reads back, and Has tells written members from others. A nil
// matrix, or a header that cannot be encoded, is Close's error, and the
// first error stays.
func TestWriterViewsSymAndErrors(t *testing.T) {
	type head struct{ Format string }
	big := mat.NewDense(3, 4, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	view := big.Slice(1, 3, 1, 3).(*mat.Dense) // [[6 7] [10 11]], stride 4
	sym := mat.NewSymDense(3, []float64{1, 2, 3, 0, 4, 5, 0, 0, 6})
	var buf bytes.Buffer
	w := NewWriter(&buf, head{Format: "t"})
	w.Mat("view", view)
	w.Sym("sym", sym)
	require.NoError(t, w.Close())
	var h head
	r, err := Open(bytes.NewReader(buf.Bytes()), errBad, &h)
	require.NoError(t, err)
	got, err := r.Mat("view", 2, 2)
	require.NoError(t, err)
	require.Equal(t, []float64{6, 7, 10, 11}, got.RawMatrix().Data)
	s, err := r.Sym("sym", 3)
	require.NoError(t, err)
	require.True(t, mat.Equal(sym, s))
	full, err := r.Mat("sym", 3, 3)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6}, full.RawMatrix().Data, "the full square")
	_, err = r.Sym("sym", 2)
	require.ErrorIs(t, err, errBad)
	require.True(t, r.Has("view"))
	require.True(t, r.Has("sym"))
	require.False(t, r.Has("header.npy"), "Has adds .npy")
	require.False(t, r.Has("absent"))

	for name, write := range map[string]func(w *Writer){
		"nil matrix":     func(w *Writer) { w.Mat("m", nil) },
		"nil symmetric":  func(w *Writer) { w.Sym("s", nil) },
		"first error on": func(w *Writer) { w.Mat("m", nil); w.Vec("v", []float64{1}) },
	} {
		buf.Reset()
		w := NewWriter(&buf, head{Format: "t"})
		write(w)
		err := w.Close()
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "no matrix", name)
	}
	buf.Reset()
	w = NewWriter(&buf, map[string]any{"c": make(chan int)})
	w.Vec("v", []float64{1})
	require.Error(t, w.Close(), "a header JSON cannot encode")
}

// Check accepts exactly the format and version wanted, CheckVersions
// every version from the oldest to the newest; each refusal wraps the
// reader's kind and names what it found.
func TestCheckVersions(t *testing.T) {
	r := &Reader{kind: errBad}
	require.NoError(t, r.Check("f", 3, "f", 3))
	for _, c := range []struct {
		format  string
		version int
		says    string
	}{{"g", 3, `format "g", want "f"`}, {"f", 2, "version 2"}, {"f", 4, "version 4"}} {
		err := r.Check(c.format, c.version, "f", 3)
		require.ErrorIs(t, err, errBad)
		require.Contains(t, err.Error(), c.says)
	}
	for v := 2; v <= 5; v++ {
		require.NoError(t, r.CheckVersions("f", v, "f", 2, 5), "version %d", v)
	}
	for _, c := range []struct {
		format  string
		version int
		says    string
	}{{"g", 3, `format "g"`}, {"f", 1, "version 1, this kdual reads versions 2 to 5"}, {"f", 6, "version 6"}} {
		err := r.CheckVersions(c.format, c.version, "f", 2, 5)
		require.ErrorIs(t, err, errBad)
		require.Contains(t, err.Error(), c.says)
	}
}

// WriteFile leaves path holding exactly what save wrote and nothing else
// in its directory; a save that fails returns its error, leaves no file
// (no temporary either) and does not replace an existing one.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.npz")
	require.NoError(t, WriteFile(path, func(w io.Writer) error {
		_, err := w.Write([]byte("first"))
		return err
	}))
	listing := func() []string {
		es, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	require.Equal(t, []string{"m.npz"}, listing())
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "first", string(b), "the existing file is kept")
	require.Equal(t, []string{"m.npz"}, listing())
	other := filepath.Join(dir, "n.npz")
	require.ErrorIs(t, WriteFile(other, func(io.Writer) error { return boom }), boom)
	require.Equal(t, []string{"m.npz"}, listing(), "no file from a failed save")
	require.Error(t, WriteFile(filepath.Join(dir, "no", "such", "dir.npz"), func(io.Writer) error { return nil }))
}

// Members of at most 1 MiB each escape the ratio test, but not the total:
// 65 537 of them declaring 1 MiB (64 GiB and one more MiB, nothing stored)
// are refused by their declared sum, before anything is inflated.
func TestDeclaredTotal(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i <= maxTotal>>20; i++ {
		_, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("m%d.npy", i), Method: zip.Deflate, UncompressedSize64: 1 << 20})
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	var head struct{}
	_, err := Open(bytes.NewReader(buf.Bytes()), errBad, &head)
	require.ErrorIs(t, err, errBad)
	require.ErrorContains(t, err, "members declare over 64 GiB in all")
}
