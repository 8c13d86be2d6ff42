package bigmem

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFloat32sAndMemoryFigures(t *testing.T) {
	f, err := NewFloat32s(1 << 20)
	require.NoError(t, err)
	require.Len(t, f.Data, 1<<20)
	for _, v := range f.Data[:1000] {
		require.Zero(t, v)
	}
	f.Data[12345] = 3
	require.Equal(t, float32(3), f.Data[12345])
	f.Free()
	require.Nil(t, f.Data)
	f.Free() // harmless twice
	_, err = NewFloat32s(0)
	require.ErrorIs(t, err, ErrNoMemory)
	require.Greater(t, PeakRSS(), int64(1<<20))
	require.Greater(t, Available(), int64(1<<20))
	s := make([]float64, 1<<19)
	AdviseHuge(s)
	s[len(s)-1] = 1
	require.Equal(t, 1.0, s[len(s)-1])
}
