package kpca

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
)

func roundTrip(t *testing.T, m *KPCA) *KPCA {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	back, err := Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	return back
}

// Save → Load → Transform equals the original bit for bit, for every
// solver, every kernel, centred or not, with and without the pre-image
// map; eigenvalues, scores and info survive.
func TestSaveLoadTransformsBitForBit(t *testing.T) {
	x := gaussData(t, 60, 4, 41)
	y := gaussData(t, 9, 4, 42)
	for _, c := range []struct {
		name string
		m    *KPCA
	}{
		{"dense", &KPCA{Components: 3, Kernel: rbf, Solver: Eigen{Solver: eig.DenseSolver{}}}},
		{"lanczos", &KPCA{Components: 3, Kernel: rbf, Solver: Eigen{Solver: eig.Lanczos{}}}},
		{"block-laplace", &KPCA{Components: 3, Kernel: kernel.Kernel{Kind: kernel.Laplace, Sigma: 3}, Solver: Eigen{Solver: eig.BlockKrylov{}}}},
		{"randomized", &KPCA{Components: 3, Kernel: rbf, Solver: Eigen{Solver: eig.Randomized{}}}},
		{"lbfgs", &KPCA{Components: 3, Kernel: rbf, Solver: LBFGS{}}},
		{"dca-uncentred", &KPCA{Components: 3, Kernel: rbf, NoCenter: true, Solver: DCA{Loss: Loss{Kind: Huber1, Param: 0.5, Relative: true}}}},
		{"poly-inverse", &KPCA{Components: 3, Kernel: kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Coef0: 1}, FitInverse: true, Alpha: 0.1}},
		{"rbf-inverse-own-kernel", &KPCA{Components: 3, Kernel: rbf, FitInverse: true, Alpha: 0.1, InverseKernel: &kernel.Kernel{Kind: kernel.Gaussian, Gamma: 1.0 / 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.m.Fit(x))
			back := roundTrip(t, c.m)
			want, err := c.m.Transform(y)
			require.NoError(t, err)
			got, err := back.Transform(y)
			require.NoError(t, err)
			require.True(t, mat.Equal(want, got), "Transform differs after Load")
			wv, _ := c.m.Eigenvalues()
			gv, _ := back.Eigenvalues()
			require.Equal(t, wv, gv)
			ws, _ := c.m.Scores()
			gs, _ := back.Scores()
			require.True(t, mat.Equal(ws, gs))
			require.Equal(t, c.m.Info().Solver, back.Info().Solver)
			require.Equal(t, c.m.Info().Status.Code, back.Info().Status.Code)
			if c.m.FitInverse {
				wi, err := c.m.InverseTransform(want)
				require.NoError(t, err)
				gi, err := back.InverseTransform(got)
				require.NoError(t, err)
				require.True(t, mat.Equal(wi, gi))
			}
		})
	}
	// A model fitted on a kernel matrix keeps transforming kernel rows.
	g, err := kernel.Gram(x, rbf)
	require.NoError(t, err)
	m := &KPCA{Components: 2}
	require.NoError(t, m.FitGram(g))
	back := roundTrip(t, m)
	kx, err := kernel.CrossGram(y, x, rbf)
	require.NoError(t, err)
	want, err := m.TransformGram(kx)
	require.NoError(t, err)
	got, err := back.TransformGram(kx)
	require.NoError(t, err)
	require.True(t, mat.Equal(want, got))
	_, err = back.Transform(y)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Truncated, corrupted and foreign files are errors wrapping ErrModelFile,
// never panics; an unfitted model does not save.
func TestLoadRejectsBadFiles(t *testing.T) {
	m := &KPCA{Components: 2, Kernel: rbf}
	require.ErrorIs(t, m.Save(&bytes.Buffer{}), ErrNotFitted)
	require.NoError(t, m.Fit(gaussData(t, 30, 3, 43)))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	good := buf.Bytes()
	for _, cut := range []int{0, 10, len(good) / 2, len(good) - 1} {
		_, err := Load(bytes.NewReader(good[:cut]))
		require.ErrorIs(t, err, ErrModelFile, "truncated at %d", cut)
	}
	for i := 0; i < len(good); i += len(good) / 40 {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x5a
		if _, err := Load(bytes.NewReader(bad)); err != nil {
			require.ErrorIs(t, err, ErrModelFile, "byte %d flipped", i)
		}
	}
	_, err := Load(bytes.NewReader([]byte("PK\x03\x04 not really a zip")))
	require.ErrorIs(t, err, ErrModelFile)
}

