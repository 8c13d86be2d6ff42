package kpca

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Model files. Save writes a NumPy .npz archive (numpy.load reads it) with
// these members, all float64 and C-ordered unless said otherwise:
//
//	header.npy     uint8: the JSON header (modelHeader): "format" "kdual.kpca",
//	               "version" 1, the kernel, centring, n, s, the solver's name
//	               and the fit's info
//	values.npy     s: the eigenvalues λ_1 ≥ … ≥ λ_s
//	proj.npy       n×s: scores of new points are k_c(x)ᵀ·proj
//	scores.npy     n×s: the training scores
//	dual.npy       n×s: H
//	row_means.npy  n: the training kernel's row means (centred models; the
//	               grand mean is in the header), for centring new rows
//	x.npy          n×d: the training points (models fitted with Fit; absent
//	               after FitGram, which then transforms kernel rows only)
//	inv_z.npy, inv_coef.npy: the pre-image map (FitInverse)
//
// A new point's scores: k = kernel(x_new, x) (1×n), k_c = k − mean(k) −
// row_means + mean, z = k_c·proj (what Transform computes, in the same
// order, so a loaded model transforms bit for bit like the saved one).
const (
	modelFormat  = "kdual.kpca"
	ModelVersion = 1
)

// ErrModelFile is wrapped by every error about a model file that is
// truncated, corrupted, of another format or version, or inconsistent.
var ErrModelFile = fmt.Errorf("kpca: bad model file: %w", status.ErrInvalid)

type modelKernel struct {
	Kind   string  `json:"kind"`
	Sigma  float64 `json:"sigma"`
	Degree int     `json:"degree"`
	Gamma  float64 `json:"gamma"`
	Coef0  float64 `json:"coef0"`
}

type modelHeader struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	Kernel     modelKernel `json:"kernel"`
	Center     bool        `json:"center"`
	Mean       float64     `json:"mean"`
	N          int         `json:"n"`
	D          int         `json:"d"` // 0 without x
	Components int         `json:"components"`
	Alpha      float64     `json:"alpha"`
	HasX       bool        `json:"has_x"`
	HasInverse bool        `json:"has_inverse"`
	Solver     string      `json:"solver"`
	Status     string      `json:"status"`
	Test       string      `json:"stopping_test,omitempty"`
}

// Save writes the fitted model to w (see the format above).
func (k *KPCA) Save(w io.Writer) error {
	if k == nil || !k.fitted {
		return ErrNotFitted
	}
	n, s := k.proj.Dims()
	h := modelHeader{
		Format: modelFormat, Version: ModelVersion, Center: k.fitCenter, Mean: k.center.Mean,
		N: n, Components: s, Alpha: k.fitAlpha, HasX: k.x != nil, HasInverse: k.inverse != nil,
		Solver: k.info.Solver, Status: k.info.Status.Code.String(), Test: k.info.Status.Test,
		Kernel: modelKernel{Kind: k.fitKernel.Kind.String(), Sigma: k.fitKernel.Sigma, Degree: k.fitKernel.Degree,
			Gamma: k.fitKernel.Gamma, Coef0: k.fitKernel.Coef0},
	}
	if k.x != nil {
		_, h.D = k.x.Dims()
	}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	z := npz.NewWriter(w)
	put := func(name string, v any) {
		if err == nil {
			err = z.Write(name, v)
		}
	}
	put("header.npy", head)
	put("values.npy", k.values)
	put("proj.npy", k.proj)
	put("scores.npy", k.scores)
	put("dual.npy", k.h)
	if k.fitCenter {
		put("row_means.npy", k.center.RowMeans)
	}
	if k.x != nil {
		put("x.npy", k.x)
	}
	if k.inverse != nil {
		put("inv_z.npy", k.inverse.z)
		put("inv_coef.npy", k.inverse.coef)
	}
	if err != nil {
		return fmt.Errorf("kpca: Save: %w", err)
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("kpca: Save: %w", err)
	}
	return nil
}

