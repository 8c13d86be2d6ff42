package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/gram"
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
	fs, f := newKPCAFlags(cmd)
	if cmd == "transform" && helpAsked(args) {
		return transformHelp(fs)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	csvOpt, set, err := f.preflight(cmd, fs)
	if err != nil {
		return err
	}
	if cmd == "transform" && *f.modelPath != "" {
		return f.transformModel(set, csvOpt, stdout)
	}
	if streamed, err := f.maybeStream(cmd, set, stdout); streamed || err != nil {
		return err
	}
	if cmd == "transform" {
		fmt.Fprintln(diag, "kdual: warning: transform without --model fits the model again on --input; fit once with --save and transform with --model")
	}
	opKind, budget, prec, err := kpcaOperatorFlags(*f.operator, *f.memory, *f.products)
	if err != nil {
		return err
	}
	if *f.plotOut != "" && *f.s < 2 {
		return usagef("--plot draws two components: give --components 2 or more")
	}
	x, labels, err := readKPCAData(*f.input, *f.data, *f.nData, *f.seed, csvOpt)
	if err != nil {
		return err
	}
	scaleData(x, *f.scale)
	k, gram, err := kpcaKernelOf(*f.kern, set, *f.solver, *f.bw, *f.gamma, *f.degree, *f.coef0, x)
	if err != nil {
		return err
	}
	if err := f.indefiniteOK(k, gram != nil); err != nil {
		return err
	}
	sv, err := kpcaSolverWithLoss(*f.solver, *f.tol, *f.seed, *f.loss, *f.param, *f.relative)
	if err != nil {
		return err
	}
	if *f.useMPI {
		if err := mpiFlagsOK(cmd, set, *f.mpiTimeout); err != nil {
			return err
		}
		return kpcaFitMPI(mpiJob{x: x, kernel: k, s: *f.s, solver: *f.solver, solverValue: sv, tol: *f.tol, seed: *f.seed, center: !*f.noCenter,
			operator: *f.operator, products: *f.products, json: *f.jsonOut, memory: budget, timeout: *f.mpiTimeout}, stdout)
	}
	if set["mpi-timeout"] {
		return usagef("--mpi-timeout is for --mpi")
	}
	am, err := approxMethod(set, *f.approxName, x.RawMatrix().Rows, *f.landmarks, *f.sampler, *f.traceTol, *f.features, *f.seed, *f.approxPrec, *f.sample)
	if err != nil {
		return err
	}
	if err := f.fitFlagsOK(cmd, set, am != nil); err != nil {
		return err
	}
	m := &kpca.KPCA{Components: *f.s, Kernel: k, Solver: sv, NoCenter: *f.noCenter,
		Operator: opKind, MemoryBudget: budget, Products: prec, StartRank: *f.startRank, Approx: am, FitInverse: *f.fitInverse, Alpha: *f.alpha}
	m.InverseKernel = rbfInverseKernel(*f.kern, set, *f.s)
	update, endLine := progressLine(*f.quiet)
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
	if *f.plotOut != "" {
		if err := plotKPCA(*f.plotOut, m, x, labels, k); err != nil {
			return err
		}
	}
	return f.report(cmd, m, x, csvOpt, k, prec, fitSeconds, stdout)
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
// to jsonOut when it is not "". The data are multiplied by the scale the
// model was fitted with (its InputScale, from fit --scale); a --scale
// given (scaleSet) must agree with it.
func kpcaTransformModel(modelPath, input string, csvOpt dataset.CSVOptions, scale float64, scaleSet bool, jsonOut string, inverse bool, stdout io.Writer) error {
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
	if saved := m.InputScale; saved != 0 && saved != 1 {
		if scaleSet && scale != saved {
			return usagef("--scale %g: the model was fitted on data scaled by %g (leave --scale out to use it)", scale, saved)
		}
		scale = saved
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
			scaleData(xr, 1/scale)
		}
		if jsonOut != "" {
			return writeJSON(jsonOut, stdout, map[string]any{"preimages": rowsOf(xr), "model": modelPath, "n": xr.RawMatrix().Rows})
		}
		writeCSV(stdout, xr)
		return nil
	}
	scaleData(x, scale)
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

// preflight checks the flags that need no data — --model, --save and
// --apply with the right command, --format, --n with --data — and returns the CSV
// options and the set of flags given; --quiet silences the notes.
func (f *kpcaFlags) preflight(cmd string, fs *flag.FlagSet) (dataset.CSVOptions, map[string]bool, error) {
	if cmd == "fit" && *f.modelPath != "" {
		return dataset.CSVOptions{}, nil, usagef("--model is for kdual kpca transform")
	}
	if cmd == "transform" && *f.save != "" {
		return dataset.CSVOptions{}, nil, usagef("--save is for kdual kpca fit")
	}
	if cmd == "fit" && *f.apply != "" {
		return dataset.CSVOptions{}, nil, usagef("--apply projects new data: use kdual kpca transform")
	}
	if s := *f.scale; s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return dataset.CSVOptions{}, nil, usagef("--scale %g: want a finite factor other than 0", s)
	}
	csvOpt, err := csvOptions(*f.delimiter, *f.labelColumn, *f.maxRows)
	if *f.columns != "" {
		csvOpt.Columns = strings.Split(*f.columns, ",")
	}
	if err != nil {
		return csvOpt, nil, err
	}
	set := givenFlags(fs)
	if *f.quiet {
		diag = io.Discard
	}
	switch *f.format {
	case "csv":
	case "json":
		if *f.jsonOut == "" {
			*f.jsonOut = "-"
		}
	default:
		return dataset.CSVOptions{}, nil, usagef("--format %q: want csv or json", *f.format)
	}
	if set["format"] {
		fmt.Fprintln(diag, "kdual: warning: --format is deprecated and will be removed; use --json FILE or --json - for JSON (CSV scores are the default)")
	}
	if set["n"] && !set["data"] {
		return dataset.CSVOptions{}, nil, usagef("--n is for --data (the built-in data); --input reads every row (--max-rows bounds them)")
	}
	return csvOpt, set, nil
}

