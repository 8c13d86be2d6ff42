package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/status"
)

func runBench(args []string, stdout io.Writer) error {
	if len(args) >= 1 {
		if sub, ok := benchSubcommands[args[0]]; ok {
			return sub(args[1:], stdout)
		}
	}
	const benchUsage = "kdual bench kpca [flags] | kdual bench small [flags] | kdual bench approx [flags] | kdual bench approx-report [flags] | kdual bench lapack [flags] | kdual bench compare OURS.json PEERS.json | kdual bench figures [flags]"
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(diag, "usage: "+benchUsage)
		return flag.ErrHelp
	}
	if len(args) == 0 || args[0] != "kpca" {
		return usagef(benchUsage)
	}
	fs := newFlags("bench kpca")
	p := &bench.KPCAProblem{}
	fs.StringVar(&p.Data, "data", "randn", "data: randn, synth1, fashion, or decay (the paper's Fig. 1 matrix, with --decay-c)")
	fs.IntVar(&p.N, "n", 2000, "number of points")
	fs.IntVar(&p.D, "d", 256, "dimension (randn)")
	fs.IntVar(&p.S, "components", 20, "number of components s")
	alias(fs, "s", "components")
	fs.Float64Var(&p.Decay, "decay-c", 0.002, "decay: c of the spectrum e^{−c·i} (the paper's Fig. 1 uses 0.002)")
	fs.StringVar(&p.Kernel, "kernel", "laplace", "kernel: laplace or gaussian")
	fs.StringVar(&p.Bandwidth, "sigma", "paper", "bandwidth σ: paper, median or a number")
	alias(fs, "bandwidth", "sigma")
	fs.BoolVar(&p.Center, "center", false, "centre the kernel matrix (the papers' code does not)")
	fs.BoolVar(&p.Float32, "float32", false, "store the kernel matrix in float32 (the same as --operator float32)")
	fs.StringVar(&p.Operator, "operator", "auto", "kernel operator: auto (planned from n, d, s, the smallest δ and --memory), float64, float32 or matrix-free")
	memory := fs.String("memory", "", "memory budget for the planner, e.g. 8GiB (default: the memory available)")
	fs.StringVar(&p.Products, "products", "float64", "inner products of the float32 and matrix-free operators: float64 or float32 (the float32 operator then also multiplies blocks of more than six vectors in float32)")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the data and the random starts")
	deltas := fs.String("delta", "1e-2,1e-4", "accuracy targets δ (η < δ), comma-separated")
	solvers := fs.String("solvers", "lbfgs,lanczos,randomized,block", "solvers: lbfgs, lanczos, randomized, block, dense (top s), dense-full (all pairs, the paper's SVD column, timed once)")
	repeat := fs.Int("repeat", 5, "timed repeats (median reported)")
	startOut := fs.String("start-out", "", "write the L-BFGS start H₀ (n×s float64, little-endian, row-major) to FILE")
	dataOut := fs.String("data-out", "", "write the n×d data matrix (float64, little-endian, row-major) to FILE, for peers")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	quiet := fs.Bool("quiet", false, "no progress line on stderr (shown only when stderr is a terminal and the run takes over 2 s)")
	f64Time := fs.Bool("float64-time", false, "when the operator is float32, also time every row on the float64 operator, built after the float32 one is released (peak memory then counts the float64 matrix)")
	useMPI := fs.Bool("mpi", false, "run across the ranks of mpirun (operator split by rows, planned per rank; --solvers lbfgs, lanczos, block); only rank 0 writes")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if err := checkBenchKPCA(fs, p, *repeat, *solvers); err != nil {
		return err
	}
	ds, err := parseDeltas(*deltas)
	if err != nil {
		return err
	}
	p.DataOut = *dataOut
	mem, err := parseBytes(*memory)
	if err != nil {
		return err
	}
	p.Memory = mem
	p.Tol = ds[0]
	for _, d := range ds {
		p.Tol = min(p.Tol, d)
	}
	if *useMPI {
		return benchKPCAWithMPI(fs, p, mpiBench{deltas: ds, repeat: *repeat, json: *jsonOut, memory: mem}, *solvers, stdout)
	}
	b, err := p.Build()
	if err != nil {
		return err
	}
	update, endLine := progressLine(*quiet)
	defer endLine()
	var list []string
	for _, solver := range strings.Split(*solvers, ",") {
		if solver = strings.TrimSpace(solver); solver != "" {
			list = append(list, solver)
		}
	}
	rows, err := benchKPCARows(p, b, list, ds, *repeat, *startOut, update)
	if err != nil {
		return err
	}
	rep := bench.Report{Results: rows}
	if *f64Time && p.Operator == "float32" {
		// The same rows on the float64 operator, built once the float32
		// one is gone (both at once would need their sum of memory).
		eig.Release(b.Op)
		b = nil
		if err := benchFloat64Time(p, list, ds, *repeat, update, &rep); err != nil {
			return err
		}
	}
	endLine()
	p.PeakRSSGB = bench.PeakRSSGB()
	if *jsonOut == "" {
		printBenchKPCA(stdout, p, &rep)
		return nil
	}
	rep.Problem = *p
	return writeJSON(*jsonOut, stdout, rep)
}

