package modelfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"math"
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
