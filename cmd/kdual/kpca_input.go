package main

// kpca's inputs: the data files and built-in data, the kernel flags and
// the precomputed kernel matrix, and model files given where data belong.

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/status"
)

// readTable reads the features of a data file (dataset.ReadTable; labels,
// when a label column is named, are left out).
// readTable reads a data file and says on diag what it read: the shape,
// and the header and label column when there are (so that a numeric label
// column read as a feature, or a first row taken as a header, shows).
func readTable(path string, o dataset.CSVOptions) (*mat.Dense, error) {
	x, _, err := readTableLabels(path, o)
	return x, err
}

// readTableLabels is readTable with the label column's labels (nil
// without one).
func readTableLabels(path string, o dataset.CSVOptions) (*mat.Dense, []string, error) {
	if isModelFile(path) {
		return nil, nil, usagef("%s is a kdual model file (it has a header.npy member), not data: give it with --model", path)
	}
	t, err := dataset.ReadTable(path, o)
	if err != nil {
		return nil, nil, err
	}
	r, c := t.X.Dims()
	var notes []string
	if len(t.Header) > 0 {
		notes = append(notes, "header row")
	}
	if o.LabelColumn != 0 {
		notes = append(notes, fmt.Sprintf("label column %d left out", o.LabelColumn))
	}
	if len(o.Columns) > 0 {
		notes = append(notes, "columns "+strings.Join(o.Columns, ","))
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	fmt.Fprintf(diag, "kdual: read %d×%d from %s%s\n", r, c, path, note)
	return t.X, t.Labels, nil
}

// isModelFile reports whether path is a .npz archive holding header.npy,
// as every kdual model file does (data archives hold arrays only).
// scaleData multiplies x by s in place, row by row: nothing for s = 1 (the
// default), and no copy otherwise — gonum's Dense.Scale of a matrix into
// itself works through a pooled copy as large as the data (128 MB for
// 20 000 Fashion-MNIST images), which the collector frees only two cycles
// later.
func scaleData(x *mat.Dense, s float64) {
	if s == 1 {
		return
	}
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j := range row {
			row[j] *= s
		}
	}
}

func isModelFile(path string) bool {
	if !strings.HasSuffix(strings.ToLower(path), ".npz") {
		return false
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return false
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name == "header.npy" {
			return true
		}
	}
	return false
}

// symmetricOf reads a precomputed kernel matrix: square and symmetric to
// rounding (|K_ij − K_ji| ≤ 1e-12·max|K|), its upper triangle taken.
func symmetricOf(x *mat.Dense) (*mat.SymDense, error) {
	n, c := x.Dims()
	if n != c {
		return nil, fmt.Errorf("--kernel precomputed: the input is %d×%d, want the square kernel matrix: %w", n, c, status.ErrInvalid)
	}
	top := 0.0
	for _, v := range x.RawMatrix().Data {
		top = math.Max(top, math.Abs(v))
	}
	g := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if d := math.Abs(x.At(i, j) - x.At(j, i)); d > 1e-12*top {
				return nil, fmt.Errorf("--kernel precomputed: K[%d,%d] and K[%d,%d] differ by %g: not symmetric: %w", i+1, j+1, j+1, i+1, d, status.ErrInvalid)
			}
			g.SetSym(i, j, x.At(i, j))
		}
	}
	return g, nil
}

// gramModel reports whether the kpca model file at path was fitted on a
// kernel matrix (--kernel precomputed): it holds neither the training
// points nor an approximation's map, so new data come as kernel rows.
func gramModel(path string) bool {
	z, err := zip.OpenReader(path)
	if err != nil {
		return false
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != "header.npy" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return false
		}
		defer r.Close()
		var raw []uint8
		if err := npy.Read(r, &raw); err != nil {
			return false
		}
		var h struct {
			HasX   bool            `json:"has_x"`
			Approx json.RawMessage `json:"approx"`
		}
		if json.Unmarshal(raw, &h) != nil {
			return false
		}
		return !h.HasX && len(h.Approx) == 0
	}
	return false
}

