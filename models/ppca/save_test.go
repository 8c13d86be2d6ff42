package ppca

import (
	"bytes"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
)

// save → load gives a model that transforms, reconstructs, generates,
// samples and pre-images bit for bit like the saved one: dual with every
// pair and with a top-q solver, fitted on inputs or on a kernel matrix,
// and primal. Every truncation and a flipped byte anywhere is an error
// wrapping ErrModelFile, never a panic.
func TestSaveLoadBitForBit(t *testing.T) {
	x := randData(t, 60, 4, 21)
	test := randData(t, 7, 4, 22)
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	g, err := kernel.Gram(x, gauss)
	require.NoError(t, err)
	duals := map[string]func() (*Dual, error){
		"dense": func() (*Dual, error) { d := &Dual{Q: 3, Sigma2: 1e-4, Kernel: gauss}; return d, d.Fit(x) },
		"lanczos": func() (*Dual, error) {
			d := &Dual{Q: 3, Kernel: gauss, Solver: eig.Lanczos{Tol: 1e-12}}
			return d, d.Fit(x)
		},
		"kernel": func() (*Dual, error) {
			d := &Dual{Q: 2}
			return d, d.FitKernel(mat.NewSymDense(60, append([]float64(nil), g.RawSymmetric().Data...)))
		},
	}
	for name, fit := range duals {
		d, err := fit()
		require.NoError(t, err, name)
		var buf bytes.Buffer
		require.NoError(t, d.Save(&buf), name)
		raw := buf.Bytes()
		l, err := LoadDual(bytes.NewReader(raw))
		require.NoError(t, err, name)
		same := func(a, b *mat.Dense, err1, err2 error, what string) {
			require.Equal(t, err1 == nil, err2 == nil, "%s %s", name, what)
			if err1 == nil {
				require.True(t, mat.Equal(a, b), "%s %s", name, what)
			}
		}
		if name != "kernel" {
			h1, e1 := d.Transform(test)
			h2, e2 := l.Transform(test)
			same(h1, h2, e1, e2, "Transform")
			p1, e1 := d.InverseTransform(h1)
			p2, e2 := l.InverseTransform(h2)
			same(p1, p2, e1, e2, "InverseTransform")
		}
		k1, e1 := d.TrainKernelVectors()
		k2, e2 := l.TrainKernelVectors()
		same(k1, k2, e1, e2, "TrainKernelVectors")
		h := mat.NewDense(2, d.LatentDim(), []float64{0.1, -0.2, 0.3, 0.05, 0.2, -0.1}[:2*d.LatentDim()])
		r1, e1 := d.Reconstruct(h)
		r2, e2 := l.Reconstruct(h)
		same(r1, r2, e1, e2, "Reconstruct")
		s1, e1 := d.Sample(5, 3)
		s2, e2 := l.Sample(5, 3)
		same(s1, s2, e1, e2, "Sample")
		v1, _ := d.Eigenvalues()
		v2, _ := l.Eigenvalues()
		require.Equal(t, v1, v2, name)
		require.Equal(t, d.Status(), l.Status(), name)
		brokenFiles(t, raw, func(b []byte) error { _, err := LoadDual(bytes.NewReader(b)); return err })
		_, err = LoadPrimal(bytes.NewReader(raw))
		require.ErrorIs(t, err, ErrModelFile, "a dual file is not a primal one")
	}
	p := &Primal{Q: 2}
	require.NoError(t, p.Fit(x))
	var buf bytes.Buffer
	require.NoError(t, p.Save(&buf))
	l, err := LoadPrimal(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	h1, _ := p.Transform(test)
	h2, _ := l.Transform(test)
	require.True(t, mat.Equal(h1, h2))
	b1, _ := p.InverseTransform(h1)
	b2, _ := l.InverseTransform(h2)
	require.True(t, mat.Equal(b1, b2))
	s1, _ := p.Sample(4, 9)
	s2, _ := l.Sample(4, 9)
	require.True(t, mat.Equal(s1, s2))
	brokenFiles(t, buf.Bytes(), func(b []byte) error { _, err := LoadPrimal(bytes.NewReader(b)); return err })
	require.ErrorIs(t, (&Dual{}).Save(&buf), ErrNotFitted)
}

// brokenFiles checks that every truncation of a model file and a flipped
// byte at many places give an error wrapping ErrModelFile (a flip in a
// name or in padding may leave the file readable: then it must load).
func brokenFiles(t *testing.T, raw []byte, load func([]byte) error) {
	t.Helper()
	for cut := 0; cut < len(raw); cut += max(1, len(raw)/97) {
		require.ErrorIs(t, load(raw[:cut]), ErrModelFile, "cut at %d of %d", cut, len(raw))
	}
	for i := 0; i < len(raw); i += max(1, len(raw)/211) {
		bad := append([]byte(nil), raw...)
		bad[i] ^= 0x5a
		if err := load(bad); err != nil {
			require.ErrorIs(t, err, ErrModelFile, "byte %d", i)
		}
	}
}

func FuzzLoadDual(f *testing.F) {
	x := mat.NewDense(6, 2, []float64{0, 1, 1, 0, 2, 2, 3, 1, 1, 3, 0, 0})
	d := &Dual{Q: 1, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}
	require.NoError(f, d.Fit(x))
	var buf bytes.Buffer
	require.NoError(f, d.Save(&buf))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := LoadDual(bytes.NewReader(b))
		if err != nil {
			require.ErrorIs(t, err, ErrModelFile)
			return
		}
		_, _ = m.Transform(x)
		_, _ = m.Sample(2, 1)
	})
}

