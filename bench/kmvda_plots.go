package bench

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotMvM draws Fig. 3's shape: rank-1 accuracy (mean over the task's
// pairs) of RFF against m, with exact RBF as a reference line.
func PlotMvM(exps []*MvExperiment, path string) error {
	p := plot.New()
	p.Title.Text = "Fig. 3: RFF rank-1 accuracy against m (features per view)"
	p.X.Label.Text = "m (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Label.Text = "rank-1 accuracy (mean of the two cross-view directions)"
	var args []any
	for _, ex := range exps {
		var rff, rbf plotter.XYs
		mean := 0.0
		for _, a := range ex.RBFBest {
			mean += a / float64(len(ex.RBFBest))
		}
		for _, sc := range ex.MCurve {
			rff = append(rff, plotter.XY{X: float64(sc.M), Y: meanAcc(sc, 0)})
			rbf = append(rbf, plotter.XY{X: float64(sc.M), Y: mean})
		}
		args = append(args, ex.Task+" RFF", rff, ex.Task+" exact RBF", rbf)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.YOffs = -vg.Millimeter * 40
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// PlotMvL draws Fig. 4's shape: rank-1 accuracy (mean over pairs) against
// the number of directions l for linear, RBF and RFF.
func PlotMvL(exps []*MvExperiment, path string) error {
	p := plot.New()
	p.Title.Text = "Fig. 4: rank-1 accuracy against the number of directions l"
	p.X.Label.Text = "l"
	p.Y.Label.Text = "rank-1 accuracy (mean of the two cross-view directions)"
	var args []any
	for _, ex := range exps {
		for _, sc := range ex.LCurve {
			var xy plotter.XYs
			for li, l := range sc.Ls {
				xy = append(xy, plotter.XY{X: float64(l), Y: meanAcc(sc, li)})
			}
			name := ex.Task + " " + sc.Kind
			if sc.M > 0 {
				name = fmt.Sprintf("%s rff m=%d", ex.Task, sc.M)
			}
			args = append(args, name, xy)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	p.Legend.Top = false
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// PlotMvCrossover draws training time of exact RBF and RFF against n.
func PlotMvCrossover(rows []MvTiming, path string) error {
	p := plot.New()
	p.Title.Text = "KMvDA training time: exact RBF against RFF"
	p.X.Label.Text = "training samples n (all views); log scale"
	p.Y.Label.Text = "seconds (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	var rbf, rff plotter.XYs
	m := 0
	for _, r := range rows {
		rbf = append(rbf, plotter.XY{X: float64(r.N), Y: r.RBF})
		rff = append(rff, plotter.XY{X: float64(r.N), Y: r.RFF})
		m = r.M
	}
	if err := plotutil.AddLinePoints(p, "exact RBF", rbf, fmt.Sprintf("RFF m=%d", m), rff); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
