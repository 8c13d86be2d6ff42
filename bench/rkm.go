package bench

import (
	"context"
	"fmt"
	"image/color"
	"math"
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
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/rkm"
	"github.com/kdual/kdual/status"
	"github.com/kdual/kdual/stiefel"
)

// The RKM forecasting experiment (the multi-view RKM paper's NAR
// forecasts): standardise the series, embed with lag p, fit a two-view
// model (window, next value), forecast the test part recursively.

// RKMOptions configure RunRKMForecast; kdual rkm forecast's flags document
// them. S, Lag 0 and RFF < 0 mean the data set's defaults.
type RKMOptions struct {
	Data, Setting, Training string
	Rotate, NoRescale       bool
	S, Lag, RFF             int
	Sigma                   float64
	Test, MaxIter           int
	// Horizon is the number of steps forecast from the end of the
	// training part (0: the test part's length). With a file and Test = 0
	// the whole series trains and every step is past its end.
	Horizon int
	Tol, LR float64
	Seed    uint64
	Plot    string
	// Save, when set, is a file the fitted model is written to (with the
	// series' scaling); Model, when set, is a saved model to forecast with
	// instead of training (its lag and scaling are used).
	Save, Model string
	// Context, when set, stops the training (status.ErrStopped); Progress,
	// when set, is called after every Stiefel step.
	Context  context.Context
	Progress func(step int)
}

// RKMReport is the outcome of RunRKMForecast (kdual rkm forecast prints it).
type RKMReport struct {
	Data     string  `json:"data"`
	Setting  string  `json:"setting"`
	Training string  `json:"training"`
	Rotated  bool    `json:"rotated"`
	S        int     `json:"components"`
	Lag      int     `json:"lag"`
	RFF      int     `json:"rff"`
	Sigma    float64 `json:"sigma"`
	NTrain   int     `json:"n_train"` // training pairs
	NTest    int     `json:"n_test"`
	Horizon  int     `json:"horizon"` // steps forecast
	// MSE and MAE over the forecast steps that have a held-out value
	// (absent when none has).
	MSE        *float64  `json:"mse,omitempty"`
	MAE        *float64  `json:"mae,omitempty"`
	Seconds    float64   `json:"train_seconds"`
	Iterations int       `json:"stiefel_iterations"`
	Status     string    `json:"stiefel_status"`
	GradNorm   float64   `json:"stiefel_grad_norm"`
	Gamma      []float64 `json:"gamma_diagonal"`
	GammaOff   float64   `json:"gamma_max_off_diagonal"`
	Forecast   []float64 `json:"forecast"`
	Truth      []float64 `json:"truth"`
	// Warning says why a usable model is partial (a Stiefel run stopped
	// before its test).
	Warning string `json:"warning,omitempty"`
	// Model is the saved model forecast with (no training then).
	Model string `json:"model,omitempty"`
}

