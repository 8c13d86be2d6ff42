package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/linalg"
)

type eigReport struct {
	Matrix        string  `json:"matrix"`
	N             int     `json:"n"`
	K             int     `json:"components"`
	Solver        string  `json:"solver"`
	Sigma         float64 `json:"sigma,omitempty"`
	Seconds       float64 `json:"seconds"`
	KernelSeconds float64 `json:"kernel_seconds"`
	// ApplySeconds is the part of Seconds spent in the operator's passes
	// (Apply calls): Seconds less the solver's own work between passes.
	ApplySeconds  float64   `json:"apply_seconds"`
	ResidualMax   float64   `json:"residual_max"`
	Orthogonality float64   `json:"orthogonality"`
	Values        []float64 `json:"eigenvalues"`
	Repeat        int       `json:"repeat"`
	Tol           float64   `json:"tol"`
	Float32       bool      `json:"float32"`
	Passes        int       `json:"passes"`
	MatVecs       int       `json:"matvecs"`
	Iterations    int       `json:"iterations"`
	Status        string    `json:"status"`
	StoppingTest  string    `json:"stopping_test,omitempty"`
}

func runEig(args []string, stdout io.Writer) error {
	fs := newFlags("eig")
	matrix := fs.String("matrix", "randsym", "matrix: fashion (Gaussian kernel of Fashion-MNIST) or randsym (Q·diag(1/i)·Qᵀ)")
	n := fs.Int("n", 1000, "matrix size")
	sigma := fs.Float64("sigma", 0, "Gaussian bandwidth for fashion; 0: median pairwise distance of the first min(n,1000) images")
	k := fs.Int("components", 0, "number of leading eigenpairs; 0 means all")
	alias(fs, "k", "components")
	solver := fs.String("solver", "dense", "solver: dense, lanczos, randomized, block or auto")
	tol := fs.Float64("tol", 0, "relative tolerance of the iterative solvers (0: their default, 1e-10; randomized: 0 runs its fixed schedule)")
	ncv := fs.Int("ncv", 0, "Krylov basis size for lanczos and block (0: default)")
	block := fs.Int("block", 0, "block size of the block solver (0: max(k, 4))")
	oversample := fs.Int("oversample", 0, "randomized: oversampling p (0: 10)")
	powerIters := fs.Int("power-iters", 0, "randomized: power iterations q (0: scikit-learn's auto rule, -1: none)")
	normalizer := fs.String("normalizer", "auto", "randomized: auto, lu, qr or none between power iterations")
	float32 := fs.Bool("float32", false, "apply the matrix from float32 storage (iterative solvers)")
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
		return usagef("--components %d outside 0…n", *k)
	}
	if *repeat < 1 {
		return usagef("--repeat %d must be at least 1", *repeat)
	}
	norms := map[string]eig.Normalizer{"auto": eig.NormAuto, "lu": eig.NormLU, "qr": eig.NormQR, "none": eig.NormNone}
	norm, ok := norms[*normalizer]
	if !ok {
		return usagef("--normalizer %q: want auto, lu, qr or none", *normalizer)
	}
	sv, ok := eigSolver(*solver, eigSolvers{tol: *tol, seed: *seed, ncv: *ncv, block: *block, over: *oversample, powerIters: *powerIters, normalizer: norm})
	if !ok {
		return usagef("--solver %q: want dense, lanczos, randomized, block or auto", *solver)
	}
	if *tol < 0 {
		return usagef("--tol %g must not be negative", *tol)
	}
	if *float32 && *solver == "dense" {
		return usagef("--float32 goes with an iterative solver")
	}
	if err := eigFlagsApply(fs, *solver, *matrix); err != nil {
		return err
	}
	rep := eigReport{Matrix: *matrix, N: *n, K: *k, Solver: *solver, Repeat: *repeat, Float32: *float32, Tol: *tol}
	var (
		a                        *mat.SymDense
		res                      *eig.Result
		kernSecs, solveS, applyS []float64
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
		k := *k
		if k == 0 {
			k = *n
		}
		var solveSec, applySec float64
		var err error
		if res, solveSec, applySec, err = solveTimed(a, *float32, sv, k); err != nil {
			return err
		}
		solveS, applyS = append(solveS, solveSec), append(applyS, applySec)
	}
	rep.Seconds, rep.KernelSeconds, rep.ApplySeconds = bench.Median(solveS), bench.Median(kernSecs), bench.Median(applyS)
	rep.K = len(res.Values)
	if res.Direct() && *solver != "dense" {
		// An iterative solver hands a problem too small for its basis
		// to LAPACK: name what ran.
		rep.Solver = "dense (from " + *solver + ": n too small for its basis)"
	}
	rep.Values = res.Values
	rep.Passes, rep.MatVecs, rep.Iterations = res.Passes, res.MatVecs, res.Iterations
	rep.Status, rep.StoppingTest = res.Status.Code.String(), res.Status.Test
	rep.ResidualMax, rep.Orthogonality = eigenChecks(a, &linalg.Eigen{Values: res.Values, Vectors: res.Vectors})
	return writeEig(rep, *jsonOut, stdout)
}