// positiveTop names the first eigenvalue (1-based) that is not positive or
// not in decreasing order; λ beyond q are not its business.
func TestPositiveTop(t *testing.T) {
	var buf bytes.Buffer
	w := modelfile.NewWriter(&buf, struct{ Format string }{"x"})
	require.NoError(t, w.Close())
	var head struct{ Format string }
	mr, err := modelfile.Open(bytes.NewReader(buf.Bytes()), ErrModelFile, &head)
	require.NoError(t, err)
	require.NoError(t, positiveTop(mr, []float64{3, 2, 2, -5}, 3))
	require.NoError(t, positiveTop(mr, []float64{0.5, 1e-300}, 2))
	for _, c := range []struct {
		values []float64
		want   string
	}{
		{[]float64{3, -1}, "eigenvalue 2 is -1"},
		{[]float64{0, 1}, "eigenvalue 1 is 0"},
		{[]float64{1, 2}, "eigenvalue 2 is 2"},
		{[]float64{4, 3, math.NaN()}, "eigenvalue 3 is NaN"},
	} {
		err := positiveTop(mr, c.values, len(c.values))
		require.ErrorIs(t, err, ErrModelFile)
		require.Contains(t, err.Error(), c.want)
	}
}

// Every integer header field changed: refused, or a model that projects
// exactly like the original (see modelfile.HeaderVariants).
func TestHeaderVariantsRefusedOrHarmless(t *testing.T) {
	x := randData(t, 40, 4, 31)
	test := randData(t, 5, 4, 32)
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	check := func(name string, raw []byte, load func([]byte) (func() (*mat.Dense, error), error), want *mat.Dense, skip ...string) {
		project, err := load(raw)
		require.NoError(t, err, "%s: the file itself loads", name)
		same, err := project()
		require.NoError(t, err)
		require.True(t, mat.Equal(want, same), name)
		variants, err := modelfile.HeaderVariants(raw, append(skip, "sigma2")...)
		require.NoError(t, err)
		require.NotEmpty(t, variants)
		for _, v := range variants {
			project, err := load(v.File)
			if err != nil {
				require.ErrorIs(t, err, ErrModelFile, "%s: %s = %g", name, v.Path, v.Value)
				continue
			}
			got, err := project()
			require.NoError(t, err, "%s: %s = %g", name, v.Path, v.Value)
			require.True(t, mat.Equal(want, got), "%s: %s = %g: loaded a different model", name, v.Path, v.Value)
		}
	}
	d := &Dual{Q: 3, Sigma2: 1e-4, Kernel: gauss}
	require.NoError(t, d.Fit(x))
	want, err := d.Project(test)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, d.Save(&buf))
	check("dual", buf.Bytes(), func(b []byte) (func() (*mat.Dense, error), error) {
		l, err := LoadDual(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return func() (*mat.Dense, error) { return l.Project(test) }, nil
	}, want)
	p := &Primal{Q: 2}
	require.NoError(t, p.Fit(x))
	want, err = p.Project(test)
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, p.Save(&buf))
	check("primal", buf.Bytes(), func(b []byte) (func() (*mat.Dense, error), error) {
		l, err := LoadPrimal(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return func() (*mat.Dense, error) { return l.Project(test) }, nil
	}, want, "n") // the primal model's n is a value of the model (no array has n rows)
}

// A primal model of data of exact rank q (two of four columns constant)
// has σ² = 0, no noise: it saves, loads and transforms bit for bit like
// any other.
func TestSaveLoadNoiseFree(t *testing.T) {
	x := randData(t, 40, 4, 3)
	for i := 0; i < 40; i++ {
		x.Set(i, 2, 0.5)
		x.Set(i, 3, -1)
	}
	p := &Primal{Q: 2}
	require.NoError(t, p.Fit(x))
	require.Zero(t, p.sigma2, "σ² of exact rank-2 data")
	roundTrip(t, p, LoadPrimal, x)
}

// roundTrip saves m, loads it back with load and requires the same
// transform of x; it returns the file.
func roundTrip[M interface {
	Save(io.Writer) error
	Transform(mat.Matrix) (*mat.Dense, error)
}](t *testing.T, m M, load func(io.Reader) (M, error), x *mat.Dense) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	l, err := load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	h1, err := m.Transform(x)
	require.NoError(t, err)
	h2, err := l.Transform(x)
	require.NoError(t, err)
	require.True(t, mat.Equal(h1, h2))
	return buf.Bytes()
}

// The fewest points a model has, two, save and load, primal and dual; a
// primal model of more points than a dual one could hold (2²⁵: its N only
// counts them) loads too.
func TestSaveLoadTwoPoints(t *testing.T) {
	x := randData(t, 2, 3, 8)
	p := &Primal{Q: 1}
	require.NoError(t, p.Fit(x))
	raw := roundTrip(t, p, LoadPrimal, x)
	many, err := modelfile.EditHeader(raw, func(h map[string]any) { h["n"] = 1 << 25 })
	require.NoError(t, err)
	lp, err := LoadPrimal(bytes.NewReader(many))
	require.NoError(t, err)
	require.Equal(t, 1<<25, lp.n)
	d := &Dual{Q: 1, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}
	require.NoError(t, d.Fit(x))
	roundTrip(t, d, LoadDual, x)
}