// RunRKMForecast runs the experiment.
func RunRKMForecast(o RKMOptions) (*RKMReport, error) {
	trainSeries, testSeries, err := rkmSeries(o.Data, o.Test)
	if err != nil {
		return nil, err
	}
	if o.Horizon < 0 {
		return nil, fmt.Errorf("bench: rkm horizon %d: %w", o.Horizon, status.ErrInvalid)
	}
	if o.Horizon == 0 {
		o.Horizon = len(testSeries)
	}
	if o.Horizon == 0 {
		return nil, fmt.Errorf("bench: rkm: no test part and no horizon: give the steps to forecast: %w", status.ErrInvalid)
	}
	o = o.withDefaults()
	rep := &RKMReport{Data: o.Data, S: o.S, Lag: o.Lag, RFF: o.RFF, Rotated: o.Rotate, Horizon: o.Horizon}
	m := &rkm.Model{Components: o.S, Rotate: o.Rotate, NoRescale: o.NoRescale,
		Stiefel: stiefel.Settings{MaxIter: o.MaxIter, Tol: o.Tol, LR: o.LR, Seed: o.Seed}}
	switch o.Setting {
	case "auto":
	case "primal":
		m.Setting = rkm.Primal
	case "dual":
		m.Setting = rkm.Dual
	default:
		return nil, fmt.Errorf("bench: rkm setting %q: want primal, dual or auto: %w", o.Setting, status.ErrInvalid)
	}
	switch o.Training {
	case "eig":
	case "stiefel":
		m.Training = rkm.Stiefel
	default:
		return nil, fmt.Errorf("bench: rkm training %q: want eig or stiefel: %w", o.Training, status.ErrInvalid)
	}
	if o.Model != "" {
		return forecastSaved(o, trainSeries, testSeries)
	}
	st, err := rkm.FitStandardizer(trainSeries)
	if err != nil {
		return nil, err
	}
	z := st.Apply(trainSeries)
	x, y, err := rkm.LagEmbed(z, o.Lag)
	if err != nil {
		return nil, err
	}
	xView := rkm.View{Features: rkm.Identity{}}
	if o.RFF > 0 {
		rep.Sigma = o.Sigma
		f, err := kernel.NewRFF(o.Lag+1, o.RFF, o.Sigma, o.Seed)
		if err != nil {
			return nil, err
		}
		xView = rkm.View{Features: f}
	}
	m.Views = []rkm.View{xView, {Features: rkm.Identity{}}}
	if o.Progress != nil {
		m.Stiefel.Callback = func(k int, _ float64, _ *mat.Dense) bool { o.Progress(k); return false }
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := m.FitContext(ctx, []*mat.Dense{x, y}); err != nil {
		if !m.Fitted() || ctx.Err() != nil {
			return nil, err
		}
		// The Stiefel run stopped before its test: the model is usable,
		// the report says so.
		rep.Warning = err.Error()
	}
	info := m.Info()
	rep.Setting, rep.Training, rep.Seconds = info.Setting, info.Training, info.Seconds
	rep.Iterations, rep.Status, rep.GradNorm = info.Iterations, info.Status.Code.String(), info.GradNorm
	rep.NTrain, _ = x.Dims()
	g, _ := m.Gamma()
	for i := 0; i < o.S; i++ {
		rep.Gamma = append(rep.Gamma, g.At(i, i))
		for j := 0; j < o.S; j++ {
			if i != j {
				rep.GammaOff = max(rep.GammaOff, math.Abs(g.At(i, j)))
			}
		}
	}
	if o.Save != "" {
		m.Scale = &st
		if err := modelfile.WriteFile(o.Save, m.Save); err != nil {
			return nil, err
		}
	}
	return rep, finishForecast(o, rep, m, st, z, testSeries)
}

// finishForecast forecasts o.Horizon steps from the end of the
// standardised history z, scores them against the test part and plots.
func finishForecast(o RKMOptions, rep *RKMReport, m *rkm.Model, st rkm.Standardizer, z, testSeries []float64) error {
	fz, err := rkm.Forecast(m, z, o.Lag, o.Horizon)
	if err != nil {
		return err
	}
	scored := min(o.Horizon, len(testSeries))
	rep.Forecast, rep.Truth, rep.NTest = st.Invert(fz), testSeries[:scored], scored
	if scored > 0 {
		mse, mae := rkm.Errors(rep.Forecast[:scored], rep.Truth)
		rep.MSE, rep.MAE = &mse, &mae
	}
	if o.Plot != "" {
		h, _ := m.H()
		if err := plotForecast(o.Plot, rep, h); err != nil {
			return err
		}
	}
	return nil
}

// forecastSaved forecasts with the model in o.Model: the history is the
// training part of the series, standardised by the model's scaling, and
// the lag is the model's.
func forecastSaved(o RKMOptions, trainSeries, testSeries []float64) (*RKMReport, error) {
	f, err := os.Open(o.Model)
	if err != nil {
		return nil, err
	}
	m, err := rkm.Load(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Model, err)
	}
	if m.Scale == nil {
		return nil, fmt.Errorf("bench: %s has no series scaling: it was not saved by a forecast: %w", o.Model, status.ErrInvalid)
	}
	dims, _ := m.InputDims()
	if len(dims) != 2 || dims[1] != 1 {
		return nil, fmt.Errorf("bench: %s is not a forecasting model (views of %v columns): %w", o.Model, dims, status.ErrInvalid)
	}
	if o.Lag != 0 && o.Lag != dims[0]-1 {
		return nil, fmt.Errorf("bench: --lag %d, the model's is %d: %w", o.Lag, dims[0]-1, status.ErrInvalid)
	}
	o.Lag = dims[0] - 1
	info := m.Info()
	g, _ := m.Gamma()
	s, _ := g.Dims()
	rep := &RKMReport{Data: o.Data, S: s, Lag: o.Lag, Horizon: o.Horizon, Setting: info.Setting, Training: info.Training,
		Rotated: info.Rotated, Iterations: info.Iterations, Status: info.Status.Code.String(), GradNorm: info.GradNorm,
		Model: o.Model}
	h, _ := m.H()
	rep.NTrain, _ = h.Dims()
	for i := 0; i < s; i++ {
		rep.Gamma = append(rep.Gamma, g.At(i, i))
		for j := 0; j < s; j++ {
			if i != j {
				rep.GammaOff = max(rep.GammaOff, math.Abs(g.At(i, j)))
			}
		}
	}
	return rep, finishForecast(o, rep, m, *m.Scale, m.Scale.Apply(trainSeries), testSeries)
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
	if test < 0 || len(v) < test+3 {
		return nil, nil, fmt.Errorf("bench: %s has %d values; a test part of %d leaves too few for training: %w", name, len(v), test, status.ErrInvalid)
	}
	return v[:len(v)-test], v[len(v)-test:], nil
}

