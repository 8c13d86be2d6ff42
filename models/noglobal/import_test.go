package noglobal

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	gblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
)

// This file's name sorts first, so its test runs before any other of the
// package touches gonum's globals.
// Importing kdual (this package imports every model) changes nothing in
// the program: gonum's BLAS is gonum's own (float64 and float32), its
// LAPACK answers as gonum's does (a NaN makes Cholesky fail), and
// OpenBLAS's threads were not restarted.
func TestImportChangesNothing(t *testing.T) {
	_, ok := blas64.Implementation().(gblas.Implementation)
	require.True(t, ok, "gonum's float64 BLAS was replaced: %T", blas64.Implementation())
	_, ok = blas32.Implementation().(gblas.Implementation)
	require.True(t, ok, "gonum's float32 BLAS was replaced: %T", blas32.Implementation())
	a := mat.NewSymDense(3, []float64{4, 1, 0, 1, math.NaN(), 0, 0, 0, 2})
	var ch mat.Cholesky
	require.False(t, ch.Factorize(a), "gonum's own LAPACK refuses a NaN diagonal")
	require.Equal(t, "openblas", native.Spin().Source)
}
