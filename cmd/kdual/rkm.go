package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/rkm"
	"github.com/kdual/kdual/stiefel"
)

type rkmReport struct {
	Data       string    `json:"data"`
	Setting    string    `json:"setting"`
	Training   string    `json:"training"`
	Rotated    bool      `json:"rotated"`
	S          int       `json:"s"`
	Lag        int       `json:"lag"`
	RFF        int       `json:"rff"`
	Sigma      float64   `json:"sigma"`
	NTrain     int       `json:"n_train"` // training pairs
	NTest      int       `json:"n_test"`
	MSE        float64   `json:"mse"`
	MAE        float64   `json:"mae"`
	Seconds    float64   `json:"train_seconds"`
	Iterations int       `json:"stiefel_iterations"`
	Status     string    `json:"stiefel_status"`
	GradNorm   float64   `json:"stiefel_grad_norm"`
	Gamma      []float64 `json:"gamma_diagonal"`
	GammaOff   float64   `json:"gamma_max_off_diagonal"`
	Forecast   []float64 `json:"forecast"`
	Truth      []float64 `json:"truth"`
}

func runRKM(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "forecast" {
		return usagef("kdual rkm forecast [flags]")
	}
	fs := newFlags("rkm forecast")
	data := fs.String("data", "sines", "series: sines, santafe, or a file of numbers (one or more per line)")
	setting := fs.String("setting", "auto", "primal, dual or auto (the paper's Fig. 1)")
	train := fs.String("train", "eig", "eig or stiefel (Cayley-Adam)")
	rotate := fs.Bool("rotate", false, "stiefel: rotate the solution to a diagonal Γ")
	s := fs.Int("s", 0, "latent components (0: 4 for sines, 144 for santafe, 10 otherwise)")
	lag := fs.Int("lag", 0, "lag p (0: 40 for sines, 70 for santafe, 10 otherwise)")
	rff := fs.Int("rff", -1, "random Fourier features on the window view (0: linear; -1: 5000 for santafe, 0 otherwise)")
	sigma := fs.Float64("sigma", 2.1856, "Gaussian bandwidth of the random Fourier features")
	test := fs.Int("test", 100, "a file's last TEST values are the test part")
	maxIter := fs.Int("max-iter", 0, "stiefel: step limit (0: 10 000)")
	tol := fs.Float64("tol", 0, "stiefel: relative Riemannian gradient tolerance (0: 1e-8)")
	lr := fs.Float64("lr", 0, "stiefel: Cayley-Adam learning rate (0: 1)")
	noRescale := fs.Bool("no-rescale", false, "primal eig without U = ŨΛ^{1/2} (the paper's Fig. 7 ablation)")
	seed := fs.Uint64("seed", 1, "seed of the random features and the Stiefel start")
	plotOut := fs.String("plot", "", "write the forecast against the truth and the first latent components as PNG")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - for standard output")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	trainSeries, testSeries, err := rkmSeries(*data, *test)
	if err != nil {
		return err
	}
	defS, defLag, defRFF := 10, 10, 0
	switch *data {
	case "sines":
		defS, defLag = 4, 40
	case "santafe":
		defS, defLag, defRFF = 144, 70, 5000
	}
	if *s == 0 {
		*s = defS
	}
	if *lag == 0 {
		*lag = defLag
	}
	if *rff < 0 {
		*rff = defRFF
	}
	rep := rkmReport{Data: *data, S: *s, Lag: *lag, RFF: *rff, Rotated: *rotate, NTest: len(testSeries)}
	m := &rkm.Model{Components: *s, Rotate: *rotate, NoRescale: *noRescale,
		Stiefel: stiefel.Settings{MaxIter: *maxIter, Tol: *tol, LR: *lr, Seed: *seed}}
	switch *setting {
	case "auto":
	case "primal":
		m.Setting = rkm.Primal
	case "dual":
		m.Setting = rkm.Dual
	default:
		return usagef("--setting %q: want primal, dual or auto", *setting)
	}
	switch *train {
	case "eig":
	case "stiefel":
		m.Training = rkm.Stiefel
	default:
		return usagef("--train %q: want eig or stiefel", *train)
	}
	st, err := rkm.FitStandardizer(trainSeries)
	if err != nil {
		return err
	}
	z := st.Apply(trainSeries)
	x, y, err := rkm.LagEmbed(z, *lag)
	if err != nil {
		return err
	}
	xView := rkm.View{Features: rkm.Identity{}}
	if *rff > 0 {
		rep.Sigma = *sigma
		f, err := kernel.NewRFF(*lag+1, *rff, *sigma, *seed)
		if err != nil {
			return err
		}
		xView = rkm.View{Features: f}
	}
	m.Views = []rkm.View{xView, {Features: rkm.Identity{}}}
	if err := m.Fit([]*mat.Dense{x, y}); err != nil {
		if !m.Fitted() {
			return err
		}
		// The Stiefel run stopped before its test: the model is usable,
		// the report says so.
		fmt.Fprintf(os.Stderr, "kdual: warning: %v\n", err)
	}
	info := m.Info()
	rep.Setting, rep.Training, rep.Seconds = info.Setting, info.Training, info.Seconds
	rep.Iterations, rep.Status, rep.GradNorm = info.Iterations, info.Status.Code.String(), info.GradNorm
	rep.NTrain, _ = x.Dims()
	g, _ := m.Gamma()
	for i := 0; i < *s; i++ {
		rep.Gamma = append(rep.Gamma, g.At(i, i))
		for j := 0; j < *s; j++ {
			if i != j {
				rep.GammaOff = max(rep.GammaOff, abs(g.At(i, j)))
			}
		}
	}
	fz, err := rkm.Forecast(m, z, *lag, len(testSeries))
	if err != nil {
		return err
	}
	rep.Forecast, rep.Truth = st.Invert(fz), testSeries
	rep.MSE, rep.MAE = rkm.Errors(rep.Forecast, testSeries)
	if *plotOut != "" {
		h, _ := m.H()
		if err := plotForecast(*plotOut, rep, h); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, rep)
	}
	if *noRescale {
		rep.Training += " (no rescaling)"
	}
	fmt.Fprintf(stdout, "rkm %s: %s %s%s, s=%d, p=%d, rff=%d: %d-step forecast MSE %.6g MAE %.6g; training %.3fs",
		rep.Data, rep.Setting, rep.Training, map[bool]string{true: " rotated", false: ""}[rep.Rotated && rep.Training == "stiefel"],
		rep.S, rep.Lag, rep.RFF, rep.NTest, rep.MSE, rep.MAE, rep.Seconds)
	if rep.Training == "stiefel" {
		fmt.Fprintf(stdout, " (%d steps, %s)", rep.Iterations, rep.Status)
	}
	fmt.Fprintln(stdout)
	if *plotOut != "" {
		fmt.Fprintln(stdout, "plot:", *plotOut)
	}
	return nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// rkmSeries returns the training and test parts of a series.
