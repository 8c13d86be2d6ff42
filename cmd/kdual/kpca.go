package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
)

func runKPCA(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("kdual kpca fit|transform|robust|sparse [flags]")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(diag, "usage: kdual kpca fit|transform|robust|sparse [flags]; kdual kpca SUBCOMMAND -h lists the flags")
		return flag.ErrHelp
	case "fit", "transform":
		return runKPCAFit(args[0], args[1:], stdout)
	case "robust":
		return runKPCARobust(args[1:], stdout)
	case "sparse":
		return runKPCASparse(args[1:], stdout)
	}
	return usagef("kdual kpca: unknown subcommand %q (fit, transform, robust, sparse)", args[0])
}

func runKPCAFit(cmd string, args []string, stdout io.Writer) error {
	fs := newFlags("kpca " + cmd)
	input := fs.String("input", "", "training data: CSV (numeric, optional header) or IDX (gzip or not)")
	data := fs.String("data", "", "built-in training data instead of --input: fashion (all 70 000 Fashion-MNIST images, pixels in [0,1], then one-pixel-shifted noisy copies past 70 000; the first --n)")
	nData := fs.Int("n", 0, "with --data: number of points")
	apply := fs.String("apply", "", "transform: the data to project (default: the training data)")
	maxRows := fs.Int("max-rows", 0, "read at most this many rows (0: all)")
	scale := fs.Float64("scale", 1, "multiply the data by this (e.g. 1/255 for images)")
	s := fs.Int("components", 2, "number of components s")
	kern := fs.String("kernel", "linear", "kernel (default linear, as scikit-learn's KernelPCA): linear; scikit-learn's rbf (exp(−γ‖x−y‖²), γ = 1/d), poly or polynomial ((γ⟨x,y⟩ + c₀)^degree, γ = 1/d, degree 3, c₀ = 1), sigmoid (tanh(γ⟨x,y⟩ + c₀), γ = 1/d, c₀ = 1), cosine, laplacian (exp(−γ‖x−y‖₁), γ = 1/d); the papers' gaussian (exp(−‖x−y‖²/(2σ²)), median σ) and laplace (exp(−‖x−y‖₂/σ), median σ); precomputed: --input is the n×n kernel matrix (transform --model: the rows of the kernel against the training points)")
	bw := fs.String("sigma", "median", "bandwidth σ of the gaussian and laplace kernels: median, paper or a number")
	alias(fs, "bandwidth", "sigma")
	gamma := fs.Float64("gamma", 0, "scikit-learn's γ (default 1/d): exp(−γ‖x−y‖²) for rbf and gaussian (instead of --sigma: σ = 1/√(2γ)), exp(−γ‖x−y‖₂) for laplace, γ⟨x,y⟩ in poly and sigmoid, exp(−γ‖x−y‖₁) for laplacian")
	degree := fs.Int("degree", 3, "poly: the degree")
	coef0 := fs.Float64("coef0", 1, "poly and sigmoid: c₀")
	solver := fs.String("solver", "auto", "solver: auto, dense, lanczos, block, randomized, lbfgs, dca")
	loss := fs.String("loss", "square", "dca loss: square, huber1, huber2, huberf, epsinf, eps2")
	param := fs.Float64("param", 0, "dca loss parameter: κ (huber; a fraction of κ_max with --relative) or ε")
	relative := fs.Bool("relative", false, "huber κ as a fraction of κ_max")
	noCenter := fs.Bool("no-center", false, "do not centre the kernel matrix")
	tol := fs.Float64("tol", 0, "solver tolerance (0: default)")
	seed := fs.Uint64("seed", 1, "seed")
	format := fs.String("format", "csv", "deprecated: csv (scores, the default) or json (the same as --json -)")
	jsonOut := fs.String("json", "", "write JSON (eigenvalues, scores, info; docs/json.md) to FILE, or - for standard output, instead of the scores as CSV")
	operator := fs.String("operator", "auto", "kernel operator: auto (planned from n, d, s, --tol and --memory), float64, float32 (half storage) or matrix-free")
	memory := fs.String("memory", "", "memory budget of the fit, e.g. 8GiB or 512MiB: the planner's and Go's heap limit; a forced --operator that does not fit is refused (default: total memory less 10% and 512 MiB)")
	products := fs.String("products", "float64", "arithmetic of the kernel's inner products for the float32 and matrix-free operators: float64 or float32 (sgemm, each entry within a stated bound; the float32 operator then also multiplies blocks of more than six vectors in float32)")
	fitInverse := fs.Bool("fit-inverse", false, "fit: also learn the pre-image map (kernel ridge regression from scores to inputs, scikit-learn's fit_inverse_transform), saved with --save for transform --inverse")
	alpha := fs.Float64("alpha", 1, "--fit-inverse: the ridge α of the pre-image map (scikit-learn's alpha)")
	inverse := fs.Bool("inverse", false, "transform --model: --input holds scores; write their pre-images in input space (the model must have been fitted with --fit-inverse)")
	plotOut := fs.String("plot", "", "fit: draw the first two components (coloured by the label column when there is one) to FILE.png (or .svg, .pdf)")
	check := fs.Bool("check", false, "after the fit, measure every pair's residual ‖K v − λ v‖ against the exact float64 kernel (one more pass, about a Gram build)")
	delimiter := fs.String("delimiter", "", "CSV field separator: a character, tab or space (default: comma; tab for .tsv files)")
	labelColumn := fs.Int("label-column", 0, "a CSV column of labels to leave out of the features: 1 the first, -1 the last (0: none)")
	columns := fs.String("columns", "", "the feature columns, comma-separated: numbers (1 the first, -1 the last) or header names; other columns are not read (default: every column but the label)")
	save := fs.String("save", "", "fit: write the fitted model to this file (a NumPy .npz archive; kdual kpca transform --model reads it)")
	modelPath := fs.String("model", "", "transform: the model file written by fit --save; --input is then the new data to project")
	quiet := fs.Bool("quiet", false, "nothing on stderr but errors: no progress line (otherwise shown when stderr is a terminal and the fit takes over 2 s), no line on what was read or planned")
	approxName := fs.String("approx", "", "approximate the kernel: nystrom (with --landmarks) or rff (random Fourier features, gaussian kernel, with --features); memory O(n·m), never n×n")
	landmarks := fs.Int("landmarks", 0, "--approx nystrom: the most landmarks m (default min(1000, n))")
	sampler := fs.String("sampler", "rpcholesky", "--approx nystrom: how landmarks are chosen, rpcholesky or uniform")
	traceTol := fs.Float64("trace-tol", 0, "--approx nystrom: stop adding landmarks once the relative trace error tr(K − K̂)/tr(K) is at most this (0: use all m)")
	features := fs.Int("features", 0, "--approx rff: the random features (default 1000)")
	approxPrec := fs.String("approx-precision", "float64", "--approx nystrom: float32 computes kernel rows by sgemm on a float32 copy of the data and stores the features in float32 (half the memory, about twice the rate; entries rounded to float32), float64 otherwise")
	mpiTimeout := fs.Duration("mpi-timeout", 0, "with --mpi: end the job when a rank waits longer than this in one collective (a rank stopped or hung); 0: max(5m, 10 s per 10⁹·n²·d/ranks multiply-adds)")
	useMPI := fs.Bool("mpi", false, "run across the ranks of mpirun (rows split by rank; --operator auto, float64, float32 or matrix-free, planned per rank; --solver auto, block, lanczos or lbfgs); only rank 0 writes")
	if cmd == "transform" && helpAsked(args) {
		return transformHelp(fs)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if cmd == "fit" && *modelPath != "" {
		return usagef("--model is for kdual kpca transform")
	}
	if cmd == "transform" && *save != "" {
		return usagef("--save is for kdual kpca fit")
	}
	csvOpt, err := csvOptions(*delimiter, *labelColumn, *maxRows)
	if *columns != "" {
		csvOpt.Columns = strings.Split(*columns, ",")
	}
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quiet {
		diag = io.Discard
	}
	switch *format {
	case "csv":
	case "json":
		if *jsonOut == "" {
			*jsonOut = "-"
		}
	default:
		return usagef("--format %q: want csv or json", *format)
	}
	if set["format"] {
		fmt.Fprintln(diag, "kdual: warning: --format is deprecated and will be removed; use --json FILE or --json - for JSON (CSV scores are the default)")
	}
	if set["n"] && !set["data"] {
		return usagef("--n is for --data (the built-in data); --input reads every row (--max-rows bounds them)")
	}
	if cmd == "transform" && *modelPath != "" {
		// The model fixes everything the fit chose: a fit flag here would
		// be ignored, so it is an error.
		for f := range fitOnlyFlags {
			if set[f] {
				return usagef("--%s has no effect with --model (the saved model fixes the fit); leave it out", f)
			}
		}
		return kpcaTransformModel(*modelPath, *input, csvOpt, *scale, *jsonOut, *inverse, stdout)
	}
	if cmd == "transform" {
		fmt.Fprintln(diag, "kdual: warning: transform without --model fits the model again on --input; fit once with --save and transform with --model")
	}
	if cmd == "fit" && *apply != "" {
		return usagef("--apply projects new data: use kdual kpca transform")
	}
	opKind, budget, prec, err := kpcaOperatorFlags(*operator, *memory, *products)
	if err != nil {
		return err
	}
	if *plotOut != "" && *s < 2 {
		return usagef("--plot draws two components: give --components 2 or more")
	}
	x, labels, err := readKPCAData(*input, *data, *nData, *seed, csvOpt)
	if err != nil {
		return err
	}
	x.Scale(*scale, x)
	k, gram, err := kpcaKernelOf(*kern, set, *solver, *bw, *gamma, *degree, *coef0, x)
	if err != nil {
		return err
	}
	if gram == nil && !k.PSD() {
		// The library refuses these too (kpca.KPCA.Fit); said here as
		// the flags that were given.
		switch {
		case *approxName != "":
			return usagef("--approx %s: the %v kernel is not positive semi-definite; approximations need one", *approxName, k.Kind)
		case *solver == "lbfgs" || *solver == "dca" || *solver == "randomized":
			return usagef("--solver %s: the %v kernel is not positive semi-definite; use --solver dense, lanczos or block", *solver, k.Kind)
		}
	}
	sv, err := kpcaSolverWithLoss(*solver, *tol, *seed, *loss, *param, *relative)
	if err != nil {
		return err
	}
	if *useMPI {
		if err := mpiFlagsOK(cmd, set, *mpiTimeout); err != nil {
			return err
		}
		return kpcaFitMPI(mpiJob{x: x, kernel: k, s: *s, solver: *solver, solverValue: sv, tol: *tol, seed: *seed, center: !*noCenter,
			operator: *operator, products: *products, json: *jsonOut, memory: budget, timeout: *mpiTimeout}, stdout)
	}
	if set["mpi-timeout"] {
		return usagef("--mpi-timeout is for --mpi")
	}
	am, err := approxMethod(set, *approxName, x.RawMatrix().Rows, *landmarks, *sampler, *traceTol, *features, *seed, *approxPrec)
	if err != nil {
		return err
	}
	if am != nil && (set["operator"] || set["memory"] || set["products"]) {
		return usagef("--operator, --memory and --products choose the exact kernel operator: not with --approx")
	}
	if (set["alpha"] && !*fitInverse) || *inverse && cmd == "fit" {
		return usagef("--alpha goes with --fit-inverse, --inverse with transform --model")
	}
	if *fitInverse && !(*alpha > 0) {
		return usagef("--alpha %g: want α > 0", *alpha)
	}
	m := &kpca.KPCA{Components: *s, Kernel: k, Solver: sv, NoCenter: *noCenter,
		Operator: opKind, MemoryBudget: budget, Products: prec, Approx: am, FitInverse: *fitInverse, Alpha: *alpha}
	update, endLine := progressLine(*quiet)
	if update != nil {
		m.Progress = func(p kpca.Progress) {
			stage := p.Stage
			if stage == "solve" {
				stage = "solve (" + sv.Name() + "), passes"
			}
			update(stage, p.Done, p.Total)
		}
	}
	if n, _ := x.Dims(); am == nil && int64(n)*int64(n) >= 1<<28 {
		// An exact kernel of this size takes gigabytes: return what
		// reading the data left behind first, so the peak memory counts
		// the data and the kernel only.
		debug.FreeOSMemory()
	}
	start := time.Now()
	if gram != nil {
		err = m.FitGramContext(runCtx, gram)
	} else {
		err = m.FitContext(runCtx, x)
	}
	endLine()
	if err != nil {
		return err
	}
	fitSeconds := time.Since(start).Seconds()
	info := m.Info()
	fmt.Fprintf(diag, "kdual: operator %s: %s\n", info.Operator, info.PlanReason)
	if *plotOut != "" {
		if err := plotKPCA(*plotOut, m, x, labels, k); err != nil {
			return err
		}
	}
	var checked map[string]any
	if *check {
		if checked, err = checkKPCAResiduals(m, x); err != nil {
			return err
		}
	}
	if *save != "" {
		if err := modelfile.WriteFile(*save, m.Save); err != nil {
			return err
		}
		fmt.Fprintf(diag, "kdual: model written to %s\n", *save)
	}
	z, _ := m.Scores()
	if cmd == "transform" && *apply != "" {
		csvOpt.MaxRows = 0
		y, err := readTable(*apply, csvOpt)
		if err != nil {
			return err
		}
		y.Scale(*scale, y)
		if z, err = m.Transform(y); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		vals, _ := m.Eigenvalues()
		return writeJSON(*jsonOut, stdout, map[string]any{"eigenvalues": vals, "sigma": k.Bandwidth(), "info": info, "scores": rowsOf(z),
			"operator": info.Operator, "plan_reason": info.PlanReason, "kernel_seconds": info.KernelSeconds,
			"solve_seconds": info.SolveSeconds, "fit_seconds": fitSeconds, "peak_rss_bytes": bigmem.PeakRSS(),
			"products": prec.String(), "check": checked, "n": x.RawMatrix().Rows, "approx": info.Approx,
			"status": info.Status.Code, "stopping_test": info.Status.Test})
	}
	writeCSV(stdout, z)
	return nil
}

// writeCSV prints the rows of z, every value in the shortest form that
// reads back exactly.
func writeCSV(w io.Writer, z *mat.Dense) {
	r, c := z.Dims()
	for i := 0; i < r; i++ {
		parts := make([]string, c)
		for j := 0; j < c; j++ {
			parts[j] = strconv.FormatFloat(z.At(i, j), 'g', -1, 64)
		}
		fmt.Fprintln(w, strings.Join(parts, ","))
	}
}

// rowsOf returns the rows of z as slices (for JSON).
func rowsOf(z *mat.Dense) [][]float64 {
	r, c := z.Dims()
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = append([]float64(nil), z.RawRowView(i)[:c]...)
	}
	return rows
}