// solveTimed solves for the top k eigenpairs of a (from float32 storage
// when asked) and returns the result, the solve's wall time and the part
// of it spent in the operator's passes.
func solveTimed(a *mat.SymDense, float32 bool, sv eig.Solver, k int) (*eig.Result, float64, float64, error) {
	var op eig.Operator
	var err error
	if float32 {
		op, err = eig.NewFloat32(a)
	} else {
		op, err = eig.NewDense(a)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	timed := &timedOp{Operator: op}
	start := time.Now()
	res, err := sv.Solve(eig.WithContext(runCtx, timed), k)
	return res, time.Since(start).Seconds(), timed.seconds, err
}

// timedOp is an operator that sums the wall time of its passes.
type timedOp struct {
	eig.Operator
	seconds float64
}

func (t *timedOp) Apply(dst, x *mat.Dense) error {
	start := time.Now()
	err := t.Operator.Apply(dst, x)
	t.seconds += time.Since(start).Seconds()
	return err
}

// SymMatrix passes the operator's explicit matrix on (the dense solver
// reads it instead of calling Apply), nil when it has none.
func (t *timedOp) SymMatrix() *mat.SymDense {
	if m, ok := t.Operator.(eig.Matrixer); ok {
		return m.SymMatrix()
	}
	return nil
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
		fmt.Fprintf(stdout, "kernel seconds %.3f\nsolve seconds  %.3f\npasses         %d (%d matvecs)\nresidual max   %.3g\northogonality  %.3g\n",
			rep.KernelSeconds, rep.Seconds, rep.Passes, rep.MatVecs, rep.ResidualMax, rep.Orthogonality)
		show := min(len(rep.Values), 10)
		fmt.Fprintf(stdout, "values[:%d]     %.6g\n", show, rep.Values[:show])
		return nil
	}
	return writeJSON(jsonOut, stdout, rep)
}

// eigFlagsApply refuses a flag that the solver or matrix asked would
// ignore: --ncv but for lanczos and block, --block but for block,
// --oversample, --power-iters and --normalizer but for randomized, --tol
// for dense, --sigma but for the fashion matrix.
func eigFlagsApply(fs *flag.FlagSet, solver, matrix string) error {
	set := givenFlags(fs)
	for _, c := range []struct {
		flag    string
		solvers []string
	}{
		{"ncv", []string{"lanczos", "block"}}, {"block", []string{"block"}}, {"oversample", []string{"randomized"}},
		{"power-iters", []string{"randomized"}}, {"normalizer", []string{"randomized"}},
		{"tol", []string{"lanczos", "block", "randomized", "auto"}},
	} {
		if set[c.flag] && !slices.Contains(c.solvers, solver) {
			last := len(c.solvers) - 1
			names := c.solvers[last]
			if last > 0 {
				names = strings.Join(c.solvers[:last], ", ") + " or " + names
			}
			return usagef("--%s is for --solver %s, not %s", c.flag, names, solver)
		}
	}
	if set["sigma"] && matrix != "fashion" {
		return usagef("--sigma is the fashion matrix's bandwidth, not %s's", matrix)
	}
	return nil
}