// benchKPCARows runs every solver of list at every δ of ds on the built
// problem b and returns the rows, in that order.
func benchKPCARows(p *bench.KPCAProblem, b *bench.Built, list []string, ds []float64, repeat int, startOut string,
	update func(string, int64, int64)) ([]bench.KPCAResult, error) {
	var rows []bench.KPCAResult
	for si, solver := range list {
		for di, d := range ds {
			if runCtx.Err() != nil {
				return nil, status.Cancelled(context.Cause(runCtx), fmt.Sprintf("before %s at δ = %g", solver, d))
			}
			if update != nil {
				update(fmt.Sprintf("bench kpca, next row %s δ = %g:", solver, d), int64(si*len(ds)+di), int64(len(list)*len(ds)))
			}
			var r bench.KPCAResult
			var err error
			searches := map[string]bench.EigenSearch{"lanczos": bench.SearchLanczos, "block": bench.SearchBlock,
				"randomized": bench.SearchRandomized, "dense": bench.SearchDense, "dense-full": bench.SearchDenseFull}
			switch search, ok := searches[solver]; {
			case solver == "lbfgs":
				r, err = bench.RunLBFGS(p, b, d, repeat, startOut)
			case !ok:
				return nil, usagef("--solvers: %q is not one of lbfgs, lanczos, randomized, block, dense, dense-full", solver)
			case solver == "dense-full":
				// Minutes at the papers' sizes, and the same for every δ:
				// timed once, as the peers' NumPy eigh.
				r, err = bench.RunEigen(search, p, b, d, 1)
			default:
				r, err = bench.RunEigen(search, p, b, d, repeat)
			}
			if err != nil {
				return nil, err
			}
			r.Operator = p.Operator
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// printBenchKPCA writes a bench kpca report as text.
func printBenchKPCA(stdout io.Writer, p *bench.KPCAProblem, rep *bench.Report) {
	fmt.Fprintf(stdout, "%s n=%d d=%d s=%d %s σ=%.4g center=%v operator=%s (%s) products=%s gram %.2fs d_opt=%.6g peak memory %.2f GB\n",
		p.Data, p.N, p.D, p.S, p.Kernel, p.Sigma, p.Center, p.Operator, p.PlanReason, p.Products, p.GramSecs, p.DOpt, p.PeakRSSGB)
	f64 := p.Float64GramSecs > 0
	if f64 {
		fmt.Fprintf(stdout, "the same rows on the float64 operator (gram %.2fs): float64 seconds and eta; eta64: this row's answer scored on the float64 matrix\n", p.Float64GramSecs)
	}
	fmt.Fprintf(stdout, "%-11s %-7s %-9s %-9s %-7s %-8s", "solver", "delta", "seconds", "eta", "passes", "matvecs")
	if f64 {
		fmt.Fprintf(stdout, " %-9s %-9s %-9s", "f64 s", "f64 eta", "eta64")
	}
	fmt.Fprintln(stdout)
	secs := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-11s %-7g %-9s %-9.2g %-7d %-8d", r.Solver, r.Delta, secs(r.Seconds), r.Eta, r.Passes, r.MatVecs)
		if f64 {
			fmt.Fprintf(stdout, " %-9s %-9.2g %-9.2g", secs(r.Float64Seconds), r.Float64Eta, r.EtaOnFloat64)
		}
		fmt.Fprintln(stdout)
	}
}

func runBenchFigures(args []string, stdout io.Writer) error {
	fs := newFlags("bench figures")
	out := fs.String("out", "docs", "directory for the PNG and JSON files")
	n1 := fs.Int("fig1-n", 2000, "Fig. 1: matrix size")
	cs := fs.String("fig1-c", "0.002,0.005,0.01,0.02,0.05,0.1", "Fig. 1: decay rates c")
	n2 := fs.Int("fig2-n", 5000, "Fig. 2: points (randn, d = 256, Laplace kernel)")
	ss := fs.String("fig2-s", "5,10,20,40,80", "Fig. 2: numbers of components")
	delta := fs.Float64("delta", 0, "accuracy target (0: 1e-4 for Fig. 1, 1e-2 for Fig. 2)")
	seed := fs.Uint64("seed", 1, "seed")
	from := fs.String("from", "", "redraw the PNGs from an earlier figures.json instead of running")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from != "" {
		var f struct {
			Fig1 []bench.Fig1Row `json:"fig1"`
			Fig2 []bench.Fig2Row `json:"fig2"`
		}
		raw, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return err
		}
		if err := bench.PlotFig1(f.Fig1, filepath.Join(*out, "fig1_decay.png")); err != nil {
			return err
		}
		return bench.PlotFig2(f.Fig2, filepath.Join(*out, "fig2_s.png"))
	}
	cList, err := floatList(*cs)
	if err != nil {
		return err
	}
	sf, err := floatList(*ss)
	if err != nil {
		return err
	}
	var sList []int
	for _, v := range sf {
		sList = append(sList, int(v))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	d1, d2 := 1e-4, 1e-2
	if *delta > 0 {
		d1, d2 = *delta, *delta
	}
	rows1, err := bench.Fig1(*n1, 20, cList, d1, *seed, os.Stderr)
	if err != nil {
		return err
	}
	if err := bench.PlotFig1(rows1, filepath.Join(*out, "fig1_decay.png")); err != nil {
		return err
	}
	rows2, err := bench.Fig2(*n2, 256, sList, d2, 1, *seed, os.Stderr)
	if err != nil {
		return err
	}
	if err := bench.PlotFig2(rows2, filepath.Join(*out, "fig2_s.png")); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(map[string]any{"fig1": rows1, "fig1_n": *n1, "fig1_delta": d1,
		"fig2": rows2, "fig2_n": *n2, "fig2_delta": d2}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "figures.json"), raw, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/fig1_decay.png, %s/fig2_s.png, %s/figures.json\n", *out, *out, *out)
	return nil
}

func runBenchTables(args []string, stdout io.Writer) error {
	fs := newFlags("bench tables")
	kern := fs.String("kernel", "laplace", "laplace (Tables 2 and 3) or gaussian (Table 5)")
	maxN := fs.Int("max-n", 7000, "largest task size to run (60000 runs all)")
	svdMaxN := fs.Int("svd-max-n", 7000, "largest n for the full eigendecomposition column ('-' beyond)")
	deltas := fs.String("delta", "1e-2,1e-4", "accuracy targets")
	repeat := fs.Int("repeat", 1, "timed repeats (median)")
	out := fs.String("out", "", "also write TABLE.md and TABLE.json into this directory")
	if err := parse(fs, args); err != nil {
		return err
	}
	ds, err := floatList(*deltas)
	if err != nil {
		return err
	}
	rows, err := bench.Tables(bench.PaperTasks, *kern, ds, *maxN, *svdMaxN, *repeat, os.Stderr)
	if err != nil {
		return err
	}
	bench.WriteTables(stdout, rows)
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	name := filepath.Join(*out, "tables-"+*kern)
	f, err := os.Create(name + ".md")
	if err != nil {
		return err
	}
	bench.WriteTables(f, rows)
	if err := f.Close(); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name+".json", raw, 0o644)
}

// runBenchLAPACK times gonum's decompositions with gonum's LAPACK on OpenBLAS
// (kdual's lapack/gonum) or on gonum's own Go code; bench/peers/lapack.py
// runs it against NumPy/SciPy.
func runBenchLAPACK(args []string, stdout io.Writer) error {
	fs := newFlags("bench lapack")
	n := fs.Int("n", 2000, "matrix size")
	impl := fs.String("impl", "openblas", "gonum's LAPACK: openblas (kdual's lapack/gonum) or gonum (its own Go code)")
	ops := fs.String("ops", strings.Join(bench.LAPACKOps, ","), "decompositions, comma-separated: "+strings.Join(bench.LAPACKOps, ", "))
	seed := fs.Uint64("seed", 1, "seed of the random matrix")
	if err := parse(fs, args); err != nil {
		return err
	}
	var list []string
	for _, op := range strings.Split(*ops, ",") {
		if op = strings.TrimSpace(op); op != "" {
			list = append(list, op)
		}
	}
	res, err := bench.LAPACK(*n, list, *impl, *seed)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return writeJSON("-", stdout, res)
}

// mpiBench is the part of kdual bench kpca --mpi beyond the problem.
type mpiBench struct {
	solvers []string
	deltas  []float64
	repeat  int
	json    string
	memory  int64
}

// checkBenchKPCA refuses --decay-c without --data decay, --data-out with
// it (a matrix, no data), --start-out without lbfgs among the solvers, and
// sizes that make no problem.
func checkBenchKPCA(fs *flag.FlagSet, p *bench.KPCAProblem, repeat int, solvers string) error {
	set := givenFlags(fs)
	if p.Data != "decay" {
		if set["decay-c"] {
			return usagef("--decay-c is for --data decay")
		}
		p.Decay = 0
	} else if set["data-out"] {
		return usagef("--data-out writes the data matrix; --data decay is a kernel matrix with no data")
	}
	if set["start-out"] && !slices.Contains(strings.Split(strings.ReplaceAll(solvers, " ", ""), ","), "lbfgs") {
		return usagef("--start-out writes the L-BFGS start: give lbfgs among --solvers (%s)", solvers)
	}
	if p.N < 2 || p.S < 1 || p.S >= p.N || repeat < 1 {
		return usagef("need n ≥ 2, 1 ≤ s < n (--components), repeat ≥ 1")
	}
	return nil
}

// benchSubcommands are kdual bench's subcommands other than kpca.
var benchSubcommands = map[string]func([]string, io.Writer) error{
	"compare": runBenchCompare, "figures": runBenchFigures, "tables": runBenchTables, "lapack": runBenchLAPACK,
	"approx": runBenchApprox, "small": runBenchSmall, "approx-report": runBenchApproxReport,
}

// runBenchCompare is kdual bench compare OURS.json PEERS.json.
func runBenchCompare(args []string, stdout io.Writer) error {
	if len(args) != 2 {
		return usagef("kdual bench compare OURS.json PEERS.json")
	}
	ours, err := bench.ReadReport(args[0])
	if err != nil {
		return err
	}
	peers, err := bench.ReadReport(args[1])
	if err != nil {
		return err
	}
	bench.Compare(stdout, ours, peers)
	return nil
}

// parseDeltas reads --delta: positive numbers, comma-separated.
func parseDeltas(list string) ([]float64, error) {
	var ds []float64
	for _, f := range strings.Split(list, ",") {
		d, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(d > 0) {
			return nil, usagef("--delta %q: want positive numbers", f)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// benchKPCAWithMPI checks the flags kdual bench kpca --mpi takes and runs
// it (benchKPCAMPI).
func benchKPCAWithMPI(fs *flag.FlagSet, p *bench.KPCAProblem, mb mpiBench, solvers string, stdout io.Writer) error {
	set := givenFlags(fs)
	for _, f := range []string{"start-out", "data-out"} {
		if set[f] {
			return usagef("--%s is not available with --mpi", f)
		}
	}
	if p.Data == "decay" {
		return usagef("--data decay is a matrix, not data: not available with --mpi")
	}
	if p.Float32 {
		p.Operator = "float32"
	}
	if p.Operator == "" {
		p.Operator = "auto"
	}
	for _, solver := range strings.Split(solvers, ",") {
		switch solver = strings.TrimSpace(solver); solver {
		case "":
		case "lbfgs", "lanczos", "block":
			mb.solvers = append(mb.solvers, solver)
		default:
			return usagef("--solvers %q with --mpi: want lbfgs, lanczos or block", solver)
		}
	}
	if err := (mpiJob{operator: p.Operator, solver: "auto", products: p.Products}).check(); err != nil {
		return err
	}
	return benchKPCAMPI(p, mb, stdout)
}

// benchFloat64Time times the rows of rep again on the float64 operator
// (--float64-time; the float32 one released by the caller first).
func benchFloat64Time(p *bench.KPCAProblem, list []string, ds []float64, repeat int, update func(string, int64, int64), rep *bench.Report) error {
	p64 := *p
	p64.Operator, p64.Float32, p64.DataOut = "float64", false, ""
	b64, err := p64.Build()
	if err != nil {
		return fmt.Errorf("bench kpca --float64-time: %w", err)
	}
	rows64, err := benchKPCARows(&p64, b64, list, ds, repeat, "", update)
	if err != nil {
		return err
	}
	for i := range rep.Results {
		rep.Results[i].Float64Seconds, rep.Results[i].Float64Eta = rows64[i].Seconds, rows64[i].Eta
	}
	if err := bench.ScoreOn(b64.Op, p64.DOpt, rep.Results); err != nil {
		return err
	}
	p.Float64GramSecs = p64.GramSecs
	return nil
}
