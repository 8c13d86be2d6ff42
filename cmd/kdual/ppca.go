package main

import (
	"fmt"
	"io"
	"math"

	"github.com/kdual/kdual/bench"
)

func runPPCA(args []string, stdout io.Writer) error {
	fs := newFlags("ppca")
	data := fs.String("data", "toy", "data: toy (N points from N(0, 3²I₂)), fashion, digits, or a CSV/IDX file")
	q := fs.Int("components", 0, "latent dimension q (σ² by maximum likelihood unless --sigma2)")
	alias(fs, "q", "components")
	sigma2 := fs.Float64("sigma2", 0, "noise variance σ² (q derived unless --q)")
	classes := fs.String("classes", "0,1", "fashion, digits: the classes kept")
	n := fs.Int("n", 0, "number of points (0: 20 for toy, 500 for fashion, every one of the classes for digits)")
	kern := fs.String("kernel", "rbf", "kernel: rbf or gaussian (exp(−‖x−y‖²/(2σ²))) or linear")
	sigma := fs.Float64("sigma", 0, "Gaussian bandwidth σ (0: 2 for toy, 4 otherwise)")
	gamma := fs.Float64("gamma", 0, "Gaussian kernel as scikit-learn writes it, exp(−γ‖x−y‖²): σ = 1/√(2γ); instead of --sigma")
	sample := fs.Int("sample", 0, "number of samples drawn in kernel space and pre-imaged")
	nearest := fs.Int("nearest", 0, "pre-image: kernel smoother over the k largest weights only (0: all)")
	plotOut := fs.String("plot", "", "write a PNG: the toy scatter, or image grids (originals, reconstructions, latent grid, samples)")
	seed := fs.Uint64("seed", 1, "seed of the toy data and the samples")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	save := fs.String("save", "", "write the fitted dual model to this file (a NumPy .npz archive; ppca.LoadDual reads it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *q == 0 && *sigma2 == 0 {
		return usagef("give --components, --sigma2 or both")
	}
	if *sigma < 0 || *gamma < 0 || (*sigma > 0 && *gamma > 0) {
		return usagef("--sigma %g, --gamma %g: give one bandwidth, positive", *sigma, *gamma)
	}
	if *gamma > 0 {
		fmt.Fprintln(diag, "kdual: note: --gamma now means scikit-learn's γ in exp(−γ‖x−y‖²); the bandwidth σ it used to mean is --sigma")
		*sigma = 1 / math.Sqrt(2**gamma)
	}
	if *kern != "rbf" && *kern != "gaussian" && *kern != "linear" {
		return usagef("--kernel %q: want rbf or linear", *kern)
	}
	set := givenFlags(fs)
	if (set["sigma"] || set["gamma"]) && *kern == "linear" {
		return usagef("--sigma and --gamma are the Gaussian kernel's bandwidth: not with --kernel linear")
	}
	if set["classes"] && *data != "fashion" && *data != "digits" {
		return usagef("--classes picks classes of fashion and digits, not of --data %s", *data)
	}
	rep, err := bench.RunPPCA(bench.PPCAOptions{Context: runCtx, Data: *data, Classes: *classes, N: *n, Q: *q, Sigma2: *sigma2,
		Kernel: *kern, Sigma: *sigma, Sample: *sample, Nearest: *nearest, Seed: *seed, Plot: *plotOut, Save: *save})
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, rep)
	}
	fmt.Fprintf(stdout, "ppca dual: %s N=%d d=%d kernel=%s σ=%g q=%d σ²=%.6g explained variance %.2f%%\n",
		rep.Data, rep.N, rep.D, rep.Kernel, rep.Sigma, rep.Q, rep.Sigma2, 100*rep.Explained)
	fmt.Fprintf(stdout, "reconstruction MSE (pre-image, input space): ppca %.6g, kpca (σ²→0) %.6g; fit %.3fs\n",
		rep.ReconMSE, rep.KPCAReconMSE, rep.FitSeconds)
	if rep.DataStandIn != "" {
		fmt.Fprintln(stdout, rep.DataStandIn)
	}
	if rep.PlotPath != "" {
		fmt.Fprintln(stdout, "plot:", rep.PlotPath)
	}
	return nil
}
