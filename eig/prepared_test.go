package eig

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
)

// rowCounter is gram.Data counting the reads of each row.
type rowCounter struct {
	x     *mat.Dense
	reads []int
}

func (c *rowCounter) Dims() (int, int) { return c.x.Dims() }
func (c *rowCounter) RawRowView(i int) []float64 {
	c.reads[i]++
	return c.x.RawRowView(i)
}

// Every kernel operator built from a prepared source (what kpca.Fit does)
// has read the data once — validated and copied in gram.Prepare's one
// pass — by the time it has been built and applied, centred or not, and
// agrees with the operator NewKernelOperator builds from the matrix.
func TestOperatorsReadDataOnce(t *testing.T) {
	x := mat.NewDense(200, 6, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = math.Sin(float64(i)*0.37) + float64(i%5)
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	v := mat.NewDense(200, 3, nil)
	for i := range v.RawMatrix().Data {
		v.RawMatrix().Data[i] = math.Cos(float64(i))
	}
	for _, kind := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		c := &rowCounter{x: x, reads: make([]int, 200)}
		o := gram.GramOptions{}
		src, err := kernel.Prepare(c, k, SourceOptions(kind, o), true)
		require.NoError(t, err)
		op, err := NewKernelOperatorFrom(src, kind, true, o)
		require.NoError(t, err)
		got := mat.NewDense(200, 3, nil)
		require.NoError(t, op.Apply(got, v))
		for i, r := range c.reads {
			require.Equal(t, 1, r, "%v: row %d read %d times", kind, i, r)
		}
		ref, err := NewKernelOperator(x, k, kind, true, o)
		require.NoError(t, err)
		want := mat.NewDense(200, 3, nil)
		require.NoError(t, ref.Apply(want, v))
		require.True(t, mat.EqualApprox(want, got, 1e-12), "%v", kind)
		Release(op)
		Release(ref)
	}
}

// An operator from NewKernelOperator does not see later changes to the
// caller's data: the matrices are built at once, and the matrix-free
// operator of a kernel whose rows the engine would read in place (the
// linear and polynomial kernels: no shift) keeps a private copy of them.
func TestKernelOperatorOwnsItsData(t *testing.T) {
	const n, d = 120, 5
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.Polynomial, Gamma: 0.5, Coef0: 1, Degree: 2}, {Kind: kernel.Gaussian, Sigma: 2}} {
		for _, kind := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
			x := mat.NewDense(n, d, nil)
			for i := range x.RawMatrix().Data {
				x.RawMatrix().Data[i] = math.Sin(float64(i)*0.91) + 0.2*float64(i%3)
			}
			v := mat.NewDense(n, 2, nil)
			for i := range v.RawMatrix().Data {
				v.RawMatrix().Data[i] = math.Cos(float64(i) * 1.3)
			}
			op, err := NewKernelOperator(x, k, kind, false, gram.GramOptions{})
			require.NoError(t, err)
			before := mat.NewDense(n, 2, nil)
			require.NoError(t, op.Apply(before, v))
			x.Scale(3, x)
			after := mat.NewDense(n, 2, nil)
			require.NoError(t, op.Apply(after, v))
			require.Equal(t, before.RawMatrix().Data, after.RawMatrix().Data, "%v, %v", k.Kind, kind)
			Release(op)
		}
	}
}