// FuzzLoad: no input makes Load panic.
func FuzzLoad(f *testing.F) {
	m := &KPCA{Components: 2, Kernel: rbf}
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 1, 2})
	if err := m.Fit(x); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	// Size amplification: the model's first member replaced by 64 MiB of
	// zeros that deflate to 64 KiB.
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		f.Fatal(err)
	}
	for i, m := range zr.File {
		w, err := zw.Create(m.Name)
		if err != nil {
			f.Fatal(err)
		}
		if i == 0 {
			zeros := make([]byte, 1<<20)
			for j := 0; j < 64; j++ {
				w.Write(zeros)
			}
			continue
		}
		r, err := m.Open()
		if err != nil {
			f.Fatal(err)
		}
		io.Copy(w, r)
	}
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(bomb.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Load(bytes.NewReader(b))
	})
}

// Arrays large enough that a zip stream delivers them in several reads
// come back exactly (the .npy reader once took short reads for data).
func TestSaveLoadLargeArrays(t *testing.T) {
	x := gaussData(t, 700, 30, 44)
	m := &KPCA{Components: 4, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 7}}
	require.NoError(t, m.Fit(x))
	back := roundTrip(t, m)
	want, err := m.Transform(x)
	require.NoError(t, err)
	got, err := back.Transform(x)
	require.NoError(t, err)
	require.True(t, mat.Equal(want, got))
}

// A model file of format version 1 (testdata/golden_v1.npz, written by
// the version-1 kdual and committed) still loads and transforms to the
// scores stored beside it (testdata/golden_v1_scores.csv): saved models
// keep their meaning; versions this kdual does not read are refused.
func TestGoldenModelFile(t *testing.T) {
	y := mat.NewDense(3, 2, []float64{0.2, 0.1, 1.5, 1.5, -1, 0})
	require.Equal(t, 3, ModelVersion)
	raw, err := os.ReadFile("testdata/golden_v1.npz")
	require.NoError(t, err)
	m, err := Load(bytes.NewReader(raw))
	require.NoError(t, err)
	z, err := m.Transform(y)
	require.NoError(t, err)
	text, err := os.ReadFile("testdata/golden_v1_scores.csv")
	require.NoError(t, err)
	for i, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		for j, f := range strings.Split(line, ",") {
			want, err := strconv.ParseFloat(f, 64)
			require.NoError(t, err)
			require.InDelta(t, want, z.At(i, j), 1e-12*math.Max(1, math.Abs(want)), "score (%d, %d)", i, j)
		}
	}
	// Versions 0 and 4 are refused, naming the version; the version-1
	// file rewritten as version 2 or 3 loads to the same model.
	for _, v := range []float64{0, 4, 2, 3} {
		edited, err := modelfile.EditHeader(raw, func(h map[string]any) { h["version"] = v })
		require.NoError(t, err)
		back, err := Load(bytes.NewReader(edited))
		if v != 2 && v != 3 {
			require.ErrorIs(t, err, ErrModelFile)
			require.ErrorContains(t, err, fmt.Sprintf("version %d", int(v)))
			continue
		}
		require.NoError(t, err)
		got, err := back.Transform(y)
		require.NoError(t, err)
		require.True(t, mat.Equal(z, got))
	}
}

