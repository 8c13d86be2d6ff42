package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
)

// runBenchSmall times the library's whole fit on small problems — the
// first n Fashion-MNIST training images scaled to [0, 1], Gaussian kernel
// σ = --sigma, s components, kpca.KPCA's defaults — from the call with
// the data in memory: the first fit in this process and the median of
// --repeat fits after it (bench/peers/small.py runs scikit-learn's
// KernelPCA the same way).
func runBenchSmall(args []string, stdout io.Writer) error {
	fs := newFlags("bench small")
	ns := fs.String("n", "150,500,1000,2000", "problem sizes")
	s := fs.Int("components", 5, "components s")
	sigma := fs.Float64("sigma", 11.5, "Gaussian bandwidth σ")
	repeat := fs.Int("repeat", 21, "fits timed after the first (the median is reported)")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	solverName := fs.String("solver", "auto", "the solver (auto: the library's default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *repeat < 1 || *s < 1 || !(*sigma > 0) {
		return usagef("--repeat, --components and --sigma must be positive")
	}
	var sizes []int
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= *s || n > 60000 {
			return usagef("--n %q: sizes above --components and at most 60 000", *ns)
		}
		sizes = append(sizes, n)
	}
	type row struct {
		N       int     `json:"n"`
		First   float64 `json:"first_seconds"`
		Median  float64 `json:"median_seconds"`
		Solver  string  `json:"solver"`
		Lambda1 float64 `json:"lambda1"`
	}
	var rows []row
	for _, n := range sizes {
		f, err := dataset.LoadFashion("", "train", n)
		if err != nil {
			return err
		}
		x := f.X
		k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: *sigma}
		sv, err := kpcaSolver(*solverName, 0, 0, kpca.Loss{})
		if err != nil {
			return err
		}
		fit := func() (*kpca.KPCA, float64, error) {
			m := &kpca.KPCA{Components: *s, Kernel: k, Solver: sv}
			t := time.Now()
			err := m.FitContext(runCtx, x)
			return m, time.Since(t).Seconds(), err
		}
		m, first, err := fit()
		if err != nil {
			return err
		}
		times := make([]float64, *repeat)
		for i := range times {
			if _, times[i], err = fit(); err != nil {
				return err
			}
		}
		sort.Float64s(times)
		vals, _ := m.Eigenvalues()
		rows = append(rows, row{N: n, First: first, Median: times[len(times)/2], Solver: m.Info().Solver, Lambda1: vals[0]})
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, rows)
	}
	fmt.Fprintf(stdout, "kpca.KPCA{Components: %d, Kernel: Gaussian σ = %g}.Fit on the first n Fashion-MNIST images; median of %d fits after the first\n", *s, *sigma, *repeat)
	fmt.Fprintln(stdout, "| n | first fit | steady state | solver |\n|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %d | %.2f ms | %.2f ms | %s |\n", r.N, 1e3*r.First, 1e3*r.Median, r.Solver)
	}
	return nil
}
