package rkm

import (
	"bytes"
	"testing"

	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
)

// save → load forecasts and infers bit for bit like the saved model: the
// primal and dual linear models, Stiefel training, a random-feature view
// and kernel views; every truncation and flipped byte is an error wrapping
// ErrModelFile, never a panic; a feature map kdual does not know cannot be
// saved.
func TestSaveLoadBitForBit(t *testing.T) {
	x, y, train, _ := sines(t)
	rff, err := kernel.NewRFF(sinesP+1, 64, 3, 5)
	require.NoError(t, err)
	models := map[string]*Model{
		"primal":  linearModel(Primal, Eig),
		"dual":    linearModel(Dual, Eig),
		"stiefel": {Views: []View{{Features: Identity{}}, {Features: Identity{}}}, Components: sinesS, Setting: Dual, Training: Stiefel, Rotate: true},
		"rff":     {Views: []View{{Features: rff}, {Features: Identity{}}}, Components: sinesS, Setting: Primal},
		"kernels": {Views: []View{{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4}}, {Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}}}, Components: 6},
	}
	for name, m := range models {
		m.Stiefel.MaxIter = 300
		err := m.Fit([]*mat.Dense{x, y})
		require.True(t, m.Fitted(), "%s: %v", name, err)
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf), name)
		raw := buf.Bytes()
		l, err := Load(bytes.NewReader(raw))
		require.NoError(t, err, name)
		if name != "kernels" {
			f1, err1 := Forecast(m, train, sinesP, 10)
			f2, err2 := Forecast(l, train, sinesP, 10)
			require.NoError(t, err1, name)
			require.NoError(t, err2, name)
			require.Equal(t, f1, f2, name)
		}
		i1, err1 := m.Infer(1, []*mat.Dense{x, nil})
		i2, err2 := l.Infer(1, []*mat.Dense{x, nil})
		require.Equal(t, err1 == nil, err2 == nil, name)
		if err1 == nil {
			require.True(t, mat.Equal(i1, i2), name)
		}
		g1, _ := m.Gamma()
		g2, _ := l.Gamma()
		require.True(t, mat.Equal(g1, g2), name)
		require.Equal(t, m.Info(), l.Info(), name)
		for cut := 0; cut < len(raw); cut += max(1, len(raw)/83) {
			_, err := Load(bytes.NewReader(raw[:cut]))
			require.ErrorIs(t, err, ErrModelFile, "%s: cut at %d", name, cut)
		}
		for i := 0; i < len(raw); i += max(1, len(raw)/157) {
			bad := append([]byte(nil), raw...)
			bad[i] ^= 0x5a
			if _, err := Load(bytes.NewReader(bad)); err != nil {
				require.ErrorIs(t, err, ErrModelFile, "%s: byte %d", name, i)
			}
		}
	}
	odd := &Model{Views: []View{{Features: scaled{}}, {Features: Identity{}}}, Components: 2}
	require.NoError(t, odd.Fit([]*mat.Dense{x, y}))
	require.ErrorIs(t, odd.Save(&bytes.Buffer{}), status.ErrInvalid)
	require.ErrorIs(t, (&Model{}).Save(&bytes.Buffer{}), ErrNotFitted)
}

// scaled is a feature map kdual cannot save.
type scaled struct{}

func (scaled) Map(x *mat.Dense) (*mat.Dense, error) {
	var out mat.Dense
	out.Scale(2, x)
	return &out, nil
}

func FuzzLoad(f *testing.F) {
	x := mat.NewDense(6, 2, []float64{0, 1, 1, 0, 2, 2, 3, 1, 1, 3, 0, 0})
	y := mat.NewDense(6, 1, []float64{1, 2, 0, 1, 3, 2})
	m := &Model{Views: []View{{Features: Identity{}}, {Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}}, Components: 2}
	require.NoError(f, m.Fit([]*mat.Dense{x, y}))
	var buf bytes.Buffer
	require.NoError(f, m.Save(&buf))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Load(bytes.NewReader(b))
		if err != nil {
			require.ErrorIs(t, err, ErrModelFile)
			return
		}
		_, _ = l.Infer(1, []*mat.Dense{x, nil})
	})
}

// Every integer header field changed: refused, or a model that infers
// exactly like the original (see modelfile.HeaderVariants).
func TestHeaderVariantsRefusedOrHarmless(t *testing.T) {
	x, y, _, _ := sines(t)
	rff, err := kernel.NewRFF(sinesP+1, 16, 3, 5)
	require.NoError(t, err)
	for name, m := range map[string]*Model{
		"dual":    linearModel(Dual, Eig),
		"rff":     {Views: []View{{Features: rff}, {Features: Identity{}}}, Components: sinesS, Setting: Primal},
		"kernels": {Views: []View{{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4}}, {Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}}}, Components: 6},
	} {
		require.NoError(t, m.Fit([]*mat.Dense{x, y}), name)
		want, werr := m.Infer(1, []*mat.Dense{x, nil})
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf), name)
		_, err = Load(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "%s: the file itself loads", name)
		variants, err := modelfile.HeaderVariants(buf.Bytes())
		require.NoError(t, err)
		require.NotEmpty(t, variants)
		for _, v := range variants {
			l, err := Load(bytes.NewReader(v.File))
			if err != nil {
				require.ErrorIs(t, err, ErrModelFile, "%s: %s = %g", name, v.Path, v.Value)
				continue
			}
			got, gerr := l.Infer(1, []*mat.Dense{x, nil})
			require.Equal(t, werr == nil, gerr == nil, "%s: %s = %g", name, v.Path, v.Value)
			if werr == nil {
				require.True(t, mat.Equal(want, got), "%s: %s = %g: loaded a different model", name, v.Path, v.Value)
			}
		}
	}
}

// A model of one view (kernel PCA in RKM's form) fits, and saves and
// loads to the same Γ and Info, as a model of several views does.
func TestSaveLoadOneView(t *testing.T) {
	x, _, _, _ := sines(t)
	for _, v := range []View{{Features: Identity{}}, {Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}} {
		m := &Model{Views: []View{v}, Components: 2}
		require.NoError(t, m.Fit([]*mat.Dense{x}))
		gammaRoundTrip(t, m)
	}
}

// gammaRoundTrip saves m, loads it back and requires the same Γ and info.
func gammaRoundTrip(t *testing.T, m *Model) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	l, err := Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	g1, _ := m.Gamma()
	g2, _ := l.Gamma()
	require.True(t, mat.Equal(g1, g2))
	require.Equal(t, m.Info(), l.Info())
}

// MaxViews bounds both sides of the file: a model of MaxViews views saves
// and loads; Fit refuses one view more before any work.
func TestMaxViews(t *testing.T) {
	xs := make([]*mat.Dense, MaxViews)
	views := make([]View, MaxViews)
	for v := range xs {
		xs[v] = mat.NewDense(4, 1, []float64{0, 1, float64(v % 3), 3})
		views[v] = View{Features: Identity{}}
	}
	m := &Model{Views: views, Components: 1}
	require.NoError(t, m.Fit(xs))
	gammaRoundTrip(t, m)
	err := (&Model{Views: append(views, views[0]), Components: 1}).Fit(append(xs, xs[0]))
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "1025 views")
}