// plotForecast draws the forecast against the truth (top) and the first
// four latent components of the training points (bottom).
func plotForecast(path string, rep *RKMReport, h *mat.Dense) error {
	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s: %s %s, s = %d, p = %d", rep.Data, rep.Setting, rep.Training, rep.S, rep.Lag)
	if rep.MSE != nil {
		top.Title.Text += fmt.Sprintf(" — MSE %.4g, MAE %.4g", *rep.MSE, *rep.MAE)
	}
	top.X.Label.Text = "step past the training part"
	truth, pred := make(plotter.XYs, len(rep.Truth)), make(plotter.XYs, len(rep.Forecast))
	for i := range truth {
		truth[i] = plotter.XY{X: float64(i + 1), Y: rep.Truth[i]}
	}
	for i := range pred {
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
	if len(truth) > 0 {
		top.Add(lt)
		top.Legend.Add("truth", lt)
	}
	top.Add(lp)
	top.Legend.Add("forecast", lp)
	top.Legend.Top = true
	headroom(top, 2)

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
	headroom(bottom, min(s, 4))
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

// headroom raises the top of p's y range so that a legend of entries lines
// in its top corner sits above the curves instead of on them: the data
// keep the lower part of the panel and the legend gets about 7% of the
// height per entry.
func headroom(p *plot.Plot, entries int) {
	lo, hi := p.Y.Min, p.Y.Max
	if !(hi > lo) {
		return
	}
	frac := min(0.07*float64(entries)+0.05, 0.5)
	p.Y.Max = hi + (hi-lo)*frac/(1-frac)
}

// withDefaults fills the model's defaults for the data set: s, the lag
// and the random features (sines: s = 4, lag 40; santafe: s = 144, lag
// 70, 5000 features; others: 10, 10, none).
func (o RKMOptions) withDefaults() RKMOptions {
	defS, defLag, defRFF := 10, 10, 0
	switch o.Data {
	case "sines":
		defS, defLag = 4, 40
	case "santafe":
		defS, defLag, defRFF = 144, 70, 5000
	}
	if o.S == 0 {
		o.S = defS
	}
	if o.Lag == 0 {
		o.Lag = defLag
	}
	if o.RFF < 0 {
		o.RFF = defRFF
	}
	return o
}