func rkmSeries(name string, test int) ([]float64, []float64, error) {
	switch name {
	case "sines":
		x := dataset.SumOfSines(500)
		return x[:400], x[400:], nil
	case "santafe":
		return dataset.SantaFe()
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	v, err := dataset.ParseSeries(strings.NewReader(string(raw)))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	if test < 1 || len(v) < test+3 {
		return nil, nil, usagef("%s has %d values; --test %d leaves too few for training", name, len(v), test)
	}
	return v[:len(v)-test], v[len(v)-test:], nil
}

// plotForecast draws the forecast against the truth (top) and the first
// four latent components of the training points (bottom).
func plotForecast(path string, rep rkmReport, h *mat.Dense) error {
	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s: %s %s, s = %d, p = %d — MSE %.4g, MAE %.4g", rep.Data, rep.Setting, rep.Training, rep.S, rep.Lag, rep.MSE, rep.MAE)
	top.X.Label.Text = "step"
	truth, pred := make(plotter.XYs, len(rep.Truth)), make(plotter.XYs, len(rep.Forecast))
	for i := range truth {
		truth[i] = plotter.XY{X: float64(i + 1), Y: rep.Truth[i]}
		pred[i] = plotter.XY{X: float64(i + 1), Y: rep.Forecast[i]}
	}
	lt, err := plotter.NewLine(truth)
	if err != nil {
		return err
	}
	lp, err := plotter.NewLine(pred)
	if err != nil {
		return err
	}
	lt.Color, lp.Color = color.Black, color.RGBA{220, 40, 40, 255}
	lp.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	top.Add(lt, lp)
	top.Legend.Add("truth", lt)
	top.Legend.Add("forecast", lp)
	top.Legend.Top = true

	bottom := plot.New()
	bottom.Title.Text = "latent components H (training points)"
	bottom.X.Label.Text = "training pair"
	n, s := h.Dims()
	colors := []color.Color{color.RGBA{30, 90, 220, 255}, color.RGBA{220, 40, 40, 255}, color.RGBA{40, 160, 60, 255}, color.RGBA{150, 60, 180, 255}}
	for c := 0; c < min(s, 4); c++ {
		xy := make(plotter.XYs, n)
		for i := range xy {
			xy[i] = plotter.XY{X: float64(i + 1), Y: h.At(i, c)}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = colors[c]
		bottom.Add(l)
		bottom.Legend.Add(fmt.Sprintf("h%d", c+1), l)
	}
	bottom.Legend.Top = true
	img := vgimg.New(8*vg.Inch, 7*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