// kpcaTransformModel projects the rows of input with a saved model; JSON
// to jsonOut when it is not "".
func kpcaTransformModel(modelPath, input string, csvOpt dataset.CSVOptions, scale float64, jsonOut string, inverse bool, stdout io.Writer) error {
	if input == "" {
		return usagef("--input is required: the new data to project")
	}
	f, err := os.Open(modelPath)
	if err != nil {
		return err
	}
	m, err := kpca.Load(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	x, err := readTable(input, csvOpt)
	if err != nil {
		return err
	}
	if inverse {
		xr, err := m.InverseTransform(x)
		if err != nil {
			return fmt.Errorf("%s: %w", modelPath, err)
		}
		if scale != 1 {
			xr.Scale(1/scale, xr)
		}
		if jsonOut != "" {
			return writeJSON(jsonOut, stdout, map[string]any{"preimages": rowsOf(xr), "model": modelPath, "n": xr.RawMatrix().Rows})
		}
		writeCSV(stdout, xr)
		return nil
	}
	x.Scale(scale, x)
	var z *mat.Dense
	if gramModel(modelPath) {
		z, err = m.TransformGram(x) // rows of the kernel against the training points
	} else {
		z, err = m.Transform(x)
	}
	if err != nil {
		return err
	}
	if jsonOut != "" {
		vals, _ := m.Eigenvalues()
		return writeJSON(jsonOut, stdout, map[string]any{"eigenvalues": vals, "scores": rowsOf(z), "model": modelPath, "n": z.RawMatrix().Rows})
	}
	writeCSV(stdout, z)
	return nil
}

func floatList(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, usagef("%q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func writeJSONOrTable(stdout io.Writer, jsonOut string, v any, table func()) error {
	if jsonOut != "" {
		return writeJSON(jsonOut, stdout, v)
	}
	table()
	return nil
}

func runKPCARobust(args []string, stdout io.Writer) error {
	fs := newFlags("kpca robust")
	taus := fs.String("tau", "10,25,50,75,100", "noise levels τ")
	seeds := fs.Int("seeds", 20, "seeds averaged")
	s := fs.Int("components", 4, "components s (the paper does not give it; 4 = d for Iris)")
	omega := fs.Float64("omega", 0.08, "contaminated fraction ω")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - (or --json alone) for standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	ts, err := floatList(*taus)
	if err != nil {
		return err
	}
	rows, err := bench.RobustIris(runCtx, ts, *seeds, *s, *omega)
	if err != nil {
		return err
	}
	return writeJSONOrTable(stdout, *jsonOut, rows, func() {
		fmt.Fprintf(stdout, "Iris, ω=%g, s=%d, means over %d seeds: test MSE in input space (pre-images) | test error in feature space\n", *omega, *s, *seeds)
		fmt.Fprintf(stdout, "| τ | square | H²κ (0.8κmax) | H¹κ (0.6κmax) | feature: square | H²κ | H¹κ |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(stdout, "| %g | %.4f | %.4f | %.4f | %.5f | %.5f | %.5f |\n", r.Tau, r.Square, r.Huber2, r.Huber1,
				r.FeatureSquare, r.FeatureHuber2, r.FeatureHuber1)
		}
	})
}

func runKPCASparse(args []string, stdout io.Writer) error {
	fs := newFlags("kpca sparse")
	n := fs.Int("n", 1000, "points")
	d := fs.Int("d", 20, "dimension")
	s := fs.Int("components", 5, "components s")
	eps := fs.String("eps", "0,0.05,0.1,0.15,0.2,0.25,0.3,0.4", "ε grid")
	seed := fs.Uint64("seed", 1, "seed")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - (or --json alone) for standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	es, err := floatList(*eps)
	if err != nil {
		return err
	}
	rows, err := bench.SparseRows(runCtx, *n, *d, *s, es, *seed)
	if err != nil {
		return err
	}
	return writeJSONOrTable(stdout, *jsonOut, rows, func() {
		fmt.Fprintf(stdout, "ℓ²_ε, n=%d, d=%d, s=%d (feature-space reconstruction of the training points)\n", *n, *d, *s)
		fmt.Fprintf(stdout, "| ε | zero rows of H | error ratio to square loss | variance captured vs square loss |\n|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(stdout, "| %g | %.1f%% | %.4f | %.4f |\n", r.Eps, 100*r.ZeroRows, r.ErrorRate, r.Captured)
		}
	})
}

// checkKPCAResiduals measures every pair's residual against the exact
// float64 kernel (--check) and says the worst on diag.
func checkKPCAResiduals(m *kpca.KPCA, x *mat.Dense) (map[string]any, error) {
	t := time.Now()
	res, l1, err := m.CheckResidualsWith(x)
	if err != nil {
		return nil, err
	}
	worst := 0.0
	for _, r := range res {
		worst = max(worst, r/l1)
	}
	fmt.Fprintf(diag, "kdual: check: max ‖K v − λ v‖/λ₁ = %.2e over %d pairs (float64 kernel, %.1f s)\n", worst, len(res), time.Since(t).Seconds())
	return map[string]any{"residuals": res, "lambda1": l1, "max_relative": worst, "seconds": time.Since(t).Seconds()}, nil
}

// plotKPCA draws the first two components of the fit (--plot).
func plotKPCA(path string, m *kpca.KPCA, x *mat.Dense, labels []string, k kernel.Kernel) error {
	scores, err := m.Scores()
	if err != nil {
		return err
	}
	n, d := x.Dims()
	title := fmt.Sprintf("kernel PCA of %d×%d, %v kernel: the first two components", n, d, k.Kind)
	if err := bench.PlotScores(path, scores, labels, title); err != nil {
		return err
	}
	fmt.Fprintf(diag, "kdual: plot written to %s\n", path)
	return nil
}