// c₀ of the polynomial kernel: unset means scikit-learn's 1 now, and a
// version-1 file (written when 0 meant homogeneous, without coef0_set)
// keeps its homogeneous kernel; files written now carry c₀ resolved.
func TestPolynomialCoef0AcrossVersions(t *testing.T) {
	x := gaussData(t, 30, 3, 5)
	y := gaussData(t, 4, 3, 6)
	homog := kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Coef0Set: true}
	m := &KPCA{Components: 2, Kernel: homog}
	require.NoError(t, m.Fit(x))
	want, err := m.Transform(y)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	v1, err := modelfile.EditHeader(buf.Bytes(), func(h map[string]any) {
		h["version"] = 1.0
		delete(h["kernel"].(map[string]any), "coef0_set")
	})
	require.NoError(t, err)
	for _, file := range [][]byte{buf.Bytes(), v1} {
		back, err := Load(bytes.NewReader(file))
		require.NoError(t, err)
		require.Equal(t, 0.0, back.Kernel.C0())
		got, err := back.Transform(y)
		require.NoError(t, err)
		require.True(t, mat.Equal(want, got))
	}
	// The zero-value c₀ is scikit-learn's 1: the same model as Coef0 = 1.
	a := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Polynomial, Degree: 2}}
	b := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Coef0: 1}}
	require.NoError(t, a.Fit(x))
	require.NoError(t, b.Fit(x))
	va, _ := a.Eigenvalues()
	vb, _ := b.Eigenvalues()
	require.Equal(t, vb, va)
	vh, _ := m.Eigenvalues()
	require.NotEqual(t, vh[0], va[0])
}

// Every numeric header field changed (to 0, −1, v ± 1, 2v, 2²⁵): the
// file is refused with ErrModelFile, or the model loads and transforms
// exactly like the original (the field did not matter) — never a panic,
// never a silently different model. For the exact, Nyström and
// random-feature forms.
func TestHeaderVariantsRefusedOrHarmless(t *testing.T) {
	x := gaussData(t, 40, 3, 77)
	y := gaussData(t, 5, 3, 78)
	for _, m := range []*KPCA{
		{Components: 3, Kernel: rbf},
		{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Polynomial, Degree: 2, Coef0: 1}, FitInverse: true, Alpha: 0.1},
		{Components: 3, Kernel: rbf, Approx: approx.Nystrom{Rank: 15}},
		{Components: 3, Kernel: rbf, Approx: approx.RFF{Features: 20}},
	} {
		require.NoError(t, m.Fit(x))
		want, err := m.Transform(y)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		back, err := Load(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "the file itself loads")
		same, err := back.Transform(y)
		require.NoError(t, err)
		require.True(t, mat.Equal(want, same))
		variants, err := modelfile.HeaderVariants(buf.Bytes())
		require.NoError(t, err)
		require.NotEmpty(t, variants)
		for _, v := range variants {
			l, err := Load(bytes.NewReader(v.File))
			if err != nil {
				require.ErrorIs(t, err, ErrModelFile, "%s = %g", v.Path, v.Value)
				continue
			}
			got, err := l.Transform(y)
			require.NoError(t, err, "%s = %g loaded", v.Path, v.Value)
			require.True(t, mat.Equal(want, got), "%s = %g: loaded a different model", v.Path, v.Value)
		}
	}
}

// InputScale is kept by the model file (1, its default, is not written)
// and a header whose input_scale is not a number is refused.
func TestInputScaleSaved(t *testing.T) {
	x := gaussData(t, 30, 3, 5)
	for _, sc := range []float64{0.25, 1, 0} {
		m := &KPCA{Components: 2, Kernel: rbf, InputScale: sc}
		require.NoError(t, m.Fit(x))
		back := roundTrip(t, m)
		want := sc
		if sc == 1 {
			want = 0
		}
		require.Equal(t, want, back.InputScale, "scale %g", sc)
	}
	m := &KPCA{Components: 2, Kernel: rbf, InputScale: 0.5}
	require.NoError(t, m.Fit(x))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	bad, err := modelfile.EditHeader(buf.Bytes(), func(h map[string]any) { h["input_scale"] = "NaN" })
	require.NoError(t, err)
	_, err = Load(bytes.NewReader(bad))
	require.ErrorIs(t, err, ErrModelFile)
}

// A header with as many components as points (or more) describes no model
// a fit can make: refused by its counts, before any array is read.
func TestLoadRefusesComponentsAtN(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 0.5, 2})
	m := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}
	require.NoError(t, m.Fit(x))
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	for _, s := range []float64{6, 7} {
		edited, err := modelfile.EditHeader(buf.Bytes(), func(h map[string]any) { h["components"] = s })
		require.NoError(t, err)
		_, err = Load(bytes.NewReader(edited))
		require.ErrorIs(t, err, ErrModelFile)
		require.ErrorContains(t, err, fmt.Sprintf("n = 6, s = %d", int(s)))
	}
}
