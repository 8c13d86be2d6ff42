package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kdual/kdual/bench"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/models/kmvda"
)

func runKMvDA(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "table" {
		return runKMvDATable(args[1:], stdout)
	}
	fs := newFlags("kmvda")
	data := fs.String("data", "sketch", "sketch, poses, or comma-separated CSV files (one per view, label in the last column)")
	kern := fs.String("kernel", "rbf", "linear, rbf or rff")
	m := fs.Int("m", 2048, "rff: random features per view")
	l := fs.Int("components", 0, "directions (0: chosen on a validation split among "+joinInts(kmvdaLs)+")")
	alias(fs, "l", "components")
	sigma := fs.Float64("sigma", 0, "Gaussian bandwidth (0: chosen on a validation split among 0.5, 1, 2 × the median distance)")
	reg := fs.Float64("reg", 0, "regularisation ε = reg·tr(S)/dim (0: chosen on the validation split among 1e-3, 1e-2, 1e-1; negative: none)")
	train := fs.Int("train", 0, "training identities (0: 650 sketch, 100 poses)")
	test := fs.Int("test", 0, "test identities (0: 544 sketch, 100 poses)")
	val := fs.Int("val", 0, "validation identities held out of training for the choices (0: a quarter)")
	testFrac := fs.Float64("test-frac", 0.45, "CSV: fraction of the labels (the largest) kept for testing")
	seed := fs.Uint64("seed", 1, "seed of the stand-in data and the random features")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	save := fs.String("save", "", "write the trained model to this file (a NumPy .npz archive; kmvda.Load reads it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	kind, err := kmvda.ParseKind(*kern)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := kmvdaFlags(*m, *l, *train, *test, *val, *sigma, *reg, *testFrac); err != nil {
		return err
	}
	if *data != "sketch" && *data != "poses" && len(strings.Split(*data, ",")) < 2 {
		return usagef("--data %q: want sketch, poses, or at least two CSV files", *data)
	}
	if err := kmvdaFlagsApply(fs, kind, *data, *l, *sigma, *reg); err != nil {
		return err
	}
	task, err := bench.MvTaskFor(*data, *train, *test, *testFrac, *seed)
	if err != nil {
		return err
	}
	task.Context = runCtx
	if *val == 0 {
		*val = task.DefaultValidation()
	}
	choice, err := kmvdaChoice(task, kind, *m, *sigma, *l, *reg, *val, *seed)
	if err != nil {
		return err
	}
	model := &kmvda.Model{Kind: kind, Sigma: choice.Sigma, Features: *m, Dim: choice.L, Reg: choice.Reg, Seed: *seed}
	sc, err := task.Evaluate(model, []int{choice.L})
	if err != nil {
		return err
	}
	if *save != "" {
		if err := modelfile.WriteFile(*save, model.Save); err != nil {
			return err
		}
		fmt.Fprintf(diag, "kdual: model written to %s\n", *save)
	}
	type pairOut struct {
		Gallery  string  `json:"gallery"`
		Probe    string  `json:"probe"`
		Accuracy float64 `json:"rank1"`
	}
	out := struct {
		Data    string         `json:"data"`
		Kind    string         `json:"kind"`
		M       int            `json:"m,omitempty"`
		Choice  bench.MvChoice `json:"choice"`
		Info    kmvda.Info     `json:"info"`
		Pairs   []pairOut      `json:"pairs"`
		Note    string         `json:"note,omitempty"`
		TrainID int            `json:"train_identities"`
	}{Data: *data, Kind: kind.String(), Choice: choice, Info: model.Info(), Note: task.Note, TrainID: task.Identities()}
	if kind == kmvda.RFF {
		out.M = *m
	}
	for i, p := range task.Pairs {
		out.Pairs = append(out.Pairs, pairOut{task.ViewNames[p[0]], task.ViewNames[p[1]], sc.Accuracy[i][0]})
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, out)
	}
	chosen := "given"
	if choice.Accuracy > 0 {
		chosen = fmt.Sprintf("validation %.3f", choice.Accuracy)
	}
	fmt.Fprintf(stdout, "kmvda %s %s: σ=%.4g reg=%g l=%d (%s), %s problem of size %d, trained in %.2fs\n",
		*data, kind, choice.Sigma, choice.Reg, choice.L, chosen, model.Info().Form, model.Info().Size, model.Info().Seconds)
	for _, p := range out.Pairs {
		fmt.Fprintf(stdout, "  gallery %s, probe %s: rank-1 %.1f%%\n", p.Gallery, p.Probe, 100*p.Accuracy)
	}
	return nil
}