// indefiniteOK refuses, as the flags given, what the library refuses for
// a kernel that is not positive semi-definite (kpca.KPCA.Fit): the
// approximations and the lbfgs, dca and randomized solvers.
func (f *kpcaFlags) indefiniteOK(k kernel.Kernel, precomputed bool) error {
	if precomputed || k.PSD() {
		return nil
	}
	switch {
	case *f.approxName != "":
		return usagef("--approx %s: the %v kernel is not positive semi-definite; approximations need one", *f.approxName, k.Kind)
	case *f.solver == "lbfgs" || *f.solver == "dca" || *f.solver == "randomized":
		return usagef("--solver %s: the %v kernel is not positive semi-definite; use --solver dense, lanczos or block", *f.solver, k.Kind)
	}
	return nil
}

// report writes what a fit gives: the residual check, the model file, the
// scores (of --apply's data for transform) as CSV or JSON.
func (f *kpcaFlags) report(cmd string, m *kpca.KPCA, x *mat.Dense, csvOpt dataset.CSVOptions, k kernel.Kernel, prec gram.ProductPrecision, fitSeconds float64, stdout io.Writer) error {
	info := m.Info()
	var checked map[string]any
	var err error
	if *f.check {
		if checked, err = checkKPCAResiduals(m, x); err != nil {
			return err
		}
	}
	if *f.save != "" {
		if *f.scale != 1 {
			m.InputScale = *f.scale // transform --model scales new data the same way
		}
		if err := modelfile.WriteFile(*f.save, m.Save); err != nil {
			return err
		}
		fmt.Fprintf(diag, "kdual: model written to %s\n", *f.save)
	}
	z, _ := m.Scores()
	if cmd == "transform" && *f.apply != "" {
		csvOpt.MaxRows = 0
		y, err := readTable(*f.apply, csvOpt)
		if err != nil {
			return err
		}
		scaleData(y, *f.scale)
		if z, err = m.Transform(y); err != nil {
			return err
		}
	}
	if *f.jsonOut != "" {
		vals, _ := m.Eigenvalues()
		return writeJSON(*f.jsonOut, stdout, map[string]any{"eigenvalues": vals, "sigma": k.Bandwidth(), "info": info, "scores": rowsOf(z),
			"operator": info.Operator, "plan_reason": info.PlanReason, "kernel_seconds": info.KernelSeconds,
			"solve_seconds": info.SolveSeconds, "fit_seconds": fitSeconds, "peak_rss_bytes": bigmem.PeakRSS(),
			"products": prec.String(), "check": checked, "n": x.RawMatrix().Rows, "approx": info.Approx,
			"status": info.Status.Code, "stopping_test": info.Status.Test})
	}
	writeCSV(stdout, z)
	return nil
}

// transformModel is kdual kpca transform --model: the model fixes
// everything the fit chose, so a fit flag here would be ignored and is an
// error.
func (f *kpcaFlags) transformModel(set map[string]bool, csvOpt dataset.CSVOptions, stdout io.Writer) error {
	for name := range fitOnlyFlags {
		if set[name] {
			return usagef("--%s has no effect with --model (the saved model fixes the fit); leave it out", name)
		}
	}
	return kpcaTransformModel(*f.modelPath, *f.input, csvOpt, *f.scale, set["scale"], *f.jsonOut, *f.inverse, stdout)
}

// fitFlagsOK refuses flags that would have no effect: the exact
// operator's with --approx, --start-rank with a solver other than auto or
// an operator other than matrix-free (or auto, which may plan it), --alpha
// without --fit-inverse, --inverse on fit, a non-positive α.
func (f *kpcaFlags) fitFlagsOK(cmd string, set map[string]bool, approximate bool) error {
	if approximate && (set["operator"] || set["memory"] || set["products"] || set["start-rank"]) {
		return usagef("--operator, --memory, --products and --start-rank choose the exact kernel operator and its solver: not with --approx")
	}
	if set["start-rank"] {
		switch {
		case *f.solver != "auto":
			return usagef("--start-rank starts the auto solver on the matrix-free operator: not with --solver %s", *f.solver)
		case *f.operator != "auto" && *f.operator != "matrix-free":
			return usagef("--start-rank starts the auto solver on the matrix-free operator: not with --operator %s", *f.operator)
		}
	}
	if (set["alpha"] && !*f.fitInverse) || *f.inverse && cmd == "fit" {
		return usagef("--alpha goes with --fit-inverse, --inverse with transform --model")
	}
	if *f.fitInverse && !(*f.alpha > 0) {
		return usagef("--alpha %g: want α > 0", *f.alpha)
	}
	return nil
}
