package bench

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kdual/kdual/status"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/ppca"
)

// The dual probabilistic PCA experiment (the paper's Figs. 3–5): fit, the
// reconstructions of the training points by pre-images of their MAP
// kernel vectors, the σ² → 0 (kernel PCA) limit, samples in kernel space
// and the plots.

// PPCAOptions configure RunPPCA; kdual ppca's flags document them.
type PPCAOptions struct {
	Data, Classes string
	N, Q          int
	Sigma2        float64
	Kernel        string
	Sigma         float64
	Sample        int
	Nearest       int
	Seed          uint64
	Plot          string
	// Save, when set, is a file the fitted dual model is written to.
	Save string
	// Context, when set, stops the run (within a kernel panel or a solver
	// pass) with an error wrapping status.ErrStopped; no file is written
	// then.
	Context context.Context
}

// PPCAReport is the outcome of RunPPCA (kdual ppca prints it).
type PPCAReport struct {
	Data         string    `json:"data"`
	N            int       `json:"n"`
	D            int       `json:"d"`
	Kernel       string    `json:"kernel"`
	Sigma        float64   `json:"sigma"`
	Q            int       `json:"components"`
	Sigma2       float64   `json:"sigma2"`
	Explained    float64   `json:"explained_variance"`
	Eigenvalues  []float64 `json:"eigenvalues"` // the top min(N, q+10)
	ReconMSE     float64   `json:"reconstruction_mse"`
	KPCAReconMSE float64   `json:"kpca_reconstruction_mse"`
	Fallbacks    int       `json:"preimage_fallbacks"`
	Samples      int       `json:"samples"`
	FitSeconds   float64   `json:"fit_seconds"`
	PosteriorVar []float64 `json:"posterior_variance"`
	PlotPath     string    `json:"plot,omitempty"`
	DataStandIn  string    `json:"note,omitempty"`
}