func runKMvDATable(args []string, stdout io.Writer) error {
	fs := newFlags("kmvda table")
	out := fs.String("out", "docs", "directory for kmvda_table.md/json and the PNG figures")
	mTable := fs.Int("m", 2048, "random features per view in the table and the l curve")
	mMax := fs.Int("m-max", 8192, "largest m of the m curve (from 64, doubling)")
	cross := fs.String("crossover", "250,500,1000,2000", "training identities of the timing curve (sketch, 2 samples each)")
	crossM := fs.Int("crossover-m", 512, "random features per view of the timing curve")
	quick := fs.Bool("quick", false, "small sizes (a smoke run)")
	seed := fs.Uint64("seed", 1, "seed")
	from := fs.String("from", "", "redraw the PNGs from an earlier kmvda_table.json instead of running")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from != "" {
		var saved struct {
			Experiments []*bench.MvExperiment `json:"experiments"`
			Crossover   []bench.MvTiming      `json:"crossover"`
		}
		raw, err := os.ReadFile(*from)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &saved); err != nil {
			return err
		}
		return drawKMvDA(*out, saved.Experiments, saved.Crossover, stdout)
	}
	if *mTable < 1 || *crossM < 1 || *mMax < 64 {
		return usagef("--m %d, --crossover-m %d, --m-max %d: want ≥ 1 random features, and --m-max ≥ 64 (the m curve's first point)", *mTable, *crossM, *mMax)
	}
	ids, err := parseCrossover(*cross)
	if err != nil {
		return err
	}
	sketchTrain, sketchTest, poseTrain, poseTest := 650, 544, 100, 100
	ls := kmvdaLs
	if *quick {
		sketchTrain, sketchTest, poseTrain, poseTest = 60, 40, 16, 12
		ls = []int{5, 10, 20}
	}
	var ms []int
	for m := 64; m <= *mMax; m *= 2 {
		ms = append(ms, m)
	}
	var exps []*bench.MvExperiment
	for _, name := range []string{"sketch", "poses"} {
		var t *bench.MvTask
		var err error
		if name == "sketch" {
			t, err = bench.SketchTask(sketchTrain, sketchTest, *seed)
		} else {
			t, err = bench.PoseTask(poseTrain, poseTest, 3, *seed)
		}
		if err != nil {
			return err
		}
		t.Context = runCtx
		ex, err := bench.RunMvExperiment(t, ls, ms, *mTable, t.DefaultValidation(), *seed, os.Stderr)
		if err != nil {
			return err
		}
		exps = append(exps, ex)
	}
	timing, err := bench.MvCrossover(ids, *crossM, 100, 3, *seed, os.Stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var md strings.Builder
	bench.WriteMvTable(&md, exps)
	fmt.Fprintln(&md)
	fmt.Fprintln(&md, "| n (training samples) | exact RBF s | RFF s | RFF form |")
	fmt.Fprintln(&md, "|---|---|---|---|")
	for _, r := range timing {
		fmt.Fprintf(&md, "| %d | %.3f | %.3f | %s (m=%d) |\n", r.N, r.RBF, r.RFF, r.RFFForm, r.M)
	}
	fmt.Fprint(stdout, md.String())
	if err := os.WriteFile(filepath.Join(*out, "kmvda_table.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(map[string]any{"experiments": exps, "crossover": timing}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "kmvda_table.json"), raw, 0o644); err != nil {
		return err
	}
	return drawKMvDA(*out, exps, timing, stdout)
}

func drawKMvDA(out string, exps []*bench.MvExperiment, timing []bench.MvTiming, stdout io.Writer) error {
	for _, f := range []struct {
		name string
		draw func(string) error
	}{
		{"kmvda_fig3_m.png", func(p string) error { return bench.PlotMvM(exps, p) }},
		{"kmvda_fig4_l.png", func(p string) error { return bench.PlotMvL(exps, p) }},
		{"kmvda_crossover.png", func(p string) error { return bench.PlotMvCrossover(timing, p) }},
	} {
		if err := f.draw(filepath.Join(out, f.name)); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote", filepath.Join(out, f.name))
	}
	return nil
}

// kmvdaFlags checks kmvda's numeric flags (0 meaning "chosen" or "the
// default" where the help says so).
func kmvdaFlags(m, l, train, test, val int, sigma, reg, testFrac float64) error {
	switch {
	case m < 1:
		return usagef("--m %d: want at least one random feature", m)
	case l < 0:
		return usagef("--components %d: want ≥ 1, or 0 to choose", l)
	case train < 0 || test < 0 || val < 0:
		return usagef("--train %d, --test %d, --val %d: want counts ≥ 0 (0: the default)", train, test, val)
	case sigma < 0 || math.IsNaN(sigma) || math.IsInf(sigma, 0):
		return usagef("--sigma %g: want a finite σ > 0, or 0 to choose", sigma)
	case math.IsNaN(reg) || math.IsInf(reg, 0):
		return usagef("--reg %g: want a finite value", reg)
	case !(testFrac > 0 && testFrac < 1):
		return usagef("--test-frac %g: want 0 < f < 1", testFrac)
	}
	return nil
}

// kmvdaLs are the direction counts l tried on validation when --components
// is not given (the full table's too).
var kmvdaLs = []int{10, 20, 50, 100, 200, 400}

// joinInts writes v as "a, b, c".
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// kmvdaChoice returns σ, l and the regularisation: those given, the others
// chosen on a validation split of val identities (σ among 0.5, 1, 2 × the
// median distance; l among kmvdaLs; reg among bench.MvRegs).
func kmvdaChoice(task *bench.MvTask, kind kmvda.Kind, m int, sigma float64, l int, reg float64, val int, seed uint64) (bench.MvChoice, error) {
	var err error
	ls := []int{l}
	if l == 0 {
		ls = kmvdaLs
	}
	choice := bench.MvChoice{Sigma: sigma, L: l, Reg: reg}
	if (kind != kmvda.Linear && sigma == 0) || l == 0 || reg == 0 {
		regs := bench.MvRegs
		if reg != 0 {
			regs = []float64{reg}
		}
		if choice, err = task.Choose(kind, m, sigma, []float64{0.5, 1, 2}, regs, ls, val, seed); err != nil {
			return choice, err
		}
	}
	return choice, nil
}

// kmvdaFlagsApply refuses a flag the run asked would ignore: --sigma with
// the linear kernel, --m without random features, --test-frac on the
// built-in sets and --train, --test on CSV files (which --test-frac
// splits), --val when nothing is chosen on a validation split (the
// directions, the bandwidth where the kernel has one, and the
// regularisation all given).
func kmvdaFlagsApply(fs *flag.FlagSet, kind kmvda.Kind, data string, l int, sigma, reg float64) error {
	set := givenFlags(fs)
	csv := data != "sketch" && data != "poses"
	switch {
	case set["sigma"] && kind == kmvda.Linear:
		return usagef("--sigma is the Gaussian bandwidth: not with --kernel linear")
	case set["m"] && kind != kmvda.RFF:
		return usagef("--m is the random features per view: for --kernel rff, not %s", kind)
	case set["test-frac"] && !csv:
		return usagef("--test-frac splits CSV files; --data %s is split by --train and --test", data)
	case (set["train"] || set["test"]) && csv:
		return usagef("--train and --test count the built-in sets' identities; CSV files are split by --test-frac")
	case set["val"] && l != 0 && reg != 0 && (sigma != 0 || kind == kmvda.Linear):
		return usagef("--val: nothing is chosen on a validation split (--components, --reg and the bandwidth are given)")
	}
	return nil
}

// parseCrossover reads --crossover: training identities, each at least 3
// (two to train on and one to validate), comma-separated.
func parseCrossover(list string) ([]int, error) {
	var ids []int
	for _, f := range strings.Split(list, ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err != nil || v < 3 {
			return nil, usagef("--crossover %q: want training identities, each ≥ 3, comma-separated", list)
		}
		ids = append(ids, v)
	}
	return ids, nil
}
