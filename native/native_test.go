package native

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigNamesOpenBLAS(t *testing.T) {
	require.True(t, strings.HasPrefix(Config(), "OpenBLAS"), "config %q", Config())
	require.NotEmpty(t, CoreName())
	require.Contains(t, []string{"sequential", "pthreads", "openmp"}, Parallel())
}

func TestSetThreadsRoundTrip(t *testing.T) {
	old := Threads()
	require.GreaterOrEqual(t, old, 1)
	defer func() { require.NoError(t, SetThreads(old)) }()
	require.NoError(t, SetThreads(1))
	require.Equal(t, 1, Threads())
	require.Error(t, SetThreads(0))
	require.Error(t, SetThreads(-3))
}