// Load reads a model written by Save. It checks the format, the version,
// every array's shape against the header and that every value is finite;
// a truncated, corrupted, foreign or inconsistent file gives an error
// wrapping ErrModelFile. The loaded model transforms exactly like the one
// that was saved; its Solver is nil (the solver's name is in Info).
func Load(r io.Reader) (model *KPCA, err error) {
	// The .npy parser panics on some corrupted headers: a bad file is an
	// error here, never a panic.
	defer func() {
		if p := recover(); p != nil {
			model, err = nil, modelErr("corrupted archive (%v)", p)
		}
	}()
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("kpca: Load: %w", err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, modelErr("not an .npz archive: %v", err)
	}
	members := archive{zr}
	var head []uint8
	if err := members.read("header.npy", 1<<20, &head); err != nil {
		return nil, modelErr("no header: %v", err)
	}
	var h modelHeader
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, modelErr("header: %v", err)
	}
	if h.Format != modelFormat {
		return nil, modelErr("format %q, want %q", h.Format, modelFormat)
	}
	if h.Version != ModelVersion {
		return nil, modelErr("version %d, this kdual reads version %d", h.Version, ModelVersion)
	}
	if h.N < 2 || h.Components < 1 || h.Components >= h.N || (h.HasX && h.D < 1) {
		return nil, modelErr("n = %d, s = %d, d = %d", h.N, h.Components, h.D)
	}
	kind, err := kernel.ParseKind(h.Kernel.Kind)
	if err != nil {
		return nil, modelErr("%v", err)
	}
	kern := kernel.Kernel{Kind: kind, Sigma: h.Kernel.Sigma, Degree: h.Kernel.Degree, Gamma: h.Kernel.Gamma, Coef0: h.Kernel.Coef0}
	if err := kern.Check(); err != nil {
		return nil, modelErr("%v", err)
	}
	n, s := h.N, h.Components
	k := &KPCA{Components: s, Kernel: kern, NoCenter: !h.Center, Alpha: h.Alpha,
		fitKernel: kern, fitCenter: h.Center, fitAlpha: h.Alpha, n: n}
	if k.values, err = readVec(members, "values.npy", s); err != nil {
		return nil, err
	}
	if k.proj, err = readMat(members, "proj.npy", n, s); err != nil {
		return nil, err
	}
	if k.scores, err = readMat(members, "scores.npy", n, s); err != nil {
		return nil, err
	}
	if k.h, err = readMat(members, "dual.npy", n, s); err != nil {
		return nil, err
	}
	if h.Center {
		means, err := readVec(members, "row_means.npy", n)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(h.Mean) || math.IsInf(h.Mean, 0) {
			return nil, modelErr("grand mean %g", h.Mean)
		}
		k.center = linalg.Centering{RowMeans: means, Mean: h.Mean}
	}
	if h.HasX {
		if k.x, err = readMat(members, "x.npy", n, h.D); err != nil {
			return nil, err
		}
	}
	if h.HasInverse {
		z, err := readMat(members, "inv_z.npy", n, s)
		if err != nil {
			return nil, err
		}
		if !h.HasX {
			return nil, modelErr("a pre-image map without training points")
		}
		coef, err := readMat(members, "inv_coef.npy", n, h.D)
		if err != nil {
			return nil, err
		}
		k.inverse = &preimage{z: z, coef: coef}
		k.FitInverse = true
	}
	k.info = Info{Solver: h.Solver, Operator: "loaded"}
	if err := k.info.Status.Code.UnmarshalText([]byte(h.Status)); err != nil {
		return nil, modelErr("status: %v", err)
	}
	k.info.Status.Test = h.Test
	k.fitted = true
	return k, nil
}

func modelErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrModelFile}, args...)...)
}

// archive reads .npy members of a zip archive whole before parsing them
// (the .npy parser does not handle the short reads of a zip stream).
type archive struct{ z *zip.Reader }

// member returns the bytes of name, at most limit of them.
func (a archive) member(name string, limit int64) ([]byte, error) {
	f, err := a.z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than %d bytes", limit)
	}
	return b, nil
}

// read parses member name (at most limit bytes) into ptr.
func (a archive) read(name string, limit int64, ptr any) error {
	b, err := a.member(name, limit)
	if err != nil {
		return err
	}
	r, err := npy.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return r.Read(ptr)
}

// header parses the .npy header of member name (at most limit bytes) and
// returns a reader of its data.
func (a archive) open(name string, limit int64) (*npy.Reader, error) {
	b, err := a.member(name, limit)
	if err != nil {
		return nil, err
	}
	return npy.NewReader(bytes.NewReader(b))
}

// npyLimit is the most bytes an .npy member of count float64s may have:
// the data and a header of at most 64 KiB.
func npyLimit(count int) int64 { return 8*int64(count) + 1<<16 }

func readVec(a archive, name string, n int) ([]float64, error) {
	var v []float64
	if err := a.read(name, npyLimit(n), &v); err != nil {
		return nil, modelErr("%s: %v", name, err)
	}
	if len(v) != n {
		return nil, modelErr("%s has %d values, want %d", name, len(v), n)
	}
	if err := linalg.CheckFiniteSlice("kpca: "+name, v); err != nil {
		return nil, modelErr("%v", err)
	}
	return v, nil
}

func readMat(a archive, name string, r, c int) (*mat.Dense, error) {
	rd, err := a.open(name, npyLimit(r*c))
	if err != nil {
		return nil, modelErr("%s: %v", name, err)
	}
	if sh := rd.Header.Descr.Shape; len(sh) != 2 || sh[0] != r || sh[1] != c {
		return nil, modelErr("%s has shape %v, want [%d %d]", name, sh, r, c)
	}
	var m mat.Dense
	if err := rd.Read(&m); err != nil {
		return nil, modelErr("%s: %v", name, err)
	}
	if err := linalg.CheckFinite("kpca: "+name, &m); err != nil {
		return nil, modelErr("%v", err)
	}
	return &m, nil
}
