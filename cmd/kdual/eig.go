package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/linalg"
)

type eigReport struct {
	Matrix        string    `json:"matrix"`
	N             int       `json:"n"`
	K             int       `json:"k"`
	Solver        string    `json:"solver"`
	Sigma         float64   `json:"sigma,omitempty"`
	Seconds       float64   `json:"seconds"`
	KernelSeconds float64   `json:"kernel_seconds"`
	ResidualMax   float64   `json:"residual_max"`
	Orthogonality float64   `json:"orthogonality"`
	Values        []float64 `json:"values"`
	Repeat        int       `json:"repeat"`
}

// median returns the median of v (v is reordered).
func median(v []float64) float64 {
	sort.Float64s(v)
	m := len(v) / 2
	if len(v)%2 == 0 {
		return 0.5 * (v[m-1] + v[m])
	}
	return v[m]
}

func runEig(args []string, stdout io.Writer) error {
	fs := newFlags("eig")
	matrix := fs.String("matrix", "randsym", "matrix: fashion (Gaussian kernel of Fashion-MNIST) or randsym (Q·diag(1/i)·Qᵀ)")
	n := fs.Int("n", 1000, "matrix size")
	sigma := fs.Float64("sigma", 0, "Gaussian bandwidth for fashion; 0: median pairwise distance of the first min(n,1000) images")
	k := fs.Int("k", 0, "number of leading eigenpairs; 0 means all")
	solver := fs.String("solver", "dense", "solver: dense")
	seed := fs.Uint64("seed", 1, "seed for randsym")
	repeat := fs.Int("repeat", 1, "build and solve this many times; seconds are medians")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *n < 1 {
		return usagef("--n %d must be at least 1", *n)
	}
	if *k < 0 || *k > *n {
		return usagef("--k %d outside 0…n", *k)
	}
	if *repeat < 1 {
		return usagef("--repeat %d must be at least 1", *repeat)
	}
	if *solver != "dense" {
		return usagef("--solver %q: only dense is available", *solver)
	}
	rep := eigReport{Matrix: *matrix, N: *n, K: *k, Solver: *solver, Repeat: *repeat}
	var (
		a                *mat.SymDense
		e                *linalg.Eigen
		kernSecs, solveS []float64
	)
	for r := 0; r < *repeat; r++ {
		a = nil // let the previous matrix go before building the next
		switch *matrix {
		case "randsym":
			start := time.Now()
			m, _, err := bench.RandSym(*n, *seed)
			if err != nil {
				return err
			}
			a = m
			kernSecs = append(kernSecs, time.Since(start).Seconds())
		case "fashion":
			kern, err := bench.FashionGram(*n, *sigma)
			if err != nil {
				return err
			}
			a, rep.Sigma = kern.G, kern.Sigma
			kernSecs = append(kernSecs, kern.Seconds)
		default:
			return usagef("--matrix %q: want fashion or randsym", *matrix)
		}
		start := time.Now()
		var err error
		if e, err = linalg.SymEig(a, *k); err != nil {
			return err
		}
		solveS = append(solveS, time.Since(start).Seconds())
	}
	rep.Seconds, rep.KernelSeconds = median(solveS), median(kernSecs)
	rep.K = len(e.Values)
	rep.Values = e.Values
	rep.ResidualMax, rep.Orthogonality = eigenChecks(a, e)
	return writeEig(rep, *jsonOut, stdout)
}

// eigenChecks returns max_i ‖A v_i − λ_i v_i‖ / ‖A‖_F and max |VᵀV − I|.
func eigenChecks(a *mat.SymDense, e *linalg.Eigen) (residual, orth float64) {
	n, k := e.Vectors.Dims()
	var av mat.Dense
	av.Mul(a, e.Vectors)
	anorm := mat.Norm(a, 2)
	for j := 0; j < k; j++ {
		s := 0.0
		for i := 0; i < n; i++ {
			d := av.At(i, j) - e.Values[j]*e.Vectors.At(i, j)
			s += d * d
		}
		residual = math.Max(residual, math.Sqrt(s)/anorm)
	}
	var vtv mat.Dense
	vtv.Mul(e.Vectors.T(), e.Vectors)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			orth = math.Max(orth, math.Abs(vtv.At(i, j)-want))
		}
	}
	return residual, orth
}

func writeEig(rep eigReport, jsonOut string, stdout io.Writer) error {
	if jsonOut == "" {
		fmt.Fprintf(stdout, "%s n=%d k=%d solver=%s\n", rep.Matrix, rep.N, rep.K, rep.Solver)
		if rep.Sigma > 0 {
			fmt.Fprintf(stdout, "sigma          %.6g\n", rep.Sigma)
		}
		fmt.Fprintf(stdout, "kernel seconds %.3f\nsolve seconds  %.3f\nresidual max   %.3g\northogonality  %.3g\n",
			rep.KernelSeconds, rep.Seconds, rep.ResidualMax, rep.Orthogonality)
		show := min(len(rep.Values), 10)
		fmt.Fprintf(stdout, "values[:%d]     %.6g\n", show, rep.Values[:show])
		return nil
	}
	var w io.Writer = stdout
	if jsonOut != "-" {
		f, err := os.Create(jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
