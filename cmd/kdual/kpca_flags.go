package main

// kpca's flags: their values read and checked (sizes, solver and loss,
// operator and memory, approximation), which flags a saved model fixes,
// and transform's help.

import (
	"flag"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
	"gonum.org/v1/gonum/mat"
)

// parseBytes reads a memory size: a number of bytes or a number with one
// of the units B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024); "" is 0 (no budget given).
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v*mult, 0) || v*mult > math.MaxInt64/2 {
		return 0, usagef("--memory %q: want a positive size such as 8GiB or 512MiB", s)
	}
	return int64(v * mult), nil
}

// eigSolvers are the options of the eigensolvers the names give.
type eigSolvers struct {
	tol              float64
	seed             uint64
	ncv, block, over int
	powerIters       int
	normalizer       eig.Normalizer
}

// eigSolver is the command line's name → eigensolver table (kpcaSolver
// adds the dual solvers): false for a name it does not know.
func eigSolver(name string, o eigSolvers) (eig.Solver, bool) {
	switch name {
	case "auto":
		return eig.Auto{Tol: o.tol, Seed: o.seed}, true
	case "dense":
		return eig.DenseSolver{}, true
	case "lanczos":
		return eig.Lanczos{Tol: o.tol, NCV: o.ncv, Seed: o.seed}, true
	case "block":
		return eig.BlockKrylov{Tol: o.tol, NCV: o.ncv, Block: o.block, Seed: o.seed}, true
	case "randomized":
		return eig.Randomized{Tol: o.tol, Oversample: o.over, PowerIters: o.powerIters, Normalizer: o.normalizer, Seed: o.seed}, true
	}
	return nil, false
}

// kpcaSolver is the command line's name → solver table (the eigensolvers
// of eigSolver and the dual solvers): the one place where solvers have
// names to be looked up.
func kpcaSolver(name string, tol float64, seed uint64, loss kpca.Loss) (kpca.Solver, error) {
	if tol < 0 || math.IsNaN(tol) || math.IsInf(tol, 0) {
		return nil, usagef("--tol %g: want a finite tolerance ≥ 0 (0: the solver's default)", tol)
	}
	if es, ok := eigSolver(name, eigSolvers{tol: tol, seed: seed}); ok {
		return kpca.Eigen{Solver: es}, nil
	}
	switch name {
	case "lbfgs":
		return kpca.LBFGS{Tol: tol, Seed: seed}, nil
	case "dca":
		return kpca.DCA{Loss: loss, Tol: tol, Start: eig.Auto{Seed: seed}}, nil
	}
	return nil, usagef("--solver %q: want auto, dense, lanczos, block, randomized, lbfgs or dca", name)
}

// csvOptions reads --delimiter and --label-column.
func csvOptions(delimiter string, labelColumn, maxRows int) (dataset.CSVOptions, error) {
	if maxRows < 0 {
		return dataset.CSVOptions{}, usagef("--max-rows %d: want a positive number, or 0 for all rows", maxRows)
	}
	o := dataset.CSVOptions{LabelColumn: labelColumn, MaxRows: maxRows}
	switch delimiter {
	case "":
	case "tab", "\\t", "\t":
		o.Comma = '\t'
	case "space", " ":
		o.Comma = ' '
	default:
		r := []rune(delimiter)
		if len(r) != 1 || r[0] == '"' || r[0] == '#' || r[0] == '\n' || r[0] == '\r' {
			return o, usagef("--delimiter %q: want one character, tab or space", delimiter)
		}
		o.Comma = r[0]
	}
	return o, nil
}

