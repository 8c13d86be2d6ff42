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
