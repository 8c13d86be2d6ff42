package modelfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
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