// approxMethod reads the approximation flags: nil without --approx; a
// flag of one method given with another (or none) is a usage error.
func approxMethod(set map[string]bool, name string, n, landmarks int, sampler string, traceTol float64, features int, seed uint64, precision string, sample int) (approx.Method, error) {
	nystromFlags, rffFlags := []string{"landmarks", "sampler", "trace-tol", "approx-precision", "sample"}, []string{"features"}
	refuse := func(flags []string, what string) error {
		for _, f := range flags {
			if set[f] {
				return usagef("--%s is for %s", f, what)
			}
		}
		return nil
	}
	switch name {
	case "":
		if err := refuse(append(nystromFlags, rffFlags...), "--approx"); err != nil {
			return nil, err
		}
		return nil, nil
	case "nystrom":
		if err := refuse(rffFlags, "--approx rff"); err != nil {
			return nil, err
		}
		switch {
		case !set["landmarks"]:
			landmarks = min(1000, n)
		case landmarks < 1:
			return nil, usagef("--landmarks %d: want M ≥ 1", landmarks)
		}
		smp, err := approx.ParseSampler(sampler)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if traceTol < 0 || math.IsNaN(traceTol) || traceTol >= 1 {
			return nil, usagef("--trace-tol %g: want 0 ≤ T < 1", traceTol)
		}
		if precision != "float64" && precision != "float32" {
			return nil, usagef("--approx-precision %q: want float64 or float32", precision)
		}
		switch {
		case sample < -1:
			return nil, usagef("--sample %d: want -1 (all rows), 0 (the rule) or a positive count", sample)
		case sample > 0 && precision != "float32":
			return nil, usagef("--sample %d: the landmarks' sample needs --approx-precision float32", sample)
		}
		return approx.Nystrom{Rank: landmarks, Sampler: smp, TraceTol: traceTol, Seed: seed, ResidualSample: 1000,
			Float32: precision == "float32", Sample: sample}, nil
	case "rff":
		if err := refuse(nystromFlags, "--approx nystrom"); err != nil {
			return nil, err
		}
		switch {
		case !set["features"]:
			features = 1000
		case features < 1:
			return nil, usagef("--features %d: want M ≥ 1", features)
		}
		return approx.RFF{Features: features, Seed: seed}, nil
	}
	return nil, usagef("--approx %q: want nystrom or rff", name)
}

// fitOnlyFlags are kpca fit's flags that a saved model fixes: with
// transform --model they are errors, and transform -h does not list them.
var fitOnlyFlags = map[string]bool{"components": true, "kernel": true, "sigma": true, "bandwidth": true, "gamma": true,
	"solver": true, "loss": true, "param": true, "relative": true, "no-center": true, "tol": true, "seed": true,
	"operator": true, "memory": true, "products": true, "start-rank": true, "check": true, "save": true, "approx": true, "landmarks": true,
	"sampler": true, "trace-tol": true, "features": true, "approx-precision": true, "mpi": true, "mpi-timeout": true,
	"data": true, "n": true, "apply": true, "plot": true, "start-out": true, "data-out": true,
	"fit-inverse": true, "alpha": true, "degree": true, "coef0": true, "stream": true, "chunk": true, "sample": true, "scores-out": true}

// helpAsked reports whether args ask for -h or --help.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help", "--h":
			return true
		}
	}
	return false
}

// kpcaOperatorFlags reads --operator, --memory (also Go's heap limit: the
// collector works harder rather than let the heap's headroom pass the
// budget) and --products.
func kpcaOperatorFlags(operator, memory, products string) (eig.OperatorKind, int64, gram.ProductPrecision, error) {
	opKind, err := eig.ParseOperatorKind(operator)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	budget, err := parseBytes(memory)
	if err != nil {
		return 0, 0, 0, err
	}
	if budget > 0 {
		debug.SetMemoryLimit(budget)
	}
	switch products {
	case "float64":
		return opKind, budget, gram.ProductsFloat64, nil
	case "float32":
		return opKind, budget, gram.ProductsFloat32, nil
	}
	return 0, 0, 0, usagef("--products %q: want float64 or float32", products)
}

// kpcaSolverWithLoss reads --solver with --loss, --param and --relative
// (a loss other than square needs the DCA solver).
func kpcaSolverWithLoss(solver string, tol float64, seed uint64, loss string, param float64, relative bool) (kpca.Solver, error) {
	losses := map[string]kpca.LossKind{"square": kpca.Square, "huber1": kpca.Huber1, "huber2": kpca.Huber2,
		"huberf": kpca.HuberF, "epsinf": kpca.EpsInf, "eps2": kpca.Eps2}
	lk, ok := losses[loss]
	if !ok {
		return nil, usagef("--loss %q", loss)
	}
	sv, err := kpcaSolver(solver, tol, seed, kpca.Loss{Kind: lk, Param: param, Relative: relative})
	if err != nil {
		return nil, err
	}
	if loss != "square" && sv.Name() != "dca" {
		return nil, usagef("--loss %s needs --solver dca", loss)
	}
	huber := lk == kpca.Huber1 || lk == kpca.Huber2 || lk == kpca.HuberF
	if param != 0 && lk == kpca.Square {
		return nil, usagef("--param %g: the square loss has no parameter (give --solver dca with --loss huber1, huber2, huberf, epsinf or eps2)", param)
	}
	if relative && !huber {
		return nil, usagef("--relative: a fraction of κ_max is for the Huber losses (--loss huber1, huber2 or huberf), not %s", loss)
	}
	return sv, nil
}

