package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/status"
)

// ApproxConfig is one run of `kdual bench approx`: approximate kernel PCA
// on the first N Fashion-MNIST images (dataset.FashionAugmented: all
// 70 000 at N = 70 000), Gaussian kernel at the median σ, centred, top S,
// for every method and rank in Methods × Ms, against the exact top S.
type ApproxConfig struct {
	N       int
	S       int
	Ms      []int
	Methods []string // rpcholesky, uniform (Nyström samplers), rff
	// Precisions of the Nyström features: float64 and/or float32 (one row
	// each; random features are float64).
	Precisions []string
	Repeat     int
	Seed       uint64
	// ExactFrom, when set, is the JSON of `kdual kpca fit --json` on the
	// same data (eigenvalues and scores) used as the exact solution;
	// otherwise it is computed here (ExactTol, the planner's operator).
	ExactFrom string
	ExactTol  float64
	// Context, when set, stops the run (within a kernel panel or a solver
	// pass of a fit) with an error wrapping status.ErrStopped.
	Context context.Context
}

// ApproxRow is one method at one rank.
type ApproxRow struct {
	Tool      string  `json:"tool"`   // kdual or scikit-learn
	Method    string  `json:"method"` // nystrom-rpcholesky, nystrom-uniform, rff; the peers' names
	M         int     `json:"m"`
	Rank      int     `json:"rank"` // features used (Nyström may stop below m)
	Precision string  `json:"precision,omitempty"`
	Seconds   float64 `json:"seconds"` // median fit time, data in memory to fitted model
	// TraceError is tr(K − K̂)/tr(K) (Nyström; nil where unknown).
	TraceError *float64 `json:"trace_error,omitempty"`
	// EigError is maxᵢ |λ̂ᵢ − λᵢ|/λᵢ over the top S.
	EigError float64 `json:"eig_error"`
	// AngleDeg is the largest principal angle between the approximate
	// and the exact top-S eigenvectors of the centred kernel, in degrees.
	AngleDeg float64 `json:"angle_deg"`
}

// ApproxExact is the reference solution.
type ApproxExact struct {
	Eigenvalues []float64 `json:"eigenvalues"`
	Source      string    `json:"source"`
	Seconds     float64   `json:"seconds,omitempty"`
}

// ApproxReport is what `kdual bench approx` writes.
type ApproxReport struct {
	Data  string      `json:"data"`
	N     int         `json:"n"`
	D     int         `json:"d"`
	S     int         `json:"components"`
	Sigma float64     `json:"sigma"`
	Exact ApproxExact `json:"exact"`
	Rows  []ApproxRow `json:"rows"`
}

