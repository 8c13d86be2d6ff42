package native

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
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

// Nothing at import: the thread timeout is OpenBLAS's own until a program
// reloads it; ReloadThreads reads the variable (set here as the CLI sets
// it, in the test's own process) and BLAS still computes after OpenBLAS
// restarts its threads.
func TestThreadTimeout(t *testing.T) {
	require.Equal(t, "openblas", Spin().Source, "the library changed OpenBLAS's threads at import")
	if !SpinSupported() {
		require.Error(t, ReloadThreads("test"))
		return
	}
	old := ThreadTimeout()
	defer func() {
		t.Setenv("OPENBLAS_THREAD_TIMEOUT", strconv.Itoa(old))
		require.NoError(t, ReloadThreads("openblas"))
	}()
	for _, e := range []int{4, 24} {
		t.Setenv("OPENBLAS_THREAD_TIMEOUT", strconv.Itoa(e))
		require.NoError(t, ReloadThreads("test"))
		require.Equal(t, e, ThreadTimeout())
		require.Equal(t, SpinInfo{Exponent: e, Source: "test"}, Spin())
		// A product large enough for OpenBLAS to use its threads.
		n := 400
		a := make([]float64, n*n)
		for i := range a {
			a[i] = float64(i%7) - 3
		}
		c := make([]float64, n*n)
		netlib.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
		for _, ij := range [][2]int{{0, 0}, {17, 391}, {399, 2}} {
			want := 0.0
			for k := 0; k < n; k++ {
				want += a[ij[0]*n+k] * a[k*n+ij[1]]
			}
			require.Equal(t, want, c[ij[0]*n+ij[1]])
		}
	}
}