// cliKernel reads --kernel and its parameters. Every kernel takes
// scikit-learn's defaults for the parameters it shares with scikit-learn
// (γ = 1/d for rbf, poly, polynomial, sigmoid and laplacian; degree 3;
// c₀ = 1); kdual's own gaussian and laplace (the papers' L2 form) take the
// --bandwidth rule (median σ by default). linear and cosine have no
// parameter.
func cliKernel(name string, set map[string]bool, bw string, gamma float64, degree int, coef0 float64, x *mat.Dense) (kernel.Kernel, error) {
	kind, err := kernel.ParseKind(name)
	if err != nil {
		return kernel.Kernel{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	k := kernel.Kernel{Kind: kind}
	if set["degree"] && kind != kernel.Polynomial {
		return k, usagef("--degree is for the polynomial kernel, not %s", kind)
	}
	if set["coef0"] && kind != kernel.Polynomial && kind != kernel.Sigmoid {
		return k, usagef("--coef0 is for the polynomial and sigmoid kernels, not %s", kind)
	}
	if set["gamma"] && (!(gamma > 0) || math.IsInf(gamma, 0)) {
		return k, usagef("--gamma %g: want a positive finite γ", gamma)
	}
	if set["gamma"] && (set["sigma"] || set["bandwidth"]) {
		return k, usagef("--gamma and --sigma both give the bandwidth: give one")
	}
	switch kind {
	case kernel.Linear, kernel.Cosine:
		if set["gamma"] || set["sigma"] || set["bandwidth"] {
			return k, usagef("the %s kernel has no parameter (--gamma, --sigma)", kind)
		}
	case kernel.Gaussian, kernel.Laplace:
		switch {
		case set["gamma"]:
			k.Gamma = gamma
		case name == "rbf" && !set["sigma"] && !set["bandwidth"]:
			_, d := x.Dims()
			k.Gamma = 1 / float64(d) // scikit-learn's rbf default
		default:
			if k.Sigma, err = kernel.Bandwidth(bw, kind, x); err != nil {
				if errors.Is(err, status.ErrInvalid) && bw != "paper" && bw != "median" {
					return k, fmt.Errorf("%w: --sigma: %v", errUsage, err)
				}
				return k, err
			}
		}
	default: // polynomial, sigmoid, laplacian: scikit-learn's γ
		if set["sigma"] || set["bandwidth"] {
			return k, usagef("--sigma is for the gaussian and laplace kernels, not %s (its scale is --gamma)", kind)
		}
		if set["gamma"] {
			k.Gamma = gamma
		}
		if kind == kernel.Polynomial {
			if degree < 1 {
				return k, usagef("--degree %d: want a degree ≥ 1", degree)
			}
			k.Degree = degree
		}
		if set["coef0"] {
			k.Coef0, k.Coef0Set = coef0, true
		}
	}
	return k, nil
}

// rbfInverseKernel is the pre-image map's kernel for scikit-learn's rbf
// with γ unset: scikit-learn takes γ's default at the dimension of the data
// it is given, 1/d in the fit and 1/s on the s scores of the pre-image
// map. Every other kernel's map uses the fit's kernel (nil): an unset γ of
// the polynomial, sigmoid and laplacian kernels follows the same rule in
// package kernel already.
func rbfInverseKernel(name string, set map[string]bool, s int) *kernel.Kernel {
	if name != "rbf" || set["gamma"] || set["sigma"] || set["bandwidth"] || s < 1 {
		return nil
	}
	return &kernel.Kernel{Kind: kernel.Gaussian, Gamma: 1 / float64(s)}
}

// readKPCAData reads kpca's training data: --input (with its labels) or
// the built-in --data fashion (its first --n images).
func readKPCAData(input, data string, n int, seed uint64, csvOpt dataset.CSVOptions) (*mat.Dense, []string, error) {
	switch {
	case input != "" && data != "":
		return nil, nil, usagef("--input and --data exclude each other")
	case input != "":
		return readTableLabels(input, csvOpt)
	case data == "fashion":
		if n < 2 {
			return nil, nil, usagef("--data fashion needs --n ≥ 2")
		}
		if err := bigmem.Fits(fmt.Sprintf("--n %d: the images as float64", n), 8, n, 784); err != nil {
			return nil, nil, usagef("%v", err)
		}
		x, err := dataset.FashionAugmented("", n, seed)
		return x, nil, err
	case data != "":
		return nil, nil, usagef("--data %q: want fashion", data)
	}
	return nil, nil, usagef("--input or --data is required")
}

// kpcaKernelOf reads the kernel flags: a checked kernel, or for --kernel
// precomputed the kernel matrix x itself (and no kernel).
func kpcaKernelOf(name string, set map[string]bool, solver, bw string, gamma float64, degree int, coef0 float64, x *mat.Dense) (kernel.Kernel, *mat.SymDense, error) {
	if name == "precomputed" {
		for _, f := range []string{"sigma", "bandwidth", "gamma", "degree", "coef0", "approx", "operator", "memory", "products", "check", "fit-inverse", "mpi", "solver", "apply"} {
			if set[f] && !(f == "solver" && solver == "dense") {
				return kernel.Kernel{}, nil, usagef("--%s does not apply to --kernel precomputed (the kernel matrix is given)", f)
			}
		}
		g, err := symmetricOf(x)
		return kernel.Kernel{}, g, err
	}
	k, err := cliKernel(name, set, bw, gamma, degree, coef0, x)
	if err != nil {
		return k, nil, err
	}
	if err := k.Check(); err != nil {
		flag := "--sigma"
		if set["gamma"] {
			flag = "--gamma"
		} else if k.Kind == kernel.Polynomial || k.Kind == kernel.Sigmoid {
			flag = "--degree/--coef0"
		}
		return k, nil, fmt.Errorf("%w: %s: %v", errUsage, flag, err)
	}
	return k, nil, nil
}