// ctxOf is ctx, or the background context for nil.
func ctxOf(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// Approx runs the comparison. It returns the report and the exact
// eigenvectors (n×S, orthonormal columns) for the peers' angles.
func Approx(cfg ApproxConfig, progress func(string)) (*ApproxReport, *mat.Dense, error) {
	if cfg.N < 2 || cfg.S < 1 || cfg.S >= cfg.N || len(cfg.Ms) == 0 || len(cfg.Methods) == 0 {
		return nil, nil, fmt.Errorf("bench approx: n = %d, components = %d, %d ranks, %d methods", cfg.N, cfg.S, len(cfg.Ms), len(cfg.Methods))
	}
	if cfg.Repeat < 1 {
		cfg.Repeat = 1
	}
	x, err := dataset.FashionAugmented("", cfg.N, cfg.Seed)
	if err != nil {
		return nil, nil, err
	}
	sigma, err := kernel.MedianSigma(x)
	if err != nil {
		return nil, nil, err
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
	rep := &ApproxReport{Data: "fashion", N: cfg.N, D: x.RawMatrix().Cols, S: cfg.S, Sigma: sigma}
	exact, u, err := approxExact(cfg, x, k, progress)
	if err != nil {
		return nil, nil, err
	}
	rep.Exact = exact
	type variant struct {
		name, prec string
		am         func(m int) approx.Method
	}
	var variants []variant
	for _, method := range cfg.Methods {
		switch method {
		case "rpcholesky", "uniform":
			smp, _ := approx.ParseSampler(method)
			for _, prec := range cfg.Precisions {
				if prec != "float64" && prec != "float32" {
					return nil, nil, fmt.Errorf("bench approx: precision %q: want float64 or float32", prec)
				}
				f32 := prec == "float32"
				variants = append(variants, variant{"nystrom-" + method, prec, func(m int) approx.Method {
					return approx.Nystrom{Rank: m, Sampler: smp, Seed: cfg.Seed, Float32: f32}
				}})
			}
		case "rff":
			variants = append(variants, variant{"rff", "float64", func(m int) approx.Method {
				return approx.RFF{Features: m, Seed: cfg.Seed}
			}})
		default:
			return nil, nil, fmt.Errorf("bench approx: method %q: want rpcholesky, uniform or rff", method)
		}
	}
	for _, v := range variants {
		for _, m := range cfg.Ms {
			if m > cfg.N {
				return nil, nil, fmt.Errorf("bench approx: m = %d > n = %d", m, cfg.N)
			}
			if progress != nil {
				progress(fmt.Sprintf("%s %s m = %d", v.name, v.prec, m))
			}
			var times []float64
			var model *kpca.KPCA
			for r := 0; r < cfg.Repeat; r++ {
				model = &kpca.KPCA{Components: cfg.S, Kernel: k, Approx: v.am(m)}
				start := time.Now()
				if err := model.FitContext(ctxOf(cfg.Context), x); err != nil {
					return nil, nil, fmt.Errorf("bench approx: %s m = %d: %w", v.name, m, err)
				}
				times = append(times, time.Since(start).Seconds())
			}
			vals, _ := model.Eigenvalues()
			sc, _ := model.Scores()
			info := model.Info()
			row := ApproxRow{Tool: "kdual", Method: v.name, M: m, Rank: info.Approx.Rank, Precision: v.prec, Seconds: Median(times),
				EigError: EigError(vals, rep.Exact.Eigenvalues), AngleDeg: LargestAngleDeg(u, sc)}
			if v.name != "rff" {
				te := info.Approx.TraceError
				row.TraceError = &te
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	return rep, u, nil
}

// readExact reads eigenvalues and scores from `kdual kpca fit --json` on
// the same n points and Gaussian kernel of bandwidth sigma: at least s
// eigenvalues, n rows of at least s scores (JSON numbers are finite), and
// the file's "sigma" equal to sigma (to 1e-12 relative) — a fit of another
// kernel would be compared against as if exact.
func readExact(path string, n, s int, sigma float64) ([]float64, *mat.Dense, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var v struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Scores      [][]float64 `json:"scores"`
		Sigma       float64     `json:"sigma"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, nil, fmt.Errorf("bench approx: %s: %w", path, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("bench approx: %s: "+format+": %w", append(append([]any{path}, args...), status.ErrInvalid)...)
	}
	if len(v.Eigenvalues) < s || len(v.Scores) != n {
		return nil, nil, bad("%d eigenvalues and %d score rows; want ≥ %d and %d", len(v.Eigenvalues), len(v.Scores), s, n)
	}
	if math.Abs(v.Sigma-sigma) > 1e-12*sigma {
		return nil, nil, bad("a fit with σ = %g; this comparison's kernel has σ = %g", v.Sigma, sigma)
	}
	sc := mat.NewDense(n, s, nil)
	for i, row := range v.Scores {
		if len(row) < s {
			return nil, nil, bad("score row %d has %d values; want ≥ %d", i, len(row), s)
		}
		copy(sc.RawRowView(i), row[:s])
	}
	return v.Eigenvalues[:s], sc, nil
}

// unitColumns returns an orthonormal basis of the columns of z (n×s, full
// column rank): the eigenvectors of the centred kernel from its scores. By
// Cholesky QR twice (z·U⁻¹ with zᵀz = UᵀU, repeated once for
// orthogonality to rounding): O(n·s²) time and no n×n matrix; nil when z
// is rank deficient.
func unitColumns(z *mat.Dense) *mat.Dense {
	q := mat.DenseCopyOf(z)
	_, s := z.Dims()
	for pass := 0; pass < 2; pass++ {
		g := mat.NewSymDense(s, nil)
		g.SymOuterK(1, q.T())
		var ch mat.Cholesky
		if !ch.Factorize(g) {
			return nil
		}
		var r mat.TriDense
		ch.UTo(&r)
		var next mat.Dense
		if err := next.Solve(r.T(), q.T()); err != nil { // Uᵀ·Qᵀ = zᵀ, zᵀz = UᵀU
			return nil
		}
		q = mat.DenseCopyOf(next.T())
	}
	return q
}

// EigError is maxᵢ |λ̂ᵢ − λᵢ|/λᵢ over the exact values given.
func EigError(approxVals, exact []float64) float64 {
	e := 0.0
	for i, l := range exact {
		if i >= len(approxVals) {
			return math.Inf(1)
		}
		e = math.Max(e, math.Abs(approxVals[i]-l)/math.Abs(l))
	}
	return e
}

// LargestAngleDeg is the largest principal angle, in degrees, between the
// column space of u (orthonormal) and that of z (any basis): arccos of the
// smallest singular value of uᵀ·Q, Q an orthonormal basis of z.
func LargestAngleDeg(u, z *mat.Dense) float64 {
	q := unitColumns(z)
	if q == nil {
		return math.NaN()
	}
	var c mat.Dense
	c.Mul(u.T(), q)
	var svd mat.SVD
	if !svd.Factorize(&c, mat.SVDNone) {
		return math.NaN()
	}
	sv := svd.Values(nil)
	sort.Float64s(sv)
	return math.Acos(math.Min(1, sv[0])) * 180 / math.Pi
}

// WriteNPY writes m to path as a NumPy .npy file (float64, row-major).
func WriteNPY(path string, m *mat.Dense) error {
	return modelfile.WriteFile(path, func(w io.Writer) error { return npy.Write(w, mat.DenseCopyOf(m)) })
}

// ApproxLargeConfig is one large Nyström run (`kdual bench approx
// --large`).
type ApproxLargeConfig struct {
	N, M, S int
	Seed    uint64
	// Images: "float32" (dataset.FashionAugmented32: shifted copies with
	// N(0, 0.01²) noise, stored in float32 and centred by the 70 000
	// images' mean pixel: off the 8-bit grid, kernel rows by sgemm) or
	// "8bit" (dataset.FashionAugmented8: shifted, rotated and noised copies
	// rounded to 8 bits, stored as levels: kernel rows by exact integer
	// products where the processor has them).
	Images string
	// Block is the Nyström candidates per round (approx.Nystrom.Block; 0:
	// its default).
	Block int
}

// ApproxLargeReport is the large run of `kdual bench approx --large`.
type ApproxLargeReport struct {
	N                 int       `json:"n"`
	D                 int       `json:"d"`
	M                 int       `json:"m"`
	S                 int       `json:"components"`
	Images            string    `json:"images"`
	Products          string    `json:"products"` // the kernel rows' arithmetic
	Sigma             float64   `json:"sigma"`
	DataSeconds       float64   `json:"data_seconds"` // generating the data in process
	FitSeconds        float64   `json:"fit_seconds"`  // data in memory to fitted model
	KernelSeconds     float64   `json:"kernel_seconds"`
	SolveSeconds      float64   `json:"solve_seconds"`
	TotalSeconds      float64   `json:"total_seconds"`
	PeakRSSBytes      int64     `json:"peak_rss_bytes"`
	DataBytes         int64     `json:"data_bytes"`
	Rank              int       `json:"rank"`
	Rounds            int       `json:"rounds"`
	Solver            string    `json:"solver"` // of the top eigenpairs of F_cᵀF_c
	Passes            int       `json:"passes,omitempty"`
	TraceError        float64   `json:"trace_error"`
	ResidualNormLower float64   `json:"residual_norm_lower"`
	EigenvalueBound   float64   `json:"eigenvalue_bound"`
	Eigenvalues       []float64 `json:"eigenvalues"`
}

// ApproxLarge fits Nyström KPCA (RPCholesky, float32 features) on cfg.N
// images generated in process (cfg.Images says which); σ is the median
// heuristic on the first 1000 of the 70 000 Fashion-MNIST images.
func ApproxLarge(ctx context.Context, cfg ApproxLargeConfig, progress func(string)) (*ApproxLargeReport, error) {
	start := time.Now()
	n, m, s, seed := cfg.N, cfg.M, cfg.S, cfg.Seed
	model := &kpca.KPCA{Components: s,
		Approx: approx.Nystrom{Rank: m, Seed: seed, Block: cfg.Block, ResidualSample: 1000}}
	if progress != nil {
		model.Progress = func(p kpca.Progress) {
			progress(fmt.Sprintf("%s %d/%d", p.Stage, p.Done, p.Total))
		}
	}
	var fit func() error
	var dataBytes int64
	var err error
	switch cfg.Images {
	case "8bit":
		fit, dataBytes, err = approxData8(ctx, model, n, seed)
	case "float32", "":
		cfg.Images = "float32"
		fit, dataBytes, err = approxData32(ctx, model, n, seed)
	default:
		err = fmt.Errorf("bench: images %q: want float32 or 8bit: %w", cfg.Images, status.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	rep := &ApproxLargeReport{N: n, D: 784, M: m, S: s, Images: cfg.Images, Sigma: model.Kernel.Sigma,
		DataBytes: dataBytes}
	rep.DataSeconds = time.Since(start).Seconds()
	// What making the data left behind (the decoded Fashion files in
	// float64) goes back to the system before the fit's gigabytes: the
	// peak counts the data and the fit.
	debug.FreeOSMemory()
	fitStart := time.Now()
	if err := fit(); err != nil {
		return nil, err
	}
	rep.FitSeconds = time.Since(fitStart).Seconds()
	info := model.Info()
	rep.KernelSeconds, rep.SolveSeconds = info.KernelSeconds, info.SolveSeconds
	rep.Rank, rep.TraceError, rep.Products = info.Approx.Rank, info.Approx.TraceError, info.Approx.Products
	rep.Rounds, rep.Solver, rep.Passes = info.Approx.Rounds, info.Solver, info.Passes
	rep.ResidualNormLower, rep.EigenvalueBound = info.Approx.ResidualNormLower, info.Approx.EigenvalueBound
	rep.Eigenvalues, _ = model.Eigenvalues()
	rep.TotalSeconds = time.Since(start).Seconds()
	rep.PeakRSSBytes = bigmem.PeakRSS()
	return rep, nil
}

// approxData8 makes ApproxLarge's 8-bit images (FashionAugmented8) and
// sets model's kernel: Gaussian, σ by the median heuristic on the first
// min(n, 1000) images, which are Fashion-MNIST's first training images
// (the same σ as the float32 set's, to the bit: levels/255 are the
// pixels).
func approxData8(ctx context.Context, model *kpca.KPCA, n int, seed uint64) (func() error, int64, error) {
	const d = 784
	if n < 1 {
		return nil, 0, fmt.Errorf("bench: %d images: %w", n, status.ErrInvalid)
	}
	x := &linalg.Levels8{Rows: n, Cols: d, Step: 1.0 / 255, Data: make([]uint8, n*d)}
	if err := dataset.FashionAugmented8("", n, seed, x.Data); err != nil {
		return nil, 0, err
	}
	head := mat.NewDense(min(n, 1000), d, nil)
	for i, v := range x.Data[:len(head.RawMatrix().Data)] {
		head.RawMatrix().Data[i] = float64(v) / 255
	}
	sigma, err := kernel.MedianSigma(head)
	if err != nil {
		return nil, 0, err
	}
	model.Kernel = kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
	return func() error { return model.FitLevels8(ctxOf(ctx), x) }, int64(len(x.Data)), nil
}

// approxData32 makes ApproxLarge's float32 images (FashionAugmented32,
// shifted by the mean of the first min(n, 70 000) images) and sets
// model's kernel: Gaussian, σ by the median heuristic on the first
// min(n, 1000) images. The fit frees the images when it returns.
func approxData32(ctx context.Context, model *kpca.KPCA, n int, seed uint64) (func() error, int64, error) {
	base, err := dataset.FashionAugmented("", min(n, 70000), seed)
	if err != nil {
		return nil, 0, err
	}
	sigma, err := kernel.MedianSigma(base)
	if err != nil {
		return nil, 0, err
	}
	model.Kernel = kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
	_, d := base.Dims()
	shift := approx.ColumnMeans(base)
	base = nil
	x, err := linalg.NewDense32(n, d)
	if err != nil {
		return nil, 0, err
	}
	if err := dataset.FashionAugmented32("", n, seed, shift, x.Data); err != nil {
		x.Free()
		return nil, 0, err
	}
	return func() error {
		defer x.Free()
		return model.FitFloat32(ctxOf(ctx), x)
	}, x.Bytes(), nil
}

// PlotApprox draws the top-S eigenvalue error against the fit time, one
// line per tool and method joining its ranks m in the rows' order, log-log.
func PlotApprox(rows []ApproxRow, title, path string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "fit time, s (log scale)"
	p.Y.Label.Text = "top eigenvalue error maxᵢ |λ̂ᵢ − λᵢ|/λᵢ (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks125{}, ticks125{}
	var order []string
	lines := map[string]plotter.XYs{}
	for _, r := range rows {
		key := r.Tool + " " + r.Method
		if r.Precision == "float32" {
			key += " (float32)"
		}
		if _, ok := lines[key]; !ok {
			order = append(order, key)
		}
		if r.Seconds > 0 && r.EigError > 0 {
			lines[key] = append(lines[key], plotter.XY{X: r.Seconds, Y: r.EigError})
		}
	}
	var args []any
	for _, key := range order {
		args = append(args, key, lines[key]) // points in the rows' order: m increasing
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	// Fast and accurate is the corner no method reaches: the legend's.
	p.Legend.Top, p.Legend.Left = false, true
	return p.Save(8*vg.Inch, 5.5*vg.Inch, path)
}

// ticks125 labels 1, 2 and 5 times the powers of ten of a log axis.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, f := range []float64{1, 2, 5} {
			v := f * math.Pow(10, e)
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
			}
		}
	}
	return out
}

// ApproxTable writes the rows as a Markdown table.
func ApproxTable(w io.Writer, rep *ApproxReport, rows []ApproxRow) {
	fmt.Fprintf(w, "Fashion-MNIST n = %d, Gaussian σ = %.4g (median), centred, top %d; exact: %s\n\n", rep.N, rep.Sigma, rep.S, rep.Exact.Source)
	fmt.Fprintln(w, "| tool | method | m | rank | s | trace error | top eigenvalue error | largest angle (°) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		te := "–"
		if r.TraceError != nil {
			te = fmt.Sprintf("%.4f", *r.TraceError)
		}
		method := r.Method
		if r.Precision == "float32" {
			method += " (float32)"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.3f | %s | %.2e | %.2f |\n", r.Tool, method, r.M, r.Rank, r.Seconds, te, r.EigError, r.AngleDeg)
	}
}

// approxExact returns the exact top eigenvalues the approximations are
// compared with, read from cfg.ExactFrom or computed (Lanczos at
// cfg.ExactTol, 1e-8 by default), and the exact scores' unit columns.
func approxExact(cfg ApproxConfig, x *mat.Dense, k kernel.Kernel, progress func(string)) (ApproxExact, *mat.Dense, error) {
	if cfg.ExactFrom != "" {
		vals, scores, err := readExact(cfg.ExactFrom, cfg.N, cfg.S, k.Sigma)
		if err != nil {
			return ApproxExact{}, nil, err
		}
		return ApproxExact{Eigenvalues: vals, Source: cfg.ExactFrom}, unitColumns(scores), nil
	}
	tol := cfg.ExactTol
	if tol == 0 {
		tol = 1e-8
	}
	if progress != nil {
		progress(fmt.Sprintf("exact top %d (Lanczos, tol %g)", cfg.S, tol))
	}
	start := time.Now()
	ex := &kpca.KPCA{Components: cfg.S, Kernel: k, Solver: kpca.Eigen{Solver: eig.Lanczos{Tol: tol}}}
	if err := ex.FitContext(ctxOf(cfg.Context), x); err != nil {
		return ApproxExact{}, nil, fmt.Errorf("bench approx: exact: %w", err)
	}
	vals, _ := ex.Eigenvalues()
	sc, _ := ex.Scores()
	return ApproxExact{Eigenvalues: vals[:cfg.S], Source: fmt.Sprintf("kdual exact, Lanczos tol %g, operator %s", tol, ex.Info().Operator),
		Seconds: time.Since(start).Seconds()}, unitColumns(sc), nil
}
