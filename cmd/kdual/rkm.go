package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kdual/kdual/bench"
)

func runRKM(args []string, stdout io.Writer) error {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(diag, "usage: kdual rkm forecast [flags]  (kdual rkm forecast -h lists them)")
		return flag.ErrHelp
	}
	if len(args) == 0 || args[0] != "forecast" {
		return usagef("kdual rkm forecast [flags]")
	}
	fs := newFlags("rkm forecast")
	data := fs.String("data", "sines", "series: sines, santafe, or a file of numbers (one or more per line)")
	setting := fs.String("setting", "auto", "primal, dual or auto (the paper's Fig. 1)")
	train := fs.String("train", "eig", "eig or stiefel (Cayley-Adam)")
	rotate := fs.Bool("rotate", false, "stiefel: rotate the solution to a diagonal Γ")
	s := fs.Int("components", 0, "latent components (0: 4 for sines, 144 for santafe, 10 otherwise)")
	alias(fs, "s", "components")
	lag := fs.Int("lag", 0, "lag p (0: 40 for sines, 70 for santafe, 10 otherwise)")
	rff := fs.Int("rff", -1, "random Fourier features on the window view (0: linear; -1: 5000 for santafe, 0 otherwise)")
	sigma := fs.Float64("sigma", 2.1856, "Gaussian bandwidth of the random Fourier features")
	test := fs.Int("test", 100, "a file's last TEST values are the test part (0: the whole file trains; give --horizon)")
	horizon := fs.Int("horizon", 0, "steps to forecast from the end of the training part (0: the test part's length); past the test part, or past the end with --test 0, the forecast has no truth to score")
	maxIter := fs.Int("max-iter", 0, "stiefel: step limit (0: 10 000)")
	tol := fs.Float64("tol", 0, "stiefel: relative Riemannian gradient tolerance (0: 1e-8)")
	lr := fs.Float64("lr", 0, "stiefel: Cayley-Adam learning rate (0: 1)")
	noRescale := fs.Bool("no-rescale", false, "primal eig without U = ŨΛ^{1/2} (the paper's Fig. 7 ablation)")
	seed := fs.Uint64("seed", 1, "seed of the random features and the Stiefel start")
	plotOut := fs.String("plot", "", "write the forecast against the truth and the first latent components as PNG")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	save := fs.String("save", "", "write the fitted model (with the series' scaling) to this file, a NumPy .npz archive")
	model := fs.String("model", "", "forecast with a model saved by --save instead of training: the lag and scaling are the model's; --data gives the history")
	quiet := fs.Bool("quiet", false, "no progress line on stderr (shown only when stderr is a terminal and training takes over 2 s)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *model != "" {
		var bad []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "setting", "train", "rotate", "components", "s", "rff", "sigma", "max-iter", "tol", "lr", "no-rescale", "save", "seed":
				bad = append(bad, "--"+f.Name)
			}
		})
		if len(bad) > 0 {
			return usagef("%s do(es) not apply with --model: the saved model is used as it is", strings.Join(bad, ", "))
		}
	}
	switch {
	case *setting != "auto" && *setting != "primal" && *setting != "dual":
		return usagef("--setting %q: want primal, dual or auto", *setting)
	case *train != "eig" && *train != "stiefel":
		return usagef("--train %q: want eig or stiefel", *train)
	}
	set := givenFlags(fs)
	for _, name := range []string{"rotate", "max-iter", "tol", "lr"} {
		if set[name] && *train != "stiefel" {
			return usagef("--%s is for --train stiefel, not %s", name, *train)
		}
	}
	if set["sigma"] && *model == "" && (*rff == 0 || (*rff < 0 && *data != "santafe")) {
		return usagef("--sigma is the bandwidth of the random Fourier features: give --rff N (N > 0) with it")
	}
	update, endLine := progressLine(*quiet)
	var progress func(int)
	if update != nil {
		progress = func(k int) { update("stiefel steps", int64(k), 0) }
	}
	rep, err := bench.RunRKMForecast(bench.RKMOptions{Data: *data, Setting: *setting, Training: *train, Rotate: *rotate,
		NoRescale: *noRescale, S: *s, Lag: *lag, RFF: *rff, Sigma: *sigma, Test: *test, MaxIter: *maxIter,
		Tol: *tol, LR: *lr, Seed: *seed, Plot: *plotOut, Horizon: *horizon, Context: runCtx, Progress: progress,
		Save: *save, Model: *model})
	endLine()
	if err != nil {
		return err
	}
	if rep.Warning != "" {
		fmt.Fprintf(diag, "kdual: warning: %s\n", rep.Warning)
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, rep)
	}
	if *noRescale {
		rep.Training += " (no rescaling)"
	}
	printRKM(stdout, rep)
	if *plotOut != "" {
		fmt.Fprintln(stdout, "plot:", *plotOut)
	}
	return nil
}

// printRKM writes a forecast report as text: one summary line, then the
// forecast one step per line (with the held-out value where there is one).
func printRKM(stdout io.Writer, rep *bench.RKMReport) {
	fmt.Fprintf(stdout, "rkm %s: %s %s%s, s=%d, p=%d, rff=%d: %d-step forecast",
		rep.Data, rep.Setting, rep.Training, map[bool]string{true: " rotated", false: ""}[rep.Rotated && rep.Training == "stiefel"],
		rep.S, rep.Lag, rep.RFF, rep.Horizon)
	if rep.MSE != nil {
		fmt.Fprintf(stdout, ", MSE %.6g MAE %.6g over %d held-out steps", *rep.MSE, *rep.MAE, rep.NTest)
	}
	if rep.Model != "" {
		fmt.Fprintf(stdout, "; model %s", rep.Model)
	} else {
		fmt.Fprintf(stdout, "; training %.3fs", rep.Seconds)
	}
	if rep.Training == "stiefel" {
		fmt.Fprintf(stdout, " (%d steps, %s)", rep.Iterations, rep.Status)
	}
	fmt.Fprintln(stdout)
	// The forecast itself, one step per line (with the held-out value
	// where there is one).
	if len(rep.Truth) > 0 {
		fmt.Fprintln(stdout, "step,forecast,actual")
	} else {
		fmt.Fprintln(stdout, "step,forecast")
	}
	for i, v := range rep.Forecast {
		if i < len(rep.Truth) {
			fmt.Fprintf(stdout, "%d,%s,%s\n", i+1, strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(rep.Truth[i], 'g', -1, 64))
		} else if len(rep.Truth) > 0 {
			fmt.Fprintf(stdout, "%d,%s,\n", i+1, strconv.FormatFloat(v, 'g', -1, 64))
		} else {
			fmt.Fprintf(stdout, "%d,%s\n", i+1, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
}