// RunPPCA runs the experiment.
func RunPPCA(o PPCAOptions) (*PPCAReport, error) {
	if o.Q == 0 && o.Sigma2 == 0 {
		return nil, fmt.Errorf("bench: ppca needs q, σ² or both: %w", status.ErrInvalid)
	}
	x, note, err := ppcaData(o.Data, o.Classes, o.N, o.Seed)
	if err != nil {
		return nil, err
	}
	rows, d := x.Dims()
	rep := &PPCAReport{Data: o.Data, N: rows, D: d, Kernel: o.Kernel, Samples: o.Sample, DataStandIn: note}
	k, err := o.kernel()
	if err != nil {
		return nil, err
	}
	rep.Sigma = k.Sigma
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	m := &ppca.Dual{Q: o.Q, Sigma2: o.Sigma2, Kernel: k}
	start := time.Now()
	if err := m.FitContext(ctx, x); err != nil {
		return nil, err
	}
	rep.FitSeconds = time.Since(start).Seconds()
	explained, err := m.ExplainedVariance()
	if err != nil {
		return nil, err
	}
	vals, err := m.Eigenvalues()
	if err != nil {
		return nil, err
	}
	post, err := m.PosteriorCov()
	if err != nil {
		return nil, err
	}
	rep.Q, rep.Sigma2, rep.Explained = m.LatentDim(), m.NoiseVariance(), explained
	rep.Eigenvalues = vals[:min(len(vals), rep.Q+10)]
	for p := 0; p < rep.Q; p++ {
		rep.PosteriorVar = append(rep.PosteriorVar, post.At(p, p))
	}

	// Reconstructions of the training points: pre-images of (k_c)_MAP, for
	// the model and for its σ² → 0 limit (kernel PCA).
	recon, fb, err := ppcaReconstruct(m, o.Nearest)
	if err != nil {
		return nil, err
	}
	kp := &ppca.Dual{Q: rep.Q, Sigma2: 1e-300, Kernel: k}
	if err := kp.FitContext(ctx, x); err != nil {
		return nil, err
	}
	kpRecon, _, err := ppcaReconstruct(kp, o.Nearest)
	if err != nil {
		return nil, err
	}
	rep.Fallbacks = fb
	rep.ReconMSE, rep.KPCAReconMSE = meanSq(recon, x), meanSq(kpRecon, x)
	var samples *mat.Dense
	if o.Sample > 0 {
		ks, err := m.Sample(o.Sample, o.Seed)
		if err != nil {
			return nil, err
		}
		var sfb int
		if samples, sfb, err = m.PreImage(ks, o.Nearest); err != nil {
			return nil, err
		}
		rep.Fallbacks += sfb
	}
	// Files only once everything is computed.
	if ctx.Err() != nil {
		return nil, status.Cancelled(context.Cause(ctx), "before writing the results")
	}
	if o.Save != "" {
		if err := modelfile.WriteFile(o.Save, m.Save); err != nil {
			return nil, err
		}
	}
	if o.Plot != "" {
		rep.PlotPath = o.Plot
		if d == 2 {
			err = plotPPCAToy(o.Plot, x, recon, kpRecon, samples, rep)
		} else {
			err = plotPPCAImages(o.Plot, m, x, recon, samples, o.Nearest, rep)
		}
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// ppcaData loads the data set of kdual ppca.
func ppcaData(name, classes string, n int, seed uint64) (*mat.Dense, string, error) {
	keep := map[int]bool{}
	for _, c := range strings.Split(classes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil {
			return nil, "", fmt.Errorf("bench: ppca classes %q: want comma-separated integers: %w", classes, status.ErrInvalid)
		}
		keep[v] = true
	}
	pick := func(x *mat.Dense, labels []int, scale float64, all int) (*mat.Dense, error) {
		if n == 0 {
			n = all
		}
		_, d := x.Dims()
		var rows []float64
		count := 0
		for i, l := range labels {
			if keep[l] && count < n {
				for _, v := range x.RawRowView(i) {
					rows = append(rows, v*scale)
				}
				count++
			}
		}
		if count < 2 || (count < n && n != all) {
			return nil, fmt.Errorf("only %d points of classes %s: %w", count, classes, status.ErrInvalid)
		}
		return mat.NewDense(count, d, rows), nil
	}
	switch name {
	case "toy":
		if n == 0 {
			n = 20
		}
		// The paper does not give its 20 toy points: kdual's are a seeded
		// isotropic normal cloud with standard deviation 3 (for γ = 2).
		x, err := dataset.StandardNormal(n, 2, seed)
		if err != nil {
			return nil, "", err
		}
		x.Scale(3, x)
		return x, "toy: N points from N(0, 3²I₂), seeded (the paper's toy points are not published)", err
	case "digits":
		dg, err := dataset.Digits()
		if err != nil {
			return nil, "", err
		}
		x, err := pick(dg.X, dg.Labels, 1.0/16, len(dg.Labels))
		return x, "8×8 digits (pixels/16), the closest to MNIST here", err
	case "fashion":
		f, err := dataset.LoadFashion("", "train", 0)
		if err != nil {
			return nil, "", err
		}
		x, err := pick(f.X, f.Labels, 1, 500)
		return x, "Fashion-MNIST, a stand-in for MNIST", err
	}
	x, err := dataset.ReadMatrix(name, n)
	return x, "", err
}

func ppcaReconstruct(m *ppca.Dual, nearest int) (*mat.Dense, int, error) {
	kc, err := m.TrainKernelVectors()
	if err != nil {
		return nil, 0, err
	}
	h, err := m.ProjectKernel(kc)
	if err != nil {
		return nil, 0, err
	}
	rec, err := m.Reconstruct(h)
	if err != nil {
		return nil, 0, err
	}
	return m.PreImage(rec, nearest)
}

func meanSq(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	r, c := d.Dims()
	return mat.Norm(&d, 2) * mat.Norm(&d, 2) / float64(r*c)
}

// plotPPCAToy draws the paper's Fig. 3 for 2-d data: the points, their
// probabilistic-PCA and kernel-PCA reconstructions and the samples.
func plotPPCAToy(path string, x, recon, kpRecon, samples *mat.Dense, rep *PPCAReport) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("dual probabilistic PCA, q = %d: explained %.2f%%, σ² = %.4g", rep.Q, 100*rep.Explained, rep.Sigma2)
	add := func(m *mat.Dense, name string, c color.Color, shape draw.GlyphDrawer, radius vg.Length) error {
		if m == nil {
			return nil
		}
		r, _ := m.Dims()
		xy := make(plotter.XYs, r)
		for i := range xy {
			xy[i] = plotter.XY{X: m.At(i, 0), Y: m.At(i, 1)}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = c, shape, radius
		p.Add(s)
		p.Legend.Add(name, s)
		return nil
	}
	grey, blue, red := color.RGBA{170, 170, 170, 255}, color.RGBA{30, 90, 220, 255}, color.RGBA{220, 40, 40, 255}
	if err := add(samples, "samples", grey, draw.CircleGlyph{}, 1.5); err != nil {
		return err
	}
	if err := add(x, "data", color.Black, draw.CircleGlyph{}, 3); err != nil {
		return err
	}
	if err := add(recon, "prob. PCA reconstruction", blue, draw.CrossGlyph{}, 3.5); err != nil {
		return err
	}
	if err := add(kpRecon, "KPCA reconstruction", red, draw.PlusGlyph{}, 3.5); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(6*vg.Inch, 5*vg.Inch, path)
}

// plotPPCAImages draws the paper's Fig. 4 through gonum/plot: a title
// naming the data, q and σ², then up to four labelled 10×10 grids:
// originals, their reconstructions, generation from a latent grid (u₁
// across, u₂ down, from −1 to 1; other coordinates 0) and random samples.
func plotPPCAImages(path string, m *ppca.Dual, x, recon, samples *mat.Dense, nearest int, rep *PPCAReport) error {
	_, d := x.Dims()
	side := int(math.Round(math.Sqrt(float64(d))))
	if side*side != d {
		return fmt.Errorf("ppca: %d features are not a square image; --plot draws images only for square ones: %w", d, status.ErrInvalid)
	}
	type panel struct {
		rows  *mat.Dense
		title string
		x, y  string
	}
	panels := []panel{{x, "(a) training images", "", ""}, {recon, "(b) their reconstructions", "pre-images of the MAP kernel vectors", ""}}
	if q := m.LatentDim(); q >= 1 {
		const g = 10
		u := mat.NewDense(g*g, q, nil)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				u.Set(i*g+j, 0, -1+2*float64(j)/(g-1))
				if q >= 2 {
					u.Set(i*g+j, 1, -1+2*float64(i)/(g-1))
				}
			}
		}
		kc, err := m.Generate(u)
		if err != nil {
			return err
		}
		gen, _, err := m.PreImage(kc, nearest)
		if err != nil {
			return err
		}
		yLabel := "u₂ = 0"
		if q >= 2 {
			yLabel = "u₂ from −1 (top) to 1"
		}
		panels = append(panels, panel{gen, "(c) generated from a latent grid", "u₁ from −1 to 1", yLabel})
	}
	if samples != nil {
		panels = append(panels, panel{samples, "(d) random samples", "drawn in kernel space, pre-imaged", ""})
	}
	const per = 10
	tile := side + 1
	plots := make([]*plot.Plot, len(panels))
	for pi, pn := range panels {
		img := image.NewGray(image.Rect(0, 0, per*tile-1, per*tile-1))
		for i := range img.Pix {
			img.Pix[i] = 255
		}
		r, _ := pn.rows.Dims()
		for k := 0; k < min(r, per*per); k++ {
			ox, oy := (k%per)*tile, (k/per)*tile
			row := pn.rows.RawRowView(k)
			for py := 0; py < side; py++ {
				for px := 0; px < side; px++ {
					v := math.Max(0, math.Min(1, row[py*side+px]))
					img.SetGray(ox+px, oy+py, color.Gray{Y: uint8(255 - 255*v)})
				}
			}
		}
		p := plot.New()
		p.Title.Text = pn.title
		p.Add(plotter.NewImage(img, 0, 0, float64(per*tile-1), float64(per*tile-1)))
		p.X.Label.Text, p.Y.Label.Text = pn.x, pn.y
		for _, ax := range []*plot.Axis{&p.X, &p.Y} {
			ax.Tick.Marker = plot.ConstantTicks(nil)
			ax.LineStyle.Width = 0
			ax.Padding = 0
		}
		plots[pi] = p
	}
	const panelSide = 3.2 * vg.Inch
	top := vg.Length(0.45) * vg.Inch
	c := vgimg.New(vg.Length(len(plots))*panelSide, panelSide+top)
	dc := draw.New(c)
	title := fmt.Sprintf("dual probabilistic PCA on %s: N = %d, q = %d, σ² = %.4g, σ = %g (explained %.1f%%)",
		rep.Data, rep.N, rep.Q, rep.Sigma2, rep.Sigma, 100*rep.Explained)
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	sty.Font.Size = vg.Points(13)
	dc.FillText(sty, vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y - vg.Points(6)}, title)
	body := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: dc.Min, Max: vg.Point{X: dc.Max.X, Y: dc.Max.Y - top}}}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(10), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadBottom: vg.Points(4)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, body)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// kernel is the model's kernel: the Gaussian (σ = Sigma, or 4; 2 for the
// toy data) or the linear one.
func (o PPCAOptions) kernel() (kernel.Kernel, error) {
	switch o.Kernel {
	case "rbf", "gaussian":
		sigma := o.Sigma
		if sigma == 0 {
			sigma = 4
			if o.Data == "toy" {
				sigma = 2
			}
		}
		return kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}, nil
	case "linear":
		return kernel.Kernel{}, nil
	}
	return kernel.Kernel{}, fmt.Errorf("bench: ppca kernel %q: want rbf or linear: %w", o.Kernel, status.ErrInvalid)
}