// transformHelp prints kpca transform's own flags (the fit flags apply
// only to the old refit-without---model form).
func transformHelp(fs *flag.FlagSet) error {
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !fitOnlyFlags[f.Name] {
			own.Var(f.Value, f.Name, f.Usage)
		}
	})
	own.SetOutput(diag)
	fmt.Fprintf(diag, "Usage of %s (kdual kpca transform --model MODEL --input NEW):\n", fs.Name())
	own.PrintDefaults()
	fmt.Fprintln(diag, "Without --model, transform fits the model again and takes kpca fit's flags (kdual kpca fit -h).")
	return flag.ErrHelp
}

// mpiFlagsOK refuses the flags --mpi does not take.
func mpiFlagsOK(cmd string, set map[string]bool, timeout time.Duration) error {
	for _, f := range []string{"approx", "save", "check", "apply", "model", "loss"} {
		if set[f] {
			return usagef("--%s is not available with --mpi", f)
		}
	}
	if cmd != "fit" {
		return usagef("--mpi is for kdual kpca fit")
	}
	if timeout < 0 {
		return usagef("--mpi-timeout %v: want a positive duration, or 0 for the default", timeout)
	}
	return nil
}

// mpiJob is a distributed kernel PCA fit: every rank has read the same data
// and parsed the same flags.
type mpiJob struct {
	x                                *mat.Dense
	kernel                           kernel.Kernel
	s                                int
	solver, operator, products, json string
	solverValue                      kpca.Solver // the solver the name gives (the CLI's table)
	tol                              float64
	seed                             uint64
	center                           bool
	memory                           int64         // bytes per rank; 0: available memory / ranks on this host
	timeout                          time.Duration // the collective watchdog's; 0: dist.DefaultTimeout
}

// agreement is what every rank of a kpca fit must agree on.
func (j mpiJob) agreement(cmd string) [][2]string {
	return [][2]string{
		{"the command", cmd},
		{"the kdual version", version()},
		{"--kernel and --sigma", fmt.Sprintf("%v σ=%x γ=%x degree %d c₀=%x", j.kernel.Kind, math.Float64bits(j.kernel.Sigma),
			math.Float64bits(j.kernel.Gamma), j.kernel.Degree, math.Float64bits(j.kernel.Coef0)) + fmt.Sprint(" set ", j.kernel.Coef0Set)},
		{"--components", fmt.Sprint(j.s)},
		{"--solver", j.solver},
		{"--operator", j.operator},
		{"--products", j.products},
		{"--tol", fmt.Sprint(j.tol)},
		{"--seed", fmt.Sprint(j.seed)},
		{"--no-center", fmt.Sprint(!j.center)},
	}
}

// check refuses bad flags before MPI starts, so that a usage error is exit
// 2 on every rank.
func (j mpiJob) check() error {
	switch j.operator {
	case "auto", "float64", "float32", "matrix-free":
	default:
		return usagef("--operator %q with --mpi: want auto, float64, float32 or matrix-free", j.operator)
	}
	switch j.solver {
	case "auto", "block", "lanczos", "lbfgs":
	default:
		return usagef("--solver %q with --mpi: want auto, block, lanczos or lbfgs", j.solver)
	}
	switch j.products {
	case "", "float64", "float32":
	default:
		return usagef("--products %q: want float64 or float32", j.products)
	}
	if j.products == "float32" && j.operator == "float64" {
		return usagef("--products float32 is for the float32 and matrix-free operators")
	}
	if j.tol < 0 || math.IsNaN(j.tol) || math.IsInf(j.tol, 0) {
		return usagef("--tol %g: want a finite tolerance ≥ 0", j.tol)
	}
	if j.memory < 0 {
		return usagef("--memory: want a positive size")
	}
	return nil
}

// kpcaFlags are kdual kpca fit's and transform's flags.
type kpcaFlags struct {
	input       *string
	data        *string
	nData       *int
	apply       *string
	maxRows     *int
	scale       *float64
	s           *int
	kern        *string
	bw          *string
	gamma       *float64
	degree      *int
	coef0       *float64
	solver      *string
	loss        *string
	param       *float64
	relative    *bool
	noCenter    *bool
	tol         *float64
	seed        *uint64
	format      *string
	jsonOut     *string
	operator    *string
	memory      *string
	products    *string
	startRank   *int
	fitInverse  *bool
	alpha       *float64
	inverse     *bool
	plotOut     *string
	check       *bool
	delimiter   *string
	labelColumn *int
	columns     *string
	save        *string
	modelPath   *string
	quiet       *bool
	approxName  *string
	landmarks   *int
	sampler     *string
	traceTol    *float64
	features    *int
	approxPrec  *string
	mpiTimeout  *time.Duration
	useMPI      *bool
	stream      *string
	chunk       *int
	sample      *int
	scoresOut   *string
}

