package bench

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kdual/kdual/eig"
)

// Fig1Row is one decay rate c of Fig. 1.
type Fig1Row struct {
	C               float64 `json:"c"`
	Oversamples     int     `json:"rsvd_oversamples"` // -1: not reached
	LBFGSIterations int     `json:"lbfgs_iterations"`
}

// Fig1 reproduces Fig. 1 of the dual-KPCA paper: on the decay matrices
// (n×n, spectrum e^{−c·i}), the oversampling randomized SVD needs to reach
// η < delta (smallest in 0, 5, 10, 20, …, 640) and the L-BFGS iterations to
// reach it, for each c. Progress goes to log.
func Fig1(n, s int, cs []float64, delta float64, seed uint64, log io.Writer) ([]Fig1Row, error) {
	var rows []Fig1Row
	for _, c := range cs {
		fmt.Fprintf(log, "fig1: c=%g\n", c)
		p := &KPCAProblem{Data: "decay", N: n, S: s, Decay: c, Seed: seed}
		b, err := p.Build()
		if err != nil {
			return nil, err
		}
		row := Fig1Row{C: c, Oversamples: -1}
		for _, o := range []int{0, 5, 10, 20, 40, 80, 160, 320, 640} {
			if s+o > n {
				break
			}
			ov := o
			if ov == 0 {
				ov = -1 // eig.Randomized: 0 means the default 10, negative none
			}
			res, err := eig.Randomized{Oversample: ov, Seed: seed}.Solve(b.Op, s)
			if err != nil {
				return nil, err
			}
			eta, err := EigenEta(b.Op, res, p.DOpt)
			if err != nil {
				return nil, err
			}
			if eta < delta {
				row.Oversamples = o
				break
			}
		}
		r, err := RunLBFGS(p, b, delta, 1, "")
		if err != nil {
			return nil, err
		}
		row.LBFGSIterations = r.Iterations
		rows = append(rows, row)
	}
	return rows, nil
}

// Fig2Row is one s of Fig. 2: seconds to η < delta per solver (-1: never).
type Fig2Row struct {
	S       int                `json:"s"`
	Seconds map[string]float64 `json:"seconds"`
}

// Fig2 reproduces Fig. 2: training time against s on randn data (Laplace
// kernel, the paper's bandwidth) for L-BFGS, randomized SVD (cheapest
// oversampling), Lanczos and block Krylov.
func Fig2(n, d int, ss []int, delta float64, repeat int, seed uint64, log io.Writer) ([]Fig2Row, error) {
	var rows []Fig2Row
	for _, s := range ss {
		fmt.Fprintf(log, "fig2: s=%d\n", s)
		p := &KPCAProblem{Data: "randn", N: n, D: d, S: s, Kernel: "laplace", Bandwidth: "paper", Seed: seed}
		b, err := p.Build()
		if err != nil {
			return nil, err
		}
		row := Fig2Row{S: s, Seconds: map[string]float64{}}
		r, err := RunLBFGS(p, b, delta, repeat, "")
		if err != nil {
			return nil, err
		}
		row.Seconds["lbfgs"] = secondsOr(r)
		for _, search := range []EigenSearch{SearchRandomized, SearchLanczos, SearchBlock} {
			r, err := RunEigen(search, p, b, delta, repeat)
			if err != nil {
				return nil, err
			}
			row.Seconds[search.Name] = secondsOr(r)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func secondsOr(r KPCAResult) float64 {
	if r.Seconds == nil {
		return -1
	}
	return *r.Seconds
}

// PlotFig1 draws the additional oversamples (randomized SVD) and
// iterations (L-BFGS) relative to the smallest over c, as in the paper.
func PlotFig1(rows []Fig1Row, path string) error {
	p := plot.New()
	p.Title.Text = "Fig. 1: extra cost as the spectrum decays more slowly"
	p.X.Label.Text = "c (spectrum e^{-c i}); log scale"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{}
	p.Y.Label.Text = "additional oversamples / iterations"
	minO, minI := math.MaxInt, math.MaxInt
	for _, r := range rows {
		if r.Oversamples >= 0 {
			minO = min(minO, r.Oversamples)
		}
		minI = min(minI, r.LBFGSIterations)
	}
	var ov, it plotter.XYs
	for _, r := range rows {
		if r.Oversamples >= 0 {
			ov = append(ov, plotter.XY{X: r.C, Y: float64(r.Oversamples - minO)})
		}
		it = append(it, plotter.XY{X: r.C, Y: float64(r.LBFGSIterations - minI)})
	}
	if err := plotutil.AddLinePoints(p, "randomized SVD: oversamples", ov, "L-BFGS: iterations", it); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// PlotFig2 draws training time against s.
func PlotFig2(rows []Fig2Row, path string) error {
	p := plot.New()
	p.Title.Text = "Fig. 2: training time against s"
	p.X.Label.Text = "s (components)"
	p.Y.Label.Text = "seconds to η < δ (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var args []any
	for _, name := range []string{"lbfgs", "randomized", "lanczos", "block"} {
		var xy plotter.XYs
		for _, r := range rows {
			if v := r.Seconds[name]; v >= 0 {
				xy = append(xy, plotter.XY{X: float64(r.S), Y: v})
			}
		}
		if len(xy) > 0 {
			args = append(args, name, xy)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.YOffs = -5 * vg.Millimeter
	p.Y.Max *= 3 // room for the legend
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
