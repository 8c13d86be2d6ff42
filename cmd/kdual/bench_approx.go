package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kdual/kdual/bench"
)

// runBenchApprox is `kdual bench approx`: approximate kernel PCA (Nyström
// with RPCholesky or uniform landmarks, random features) against the exact
// top components on Fashion-MNIST, or with --large N one Nyström run on N
// generated float32 images.
func runBenchApprox(args []string, stdout io.Writer) error {
	fs := newFlags("bench approx")
	n := fs.Int("n", 20000, "Fashion-MNIST images (70000: all of them)")
	ms := fs.String("m", "250,500,1000,2000", "ranks m (landmarks or random features), comma-separated")
	methods := fs.String("methods", "rpcholesky,uniform,rff", "methods: rpcholesky and uniform (Nyström landmarks), rff (random Fourier features)")
	s := fs.Int("components", 20, "components s")
	precision := fs.String("precision", "float64", "Nyström features and kernel products: float64, float32, or both (float64,float32: a row each)")
	repeat := fs.Int("repeat", 3, "timed repeats (median reported)")
	seed := fs.Uint64("seed", 1, "seed of the sampling (and of the generated images)")
	exact := fs.String("exact", "", "JSON of `kdual kpca fit --json` on the same data (eigenvalues, scores) to use as the exact solution (default: computed here)")
	exactTol := fs.Float64("exact-tol", 1e-8, "tolerance of the exact solution computed here (Lanczos)")
	vectors := fs.String("vectors-out", "", "write the exact top eigenvectors (n×s, .npy) to FILE, for the peers' angles")
	large := fs.Int("large", 0, "instead: one Nyström (RPCholesky) run on this many generated images (Fashion-MNIST, then moved copies: --images), features in float32, --m a single rank")
	images := fs.String("images", "float32", "--large: float32 (one-pixel shifts and N(0, 0.01²) noise, stored in float32) or 8bit (shifts, rotations up to 10°, N(0, 2²) noise in levels, rounded to 8 bits and stored so: exact integer kernel rows)")
	block := fs.Int("block", 0, "--large: Nyström candidates per round (0: the default, 256)")
	jsonOut := fs.String("json", "-", "write JSON to FILE, or - for standard output")
	quiet := fs.Bool("quiet", false, "no progress line on stderr")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := approxFlagsApply(fs, *large > 0); err != nil {
		return err
	}
	mlist, err := parseRanks(*ms)
	if err != nil {
		return err
	}
	if *s < 1 || *repeat < 1 {
		return usagef("--components %d, --repeat %d: want ≥ 1", *s, *repeat)
	}
	var precs []string
	for _, p := range strings.Split(*precision, ",") {
		if p = strings.TrimSpace(p); p != "float64" && p != "float32" {
			return usagef("--precision %q: want float64, float32 or both", *precision)
		}
		precs = append(precs, strings.TrimSpace(p))
	}
	update, endLine := progressLine(*quiet)
	progress := func(msg string) {
		if update != nil {
			update(msg, 0, 0)
		}
	}
	defer endLine()
	if *large > 0 {
		if len(mlist) != 1 {
			return usagef("--large takes a single --m")
		}
		if mlist[0] > *large || *s >= *large {
			return usagef("--large %d with --m %d and --components %d", *large, mlist[0], *s)
		}
		if *images != "float32" && *images != "8bit" {
			return usagef("--images %q: want float32 or 8bit", *images)
		}
		if *block < 0 {
			return usagef("--block %d: want 0 (the default) or more candidates per round", *block)
		}
		rep, err := bench.ApproxLarge(runCtx, bench.ApproxLargeConfig{N: *large, M: mlist[0], S: *s, Seed: *seed,
			Images: *images, Block: *block}, progress)
		if err != nil {
			return err
		}
		endLine()
		return writeJSON(*jsonOut, stdout, rep)
	}
	if *n < 2 || *n > 70000 {
		return usagef("--n %d: want 2 … 70000 (Fashion-MNIST; --large for more)", *n)
	}
	var mlistOK []int
	for _, m := range mlist {
		if m > *n {
			return usagef("--m %d > --n %d", m, *n)
		}
		mlistOK = append(mlistOK, m)
	}
	var list []string
	for _, f := range strings.Split(*methods, ",") {
		switch f = strings.TrimSpace(f); f {
		case "rpcholesky", "uniform", "rff":
			list = append(list, f)
		default:
			return usagef("--methods: %q, want rpcholesky, uniform or rff", f)
		}
	}
	rep, u, err := bench.Approx(bench.ApproxConfig{Context: runCtx, N: *n, S: *s, Ms: mlistOK, Methods: list, Precisions: precs,
		Repeat: *repeat, Seed: *seed, ExactFrom: *exact, ExactTol: *exactTol}, progress)
	if err != nil {
		return err
	}
	endLine()
	if *vectors != "" {
		if err := bench.WriteNPY(*vectors, u); err != nil {
			return err
		}
	}
	return writeJSON(*jsonOut, stdout, rep)
}

// runBenchApproxReport is `kdual bench approx-report`: kdual's report and
// the peers' rows (bench/peers/approx.py) as one Markdown table and one
// error-against-time plot.
func runBenchApproxReport(args []string, stdout io.Writer) error {
	fs := newFlags("bench approx-report")
	ours := fs.String("ours", "", "JSON of `kdual bench approx`")
	peers := fs.String("peers", "", "JSON rows of bench/peers/approx.py (optional)")
	png := fs.String("png", "", "write the plot (PNG) to FILE")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ours == "" {
		return usagef("--ours FILE is required")
	}
	var rep bench.ApproxReport
	if err := readJSONFile(*ours, &rep); err != nil {
		return err
	}
	rows := append([]bench.ApproxRow(nil), rep.Rows...)
	if *peers != "" {
		var pr []bench.ApproxRow
		if err := readJSONFile(*peers, &pr); err != nil {
			return err
		}
		rows = append(rows, pr...)
	}
	bench.ApproxTable(stdout, &rep, rows)
	if *png != "" {
		return bench.PlotApprox(rows, fmt.Sprintf("Approximate KPCA, Fashion-MNIST n = %d, top %d", rep.N, rep.S), *png)
	}
	return nil
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// approxFlagsApply refuses a flag the run asked would ignore: the
// comparison's with --large, --large's without it, --exact-tol with the
// exact solution read from --exact.
func approxFlagsApply(fs *flag.FlagSet, large bool) error {
	set := givenFlags(fs)
	for _, name := range []string{"n", "methods", "precision", "repeat", "exact", "exact-tol", "vectors-out"} {
		if large && set[name] {
			return usagef("--%s is for the comparison on Fashion-MNIST, not --large", name)
		}
	}
	for _, name := range []string{"images", "block"} {
		if !large && set[name] {
			return usagef("--%s goes with --large", name)
		}
	}
	if set["exact"] && set["exact-tol"] {
		return usagef("--exact-tol is the tolerance of the exact solution computed here, not of one read from --exact")
	}
	return nil
}

// parseRanks reads --m: positive integers, comma-separated.
func parseRanks(ms string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(ms, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, usagef("--m %q: want positive integers", ms)
		}
		out = append(out, v)
	}
	return out, nil
}
