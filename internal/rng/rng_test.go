package rng

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/status"
)

// One seed, one stream; different seeds differ; draws look standard normal.
func TestStreams(t *testing.T) {
	a, err := StandardNormal(1000, 10, 7)
	require.NoError(t, err)
	b, err := StandardNormal(1000, 10, 7)
	require.NoError(t, err)
	c, err := StandardNormal(1000, 10, 8)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	mean, sq := 0.0, 0.0
	for _, v := range a {
		mean += v
		sq += v * v
	}
	mean /= float64(len(a))
	require.InDelta(t, 0, mean, 4/math.Sqrt(float64(len(a))))
	require.InDelta(t, 1, sq/float64(len(a)), 0.05)
	_, err = StandardNormal(0, 3, 1)
	require.ErrorIs(t, err, ErrShape)
	// More than the machine's memory: refused before any allocation.
	_, err = StandardNormal(1<<31, 1<<31, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Equal(t, New(3).Uint64(), New(3).Uint64())
}
