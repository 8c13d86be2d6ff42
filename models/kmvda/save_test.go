package kmvda

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/status"
)

// save → load transforms every view bit for bit like the saved model, for
// the linear, RBF and RFF (primal and dual form) kinds; every truncation
// and flipped byte is an error wrapping ErrModelFile, never a panic.
func TestSaveLoadBitForBit(t *testing.T) {
	// One view (the fewest: kernel discriminant analysis) and more, of one
	// feature (the fewest) and more.
	for _, vd := range [][2]int{{3, 6}, {2, 1}, {1, 4}} {
		saveLoadBitForBit(t, vd[0], vd[1])
	}
}

func saveLoadBitForBit(t *testing.T, v, d int) {
	views, labels := multiView(t, v, 5, 4, d, 11)
	for _, m := range []*Model{
		{Kind: Linear},
		{Kind: RBF, Sigma: 3, Dim: 3},
		{Kind: RBF, Sigma: 0.5, Dim: 2}, // any σ > 0, below 1 too
		{Kind: RFF, Sigma: 3, Features: 16, Dim: 3},
		{Kind: RFF, Sigma: 3, Features: 16, Dim: 3, forcePrimal: true},
	} {
		require.NoError(t, m.Fit(views, labels))
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		raw := buf.Bytes()
		l, err := Load(bytes.NewReader(raw))
		require.NoError(t, err, m.Kind.String())
		for j := range views {
			a, err := m.Transform(j, views[j])
			require.NoError(t, err)
			b, err := l.Transform(j, views[j])
			require.NoError(t, err)
			require.True(t, mat.Equal(a, b), "%v view %d", m.Kind, j)
		}
		v1, _ := m.Eigenvalues()
		v2, _ := l.Eigenvalues()
		require.Equal(t, v1, v2)
		require.Equal(t, m.Info(), l.Info())
		for cut := 0; cut < len(raw); cut += max(1, len(raw)/89) {
			_, err := Load(bytes.NewReader(raw[:cut]))
			require.ErrorIs(t, err, ErrModelFile, "cut at %d", cut)
		}
		for i := 0; i < len(raw); i += max(1, len(raw)/173) {
			bad := append([]byte(nil), raw...)
			bad[i] ^= 0x5a
			if _, err := Load(bytes.NewReader(bad)); err != nil {
				require.ErrorIs(t, err, ErrModelFile, "byte %d", i)
			}
		}
	}
	require.ErrorIs(t, (&Model{}).Save(&bytes.Buffer{}), ErrNotFitted)
}

func FuzzLoad(f *testing.F) {
	views, labels := multiView(f, 2, 3, 3, 2, 1)
	m := &Model{Kind: RBF, Sigma: 1, Dim: 2}
	require.NoError(f, m.Fit(views, labels))
	var buf bytes.Buffer
	require.NoError(f, m.Save(&buf))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Load(bytes.NewReader(b))
		if err != nil {
			require.ErrorIs(t, err, ErrModelFile)
			return
		}
		_, _ = l.Transform(0, views[0])
	})
}

// Every integer header field changed: refused, or a model that transforms
// exactly like the original (see modelfile.HeaderVariants).
func TestHeaderVariantsRefusedOrHarmless(t *testing.T) {
	views, labels := multiView(t, 3, 5, 4, 6, 11)
	for _, m := range []*Model{
		{Kind: Linear},
		{Kind: RBF, Sigma: 3, Dim: 3},
		{Kind: RFF, Sigma: 3, Features: 16, Dim: 3},
	} {
		require.NoError(t, m.Fit(views, labels))
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		_, err := Load(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "%v: the file itself loads", m.Kind)
		variants, err := modelfile.HeaderVariants(buf.Bytes(), "sigma")
		require.NoError(t, err)
		require.NotEmpty(t, variants)
		for _, v := range variants {
			l, err := Load(bytes.NewReader(v.File))
			if err != nil {
				require.ErrorIs(t, err, ErrModelFile, "%v: %s = %g", m.Kind, v.Path, v.Value)
				continue
			}
			for j := range views {
				a, err := m.Transform(j, views[j])
				require.NoError(t, err)
				b, err := l.Transform(j, views[j])
				require.NoError(t, err, "%v: %s = %g", m.Kind, v.Path, v.Value)
				require.True(t, mat.Equal(a, b), "%v: %s = %g: loaded a different model", m.Kind, v.Path, v.Value)
			}
		}
	}
}

// The file's header names its format and version as the package
// documents them: "kdual.kmvda", version 1; one declaring no views is
// refused.
func TestModelFileHeader(t *testing.T) {
	views, labels := multiView(t, 2, 5, 4, 3, 11)
	m := &Model{Kind: Linear}
	require.NoError(t, m.Fit(views, labels))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	var format, version any
	_, err := modelfile.EditHeader(buf.Bytes(), func(h map[string]any) { format, version = h["format"], h["version"] })
	require.NoError(t, err)
	require.Equal(t, "kdual.kmvda", format)
	require.Equal(t, 1.0, version)
	// A header of no views is refused.
	none, err := modelfile.EditHeader(buf.Bytes(), func(h map[string]any) { h["dims"] = []any{} })
	require.NoError(t, err)
	_, err = Load(bytes.NewReader(none))
	require.ErrorIs(t, err, ErrModelFile)
}

// MaxViews bounds both sides of the file: a model of MaxViews views saves
// and loads; Fit refuses one view more.
func TestMaxViews(t *testing.T) {
	views, labels := multiView(t, MaxViews, 2, 2, 1, 5)
	m := &Model{Kind: Linear, Dim: 1}
	require.NoError(t, m.Fit(views, labels))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	l, err := Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	a, err := m.Transform(MaxViews-1, views[MaxViews-1])
	require.NoError(t, err)
	b, err := l.Transform(MaxViews-1, views[MaxViews-1])
	require.NoError(t, err)
	require.True(t, mat.Equal(a, b))
	views, labels = append(views, views[0]), append(labels, labels[0])
	err = (&Model{Kind: Linear}).Fit(views, labels)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "1025 views")
}