// newKPCAFlags defines kdual kpca CMD's flags.
func newKPCAFlags(cmd string) (*flag.FlagSet, *kpcaFlags) {
	fs := newFlags("kpca " + cmd)
	f := &kpcaFlags{}
	f.input = fs.String("input", "", "training data: CSV (numeric, optional header) or IDX (gzip or not)")
	f.data = fs.String("data", "", "built-in training data instead of --input: fashion (all 70 000 Fashion-MNIST images, pixels in [0,1], then one-pixel-shifted noisy copies past 70 000; the first --n)")
	f.nData = fs.Int("n", 0, "with --data: number of points")
	f.apply = fs.String("apply", "", "transform: the data to project (default: the training data)")
	f.maxRows = fs.Int("max-rows", 0, "read at most this many rows (0: all)")
	f.scale = fs.Float64("scale", 1, "multiply the data by this (e.g. 1/255 for images)")
	f.s = fs.Int("components", 2, "number of components s")
	f.kern = fs.String("kernel", "linear", "kernel (default linear, as scikit-learn's KernelPCA): linear; scikit-learn's rbf (exp(−γ‖x−y‖²), γ = 1/d), poly or polynomial ((γ⟨x,y⟩ + c₀)^degree, γ = 1/d, degree 3, c₀ = 1), sigmoid (tanh(γ⟨x,y⟩ + c₀), γ = 1/d, c₀ = 1), cosine, laplacian (exp(−γ‖x−y‖₁), γ = 1/d); the papers' gaussian (exp(−‖x−y‖²/(2σ²)), median σ) and laplace (exp(−‖x−y‖₂/σ), median σ); precomputed: --input is the n×n kernel matrix (transform --model: the rows of the kernel against the training points)")
	f.bw = fs.String("sigma", "median", "bandwidth σ of the gaussian and laplace kernels: median, paper or a number")
	alias(fs, "bandwidth", "sigma")
	f.gamma = fs.Float64("gamma", 0, "scikit-learn's γ (default 1/d): exp(−γ‖x−y‖²) for rbf and gaussian (instead of --sigma: σ = 1/√(2γ)), exp(−γ‖x−y‖₂) for laplace, γ⟨x,y⟩ in poly and sigmoid, exp(−γ‖x−y‖₁) for laplacian")
	f.degree = fs.Int("degree", 3, "poly: the degree")
	f.coef0 = fs.Float64("coef0", 1, "poly and sigmoid: c₀")
	f.solver = fs.String("solver", "auto", "solver: auto, dense, lanczos, block, randomized, lbfgs, dca")
	f.loss = fs.String("loss", "square", "dca loss: square, huber1, huber2, huberf, epsinf, eps2")
	f.param = fs.Float64("param", 0, "dca loss parameter: κ (huber; a fraction of κ_max with --relative) or ε")
	f.relative = fs.Bool("relative", false, "huber κ as a fraction of κ_max")
	f.noCenter = fs.Bool("no-center", false, "do not centre the kernel matrix")
	f.tol = fs.Float64("tol", 0, "solver tolerance (0: default)")
	f.seed = fs.Uint64("seed", 1, "seed")
	f.format = fs.String("format", "csv", "deprecated: csv (scores, the default) or json (the same as --json -)")
	f.jsonOut = fs.String("json", "", "write JSON (eigenvalues, scores, info; docs/json.md) to FILE, or - for standard output, instead of the scores as CSV")
	f.operator = fs.String("operator", "auto", "kernel operator: auto (planned from n, d, s, --tol and --memory), float64, float32 (half storage) or matrix-free")
	f.memory = fs.String("memory", "", "memory budget of the fit, e.g. 8GiB or 512MiB: the planner's and Go's heap limit; a forced --operator that does not fit is refused (default: total memory less 10% and 512 MiB)")
	f.products = fs.String("products", "float64", "arithmetic of the kernel's inner products for the float32 and matrix-free operators: float64 or float32 (sgemm, each entry within a stated bound; the float32 operator then also multiplies blocks of more than six vectors in float32)")
	f.startRank = fs.Int("start-rank", 0, "matrix-free operator with the auto solver: the rank of the Nyström approximation whose top eigenvectors start block Krylov (0: max(10·block, 2000), at most n/2; -1: a random start)")
	f.fitInverse = fs.Bool("fit-inverse", false, "fit: also learn the pre-image map (kernel ridge regression from scores to inputs, scikit-learn's fit_inverse_transform), saved with --save for transform --inverse")
	f.alpha = fs.Float64("alpha", 1, "--fit-inverse: the ridge α of the pre-image map (scikit-learn's alpha)")
	f.inverse = fs.Bool("inverse", false, "transform --model: --input holds scores; write their pre-images in input space (the model must have been fitted with --fit-inverse)")
	f.plotOut = fs.String("plot", "", "fit: draw the first two components (coloured by the label column when there is one) to FILE.png (or .svg, .pdf)")
	f.check = fs.Bool("check", false, "after the fit, measure every pair's residual ‖K v − λ v‖ against the exact float64 kernel (one more pass, about a Gram build)")
	f.delimiter = fs.String("delimiter", "", "CSV field separator: a character, tab or space (default: comma; tab for .tsv files)")
	f.labelColumn = fs.Int("label-column", 0, "a CSV column of labels to leave out of the features: 1 the first, -1 the last (0: none)")
	f.columns = fs.String("columns", "", "the feature columns, comma-separated: numbers (1 the first, -1 the last) or header names; other columns are not read (default: every column but the label)")
	f.save = fs.String("save", "", "fit: write the fitted model to this file (a NumPy .npz archive; kdual kpca transform --model reads it)")
	f.modelPath = fs.String("model", "", "transform: the model file written by fit --save; --input is then the new data to project")
	f.quiet = fs.Bool("quiet", false, "nothing on stderr but errors: no progress line (otherwise shown when stderr is a terminal and the fit takes over 2 s), no line on what was read or planned")
	f.approxName = fs.String("approx", "", "approximate the kernel: nystrom (with --landmarks) or rff (random Fourier features, gaussian kernel, with --features); memory O(n·m), never n×n")
	f.landmarks = fs.Int("landmarks", 0, "--approx nystrom: the most landmarks m (default min(1000, n))")
	f.sampler = fs.String("sampler", "rpcholesky", "--approx nystrom: how landmarks are chosen, rpcholesky or uniform")
	f.traceTol = fs.Float64("trace-tol", 0, "--approx nystrom: stop adding landmarks once the relative trace error tr(K − K̂)/tr(K) is at most this (0: use all m)")
	f.features = fs.Int("features", 0, "--approx rff: the random features (default 1000)")
	f.approxPrec = fs.String("approx-precision", "float64", "--approx nystrom: float32 computes kernel rows by sgemm on a float32 copy of the data and stores the features in float32 (half the memory, about twice the rate; entries rounded to float32), float64 otherwise")
	f.mpiTimeout = fs.Duration("mpi-timeout", 0, "with --mpi: end the job when a rank waits longer than this in one collective (a rank stopped or hung); 0: max(5m, 10 s per 10⁹·n²·d/ranks multiply-adds)")
	f.useMPI = fs.Bool("mpi", false, "run across the ranks of mpirun (rows split by rank; --operator auto, float64, float32 or matrix-free, planned per rank; --solver auto, block, lanczos or lbfgs); only rank 0 writes")
	f.stream = fs.String("stream", "", "fit with --approx nystrom: an uncompressed 8-bit IDX file, read in chunks in two passes instead of loaded (data larger than memory; --scale is the value of one level, e.g. 0.00392156862745098 for pixels in [0, 1]); writes --scores-out")
	f.chunk = fs.Int("chunk", 16384, "--stream: rows read and processed at a time (memory O(m² + chunk·(d + m)))")
	f.sample = fs.Int("sample", 0, "--stream, or --approx nystrom: the rows the landmarks are chosen among, one from each of as many equal strata (0: with --stream min(n, max(100·m, 100 000)); in memory 2·m with --approx-precision float32 and rpcholesky from n ≥ 16·m where (n − 2·m)·m²/2 ≥ 2·10⁹ (n ≥ 16 000 at m = 1000), else all; -1: all rows, in memory)")
	f.scoresOut = fs.String("scores-out", "", "--stream: write the scores (n×s float64) to this NPY file as they are produced (without it, one pass: eigenvalues and trace error only)")
	return fs, f
}
