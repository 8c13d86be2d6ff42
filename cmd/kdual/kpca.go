package main

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/sbinet/npyio/npy"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
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
	kern := fs.String("kernel", "gaussian", "kernel: linear, gaussian (median σ by default), laplace (exp(−‖x−y‖₂/σ)), polynomial ((γ⟨x,y⟩ + c₀)^degree, c₀ = 0 by default); scikit-learn's names take scikit-learn's defaults: rbf (γ = 1/d), poly (γ = 1/d, degree 3, c₀ = 1); precomputed: --input is the n×n kernel matrix (transform --model: the rows of the kernel against the training points)")
	bw := fs.String("sigma", "median", "bandwidth σ of the gaussian and laplace kernels: median, paper or a number")
	alias(fs, "bandwidth", "sigma")
	gamma := fs.Float64("gamma", 0, "scikit-learn's γ: exp(−γ‖x−y‖²) for gaussian/rbf (instead of --sigma: σ = 1/√(2γ)), exp(−γ‖x−y‖₂) for laplace, (γ⟨x,y⟩ + c₀)^degree for polynomial/poly (default 1/d)")
	degree := fs.Int("degree", 3, "polynomial/poly: the degree")
	coef0 := fs.Float64("coef0", 0, "polynomial/poly: c₀ (default 0 for polynomial, 1 for poly as in scikit-learn)")
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
	if *useMPI {
		if err := mpiFlagsOK(cmd, set, *mpiTimeout); err != nil {
			return err
		}
		return kpcaFitMPI(mpiJob{x: x, kernel: k, s: *s, solver: *solver, tol: *tol, seed: *seed, center: !*noCenter,
			operator: *operator, products: *products, json: *jsonOut, memory: budget, timeout: *mpiTimeout}, stdout)
	}
	if set["mpi-timeout"] {
		return usagef("--mpi-timeout is for --mpi")
	}
	sv, err := kpcaSolverWithLoss(*solver, *tol, *seed, *loss, *param, *relative)
	if err != nil {
		return err
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

// kpcaSolver is the command line's name → solver table: the one place
// where solvers have names to be looked up.
func kpcaSolver(name string, tol float64, seed uint64, loss kpca.Loss) (kpca.Solver, error) {
	if tol < 0 || math.IsNaN(tol) || math.IsInf(tol, 0) {
		return nil, usagef("--tol %g: want a finite tolerance ≥ 0 (0: the solver's default)", tol)
	}
	switch name {
	case "auto":
		return kpca.Eigen{Solver: eig.Auto{Tol: tol, Seed: seed}}, nil
	case "dense":
		return kpca.Eigen{Solver: eig.DenseSolver{}}, nil
	case "lanczos":
		return kpca.Eigen{Solver: eig.Lanczos{Tol: tol, Seed: seed}}, nil
	case "block":
		return kpca.Eigen{Solver: eig.BlockKrylov{Tol: tol, Seed: seed}}, nil
	case "randomized":
		return kpca.Eigen{Solver: eig.Randomized{Tol: tol, Seed: seed}}, nil
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

// approxMethod reads the approximation flags: nil without --approx; a
// flag of one method given with another (or none) is a usage error.
func approxMethod(set map[string]bool, name string, n, landmarks int, sampler string, traceTol float64, features int, seed uint64, precision string) (approx.Method, error) {
	nystromFlags, rffFlags := []string{"landmarks", "sampler", "trace-tol", "approx-precision"}, []string{"features"}
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
		return approx.Nystrom{Rank: landmarks, Sampler: smp, TraceTol: traceTol, Seed: seed, ResidualSample: 1000,
			Float32: precision == "float32"}, nil
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

// isModelFile reports whether path is a .npz archive holding header.npy,
// as every kdual model file does (data archives hold arrays only).
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

// fitOnlyFlags are kpca fit's flags that a saved model fixes: with
// transform --model they are errors, and transform -h does not list them.
var fitOnlyFlags = map[string]bool{"components": true, "kernel": true, "sigma": true, "bandwidth": true, "gamma": true,
	"solver": true, "loss": true, "param": true, "relative": true, "no-center": true, "tol": true, "seed": true,
	"operator": true, "memory": true, "products": true, "check": true, "save": true, "approx": true, "landmarks": true,
	"sampler": true, "trace-tol": true, "features": true, "approx-precision": true, "mpi": true, "mpi-timeout": true,
	"data": true, "n": true, "apply": true, "plot": true, "start-out": true, "data-out": true,
	"fit-inverse": true, "alpha": true, "degree": true, "coef0": true}

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

// cliKernel reads --kernel and its parameters. kdual's names keep kdual's
// defaults (gaussian and laplace: the median σ; polynomial: c₀ = 0);
// scikit-learn's names take scikit-learn's (rbf: γ = 1/d; poly: γ = 1/d,
// degree 3, c₀ = 1). scikit-learn's laplacian is exp(−γ‖x − y‖₁), an L1
// form kdual does not have: it is refused rather than read as laplace.
func cliKernel(name string, set map[string]bool, bw string, gamma float64, degree int, coef0 float64, x *mat.Dense) (kernel.Kernel, error) {
	if name == "laplacian" {
		return kernel.Kernel{}, usagef("--kernel laplacian: scikit-learn's laplacian is exp(−γ‖x−y‖₁) (an L1 distance), which kdual does not have; kdual's laplace is exp(−‖x−y‖₂/σ)")
	}
	kind, err := kernel.ParseKind(name)
	if err != nil {
		return kernel.Kernel{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	sklearn := name == "rbf" || name == "poly"
	k := kernel.Kernel{Kind: kind}
	if (set["degree"] || set["coef0"]) && kind != kernel.Polynomial {
		return k, usagef("--degree and --coef0 are for the polynomial kernel, not %s", kind)
	}
	if set["gamma"] && (!(gamma > 0) || math.IsInf(gamma, 0)) {
		return k, usagef("--gamma %g: want a positive finite γ", gamma)
	}
	if set["gamma"] && (set["sigma"] || set["bandwidth"]) {
		return k, usagef("--gamma and --sigma both give the bandwidth: give one")
	}
	switch kind {
	case kernel.Linear:
		if set["gamma"] || set["sigma"] || set["bandwidth"] {
			return k, usagef("the linear kernel has no parameter (--gamma, --sigma)")
		}
	case kernel.Gaussian, kernel.Laplace:
		switch {
		case set["gamma"]:
			k.Gamma = gamma
		case sklearn && !set["sigma"] && !set["bandwidth"]:
			_, d := x.Dims()
			k.Gamma = 1 / float64(d) // scikit-learn's rbf default
		default:
			if k.Sigma, err = kernel.Bandwidth(bw, kind, x); err != nil {
				if errors.Is(err, kernel.ErrInvalid) && bw != "paper" && bw != "median" {
					return k, fmt.Errorf("%w: --sigma: %v", errUsage, err)
				}
				return k, err
			}
		}
	case kernel.Polynomial:
		if set["sigma"] || set["bandwidth"] {
			return k, usagef("--sigma is for the gaussian and laplace kernels, not polynomial (its scale is --gamma)")
		}
		if degree < 1 {
			return k, usagef("--degree %d: want a degree ≥ 1", degree)
		}
		k.Degree, k.Gamma, k.Coef0 = degree, gamma, coef0
		if sklearn && !set["coef0"] {
			k.Coef0 = 1 // scikit-learn's poly default
		}
	}
	return k, nil
}

// symmetricOf reads a precomputed kernel matrix: square and symmetric to
// rounding (|K_ij − K_ji| ≤ 1e-12·max|K|), its upper triangle taken.
func symmetricOf(x *mat.Dense) (*mat.SymDense, error) {
	n, c := x.Dims()
	if n != c {
		return nil, fmt.Errorf("--kernel precomputed: the input is %d×%d, want the square kernel matrix: %w", n, c, kernel.ErrInvalid)
	}
	top := 0.0
	for _, v := range x.RawMatrix().Data {
		top = math.Max(top, math.Abs(v))
	}
	g := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if d := math.Abs(x.At(i, j) - x.At(j, i)); d > 1e-12*top {
				return nil, fmt.Errorf("--kernel precomputed: K[%d,%d] and K[%d,%d] differ by %g: not symmetric: %w", i+1, j+1, j+1, i+1, d, kernel.ErrInvalid)
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
		if need, total := int64(n)*784*8, bigmem.Total(); total > 0 && need > total {
			return nil, nil, usagef("--n %d: the images would take %s as float64, more than this machine's %s", n, bigmem.Size(need), bigmem.Size(total))
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
		} else if k.Kind == kernel.Polynomial {
			flag = "--degree/--coef0"
		}
		return k, nil, fmt.Errorf("%w: %s: %v", errUsage, flag, err)
	}
	return k, nil, nil
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

// kpcaOperatorFlags reads --operator, --memory (also Go's heap limit: the
// collector works harder rather than let the heap's headroom pass the
// budget) and --products.
func kpcaOperatorFlags(operator, memory, products string) (eig.OperatorKind, int64, linalg.ProductPrecision, error) {
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
		return opKind, budget, linalg.ProductsFloat64, nil
	case "float32":
		return opKind, budget, linalg.ProductsFloat32, nil
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
